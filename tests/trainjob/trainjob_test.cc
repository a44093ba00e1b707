// Given a TrainJob as admission stores it, its runtime, its JobSet and a fake `now`, the
// TrainJob controller should build and follow the JobSet as Trainer v2.3.0 does
// (BEHAVIOUR.md cites each TEST_CASE by its TJ number).
#include <catch2/catch.hpp>

#include "emulator/api/jobset.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/trainjob.h"
#include "emulator/trainjob/build.h"
#include "emulator/trainjob/sync.h"

namespace pjemu::trainjob {
namespace {

namespace atj = api::trainjob;
using Kind = Action::Kind;

const Time kT0 = FakeClock().Now();

// The migration guide's shape: runtimeRef torch-distributed, numNodes 2 (numProcPerNode 2).
Json Guide(const std::string& trainer_extra = "{}") {
  Json tj = Json::parse(R"({
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"name": "pytorch-simple", "namespace": "kubeflow", "uid": "tj-uid",
                 "creationTimestamp": ")" + FormatTime(kT0) + R"("},
    "spec": {"runtimeRef": {"name": "torch-distributed"},
      "trainer": {"numNodes": 2, "numProcPerNode": 2,
        "image": "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727",
        "command": ["torchrun", "/opt/trainer-v2/ddp_world.py"]}}})");
  tj["spec"]["trainer"].update(Json::parse(trainer_extra));
  atj::SetDefaults(tj);
  return tj;
}

const Json& NodeContainer(const Json& js) {
  return js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0];
}

std::string EnvValue(const Json& container, const std::string& name) {
  for (const Json& e : container["env"]) {
    if (e["name"] == name) return e.contains("value") ? e["value"].get<std::string>() : e.dump();
  }
  return "<absent>";
}

Json Conditions(const Sync& s) { return s.status.value("conditions", Json::array()); }

TEST_CASE("TJ1 the default runtime's JobSet: named after the TrainJob, numNodes Jobs' pods, PET_* env", "[trainjob]") {
  const Json runtime = atj::DefaultClusterTrainingRuntime();
  CHECK(runtime["metadata"]["name"] == "torch-distributed");
  CHECK(NodeContainer(runtime["spec"]["template"])["image"] == atj::kDefaultRuntimeImage);
  CHECK_FALSE(NodeContainer(runtime["spec"]["template"]).contains("command"));
  Json js = DesiredJobSet(Guide(), runtime);
  CHECK(js["apiVersion"] == "jobset.x-k8s.io/v1alpha2");
  CHECK(js["metadata"]["name"] == "pytorch-simple");
  CHECK(js["metadata"]["namespace"] == "kubeflow");
  CHECK(js["metadata"]["ownerReferences"][0]["kind"] == "TrainJob");
  CHECK(js["metadata"]["ownerReferences"][0]["controller"] == true);
  CHECK(js["spec"]["suspend"] == false);
  const Json& rjob = js["spec"]["replicatedJobs"][0];
  CHECK(rjob["name"] == "node");
  CHECK(rjob["template"]["spec"]["parallelism"] == 2);
  CHECK(rjob["template"]["spec"]["completions"] == 2);
  const Json& c = NodeContainer(js);
  CHECK(c["image"] == "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727");
  CHECK(c["command"] == Json::array({"torchrun", "/opt/trainer-v2/ddp_world.py"}));
  CHECK(EnvValue(c, "PET_NNODES") == "2");
  CHECK(EnvValue(c, "PET_NPROC_PER_NODE") == "2");
  CHECK_THAT(EnvValue(c, "PET_NODE_RANK"),
             Catch::Contains("metadata.annotations['batch.kubernetes.io/job-completion-index']"));
  CHECK(EnvValue(c, "PET_MASTER_ADDR") == "pytorch-simple-node-0-0.pytorch-simple");
  CHECK(EnvValue(c, "PET_MASTER_PORT") == "29500");
  for (const char* v1 : {"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"}) {
    CHECK(EnvValue(c, v1) == "<absent>");
  }
  CHECK(c["ports"][0]["containerPort"] == 29500);
}

