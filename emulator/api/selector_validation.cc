// Name and label validators with the real server's messages
// (k8s.io/apimachinery/pkg/util/validation), declared in selector.h.
#include <algorithm>

#include "emulator/api/selector.h"

namespace pjemu::api {
namespace {

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

}  // namespace pjemu::api
