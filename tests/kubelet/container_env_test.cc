// Given pod specs, the kubelet should build env, command and args by Kubernetes' rules.
#include "emulator/kubelet/container_env.h"

#include <catch2/catch.hpp>

namespace pjemu::kubelet {
namespace {

// A store of ConfigMaps and Secrets (and Nodes) by kind and name.
ObjectLookup Objects(std::map<std::string, Json> objects) {
  return [objects](const api::ResourceType& type, const std::string& name) -> std::optional<Json> {
    auto it = objects.find(type.kind + "/" + name);
    if (it == objects.end()) return std::nullopt;
    return it->second;
  };
}
const ObjectLookup kNone = Objects({});

Json Pod() {
  return {{"metadata", {{"name", "p"}, {"namespace", "ns1"}}}, {"spec", {{"nodeName", "n1"}}}};
}

Json Env(const std::string& name, Json from) {
  return {{"name", name}, {"valueFrom", std::move(from)}};
}

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
  auto env = ContainerEnv(pod, c, "spec.containers[0]", kNone);
  REQUIRE(env.ok());
  EnvList want = {{"LATE_REF", "$(FIRST)"},
                  {"FIRST", "again"},
                  {"SECOND", "one-two"},
                  {"POD", "p"},
                  {"APP", "x"},
                  {"IP", "127.42.0.2"}};
  CHECK(*env == want);
}

TEST_CASE("a malformed env source names the field", "[kubelet]") {
  Json c = {{"env", {Env("S", {{"fieldRef", {{"fieldPath", "spec.bogus"}}}})}}};
  auto env = ContainerEnv(Json::object(), c, "spec.containers[1]", kNone);
  REQUIRE_FALSE(env.ok());
  CHECK(env.status().code() == Code::kInvalid);
  CHECK(env.status().message() ==
        "spec.containers[1].env[0].valueFrom: fieldRef.fieldPath: Unsupported value: "
        "\"spec.bogus\"");
  Json empty = {{"env", {Env("S", Json::object())}}};
  CHECK(ContainerEnv(Json::object(), empty, "c", kNone).status().code() == Code::kInvalid);
}

TEST_CASE("configMapKeyRef and secretKeyRef read the pod's namespace, Secrets decoded",
          "[kubelet]") {
  auto objects = Objects({{"ConfigMap/cfg", {{"data", {{"lr", "0.01"}}}}},
                          {"Secret/tok", {{"data", {{"token", "czNjcjN0"}}}}}});  // s3cr3t
  Json c = {{"env",
             {Env("LR", {{"configMapKeyRef", {{"name", "cfg"}, {"key", "lr"}}}}),
              Env("TOKEN", {{"secretKeyRef", {{"name", "tok"}, {"key", "token"}}}}),
              {{"name", "ARG"}, {"value", "--lr=$(LR)"}}}}};
  auto env = ContainerEnv(Pod(), c, "spec.containers[0]", objects);
  REQUIRE(env.ok());
  CHECK(*env == EnvList{{"LR", "0.01"}, {"TOKEN", "s3cr3t"}, {"ARG", "--lr=0.01"}});
}

TEST_CASE("missing references give the kubelet's CreateContainerConfigError messages",
          "[kubelet]") {
  auto objects = Objects({{"ConfigMap/cfg", {{"data", {{"lr", "0.01"}}}}},
                          {"Secret/tok", {{"data", {{"token", "czNjcjN0"}}}}}});
  auto [from, want] = GENERATE(table<Json, std::string>({
      {{{"configMapKeyRef", {{"name", "x"}, {"key", "k"}}}}, "configmap \"x\" not found"},
      {{{"configMapKeyRef", {{"name", "cfg"}, {"key", "y"}}}},
       "couldn't find key y in ConfigMap ns1/cfg"},
      {{{"secretKeyRef", {{"name", "x"}, {"key", "k"}}}}, "secret \"x\" not found"},
      {{{"secretKeyRef", {{"name", "tok"}, {"key", "y"}}}},
       "couldn't find key y in Secret ns1/tok"},
  }));
  CAPTURE(from);
  Json c = {{"env", {Env("V", from)}}};
  auto env = ContainerEnv(Pod(), c, "spec.containers[0]", objects);
  REQUIRE_FALSE(env.ok());
  CHECK(env.status().code() == Code::kNotFound);  // retried until the object appears
  CHECK(env.status().message() == want);
}

TEST_CASE("optional references that are missing leave the variable out", "[kubelet]") {
  auto objects = Objects({{"ConfigMap/cfg", {{"data", {{"lr", "0.01"}}}}}});
  Json c = {
      {"envFrom", {{{"configMapRef", {{"name", "cfg"}}}}}},
      {"env",
       {Env("A", {{"configMapKeyRef", {{"name", "x"}, {"key", "k"}, {"optional", true}}}}),
        Env("B", {{"configMapKeyRef", {{"name", "cfg"}, {"key", "k"}, {"optional", true}}}}),
        Env("C", {{"secretKeyRef", {{"name", "x"}, {"key", "k"}, {"optional", true}}}}),
        Env("lr", {{"configMapKeyRef", {{"name", "cfg"}, {"key", "k"}, {"optional", true}}}})}}};
  auto env = ContainerEnv(Pod(), c, "spec.containers[0]", objects);
  REQUIRE(env.ok());
  CHECK(*env == EnvList{{"lr", "0.01"}});  // the envFrom value stays
  Json from = {{"envFrom", {{{"secretRef", {{"name", "x"}, {"optional", true}}}}}}};
  CHECK(ContainerEnv(Pod(), from, "c", objects)->empty());
  from["envFrom"][0]["secretRef"].erase("optional");
  CHECK(ContainerEnv(Pod(), from, "c", objects).status().message() == "secret \"x\" not found");
}

TEST_CASE("envFrom comes first with its prefix, env wins, invalid names are skipped", "[kubelet]") {
  auto objects =
      Objects({{"ConfigMap/cfg", {{"data", {{"B", "cm-b"}, {"A", "cm-a"}, {"1x", "no"}}}}},
               {"Secret/s", {{"data", {{"USER", "YWxpY2U="}, {"a b", "eA=="}}}}}});
  Json c = {
      {"envFrom",
       {{{"configMapRef", {{"name", "cfg"}}}}, {{"prefix", "S_"}, {"secretRef", {{"name", "s"}}}}}},
      {"env", {{{"name", "B"}, {"value", "env-b $(A) $(S_USER)"}}}}};
  auto env = ContainerEnv(Pod(), c, "spec.containers[0]", objects);
  REQUIRE(env.ok());
  CHECK(*env == EnvList{{"A", "cm-a"}, {"B", "env-b cm-a alice"}, {"S_USER", "alice"}});
  CHECK(EnvFromWarnings(Pod(), c, objects) ==
        std::vector<std::string>{
            "Keys [1x] from the EnvFrom configMap ns1/cfg were skipped since they are "
            "considered invalid environment variable names.",
            "Keys [S_a b] from the EnvFrom secret ns1/s were skipped since they are considered "
            "invalid environment variable names."});
  Json bad = {{"envFrom", {Json::object()}}};
  CHECK(ContainerEnv(Pod(), bad, "spec.containers[0]", objects).status().code() == Code::kInvalid);
}

TEST_CASE("a Secret value that is not base64 is an error naming the key", "[kubelet]") {
  auto objects = Objects({{"Secret/s", {{"data", {{"k", "!!"}}}}}});
  Json c = {{"env", {Env("V", {{"secretKeyRef", {{"name", "s"}, {"key", "k"}}}})}}};
  auto env = ContainerEnv(Pod(), c, "spec.containers[0]", objects);
  REQUIRE_FALSE(env.ok());
  CHECK(env.status().code() == Code::kInvalid);
  CHECK(env.status().message().find("data[k]: illegal base64 data at input byte 0") !=
        std::string::npos);
}

TEST_CASE("fieldRef paths the downward API offers", "[kubelet]") {
  Json pod = {{"metadata",
               {{"name", "p"},
                {"namespace", "ns1"},
                {"uid", "u1"},
                {"labels", {{"app", "x"}}},
                {"annotations", {{"note", "hi"}}}}},
              {"spec", {{"nodeName", "n1"}, {"serviceAccountName", "trainer"}}},
              {"status",
               {{"podIP", "127.42.0.2"},
                {"podIPs", {{{"ip", "127.42.0.2"}}, {{"ip", "fd00::2"}}}},
                {"hostIP", "127.0.0.1"}}}};
  auto [path, want] = GENERATE(table<std::string, std::string>({
      {"metadata.name", "p"},
      {"metadata.namespace", "ns1"},
      {"metadata.uid", "u1"},
      {"metadata.labels['app']", "x"},
      {"metadata.annotations['note']", "hi"},
      {"metadata.labels['absent']", ""},
      {"spec.nodeName", "n1"},
      {"spec.serviceAccountName", "trainer"},
      {"status.podIP", "127.42.0.2"},
      {"status.podIPs", "127.42.0.2,fd00::2"},
      {"status.hostIP", "127.0.0.1"},
      {"status.hostIPs", "127.0.0.1"},
  }));
  CAPTURE(path);
  Json c = {{"env", {Env("V", {{"fieldRef", {{"fieldPath", path}}}})}}};
  auto env = ContainerEnv(pod, c, "spec.containers[0]", kNone);
  REQUIRE(env.ok());
  CHECK(LookupEnv(*env, "V") == want);
}

TEST_CASE("a missing limit falls back to the node's allocatable", "[kubelet]") {
  Json node;
  node["status"]["allocatable"] = {
      {"cpu", "8"}, {"memory", "16Gi"}, {"ephemeral-storage", "100Gi"}};
  auto objects = Objects({{"Node/n1", node}});
  auto rf = [](const std::string& res, const std::string& divisor) {
    Json ref = {{"resource", res}};
    if (!divisor.empty()) ref["divisor"] = divisor;
    return Env("V", {{"resourceFieldRef", ref}});
  };
  auto [res, divisor, want, want_without_node] =
      GENERATE(table<std::string, std::string, std::string, std::string>({
          {"limits.cpu", "", "8", "0"},
          {"limits.memory", "1Gi", "16", "0"},
          {"limits.ephemeral-storage", "1Gi", "100", "0"},
          {"requests.memory", "", "64", "64"},  // requests never fall back
          {"requests.cpu", "", "0", "0"},
      }));
  CAPTURE(res);
  Json c = {{"resources", {{"requests", {{"memory", "64"}}}}}, {"env", {rf(res, divisor)}}};
  CHECK(LookupEnv(*ContainerEnv(Pod(), c, "c", objects), "V") == want);
  CHECK(LookupEnv(*ContainerEnv(Pod(), c, "c", kNone), "V") == want_without_node);
}

TEST_CASE("the image's env lies under the container's", "[kubelet]") {
  EnvList image = {{"PATH", "/usr/bin:/bin"}, {"PET_TEE", "1"}};
  EnvList ctr = {{"A", "a"}, {"PET_TEE", "3"}};
  CHECK(ImageEnvUnder(image, ctr) ==
        EnvList{{"PATH", "/usr/bin:/bin"}, {"PET_TEE", "3"}, {"A", "a"}});
}

TEST_CASE("resourceFieldRef rounds up by the divisor", "[kubelet]") {
  Json c = {
      {"resources", {{"limits", {{"cpu", "1500m"}, {"memory", "1Gi"}}}}},
      {"env",
       {{{"name", "CPU"}, {"valueFrom", {{"resourceFieldRef", {{"resource", "limits.cpu"}}}}}},
        {{"name", "MEM"},
         {"valueFrom",
          {{"resourceFieldRef", {{"resource", "limits.memory"}, {"divisor", "1Mi"}}}}}}}}};
  auto env = ContainerEnv(Json::object(), c, "spec.containers[0]", kNone);
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