TEST_CASE("TJ2 numProcPerNode: the trainer's, else auto, and auto with CPUs and no GPU is the CPU count", "[trainjob]") {
  const Json runtime = atj::DefaultClusterTrainingRuntime();
  CHECK(NumProcPerNode(Guide(), runtime) == "2");
  Json autod = Guide(R"({"resourcesPerNode": {"limits": {"cpu": "3"}}})");
  autod["spec"]["trainer"].erase("numProcPerNode");
  CHECK(NumProcPerNode(autod, runtime) == "3");
  autod["spec"]["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"] = 1;
  CHECK(NumProcPerNode(autod, runtime) == "auto");
  autod["spec"]["trainer"].erase("resourcesPerNode");
  CHECK(NumProcPerNode(autod, runtime) == "auto");
  autod["spec"]["trainer"].erase("numNodes");
  CHECK(NumNodes(autod, runtime) == 1);  // the runtime's mlPolicy.numNodes
  CHECK(EnvValue(NodeContainer(DesiredJobSet(autod, runtime)), "PET_NNODES") == "1");
}

TEST_CASE("TJ3 admission: CRD defaults, reserved env refused by the webhook, immutable fields", "[trainjob]") {
  Json tj = Guide();
  CHECK(tj["spec"]["runtimeRef"]["kind"] == "ClusterTrainingRuntime");
  CHECK(tj["spec"]["runtimeRef"]["apiGroup"] == "trainer.kubeflow.org");
  CHECK(tj["spec"]["managedBy"] == "trainer.kubeflow.org/trainjob-controller");
  CHECK(atj::Validate(tj, nullptr, nullptr).ok());
  Json reserved = Guide(R"({"env": [{"name": "PET_NNODES", "value": "4"}, {"name": "X", "value": "1"},
                                    {"name": "PET_MASTER_PORT", "value": "1"}]})");
  Status s = atj::Validate(reserved, nullptr, nullptr);
  CHECK(s.code() == Code::kForbidden);
  CHECK_THAT(s.message(), Catch::StartsWith("admission webhook \"validator.trainjob.trainer.kubeflow.org\" denied the request: spec.trainer.env: Invalid value"));
  CHECK_THAT(s.message(), Catch::EndsWith("must not have reserved envs, invalid envs configured: [PET_MASTER_PORT PET_NNODES]"));
  CHECK(s.details()["causes"][0]["field"] == "spec.trainer.env");
  Json changed = Guide(R"({"numNodes": 3})");
  Status imm = atj::Validate(changed, &tj, nullptr);
  CHECK(imm.code() == Code::kInvalid);
  CHECK_THAT(imm.message(), Catch::Contains("spec.trainer: Invalid value: \"object\": field is immutable"));
  Json suspended = tj;
  suspended["spec"]["suspend"] = true;
  CHECK(atj::Validate(suspended, &tj, nullptr).ok());  // suspend may change
  Json bad_name = tj;
  bad_name["metadata"]["name"] = "1-starts-with-digit";
  CHECK(atj::Validate(bad_name, nullptr, nullptr).code() == Code::kInvalid);
}

// A runtimePatch of `manager` setting the node pod's nodeSelector to `pool`, plus `extra`
// merged into the node container (name node).
Json Patch(const std::string& manager, const std::string& pool, const Json& extra = Json::object()) {
  Json container = {{"name", "node"}};
  container.update(extra);
  Json pod_spec = {{"nodeSelector", {{"pool", pool}}},
                   {"containers", std::vector<Json>{container}}};
  Json rjob = {{"name", "node"}, {"template", {{"spec", {{"template", {{"spec", pod_spec}}}}}}}};
  return {{"manager", manager},
          {"trainingRuntimeSpec",
           {{"template", {{"spec", {{"replicatedJobs", std::vector<Json>{rjob}}}}}}}}};
}

