#include "emulator/api/selector.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "emulator/api/json_fields.h"
#include "emulator/common/strings.h"

namespace pjemu::api {

// ---- Label requirements ----

namespace {

const char* OpText(LabelRequirement::Op op) {
  using Op = LabelRequirement::Op;
  switch (op) {
    case Op::kEquals:
      return "=";
    case Op::kDoubleEquals:
      return "==";
    case Op::kNotEquals:
      return "!=";
    case Op::kIn:
      return " in ";
    case Op::kNotIn:
      return " notin ";
    case Op::kGreaterThan:
      return ">";
    case Op::kLessThan:
      return "<";
    default:
      return "";
  }
}

bool ParseInt(const std::string& s, long long* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtoll(s.c_str(), &end, 10);
  return end && *end == '\0';
}

}  // namespace

bool LabelRequirement::Matches(const Json& labels) const {
  const Json* v = nullptr;
  if (labels.is_object()) {
    auto it = labels.find(key);
    if (it != labels.end() && it->is_string()) v = &*it;
  }
  auto has = [&](const std::string& s) {
    return std::find(values.begin(), values.end(), s) != values.end();
  };
  switch (op) {
    case Op::kEquals:
    case Op::kDoubleEquals:
    case Op::kIn:
      return v && has(v->get<std::string>());
    case Op::kNotEquals:
    case Op::kNotIn:
      return !v || !has(v->get<std::string>());
    case Op::kExists:
      return v != nullptr;
    case Op::kDoesNotExist:
      return v == nullptr;
    case Op::kGreaterThan:
    case Op::kLessThan: {
      long long have = 0, want = 0;
      if (!v || values.size() != 1 || !ParseInt(v->get<std::string>(), &have) ||
          !ParseInt(values[0], &want)) {
        return false;
      }
      return op == Op::kGreaterThan ? have > want : have < want;
    }
  }
  return false;
}

std::string LabelRequirement::ToString() const {
  switch (op) {
    case Op::kExists:
      return key;
    case Op::kDoesNotExist:
      return "!" + key;
    case Op::kIn:
    case Op::kNotIn:
      return key + OpText(op) + "(" + Join(values, ",") + ")";
    default:
      return key + OpText(op) + (values.empty() ? "" : values[0]);
  }
}

const std::vector<LabelRequirement>& LabelSelector::requirements() const {
  static const std::vector<LabelRequirement> kNone;
  return requirements_ ? *requirements_ : kNone;
}

bool LabelSelector::Matches(const Json& object) const {
  if (Empty()) return true;
  return MatchesLabels(FieldAt(object, {"metadata", "labels"}));
}

bool LabelSelector::MatchesLabels(const Json& labels) const {
  return std::all_of(requirements().begin(), requirements().end(),
                     [&](const LabelRequirement& r) { return r.Matches(labels); });
}

std::string LabelSelector::ToString() const {
  std::vector<std::string> parts;
  for (const auto& r : requirements()) parts.push_back(r.ToString());
  return Join(parts, ",");
}

// ---- Field selectors ----

namespace {

// fields.splitTerms: split on commas not escaped by a backslash.
std::vector<std::string> SplitTerms(std::string_view s) {
  std::vector<std::string> terms;
  std::string cur;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      cur += s[i];
      cur += s[++i];
    } else if (s[i] == ',') {
      terms.push_back(cur);
      cur.clear();
    } else {
      cur += s[i];
    }
  }
  terms.push_back(cur);
  return terms;
}

// fields.splitTerm: the first unescaped "!=", "==" or "=" (tried in that order at each index).
bool SplitTerm(const std::string& term, std::string* lhs, std::string* op, std::string* rhs) {
  static const char* kOps[] = {"!=", "==", "="};
  for (std::size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '\\') {
      ++i;
      continue;
    }
    for (const char* o : kOps) {
      if (term.compare(i, std::string_view(o).size(), o) == 0) {
        *lhs = term.substr(0, i);
        *op = o;
        *rhs = term.substr(i + std::string_view(o).size());
        return true;
      }
    }
  }
  return false;
}

