#include "emulator/image/registry_auth.h"

#include <cctype>

#include "emulator/common/status.h"
#include "emulator/common/strings.h"

namespace pjemu::image::registry_auth {
namespace registry_auth_detail {

bool IsTokenChar(char c) {
  return !(std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == '=' || c == '"');
}

}  // namespace registry_auth_detail

namespace rauthd = registry_auth_detail;

std::vector<Challenge> ParseChallenges(const std::vector<std::string>& headers) {
  std::vector<Challenge> out;
  for (const std::string& h : headers) {
    std::size_t i = 0;
    const std::size_t n = h.size();
    auto skip = [&](bool commas) {
      while (i < n && (std::isspace(static_cast<unsigned char>(h[i])) || (commas && h[i] == ',')))
        ++i;
    };
    while (true) {
      skip(true);
      if (i >= n) break;
      const std::size_t start = i;
      while (i < n && rauthd::IsTokenChar(h[i])) ++i;
      std::string token = h.substr(start, i - start);
      if (token.empty()) {  // a stray '=' or quote: give up on the rest of this header
        break;
      }
      skip(false);
      if (i < n && h[i] == '=' && !out.empty()) {  // key=value of the current challenge
        ++i;
        skip(false);
        std::string value;
        if (i < n && h[i] == '"') {
          ++i;
          while (i < n && h[i] != '"') {
            if (h[i] == '\\' && i + 1 < n) ++i;
            value += h[i++];
          }
          ++i;  // the closing quote
        } else {
          while (i < n && h[i] != ',' && !std::isspace(static_cast<unsigned char>(h[i])))
            value += h[i++];
        }
        out.back().params[AsciiLower(token)] = value;
      } else {
        out.push_back(Challenge{AsciiLower(token), {}});
      }
    }
  }
  return out;
}

std::string ServerMessage(const std::string& body) {
  Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return "";
  auto errors = parsed.find("errors");
  if (errors == parsed.end() || !errors->is_array()) return "";
  std::string out;
  for (const Json& e : *errors) {
    if (!e.is_object()) continue;
    auto code = e.find("code");
    auto message = e.find("message");
    std::string text = code != e.end() && code->is_string()
                           ? AsciiLower(code->get<std::string>())
                           : std::string("unknown");
    if (message != e.end() && message->is_string() && !message->get<std::string>().empty()) {
      text += ": " + message->get<std::string>();
    }
    if (!out.empty()) out += "; ";
    out += text;
  }
  return out;
}

}  // namespace pjemu::image::registry_auth