TEST_CASE("TJ10 runtimePatches merge over the runtime in order, the TrainJob's fields win", "[trainjob]") {
  const Json runtime = atj::DefaultClusterTrainingRuntime();
  Json tj = Guide();
  Json first = Patch("trainer.kubeflow.org/kubeflow-sdk", "cpu",
                     Json::parse(R"({"image": "patched:1",
                       "env": [{"name": "FROM_PATCH", "value": "1"}, {"name": "PET_MASTER_PORT", "value": "1234"}],
                       "volumeMounts": [{"name": "data", "mountPath": "/data"}]})"));
  first["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
       ["template"]["spec"]["volumes"] = Json::parse(R"([{"name": "data", "emptyDir": {}}])");
  tj["spec"]["runtimePatches"] = std::vector<Json>{first, Patch("kueue.x-k8s.io/manager", "gpu")};
  CHECK(atj::Validate(tj, nullptr, nullptr).ok());
  Json js = DesiredJobSet(tj, runtime);
  const Json& rjob = js["spec"]["replicatedJobs"][0];
  const Json& pod = rjob["template"]["spec"]["template"]["spec"];
  CHECK(js["spec"]["replicatedJobs"].size() == 1);  // merged by name, not appended
  CHECK(rjob["template"]["metadata"]["labels"]["trainer.kubeflow.org/trainjob-ancestor-step"] ==
        "trainer");  // the runtime's own fields stay
  CHECK(pod["nodeSelector"] == Json({{"pool", "gpu"}}));  // the later patch wins
  CHECK(pod["volumes"][0]["name"] == "data");
  const Json& c = NodeContainer(js);
  CHECK(pod["containers"].size() == 1);
  CHECK(c["image"] == "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727");  // trainer.image
  CHECK(c["volumeMounts"][0]["mountPath"] == "/data");
  CHECK(EnvValue(c, "FROM_PATCH") == "1");
  CHECK(EnvValue(c, "PET_MASTER_PORT") == "29500");  // the torch plugin's value wins
  CHECK(PatchedRuntime(Guide(), runtime) == runtime);  // no patches: the runtime as it is

  Json dup = tj;
  dup["spec"]["runtimePatches"][1]["manager"] = "trainer.kubeflow.org/kubeflow-sdk";
  Status d = atj::Validate(dup, nullptr, nullptr);
  CHECK(d.code() == Code::kInvalid);
  CHECK_THAT(d.message(), Catch::Contains(
      "spec.runtimePatches[1]: Duplicate value: {\"manager\":\"trainer.kubeflow.org/kubeflow-sdk\"}"));
  Json unnamed = tj;
  unnamed["spec"]["runtimePatches"][0].erase("manager");
  CHECK_THAT(atj::Validate(unnamed, nullptr, nullptr).message(),
             Catch::Contains("spec.runtimePatches[0].manager: Required value"));
  Json keyless = tj;
  keyless["spec"]["runtimePatches"][1]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
      .erase("name");
  Status k = atj::Validate(keyless, nullptr, nullptr);
  CHECK(k.code() == Code::kInvalid);
  CHECK_THAT(k.message(), Catch::Contains("spec.runtimePatches[1].trainingRuntimeSpec: Invalid value"));
  Json many = Guide();
  for (int i = 0; i < 17; ++i) many["spec"]["runtimePatches"].push_back(Patch("m" + std::to_string(i), "x"));
  CHECK_THAT(atj::Validate(many, nullptr, nullptr).message(),
             Catch::Contains("spec.runtimePatches: Too many: 17: must have at most 16 items"));
}

TEST_CASE("TJ4 the JobSet is created once, and its Completed/Failed and status copied", "[trainjob]") {
  const Json runtime = atj::DefaultClusterTrainingRuntime();
  Json tj = Guide();
  Sync first = ComputeSync(tj, &runtime, nullptr, nullptr, kT0);
  REQUIRE(first.actions.size() == 1);
  CHECK(first.actions[0].Is(Kind::kCreate, api::JobSets()));
  Json js = first.actions[0].object;
  js["status"] = Json::parse(R"({"restarts": 0, "terminalState": "Completed",
    "replicatedJobsStatus": [{"name": "node", "ready": 0, "succeeded": 1, "failed": 0, "active": 0, "suspended": 0}],
    "conditions": [{"type": "Completed", "status": "True", "reason": "AllJobsCompleted",
                    "message": "jobset completed successfully"}]})");
  Sync done = ComputeSync(tj, &runtime, &js, nullptr, kT0);
  CHECK(done.actions.empty());
  REQUIRE(Conditions(done).size() == 1);
  CHECK(Conditions(done)[0]["type"] == "Complete");
  CHECK(Conditions(done)[0]["reason"] == "AllJobsCompleted");
  CHECK(Conditions(done)[0]["message"] == "jobset completed successfully");
  CHECK(done.status["jobsStatus"][0] == js["status"]["replicatedJobsStatus"][0]);
  js["status"]["conditions"][0] = {{"type", "Failed"}, {"status", "True"},
                                   {"reason", "ReachedMaxRestarts"}, {"message", "m"}};
  Sync failed = ComputeSync(tj, &runtime, &js, nullptr, kT0);
  CHECK(Conditions(failed)[0]["type"] == "Failed");
  CHECK(Conditions(failed)[0]["reason"] == "ReachedMaxRestarts");
  tj["status"] = done.status;
  CHECK_FALSE(ComputeSync(tj, &runtime, &js, nullptr, kT0).status_changed);  // finished: nothing more
}

