// Reader: yaml-cpp helpers of the scenario loader (private to emulator/scenario): typed field
// reads that turn every problem into "path:line: field: problem". Callers catch YAML::Exception.
// Thread safety: one Reader per parse.
#pragma once

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>

#include "emulator/faults/injector.h"
#include "emulator/scenario/scenario.h"

namespace pjemu::scenario::internal {

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  Status Error(const YAML::Node& node, const std::string& field, const std::string& problem) {
    return Status(Code::kInvalid,
                  path_ + ":" + std::to_string(Line(node)) + ": " + field + ": " + problem);
  }
  static int Line(const YAML::Node& node) { return node.Mark().line + 1; }

  // Rejects keys of a mapping that are not in `known`.
  Status Keys(const YAML::Node& map, const std::string& where, std::set<std::string> known) {
    if (!map.IsMap()) return Error(map, where, "expected a mapping");
    for (const auto& kv : map) {
      std::string key = kv.first.as<std::string>();
      if (!known.count(key)) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        return Error(kv.first, where + "." + key, "unknown field (known: " + list + ")");
      }
    }
    return Status::Ok();
  }
  Result<std::string> String(const YAML::Node& n, const std::string& field) {
    if (!n.IsScalar()) return Error(n, field, "expected a string");
    return n.as<std::string>();
  }
  Result<int> Int(const YAML::Node& n, const std::string& field) {
    int v = 0;
    if (!n.IsScalar() || !YAML::convert<int>::decode(n, v))
      return Error(n, field, "expected an integer");
    return v;
  }
  Result<Duration> Dur(const YAML::Node& n, const std::string& field) {
    if (!n.IsScalar()) return Error(n, field, "expected a duration such as 30s or 5m");
    auto d = ParseDuration(n.as<std::string>());
    if (!d)
      return Error(n, field,
                   "expected a duration such as 30s or 5m, got \"" + n.as<std::string>() + "\"");
    return *d;
  }
  Result<Json> ToJson(const YAML::Node& n) {
    // Scalars keep their YAML type: ints, floats, bools, else strings.
    if (n.IsMap()) {
      Json out = Json::object();
      for (const auto& kv : n) {
        ASSIGN_OR_RETURN(out[kv.first.as<std::string>()], ToJson(kv.second));
      }
      return out;
    }
    if (n.IsSequence()) {
      Json out = Json::array();
      for (const auto& item : n) {
        ASSIGN_OR_RETURN(Json v, ToJson(item));
        out.push_back(std::move(v));
      }
      return out;
    }
    if (n.IsNull()) return Json(nullptr);
    std::string s = n.as<std::string>();
    if (n.Tag() == "!") return Json(s);  // quoted
    long long i;
    double d;
    bool b;
    if (YAML::convert<long long>::decode(n, i)) return Json(i);
    if (YAML::convert<double>::decode(n, d)) return Json(d);
    if (YAML::convert<bool>::decode(n, b)) return Json(b);
    return Json(s);
  }

  Status Options(const YAML::Node& n, scenario::Options* o);
  Status Job(const YAML::Node& n, JobSource* job);
  Status Process(const YAML::Node& n, ProcessRule* rule);
  Status Fault(const YAML::Node& n, faults::FaultSpec* f);  // scenario_items.cc
  Status Expect(const YAML::Node& n, Expectation* e);       // expectation_items.cc

 private:
  std::string path_;
};

}  // namespace pjemu::scenario::internal
