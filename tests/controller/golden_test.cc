// Given fixtures/golden/controller-*.input.yaml (a job plus a scripted pod history in the
// header comment), the controller should produce exactly the checked-in .want.yaml: pods,
// services, labels, env order and values, owner references, events and the final status.
// UPDATE_GOLDEN=1 rewrites the want files.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "emulator/pytorchjob/job_status.h"
#include "tests/controller/job_builder.h"

namespace pjemu::pytorchjob {
namespace {

using api::SetDefaults;

Json FromYaml(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      Json j = Json::object();
      for (const auto& kv : n) j[kv.first.as<std::string>()] = FromYaml(kv.second);
      return j;
    }
    case YAML::NodeType::Sequence: {
      Json j = Json::array();
      for (const auto& v : n) j.push_back(FromYaml(v));
      return j;
    }
    case YAML::NodeType::Scalar: {
      const std::string s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted
      static const std::regex kInt("-?[0-9]+");
      if (std::regex_match(s, kInt)) return std::stoll(s);
      if (s == "true" || s == "false") return s == "true";
      return s;
    }
    default:
      return nullptr;
  }
}

bool NeedsQuotes(const std::string& s) {
  static const std::regex kAmbiguous(
      "|-?[0-9.]+([eE][-+]?[0-9]+)?|true|false|True|False|yes|no|on|off|null|Null|~");
  return std::regex_match(s, kAmbiguous);
}

void Emit(YAML::Emitter& out, const Json& j) {
  if (j.is_object()) {
    out << YAML::BeginMap;
    for (auto it = j.begin(); it != j.end(); ++it) {
      out << YAML::Key << it.key() << YAML::Value;
      Emit(out, it.value());
    }
    out << YAML::EndMap;
  } else if (j.is_array()) {
    out << YAML::BeginSeq;
    for (const Json& v : j) Emit(out, v);
    out << YAML::EndSeq;
  } else if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (NeedsQuotes(s)) out << YAML::DoubleQuoted;
    out << s;
  } else if (j.is_null()) {
    out << YAML::Null;
  } else {
    out << j.dump();
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs the scripted history: reconcile at t=0 (creates), all pods Running at t=5s, master-0
// Succeeded at t=60s, one more reconcile at t=61s (the finished branch).
Json Run(const Json& submitted) {
  const Time t0 = FakeClock().Now();
  Json job = SetDefaults(submitted);
  Json out = Json::object();
  std::vector<Json> pods;
  std::vector<Json> services;
  Json events = Json::array();
  auto pass = [&](Time now) {
    Sync s = ComputeJobStatus(job, pods, services, now);
    REQUIRE(s.error.ok());
    for (const Action& a : s.actions) {
      if (a.Is(Action::Kind::kCreate, api::Pods())) pods.push_back(a.object);
      if (a.Is(Action::Kind::kCreate, api::Services())) services.push_back(a.object);
      if (a.kind == Action::Kind::kEvent) {
        events.push_back(FormatTime(now) + " " + a.event_type + " " + a.reason + ": " + a.message);
      }
    }
    job["status"] = s.status;
  };
  pass(t0);
  out["pods"] = pods;
  out["services"] = services;
  for (Json& p : pods) p["status"]["phase"] = "Running";
  pass(t0 + 5s);
  pods[0]["status"]["phase"] = "Succeeded";
  pass(t0 + 60s);
  pass(t0 + 61s);
  out["events"] = events;
  out["status"] = job["status"];
  return out;
}

TEST_CASE("golden: controller Master 1 + Worker 2", "[controller][golden]") {
  const std::string base =
      std::string(PJEMU_SOURCE_DIR) + "/fixtures/golden/controller-master-1-worker-2";
  YAML::Node input = YAML::LoadFile(base + ".input.yaml");
  YAML::Emitter emitter;
  emitter.SetIndent(2);
  Emit(emitter, Run(FromYaml(input)));
  const std::string got = std::string(emitter.c_str()) + "\n";
  const char* update = std::getenv("UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(base + ".want.yaml") << got;
  }
  const std::string want = ReadFile(base + ".want.yaml");
  REQUIRE_FALSE(want.empty());
  CHECK(got == want);
  // The emitted YAML reads back as the same objects (no type ambiguity in the golden file).
  CHECK(FromYaml(YAML::Load(want)) == Run(FromYaml(input)));
}

}  // namespace
}  // namespace pjemu::pytorchjob