TEST_CASE("TJ5 suspend and resume: the JobSet follows, Suspended then Resumed", "[trainjob]") {
  const Json runtime = atj::DefaultClusterTrainingRuntime();
  Json tj = Guide();
  tj["spec"]["suspend"] = true;
  Sync s = ComputeSync(tj, &runtime, nullptr, nullptr, kT0);
  CHECK(s.actions[0].object["spec"]["suspend"] == true);
  CHECK(Conditions(s)[0]["reason"] == "Suspended");
  CHECK(Conditions(s)[0]["message"] == "TrainJob is suspended");
  Json js = s.actions[0].object;
  tj["status"] = s.status;
  tj["spec"]["suspend"] = false;
  Sync resumed = ComputeSync(tj, &runtime, &js, nullptr, kT0 + std::chrono::minutes(1));
  REQUIRE(resumed.actions.size() == 1);
  CHECK(resumed.actions[0].Is(Kind::kUpdate, api::JobSets()));
  CHECK(resumed.actions[0].object["spec"]["suspend"] == false);
  CHECK(Conditions(resumed)[0]["status"] == "False");
  CHECK(Conditions(resumed)[0]["reason"] == "Resumed");
  CHECK(Conditions(resumed)[0]["message"] == "TrainJob is resumed");
}

TEST_CASE("TJ6 activeDeadlineSeconds: Failed DeadlineExceeded and the JobSet deleted, the timer restarting on resume", "[trainjob]") {
  const Json runtime = atj::DefaultClusterTrainingRuntime();
  Json tj = Guide();
  tj["spec"]["activeDeadlineSeconds"] = 60;
  Json js = DesiredJobSet(tj, runtime);
  Sync early = ComputeSync(tj, &runtime, &js, nullptr, kT0 + std::chrono::seconds(20));
  REQUIRE(early.requeue_after);
  CHECK(*early.requeue_after == std::chrono::seconds(40));
  Sync late = ComputeSync(tj, &runtime, &js, nullptr, kT0 + std::chrono::seconds(60));
  REQUIRE(late.actions.size() == 1);
  CHECK(late.actions[0].Is(Kind::kDelete, api::JobSets()));
  CHECK(Conditions(late)[0]["type"] == "Failed");
  CHECK(Conditions(late)[0]["reason"] == "DeadlineExceeded");
  CHECK(Conditions(late)[0]["message"] == "TrainJob exceeded its active deadline");
  tj["status"]["conditions"] = {{{"type", "Suspended"}, {"status", "False"}, {"reason", "Resumed"},
                                 {"lastTransitionTime", FormatTime(kT0 + std::chrono::seconds(50))}}};
  CHECK(*DeadlineOf(tj) == kT0 + std::chrono::seconds(110));
  tj["spec"]["suspend"] = true;
  CHECK_FALSE(DeadlineOf(tj));
}

TEST_CASE("TJ7 a missing runtime: a Warning event, no JobSet", "[trainjob]") {
  Sync s = ComputeSync(Guide(), nullptr, nullptr, nullptr, kT0);
  REQUIRE(s.actions.size() == 1);
  CHECK(s.actions[0].kind == Kind::kEvent);
  CHECK(s.actions[0].message == "ClusterTrainingRuntime torch-distributed not found");
}

}  // namespace
}  // namespace pjemu::trainjob
