#include "emulator/manifest/json_document.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "emulator/manifest/input_checks.h"

namespace pjemu::manifest {
namespace {

// Thrown from the nlohmann parser callback and caught in ParseJsonDocument.
struct JsonLimitError {
  std::string message;
};

// The duplicate-key and depth errors that yaml-cpp finds with their line, or OK.
Status LinesFromYaml(std::string_view text, std::string_view source, const ConvertLimits& limits,
                     std::map<std::string, int>* lines) {
  try {
    YamlToJson converter(source, limits, lines);
    Result<Json> r = converter.Convert(YAML::Load(std::string(text)));
    if (!r.ok() && converter.failure() != ConvertFailure::kYaml) return r.status();
  } catch (const YAML::DeepRecursion& e) {
    return LocatedError(source, e.mark.is_null() ? 1 : e.mark.line + 1,
                        fmt::format("nesting is deeper than {} levels", limits.max_depth));
  } catch (const std::exception&) {
    // yaml-cpp could not read this JSON; lines stay as far as they got.
  }
  return Status::Ok();
}

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..." ->
// "syntax error ...".
std::string JsonMessage(const std::string& what) {
  size_t at = what.find(": ");
  size_t bracket = what.find("] ");
  if (at != std::string::npos) return what.substr(at + 2);
  if (bracket != std::string::npos) return what.substr(bracket + 2);
  return what;
}

}  // namespace

void NormalizeIntegralFloats(Json& value) {
  if (value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX) {
    value = static_cast<double>(value.get<uint64_t>());
  } else if (value.is_number_float()) {
    double f = value.get<double>();
    if (std::nearbyint(f) == f && std::fabs(f) < 9.2e18) value = static_cast<int64_t>(f);
  } else if (value.is_structured()) {
    for (Json& child : value) NormalizeIntegralFloats(child);
  }
}

Result<Json> ParseJsonDocument(std::string_view text, std::string_view source,
                               const ConvertLimits& limits, std::map<std::string, int>* lines) {
  RETURN_IF_ERROR(LinesFromYaml(text, source, limits, lines));
  std::vector<std::set<std::string>> keys;  // one set per open object; arrays push an empty set
  auto callback = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        keys.emplace_back();
        if (static_cast<int>(keys.size()) > limits.max_depth) {
          throw JsonLimitError{fmt::format("nesting is deeper than {} levels", limits.max_depth)};
        }
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second) {
          throw JsonLimitError{fmt::format("duplicate key {}", parsed.dump())};
        }
        break;
      case Json::parse_event_t::value:
        break;
    }
    return true;
  };
  try {
    Json value = Json::parse(text.begin(), text.end(), callback);
    NormalizeIntegralFloats(value);
    return value;
  } catch (const JsonLimitError& e) {
    return BadRequestError(fmt::format("{}: {}", source, e.message));
  } catch (const Json::parse_error& e) {
    return LocatedError(source, LineAt(text, e.byte > 0 ? e.byte - 1 : 0),
                        "invalid JSON: " + JsonMessage(e.what()));
  } catch (const std::exception& e) {
    return BadRequestError(fmt::format("{}: invalid JSON: {}", source, e.what()));
  }
}

}  // namespace pjemu::manifest
