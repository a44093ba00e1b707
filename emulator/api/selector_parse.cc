// LabelSelector::Parse: a transcription of k8s.io/apimachinery/pkg/labels/selector.go's lexer
// and recursive-descent parser, so that every error message is the real server's.
#include <algorithm>
#include <set>

#include "emulator/api/json_fields.h"
#include "emulator/api/selector.h"
#include "emulator/common/memo.h"

namespace pjemu::api {
namespace {

enum class Tok {
  kError,
  kEnd,
  kClosePar,
  kComma,
  kNot,
  kDoubleEquals,
  kEquals,
  kGreater,
  kIdent,
  kIn,
  kLess,
  kNotEquals,
  kNotIn,
  kOpenPar,
};

struct Item {
  Tok tok;
  std::string lit;
};

const std::pair<const char*, Tok> kLiterals[] = {
    {")", Tok::kClosePar},      {",", Tok::kComma},   {"!", Tok::kNot},
    {"==", Tok::kDoubleEquals}, {"=", Tok::kEquals},  {">", Tok::kGreater},
    {"in", Tok::kIn},           {"<", Tok::kLess},    {"!=", Tok::kNotEquals},
    {"notin", Tok::kNotIn},     {"(", Tok::kOpenPar},
};

bool Lookup(const std::string& s, Tok* tok) {
  for (const auto& [text, t] : kLiterals) {
    if (s == text) {
      *tok = t;
      return true;
    }
  }
  return false;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsSpecial(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

std::vector<Item> Scan(std::string_view s) {
  std::vector<Item> items;
  std::size_t pos = 0;
  while (true) {
    while (pos < s.size() && IsSpace(s[pos])) ++pos;
    if (pos >= s.size()) {
      items.push_back({Tok::kEnd, ""});
      return items;
    }
    if (IsSpecial(s[pos])) {
      // The longest run of special symbols that is still a known operator.
      std::string buffer;
      Item last{Tok::kError, ""};
      bool found = false;
      while (pos < s.size() && IsSpecial(s[pos])) {
        buffer += s[pos++];
        Tok t;
        if (Lookup(buffer, &t)) {
          last = {t, buffer};
          found = true;
        } else if (found) {
          --pos;
          break;
        }
      }
      if (!found) last = {Tok::kError, "error expected: keyword found '" + buffer + "'"};
      items.push_back(last);
      continue;
    }
    std::string buffer;
    while (pos < s.size() && !IsSpecial(s[pos]) && !IsSpace(s[pos])) buffer += s[pos++];
    Tok t = Tok::kIdent;
    Lookup(buffer, &t);
    items.push_back({t, buffer});
  }
}

class Parser {
 public:
  explicit Parser(std::string_view text) : items_(Scan(text)) {}

  // Returns "" on success, else the error text (without the BadRequest wrapping).
  std::string Parse(std::vector<LabelRequirement>* out) {
    while (true) {
      auto [tok, lit] = Lookahead(true);
      if (tok == Tok::kEnd) return "";
      if (tok != Tok::kIdent && tok != Tok::kNot) {
        return "found '" + lit + "', expected: !, identifier, or 'end of string'";
      }
      LabelRequirement r;
      std::string err = ParseRequirement(&r);
      if (!err.empty()) return "unable to parse requirement: " + err;
      out->push_back(std::move(r));
      auto [t, l] = Consume(true);
      if (t == Tok::kEnd) return "";
      if (t != Tok::kComma) return "found '" + l + "', expected: ',' or 'end of string'";
      auto [t2, l2] = Lookahead(true);
      if (t2 != Tok::kIdent && t2 != Tok::kNot) {
        return "found '" + l2 + "', expected: identifier after ','";
      }
    }
  }

 private:
  using Op = LabelRequirement::Op;

  // In a values context, `in` and `notin` are plain identifiers.
  Item Lookahead(bool values) const { return Adjust(items_[pos_], values); }
  Item Consume(bool values) { return Adjust(items_[pos_++], values); }
  static Item Adjust(Item it, bool values) {
    if (values && (it.tok == Tok::kIn || it.tok == Tok::kNotIn)) it.tok = Tok::kIdent;
    return it;
  }

  std::string ParseRequirement(LabelRequirement* r) {
    Item it = Consume(true);
    bool negated = false;
    if (it.tok == Tok::kNot) {
      negated = true;
      it = Consume(true);
    }
    const std::string& lit = it.lit;
    if (it.tok != Tok::kIdent) return "found '" + lit + "', expected: identifier";
    if (auto errs = ValidateQualifiedName(lit); !errs.empty()) {
      return "<nil>: Invalid value: \"" + lit + "\": " + JoinErrors(errs);
    }
    r->key = lit;
    auto next = Lookahead(true).tok;
    if (negated || next == Tok::kEnd || next == Tok::kComma) {
      r->op = negated ? Op::kDoesNotExist : Op::kExists;
      return "";
    }
    std::string err = ParseOperator(&r->op);
    if (!err.empty()) return err;
    std::set<std::string> values;
    err = (r->op == Op::kIn || r->op == Op::kNotIn) ? ParseValues(&values) : ParseExact(&values);
    if (!err.empty()) return err;
    r->values.assign(values.begin(), values.end());
    return ValidateValues(*r);
  }

  std::string ParseOperator(Op* op) {
    auto [tok, lit] = Consume(false);
    switch (tok) {
      case Tok::kIn:
        *op = Op::kIn;
        break;
      case Tok::kEquals:
        *op = Op::kEquals;
        break;
      case Tok::kDoubleEquals:
        *op = Op::kDoubleEquals;
        break;
      case Tok::kGreater:
        *op = Op::kGreaterThan;
        break;
      case Tok::kLess:
        *op = Op::kLessThan;
        break;
      case Tok::kNotIn:
        *op = Op::kNotIn;
        break;
      case Tok::kNotEquals:
        *op = Op::kNotEquals;
        break;
      default:
        return "found '" + lit + "', expected: in, notin, =, ==, !=, gt, lt";
    }
    return "";
  }

  std::string ParseValues(std::set<std::string>* values) {
    Item open = Consume(true);
    if (open.tok != Tok::kOpenPar) return "found '" + open.lit + "' expected: '('";
    auto [tok, lit] = Lookahead(true);
    if (tok == Tok::kClosePar) {
      Consume(true);
      values->insert("");
      return "";
    }
    if (tok != Tok::kIdent && tok != Tok::kComma) {
      return "found '" + lit + "', expected: ',', ')' or identifier";
    }
    std::string err = ParseIdentifiers(values);
    if (!err.empty()) return err;
    if (Consume(true).tok != Tok::kClosePar) return "found '" + lit + "', expected: ')'";
    return "";
  }

  std::string ParseIdentifiers(std::set<std::string>* values) {
    while (true) {
      auto [tok, lit] = Consume(true);
      if (tok == Tok::kIdent) {
        values->insert(lit);
        auto [t2, l2] = Lookahead(true);
        if (t2 == Tok::kComma) continue;
        if (t2 == Tok::kClosePar) return "";
        return "found '" + l2 + "', expected: ',' or ')'";
      }
      if (tok != Tok::kComma) return "found '" + lit + "', expected: ',', or identifier";
      if (values->empty()) values->insert("");  // "(,"
      Tok t2 = Lookahead(true).tok;
      if (t2 == Tok::kClosePar) {
        values->insert("");  // ",)"
        return "";
      }
      if (t2 == Tok::kComma) values->insert("");  // ",,"
    }
  }

  std::string ParseExact(std::set<std::string>* values) {
    Tok t = Lookahead(true).tok;
    if (t == Tok::kEnd || t == Tok::kComma) {
      values->insert("");
      return "";
    }
    auto [tok, lit] = Consume(true);
    if (tok != Tok::kIdent) return "found '" + lit + "', expected: identifier";
    values->insert(lit);
    return "";
  }

  // NewRequirement's checks on the values.
  static std::string ValidateValues(const LabelRequirement& r) {
    for (std::size_t i = 0; i < r.values.size(); ++i) {
      const std::string& v = r.values[i];
      if (r.op == Op::kGreaterThan || r.op == Op::kLessThan) {
        bool digits = !v.empty() && std::all_of(v.begin() + (v[0] == '-' ? 1 : 0), v.end(),
                                                [](char c) { return c >= '0' && c <= '9'; });
        if (!digits) {
          return "values[0]: Invalid value: \"" + v +
                 "\": for 'Gt', 'Lt' operators, the value must be an integer";
        }
        continue;
      }
      if (auto errs = ValidateLabelValue(v); !errs.empty()) {
        return "values[" + std::to_string(i) + "][" + r.key + "]: Invalid value: \"" + v +
               "\": " + JoinErrors(errs);
      }
    }
    return "";
  }

  static std::string JoinErrors(const std::vector<std::string>& errs) {
    std::string out;
    for (std::size_t i = 0; i < errs.size(); ++i) out += (i ? "; " : "") + errs[i];
    return out;
  }

  std::vector<Item> items_;
  std::size_t pos_ = 0;
};

}  // namespace

Result<LabelSelector> LabelSelector::Parse(std::string_view text) {
  // A controller lists each kind of child by the same selector in one pass.
  thread_local Memo<Result<LabelSelector>> memo;
  return memo.Get(std::string(text), [&]() -> Result<LabelSelector> {
    std::vector<LabelRequirement> requirements;
    std::string err = Parser(text).Parse(&requirements);
    if (!err.empty()) return BadRequestError(err);
    std::stable_sort(
        requirements.begin(), requirements.end(),
        [](const LabelRequirement& a, const LabelRequirement& b) { return a.key < b.key; });
    LabelSelector sel;
    if (!requirements.empty()) {
      sel.requirements_ =
          std::make_shared<const std::vector<LabelRequirement>>(std::move(requirements));
    }
    return sel;
  });
}

namespace {

std::string SelectorTerm(const Json& e, const std::string& at, Status* error) {
  const Json& values = e.contains("values") ? e["values"] : Json();
  std::string key = e.value("key", "");
  std::string op = e.contains("operator") && e["operator"].is_string() ? e["operator"] : "";
  auto invalid = [&](const std::string& message) {
    *error = Status(Code::kInvalid, at + ": " + message);
    return std::string();
  };
  if (op == "Exists" || op == "DoesNotExist") {
    if (values.is_array() && !values.empty()) {
      return invalid(
          "Forbidden: may not be specified when `operator` is 'Exists' or "
          "'DoesNotExist'");
    }
    return (op == "Exists" ? "" : "!") + key;
  }
  if (op != "In" && op != "NotIn") {
    return invalid("Unsupported value: \"" + op +
                   "\": supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\"");
  }
  if (!values.is_array() || values.empty()) {
    return invalid("Required value: must be specified when `operator` is 'In' or 'NotIn'");
  }
  std::string list;
  for (const Json& v : values) {
    if (!v.is_string()) return invalid("Invalid value: " + v.dump() + ": must be a string");
    list += (list.empty() ? "" : ",") + v.get<std::string>();
  }
  return key + (op == "In" ? " in (" : " notin (") + list + ")";
}

}  // namespace

Result<LabelSelector> LabelSelector::FromObject(const Json& selector, const std::string& field) {
  if (!selector.is_object()) {
    return Status(Code::kInvalid, field + ": Invalid value: " + selector.dump() +
                                      ": must be an object with matchLabels or matchExpressions");
  }
  std::vector<std::string> terms;
  const Json& labels = selector.contains("matchLabels") ? selector["matchLabels"] : Json();
  if (!labels.is_null() && !labels.is_object()) {
    return Status(Code::kInvalid, field + ".matchLabels: Invalid value: " + labels.dump() +
                                      ": must be a map of strings");
  }
  for (const auto& [k, v] : ObjectOr(labels).items()) {
    if (!v.is_string()) {
      return Status(Code::kInvalid, field + ".matchLabels[" + k + "]: Invalid value: " + v.dump() +
                                        ": must be a string");
    }
    terms.push_back(k + "=" + v.get<std::string>());
  }
  const Json& exprs = selector.contains("matchExpressions") ? selector["matchExpressions"] : Json();
  std::size_t i = 0;
  for (const Json& e : ArrayOr(exprs)) {
    std::string at = field + ".matchExpressions[" + std::to_string(i++) + "]";
    Status error;
    std::string term = e.is_object() ? SelectorTerm(e, at + ".operator", &error) : "";
    if (!error.ok()) return error;
    if (!e.is_object() || term.empty() || term == "!") {
      return Status(Code::kInvalid, at + ".key: Required value");
    }
    terms.push_back(term);
  }
  std::string text;
  for (const std::string& t : terms) text += (text.empty() ? "" : ",") + t;
  auto parsed = Parse(text);
  if (!parsed.ok()) {
    return Status(Code::kInvalid,
                  field + ": Invalid value: " + selector.dump() + ": " + parsed.status().message());
  }
  return parsed;
}

}  // namespace pjemu::api
