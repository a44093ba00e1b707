// URL parsing for the API server: splits a request target into the resource it names
// (group/version/plural, namespace, name, subresource) or a non-resource path (/version,
// discovery, OpenAPI), and decodes the form-encoded query. This is where names are checked
// before they reach anything else: traversal ("..") and encoded slashes are refused here.
// Thread safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::apiserver {

// A form-decoded query string ("+" is a space). A repeated key keeps its first value for Get;
// GetAll gives them all.
class Query {
 public:
  bool Has(const std::string& key) const { return values_.count(key) > 0; }
  std::string Get(const std::string& key, const std::string& fallback = "") const;
  // Go's strconv.ParseBool ("1 t T TRUE true True" / "0 f F FALSE false False"); an absent
  // key is `fallback`, a malformed value a kBadRequest naming the parameter.
  Result<bool> GetBool(const std::string& key, bool fallback = false) const;
  // A decimal integer; absent -> nullopt; malformed -> kBadRequest naming the parameter.
  Result<std::optional<long long>> GetInt(const std::string& key) const;
  // Every value of a repeated key, in order (exec's `command`); empty when absent.
  std::vector<std::string> GetAll(const std::string& key) const;
  // Adds a value (the first one is what Get returns).
  void Set(const std::string& key, const std::string& value) {
    values_.emplace(key, value);
    all_[key].push_back(value);
  }

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<std::string>> all_;
};

// Go's strconv.ParseBool.
std::optional<bool> ParseBool(std::string_view text);
// Percent-decoding; `plus_is_space` for query strings. nullopt on a malformed escape.
std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space);
Result<Query> ParseQuery(std::string_view raw);

// The path-segment rule of the real server (IsValidPathSegmentName): not "." or "..", no "/"
// or "%". `what` names the field in the message ("name", "namespace").
Status ValidatePathSegment(std::string_view segment, std::string_view what);

struct ApiPath {
  // Set for a resource request; nullptr for a non-resource path (then `path` says which).
  const api::ResourceType* type = nullptr;
  std::string path;         // the decoded path without a trailing slash, "/" for the root
  std::string version;      // the version the request names (the type's, or an older served one)
  std::string ns;           // "" = cluster-scoped or all namespaces
  std::string name;         // "" = the collection
  std::string subresource;  // "", "status", "scale", "log", "eviction", "exec", "attach",
                            // "portforward"
};

// Parses the path part of `target` (the query is split off into *query). Unknown resources
// and malformed shapes are kNotFound with the real server's message; traversal and encoded
// slashes are kBadRequest.
Result<ApiPath> ParseTarget(std::string_view target, Query* query);

// The 404 message for paths the server does not serve.
Status UnknownPathError();

}  // namespace pjemu::apiserver
