// Given pods in every state kubectl distinguishes, PodStatusText should print kubectl's STATUS
// column, and the phase helpers should say which pods are done.
#include "emulator/api/pod_status.h"

#include <catch2/catch.hpp>
#include <vector>

namespace pjemu::api {
namespace {

Json Pod(Json status, Json spec = Json::object(), Json meta = Json::object()) {
  meta["name"] = "p";
  if (!spec.contains("containers")) {
    spec["containers"] = Json::array({Json{{"name", "pytorch"}}});
  }
  return {{"metadata", meta}, {"spec", spec}, {"status", status}};
}

Json Container(Json state, bool ready = false) {
  return {{"name", "pytorch"}, {"ready", ready}, {"state", std::move(state)}};
}

Json Terminated(Json fields) { return {{"terminated", std::move(fields)}}; }
Json Waiting(const std::string& reason) { return {{"waiting", {{"reason", reason}}}}; }
Json Running() { return {{"running", {{"startedAt", "2024-01-01T00:00:01Z"}}}}; }

// A vector, not a Json: `{Container(...)}` passed as a Json is the container itself under clang
// (CWG 2137), an array under GCC.
Json WithContainers(Json status, std::vector<Json> containers) {
  status["containerStatuses"] = Json(std::move(containers));
  return status;
}

TEST_CASE("the phase, or status.reason, when no container says more", "[api]") {
  CHECK(PodStatusText(Pod({{"phase", "Pending"}})) == "Pending");
  CHECK(PodStatusText(Pod({{"phase", "Failed"}, {"reason", "Evicted"}})) == "Evicted");
  CHECK(PodStatusText(Pod(Json::object())).empty());
}

TEST_CASE("container states: waiting and terminated reasons, Signal and ExitCode", "[api]") {
  Json running = {{"phase", "Running"}};
  CHECK(PodStatusText(Pod(WithContainers(running, {Container(Waiting("ErrImagePull"))}))) ==
        "ErrImagePull");
  CHECK(PodStatusText(Pod(WithContainers(
            running, {Container(Terminated({{"reason", "OOMKilled"}, {"exitCode", 137}}))}))) ==
        "OOMKilled");
  CHECK(PodStatusText(Pod(WithContainers(
            running, {Container(Terminated({{"exitCode", 137}, {"signal", 9}}))}))) == "Signal:9");
  CHECK(PodStatusText(Pod(WithContainers(
            running, {Container(Terminated({{"exitCode", 3}, {"signal", 0}}))}))) == "ExitCode:3");
  CHECK(PodStatusText(Pod(WithContainers(running, {Container(Running(), true)}))) == "Running");
}

TEST_CASE("the first container with a state decides (kubectl walks them last to first)", "[api]") {
  Json status = WithContainers({{"phase", "Running"}},
                               {Container(Waiting("CrashLoopBackOff")),
                                Container(Terminated({{"reason", "Error"}, {"exitCode", 1}}))});
  CHECK(PodStatusText(Pod(status)) == "CrashLoopBackOff");
}

TEST_CASE("Completed with a running sidecar reads Running or NotReady", "[api]") {
  Json status = WithContainers({{"phase", "Running"}},
                               {Container(Terminated({{"reason", "Completed"}, {"exitCode", 0}})),
                                Container(Running(), true)});
  CHECK(PodStatusText(Pod(status)) == "NotReady");
  status["conditions"] = Json::array({Json{{"type", "Ready"}, {"status", "True"}}});
  CHECK(PodStatusText(Pod(status)) == "Running");
}

TEST_CASE("init containers: Init:N/M, Init:<reason>, Init:Signal and Init:ExitCode", "[api]") {
  Json spec = {{"initContainers", Json::array({Json{{"name", "a"}}, Json{{"name", "b"}}})}};
  auto init = [&](std::vector<Json> states) {
    Json statuses = Json::array();
    for (Json& s : states) statuses.push_back({{"name", "i"}, {"state", std::move(s)}});
    return Pod({{"phase", "Pending"}, {"initContainerStatuses", statuses}}, spec);
  };
  Json done = Terminated({{"reason", "Completed"}, {"exitCode", 0}});
  CHECK(PodStatusText(init({Waiting("PodInitializing")})) == "Init:0/2");
  CHECK(PodStatusText(init({done, Running()})) == "Init:1/2");
  CHECK(PodStatusText(init({done, Waiting("ImagePullBackOff")})) == "Init:ImagePullBackOff");
  CHECK(PodStatusText(init({Terminated({{"reason", "Error"}, {"exitCode", 1}})})) == "Init:Error");
  CHECK(PodStatusText(init({Terminated({{"exitCode", 137}, {"signal", 9}})})) == "Init:Signal:9");
  CHECK(PodStatusText(init({Terminated({{"exitCode", 2}})})) == "Init:ExitCode:2");
  // Every init container done: the containers decide.
  Json pod = init({done, done});
  pod["status"]["phase"] = "Running";
  pod["status"]["containerStatuses"] = Json::array({Container(Waiting("ContainerCreating"))});
  CHECK(PodStatusText(pod) == "ContainerCreating");
}

TEST_CASE("a pod being deleted reads Terminating, or Unknown when its node is lost", "[api]") {
  Json meta = {{"deletionTimestamp", "2024-01-01T00:00:09Z"}};
  CHECK(PodStatusText(Pod({{"phase", "Running"}}, Json::object(), meta)) == "Terminating");
  CHECK(PodStatusText(Pod({{"phase", "Running"}, {"reason", "NodeLost"}}, Json::object(), meta)) ==
        "Unknown");
}

TEST_CASE("PodPhase and IsPodTerminal", "[api]") {
  CHECK(PodPhase(Pod({{"phase", "Running"}})) == "Running");
  CHECK(PodPhase(Json::object()).empty());
  CHECK(IsPodTerminal(Pod({{"phase", "Succeeded"}})));
  CHECK(IsPodTerminal(Pod({{"phase", "Failed"}})));
  CHECK_FALSE(IsPodTerminal(Pod({{"phase", "Running"}})));
  CHECK_FALSE(IsPodTerminal(Pod({{"phase", "Pending"}})));
  CHECK_FALSE(IsPodTerminal(Json()));
}

}  // namespace
}  // namespace pjemu::api
