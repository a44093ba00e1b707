// Given pod specs, the kubelet should build env, command and args by Kubernetes' rules.
#include "emulator/kubelet/container_env.h"

#include <catch2/catch.hpp>

namespace pjemu::kubelet {
namespace {

VarLookup Vars(std::map<std::string, std::string> m) {
  return [m](const std::string& k) -> std::optional<std::string> {
    auto it = m.find(k);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}

TEST_CASE("$(VAR) expansion follows Kubernetes' escaping rules", "[kubelet]") {
  auto [input, want] = GENERATE(table<std::string, std::string>({
      {"$(A)", "a"},
      {"x-$(A)-$(B)", "x-a-b"},
      {"$(MISSING)", "$(MISSING)"},
      {"$$(A)", "$(A)"},
      {"$$", "$"},
      {"cost $5", "cost $5"},
      {"$(A", "$(A"},
      {"$", "$"},
      {"$$$(A)", "$a"},
  }));
  CAPTURE(input);
  CHECK(ExpandVars(input, Vars({{"A", "a"}, {"B", "b"}})) == want);
}

TEST_CASE("env values expand against earlier entries only", "[kubelet]") {
  Json pod = {{"metadata", {{"name", "p"}, {"namespace", "ns1"}, {"labels", {{"app", "x"}}}}},
              {"spec", {{"nodeName", "n1"}}},
              {"status", {{"podIP", "127.42.0.2"}}}};
  Json c = {
      {"name", "c"},
      {"env",
       {{{"name", "LATE_REF"}, {"value", "$(FIRST)"}},
        {{"name", "FIRST"}, {"value", "one"}},
        {{"name", "SECOND"}, {"value", "$(FIRST)-two"}},
        {{"name", "POD"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
        {{"name", "APP"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.labels['app']"}}}}}},
        {{"name", "IP"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}},
        {{"name", "FIRST"}, {"value", "again"}}}}};
  auto env = ContainerEnv(pod, c, "spec.containers[0]");
  REQUIRE(env.ok());
  EnvList want = {{"LATE_REF", "$(FIRST)"},
                  {"FIRST", "again"},
                  {"SECOND", "one-two"},
                  {"POD", "p"},
                  {"APP", "x"},
                  {"IP", "127.42.0.2"}};
  CHECK(*env == want);
}

TEST_CASE("unsupported env sources name the field", "[kubelet]") {
  Json c = {{"env", {{{"name", "S"}, {"valueFrom", {{"secretKeyRef", {{"name", "s"}}}}}}}}};
  auto env = ContainerEnv(Json::object(), c, "spec.containers[1]");
  REQUIRE_FALSE(env.ok());
  CHECK(env.status().message().rfind("spec.containers[1].env[0].valueFrom: secretKeyRef", 0) == 0);
}

TEST_CASE("resourceFieldRef rounds up by the divisor", "[kubelet]") {
  Json c = {
      {"resources", {{"limits", {{"cpu", "1500m"}, {"memory", "1Gi"}}}}},
      {"env",
       {{{"name", "CPU"}, {"valueFrom", {{"resourceFieldRef", {{"resource", "limits.cpu"}}}}}},
        {{"name", "MEM"},
         {"valueFrom",
          {{"resourceFieldRef", {{"resource", "limits.memory"}, {"divisor", "1Mi"}}}}}}}}};
  auto env = ContainerEnv(Json::object(), c, "spec.containers[0]");
  REQUIRE(env.ok());
  CHECK(LookupEnv(*env, "CPU") == "2");
  CHECK(LookupEnv(*env, "MEM") == "1024");
}

TEST_CASE("command and args items expand against the final environment", "[kubelet]") {
  EnvList env = {{"EPOCHS", "3"}};
  CHECK(ExpandList(Json::array({"--epochs=$(EPOCHS)", "$$(EPOCHS)"}), env) ==
        std::vector<std::string>{"--epochs=3", "$(EPOCHS)"});
  CHECK(ExpandList(Json(), env).empty());
}

}  // namespace
}  // namespace pjemu::kubelet