// fields.UnescapeValue.
Result<std::string> Unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\') {
      if (i + 1 >= s.size() || (s[i + 1] != '\\' && s[i + 1] != ',' && s[i + 1] != '=')) {
        return BadRequestError("invalid field selector: invalid escape sequence: " + s);
      }
      out += s[++i];
    } else if (c == ',' || c == '=') {
      return BadRequestError(std::string("invalid field selector: unescaped character '") + c +
                             "' in value: " + s);
    } else {
      out += c;
    }
  }
  return out;
}

std::string StringAt(const Json& object, std::initializer_list<const char*> path) {
  const Json* cur = &object;
  for (const char* p : path) {
    if (!cur->is_object()) return "";
    auto it = cur->find(p);
    if (it == cur->end()) return "";
    cur = &*it;
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_boolean()) return cur->get<bool>() ? "true" : "false";
  if (cur->is_number()) return cur->dump();
  return "";
}

}  // namespace

const std::vector<std::string>& SupportedFields(const ResourceType& type) {
  static const std::vector<std::string> kGeneric = {"metadata.name", "metadata.namespace"};
  static const std::vector<std::string> kEvents = {"metadata.name",
                                                   "metadata.namespace",
                                                   "involvedObject.kind",
                                                   "involvedObject.namespace",
                                                   "involvedObject.name",
                                                   "involvedObject.uid",
                                                   "involvedObject.apiVersion",
                                                   "involvedObject.resourceVersion",
                                                   "involvedObject.fieldPath",
                                                   "reason",
                                                   "reportingComponent",
                                                   "source",
                                                   "type"};
  static const std::vector<std::string> kPods = {
      "metadata.name",      "metadata.namespace", "spec.nodeName",
      "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
      "status.phase",       "status.podIP",       "status.nominatedNodeName"};
  static const std::vector<std::string> kNamespaces = {"metadata.name", "status.phase"};
  static const std::vector<std::string> kNodes = {"metadata.name", "spec.unschedulable"};
  if (!type.group.empty()) return kGeneric;
  if (type.plural == "events") return kEvents;
  if (type.plural == "pods") return kPods;
  if (type.plural == "namespaces") return kNamespaces;
  if (type.plural == "nodes") return kNodes;
  return kGeneric;
}

std::string FieldValue(const Json& object, std::string_view field) {
  if (field == "metadata.name") return StringAt(object, {"metadata", "name"});
  if (field == "metadata.namespace") return StringAt(object, {"metadata", "namespace"});
  if (field == "source") return StringAt(object, {"source", "component"});
  if (field == "spec.unschedulable") {
    return StringAt(object, {"spec", "unschedulable"}) == "true" ? "true" : "false";
  }
  // Dotted paths map one to one onto the object ("involvedObject.uid", "status.phase", ...).
  const Json* cur = &object;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = field.find('.', start);
    std::string key(field.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (!cur->is_object()) return "";
    auto it = cur->find(key);
    if (it == cur->end()) return "";
    cur = &*it;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return cur->is_string() ? cur->get<std::string>() : "";
}

Result<FieldSelector> FieldSelector::Parse(std::string_view text, const ResourceType& type) {
  FieldSelector sel;
  std::vector<std::string> terms = SplitTerms(text);
  std::sort(terms.begin(), terms.end());
  const auto& supported = SupportedFields(type);
  for (const auto& term : terms) {
    if (term.empty()) continue;
    std::string lhs, op, rhs;
    if (!SplitTerm(term, &lhs, &op, &rhs)) {
      return BadRequestError("invalid selector: '" + std::string(text) + "'; can't understand '" +
                             term + "'");
    }
    ASSIGN_OR_RETURN(std::string value, Unescape(rhs));
    // Cluster-scoped kinds still accept metadata.namespace (always "").
    bool known = std::find(supported.begin(), supported.end(), lhs) != supported.end() ||
                 lhs == "metadata.namespace";
    if (!known) return BadRequestError("field label not supported: " + lhs);
    sel.requirements_.push_back({lhs, op == "!=", value});
  }
  return sel;
}

bool FieldSelector::Matches(const Json& object) const {
  for (const auto& r : requirements_) {
    bool equal = FieldValue(object, r.field) == r.value;
    if (equal == r.negate) return false;
  }
  return true;
}

}  // namespace pjemu::api
