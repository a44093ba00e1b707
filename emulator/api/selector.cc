#include "emulator/api/selector.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace pjemu::api {
namespace {

// ---- Validators (k8s.io/apimachinery/pkg/util/validation) ----

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// RegexError's wording: "<msg> (e.g. 'a',  or 'b', regex used for validation is '<fmt>')".
std::string RegexError(const std::string& msg, const std::string& fmt,
                       std::initializer_list<const char*> examples) {
  std::string out = msg + " (e.g. ";
  bool first = true;
  for (const char* e : examples) {
    if (!first) out += " or ";
    first = false;
    out += std::string("'") + e + "', ";
  }
  return out + "regex used for validation is '" + fmt + "')";
}

std::string MaxLenError(int n) {
  return "must be no more than " + std::to_string(n) + " characters";
}

const char kQualifiedNameFmt[] = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const char kQualifiedNameMsg[] =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool MatchesQualifiedName(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool MatchesDns1123Label(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

bool MatchesDns1123Subdomain(std::string_view s) {
  std::size_t start = 0;
  while (true) {
    std::size_t dot = s.find('.', start);
    if (!MatchesDns1123Label(s.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

std::vector<std::string> ValidateDns1123Subdomain(std::string_view name) {
  std::vector<std::string> errs;
  if (name.size() > 253) errs.push_back(MaxLenError(253));
  if (!MatchesDns1123Subdomain(name)) {
    errs.push_back(RegexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
        "or '.', and must start and end with an alphanumeric character",
        "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", {"example.com"}));
  }
  return errs;
}

std::vector<std::string> ValidateDns1123Label(std::string_view name) {
  std::vector<std::string> errs;
  if (name.size() > 63) errs.push_back(MaxLenError(63));
  if (!MatchesDns1123Label(name)) {
    errs.push_back(RegexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
        "and must start and end with an alphanumeric character",
        "[a-z0-9]([-a-z0-9]*[a-z0-9])?", {"my-name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> ValidateDns1035Label(std::string_view name) {
  std::vector<std::string> errs;
  if (name.size() > 63) errs.push_back(MaxLenError(63));
  bool ok = MatchesDns1123Label(name) && name.front() >= 'a' && name.front() <= 'z';
  if (!ok) {
    errs.push_back(RegexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
        "an alphabetic character, and end with an alphanumeric character",
        "[a-z]([-a-z0-9]*[a-z0-9])?", {"my-name", "abc-123"}));
  }
  return errs;
}

std::vector<std::string> ValidateQualifiedName(std::string_view key) {
  std::vector<std::string> errs;
  std::string_view name = key;
  std::size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    if (key.find('/', slash + 1) != std::string_view::npos) {
      errs.push_back(
          "a qualified name " +
          RegexError(kQualifiedNameMsg, kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}) +
          " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return errs;
    }
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      for (const auto& e : ValidateDns1123Subdomain(prefix)) errs.push_back("prefix part " + e);
    }
  }
  if (name.empty()) {
    errs.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    errs.push_back("name part " + MaxLenError(63));
  }
  if (!MatchesQualifiedName(name)) {
    errs.push_back(std::string("name part ") + RegexError(kQualifiedNameMsg, kQualifiedNameFmt,
                                                          {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> ValidateLabelValue(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back(MaxLenError(63));
  if (!value.empty() && !MatchesQualifiedName(value)) {
    errs.push_back(RegexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character",
        "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

// ---- Label requirements ----

namespace {

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

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

bool LabelSelector::Matches(const Json& object) const {
  if (requirements_.empty()) return true;
  static const Json kNull;
  const Json* labels = &kNull;
  if (object.is_object()) {
    auto m = object.find("metadata");
    if (m != object.end() && m->is_object()) {
      auto l = m->find("labels");
      if (l != m->end()) labels = &*l;
    }
  }
  return MatchesLabels(*labels);
}

bool LabelSelector::MatchesLabels(const Json& labels) const {
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const LabelRequirement& r) { return r.Matches(labels); });
}

std::string LabelSelector::ToString() const {
  std::vector<std::string> parts;
  for (const auto& r : requirements_) parts.push_back(r.ToString());
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
