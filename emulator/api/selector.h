// Label and field selectors: the `labelSelector=` and `fieldSelector=` query parameters of list and
// watch, parsed with kube-apiserver's grammar and error messages (kube-api.md section 7), and
// matched against objects in wire form. The store filters lists and watch events with them; the
// API server only passes the strings through. Also holds the label key/value and object-name
// validators the store uses on writes, with the real server's messages.
// Thread safety: parsed selectors are immutable values, safe to share between threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::api {

// One term of a label selector.
struct LabelRequirement {
  enum class Op {
    kEquals,
    kDoubleEquals,
    kNotEquals,
    kIn,
    kNotIn,
    kExists,
    kDoesNotExist,
    kGreaterThan,
    kLessThan,  // `k>5`, `k<5`: integer comparison, as the real parser allows
  };
  std::string key;
  Op op = Op::kExists;
  std::vector<std::string> values;  // sorted, unique; one value for the equality operators

  // True when `labels` (a JSON object of strings, or null) satisfies the term. `!=` and `notin`
  // match objects without the key, as in Kubernetes.
  bool Matches(const Json& labels) const;
  // The canonical text: "a=b", "a!=b", "a in (x,y)", "!a".
  std::string ToString() const;
};

// A parsed label selector: the AND of its requirements (sorted by key). Empty matches everything.
class LabelSelector {
 public:
  LabelSelector() = default;
  // Parses the Kubernetes syntax: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`,
  // comma-joined, whitespace allowed around tokens. Returns kBadRequest with the real server's
  // message, e.g. "unable to parse requirement: found ')', expected: in, notin, =, ==, !=, gt, lt".
  static Result<LabelSelector> Parse(std::string_view text);

  // metav1.LabelSelectorAsSelector over a wire-form selector object ({matchLabels,
  // matchExpressions}): `{}` matches everything. Errors are kInvalid naming `field`
  // ("spec.selector.matchExpressions[0].operator: Unsupported value: ..."). The caller decides
  // what an absent (null) selector means.
  static Result<LabelSelector> FromObject(const Json& selector, const std::string& field);

  // Matches `object.metadata.labels`.
  bool Matches(const Json& object) const;
  // Matches a bare labels map.
  bool MatchesLabels(const Json& labels) const;
  bool Empty() const { return requirements().empty(); }
  const std::vector<LabelRequirement>& requirements() const;
  std::string ToString() const;

 private:
  // Shared, never changed once parsed: a selector is copied from Parse's memo on every list.
  std::shared_ptr<const std::vector<LabelRequirement>> requirements_;
};

// One term of a field selector: `field=value`, `field==value` or `field!=value`.
struct FieldRequirement {
  std::string field;
  bool negate = false;
  std::string value;
};

// A parsed field selector, bound to the resource type whose fields it may name.
class FieldSelector {
 public:
  FieldSelector() = default;
  // Parses `a=b,c!=d` (values may escape `\,` `\=` `\\`). Returns kBadRequest
  // "invalid selector: '...'; can't understand '...'" for bad syntax and
  // "field label not supported: <field>" for a field the type does not index (section 7).
  static Result<FieldSelector> Parse(std::string_view text, const ResourceType& type);

  bool Matches(const Json& object) const;
  bool Empty() const { return requirements_.empty(); }
  const std::vector<FieldRequirement>& requirements() const { return requirements_; }

 private:
  std::vector<FieldRequirement> requirements_;
};

// The fields a field selector may name for `type` (metadata.name, metadata.namespace, plus the
// per-kind ones of kube-api.md section 7).
const std::vector<std::string>& SupportedFields(const ResourceType& type);
// The value of `field` in `object` as the real server's field set has it ("" when absent).
std::string FieldValue(const Json& object, std::string_view field);

// Validators with the real server's messages (k8s.io/apimachinery/pkg/util/validation). Each
// returns the list of problems, empty when the input is valid.
std::vector<std::string> ValidateQualifiedName(std::string_view key);  // label keys
std::vector<std::string> ValidateLabelValue(std::string_view value);
std::vector<std::string> ValidateDns1123Subdomain(std::string_view name);
std::vector<std::string> ValidateDns1123Label(std::string_view name);
std::vector<std::string> ValidateDns1035Label(std::string_view name);

}  // namespace pjemu::api
