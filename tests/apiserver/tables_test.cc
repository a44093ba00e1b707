// Pod columns of the Table output: kubectl's STATUS logic, READY, RESTARTS and -o wide cells.
#include "emulator/apiserver/tables.h"

#include <catch2/catch.hpp>

#include "emulator/api/pod_status.h"

namespace pjemu::apiserver {
namespace {

Json Pod(Json status, Json meta_extra = Json::object()) {
  Json meta = {
      {"name", "p"}, {"namespace", "default"}, {"creationTimestamp", "2024-01-01T00:00:00Z"}};
  meta.update(meta_extra);
  return {{"metadata", meta},
          {"spec", {{"containers", {{{"name", "pytorch"}}}}, {"nodeName", "node-0"}}},
          {"status", status}};
}

Json Terminated(const char* reason, int exit_code) {
  return {{"name", "pytorch"},
          {"ready", false},
          {"restartCount", 0},
          {"state", {{"terminated", {{"reason", reason}, {"exitCode", exit_code}}}}}};
}

TEST_CASE("pod STATUS follows kubectl's rules", "[apiserver]") {
  auto [status, want] = GENERATE(table<Json, std::string>({
      {Json{{"phase", "Pending"}}, "Pending"},
      {Json{{"phase", "Succeeded"}, {"containerStatuses", {Terminated("Completed", 0)}}},
       "Completed"},
      {Json{{"phase", "Failed"}, {"containerStatuses", {Terminated("Error", 1)}}}, "Error"},
      {Json{{"phase", "Failed"}, {"containerStatuses", {Terminated("", 137)}}}, "ExitCode:137"},
      {Json{{"phase", "Running"},
            {"containerStatuses",
             {{{"name", "pytorch"},
               {"ready", false},
               {"restartCount", 3},
               {"state", {{"waiting", {{"reason", "CrashLoopBackOff"}}}}}}}}},
       "CrashLoopBackOff"},
      {Json{{"phase", "Running"},
            {"containerStatuses",
             {{{"name", "pytorch"},
               {"ready", true},
               {"restartCount", 0},
               {"state", {{"running", {{"startedAt", "2024-01-01T00:00:01Z"}}}}}}}}},
       "Running"},
      {Json{{"phase", "Pending"},
            {"initContainerStatuses",
             {{{"name", "init"}, {"state", {{"waiting", {{"reason", "PodInitializing"}}}}}}}}},
       "Init:0/0"},
  }));
  CAPTURE(status);
  CHECK(api::PodStatusText(Pod(status)) == want);
}

TEST_CASE("a pod being deleted shows Terminating", "[apiserver]") {
  Json pod = Pod(Json{{"phase", "Running"}}, Json{{"deletionTimestamp", "2024-01-01T00:00:09Z"}});
  CHECK(api::PodStatusText(pod) == "Terminating");
}

TEST_CASE("pod rows carry READY, RESTARTS, AGE and the wide columns", "[apiserver]") {
  Json pod = Pod(Json{
      {"phase", "Running"},
      {"podIP", "10.0.0.5"},
      {"containerStatuses",
       {{{"name", "pytorch"},
         {"ready", true},
         {"restartCount", 2},
         {"lastState", {{"terminated", {{"exitCode", 1}, {"finishedAt", "2024-01-01T00:00:30Z"}}}}},
         {"state", {{"running", {{"startedAt", "2024-01-01T00:00:31Z"}}}}}}}}});
  Time now = Time(std::chrono::seconds(FakeClock::kEpochSeconds + 90));
  Json table = ObjectToTable(api::Pods(), pod, now);
  std::vector<std::string> columns;
  for (const auto& c : table["columnDefinitions"]) columns.push_back(c["name"]);
  CHECK(columns == std::vector<std::string>{"Name", "Ready", "Status", "Restarts", "Age", "IP",
                                            "Node", "Nominated Node", "Readiness Gates"});
  CHECK(table["columnDefinitions"][5]["priority"] == 1);
  CHECK(table["rows"][0]["cells"] == Json({"p", "1/1", "Running", "2 (60s ago)", "90s", "10.0.0.5",
                                           "node-0", "<none>", "<none>"}));
}

TEST_CASE("kinds without printer columns get NAME and AGE", "[apiserver]") {
  const api::ResourceType* hpa = api::FindResource("autoscaling", "horizontalpodautoscalers");
  REQUIRE(hpa != nullptr);
  Json obj = {{"metadata", {{"name", "c"}, {"creationTimestamp", "2024-01-01T00:00:00Z"}}}};
  Json table = ObjectToTable(*hpa, obj, Time(std::chrono::seconds(FakeClock::kEpochSeconds + 5)));
  CHECK(table["rows"][0]["cells"] == Json({"c", "5s"}));
  CHECK(WantsTable("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"));
  CHECK_FALSE(WantsTable("application/json"));
}

// Column names and the first row's cells of one object's table, 5s after its creation.
std::pair<std::vector<std::string>, Json> TableOf(const api::ResourceType& type, Json object) {
  object["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z";
  Json table =
      ObjectToTable(type, object, Time(std::chrono::seconds(FakeClock::kEpochSeconds + 5)));
  std::vector<std::string> columns;
  for (const auto& c : table["columnDefinitions"]) {
    if (c["priority"] == 0) columns.push_back(c["name"]);
  }
  return {columns, table["rows"][0]["cells"]};
}

TEST_CASE("poddisruptionbudgets print kubectl's columns", "[apiserver]") {
  using Names = std::vector<std::string>;
  auto [cols, row] =
      TableOf(api::PodDisruptionBudgets(), {{"metadata", {{"name", "keep"}}},
                                            {"spec", {{"minAvailable", "50%"}}},
                                            {"status", {{"disruptionsAllowed", 1}}}});
  CHECK(cols == Names{"Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"});
  CHECK(row == Json({"keep", "50%", "N/A", 1, "5s"}));
  auto [cols2, unset] = TableOf(api::PodDisruptionBudgets(), {{"metadata", {{"name", "max"}}},
                                                              {"spec", {{"maxUnavailable", 2}}}});
  CHECK(unset == Json({"max", "N/A", "2", 0, "5s"}));
}

TEST_CASE("batch/v1 jobs print kubectl 1.33's columns", "[apiserver]") {
  using Names = std::vector<std::string>;
  Json job = {{"metadata", {{"name", "pi"}}},
              {"spec",
               {{"completions", 3},
                {"parallelism", 1},
                {"template", {{"spec", {{"containers", {{{"name", "pi"}, {"image", "busybox"}}}}}}}}}},
              {"status",
               {{"succeeded", 1},
                {"startTime", "2024-01-01T00:00:01Z"},
                {"conditions", Json::array()}}}};
  auto [cols, row] = TableOf(api::Jobs(), job);
  CHECK(cols == Names{"Name", "Status", "Completions", "Duration", "Age"});
  CHECK(row == Json({"pi", "Running", "1/3", "4s", "5s", "pi", "busybox", "<none>"}));
  job["status"]["completionTime"] = "2024-01-01T00:00:03Z";
  job["status"]["conditions"] = Json::array({{{"type", "Complete"}, {"status", "True"}}});
  job["spec"].erase("completions");
  job["spec"]["parallelism"] = 2;
  auto [cols2, done] = TableOf(api::Jobs(), job);
  CHECK(done == Json({"pi", "Complete", "1/1 of 2", "2s", "5s", "pi", "busybox", "<none>"}));
}

TEST_CASE("config and storage kinds print kubectl's columns", "[apiserver]") {
  using Names = std::vector<std::string>;
  auto [cm_cols, cm] = TableOf(
      api::ConfigMaps(),
      {{"metadata", {{"name", "train"}}}, {"data", {{"a", "1"}}}, {"binaryData", {{"b", "AA=="}}}});
  CHECK(cm_cols == Names{"Name", "Data", "Age"});
  CHECK(cm == Json({"train", "2", "5s"}));
  auto [s_cols, secret] =
      TableOf(api::Secrets(),
              {{"metadata", {{"name", "tok"}}}, {"type", "Opaque"}, {"data", {{"token", "YWJj"}}}});
  CHECK(s_cols == Names{"Name", "Type", "Data", "Age"});
  CHECK(secret == Json({"tok", "Opaque", "1", "5s"}));
  Json pvc = {
      {"metadata", {{"name", "data"}}},
      {"spec",
       {{"volumeName", "pvc-1"}, {"storageClassName", "standard"}, {"volumeMode", "Filesystem"}}},
      {"status",
       {{"phase", "Bound"},
        {"capacity", {{"storage", "1Gi"}}},
        {"accessModes", {"ReadWriteMany", "ReadWriteOnce"}}}}};
  auto [c_cols, claim] = TableOf(api::PersistentVolumeClaims(), pvc);
  CHECK(c_cols ==
        Names{"Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "Age"});
  CHECK(claim ==
        Json({"data", "Bound", "pvc-1", "1Gi", "RWO,RWX", "standard", "5s", "Filesystem"}));
  Json pv = {{"metadata", {{"name", "pvc-1"}}},
             {"spec",
              {{"capacity", {{"storage", "1Gi"}}},
               {"accessModes", {"ReadWriteOnce"}},
               {"persistentVolumeReclaimPolicy", "Delete"},
               {"storageClassName", "standard"},
               {"claimRef", {{"namespace", "default"}, {"name", "data"}}}}},
             {"status", {{"phase", "Bound"}}}};
  auto [v_cols, volume] = TableOf(api::PersistentVolumes(), pv);
  CHECK(v_cols == Names{"Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim",
                        "StorageClass", "Reason", "Age"});
  CHECK(volume ==
        Json({"pvc-1", "1Gi", "RWO", "Delete", "Bound", "default/data", "standard", "", "5s", ""}));
  Json sc = {{"metadata",
              {{"name", "standard"},
               {"annotations", {{"storageclass.kubernetes.io/is-default-class", "true"}}}}},
             {"provisioner", "rancher.io/local-path"},
             {"volumeBindingMode", "WaitForFirstConsumer"}};
  auto [sc_cols, cls] = TableOf(api::StorageClasses(), sc);
  CHECK(sc_cols == Names{"Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode",
                         "AllowVolumeExpansion", "Age"});
  CHECK(cls == Json({"standard (default)", "rancher.io/local-path", "Delete",
                     "WaitForFirstConsumer", "false", "5s"}));
}

}  // namespace
}  // namespace pjemu::apiserver
