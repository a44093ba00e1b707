// Given a PyTorchTrainingJob, its pods, Services and TensorBoards and a fake `now`, the pass
// should decide as BEHAVIOUR.md says (each TEST_CASE names the point it proves).
#include <catch2/catch.hpp>

#include "emulator/api/t9k.h"
#include "emulator/api/t9k_validation.h"
#include "emulator/api/workload.h"
#include "emulator/t9kjob/desired.h"
#include "emulator/t9kjob/sync.h"

namespace pjemu::t9kjob {
namespace {

namespace t9k = api::t9k;
using Kind = Action::Kind;

const Time kT0 = FakeClock().Now();

// The tutorial's job (job_cpu.yaml's shape): torchrun, one `node` replica, procPerNode "4".
Json TutorialJob() {
  return Json::parse(R"({
    "apiVersion": "batch.tensorstack.dev/v1beta1", "kind": "PyTorchTrainingJob",
    "metadata": {"name": "torch-mnist", "namespace": "demo", "uid": "uid-1"},
    "spec": {
      "torchrunConfig": {"enabled": true, "maxRestarts": 3, "procPerNode": "4",
                         "rdzvBackend": "c10d"},
      "replicaSpecs": [{"type": "node", "replicas": 1, "restartPolicy": "ExitCode",
        "template": {"spec": {"containers": [{"name": "pytorch", "image": "t9k:1",
          "args": ["train.py", "--backend", "gloo"]}]}}}]}})");
}

// Plain launch: a master and two workers.
Json PlainJob() {
  Json job = TutorialJob();
  job["spec"].erase("torchrunConfig");
  Json worker = job["spec"]["replicaSpecs"][0];
  job["spec"]["replicaSpecs"][0]["type"] = "master";
  worker["type"] = "worker";
  worker["replicas"] = 2;
  job["spec"]["replicaSpecs"].push_back(worker);
  return job;
}

Sync Pass(const Json& job, const std::vector<Json>& pods = {}, Time now = kT0,
          const std::vector<Json>& tbs = {}) {
  return ComputeSync(t9k::SetDefaults(job), Children{pods, {}, tbs}, now);
}

// The job after a pass: its status applied.
Json After(Json job, const Sync& s) {
  job["status"] = s.status;
  return job;
}

// A pod of replica (spec, index) as the kubelet reports it.
Json PodOf(const Json& job, std::size_t spec, std::int64_t index, const std::string& phase,
           std::optional<int> exit_code = std::nullopt) {
  Json pod = *DesiredPod(t9k::SetDefaults(job), {spec, index}, Launch::kTemplate);
  pod["metadata"]["uid"] = "pod-" + std::to_string(spec) + "-" + std::to_string(index);
  pod["spec"]["nodeName"] = "pjemu-node";
  pod["status"]["phase"] = phase;
  Json state = {{"running", Json::object()}};
  if (exit_code) state = {{"terminated", {{"exitCode", *exit_code}}}};
  pod["status"]["containerStatuses"] =
      Json::array({{{"name", "pytorch"}, {"restartCount", 0}, {"state", state}}});
  return pod;
}

std::vector<std::string> Named(const Sync& s, Kind kind, const char* plural) {
  std::vector<std::string> out;
  for (const Action& a : s.actions) {
    if (a.kind != kind || (a.type && a.type->plural != plural)) continue;
    out.push_back(kind == Kind::kCreate ? a.object["metadata"]["name"].get<std::string>() : a.name);
  }
  return out;
}

std::vector<std::string> Reasons(const Sync& s) {
  std::vector<std::string> out;
  for (const Action& a : s.actions) {
    if (a.kind == Kind::kEvent) out.push_back(a.reason);
  }
  return out;
}

// type/status/reason of every condition, in order.
std::vector<std::string> Conds(const Json& status) {
  std::vector<std::string> out;
  for (const Json& c : status.value("conditions", Json::array())) {
    out.push_back(c.value("type", "") + "/" + c.value("status", "") + "/" + c.value("reason", ""));
  }
  return out;
}

const std::string kMaster = "torch-mnist-" + t9k::NameSuffix(TutorialJob()) + "-node-0";

TEST_CASE("P1: the first pass initializes the job, announces it and creates its replicas") {
  Sync s = Pass(TutorialJob());
  CHECK(s.status["phase"] == "Pending");
  CHECK(Conds(s.status) ==
        std::vector<std::string>{"Initialized/True/", "Completed/False/NotFinished"});
  CHECK(Reasons(s) == std::vector<std::string>{"Created", "Start", "NewReplica"});
  CHECK(s.actions[0].message == "A PyTorchTrainingJob has been created: torch-mnist");
  CHECK(Named(s, Kind::kCreate, "pods") == std::vector<std::string>{kMaster});
  CHECK(Named(s, Kind::kCreate, "services") == std::vector<std::string>{kMaster});
  CHECK(s.status_changed);
}

TEST_CASE("P2: pods are <job>-<suffix>-<type>-<index>, the suffix 5 hex characters of the job") {
  CHECK(t9k::NameSuffix(TutorialJob()).size() == 5);
  Json other = TutorialJob();
  other["metadata"]["uid"] = "uid-2";
  CHECK(t9k::NameSuffix(other) != t9k::NameSuffix(TutorialJob()));
  Json job = t9k::SetDefaults(PlainJob());
  std::vector<std::string> names;
  for (const Replica& r : DesiredReplicas(job)) names.push_back(PodName(job, r));
  const std::string sfx = t9k::NameSuffix(job);
  CHECK(names == std::vector<std::string>{"torch-mnist-" + sfx + "-master-0",
                                          "torch-mnist-" + sfx + "-worker-0",
                                          "torch-mnist-" + sfx + "-worker-1"});
}

TEST_CASE("P3: pods carry the owner-name label, restartPolicy Never and the controller ref") {
  Json pod = *DesiredPod(t9k::SetDefaults(PlainJob()), {1, 1}, Launch::kTemplate);
  CHECK(pod["metadata"]["labels"][t9k::kOwnerNameLabel] == "torch-mnist");
  CHECK(pod["metadata"]["labels"][t9k::kReplicaTypeLabel] == "worker");
  CHECK(pod["metadata"]["labels"][t9k::kReplicaIndexLabel] == "1");
  CHECK(pod["spec"]["restartPolicy"] == "Never");
  CHECK(pod["metadata"]["ownerReferences"][0]["kind"] == "PyTorchTrainingJob");
  CHECK(pod["metadata"]["ownerReferences"][0]["controller"] == true);
}

TEST_CASE("P3: the master pod alone carries job-role master, beside the replica type and index") {
  const Json job = t9k::SetDefaults(PlainJob());
  const Json master = *DesiredPod(job, {0, 0}, Launch::kTemplate);
  CHECK(master["metadata"]["labels"][t9k::kJobRoleLabel] == "master");
  CHECK(master["metadata"]["labels"][t9k::kReplicaTypeLabel] == "master");
  CHECK(master["metadata"]["labels"][t9k::kReplicaIndexLabel] == "0");
  const Json worker = *DesiredPod(job, {1, 0}, Launch::kTemplate);
  CHECK_FALSE(worker["metadata"]["labels"].contains(t9k::kJobRoleLabel));
}

TEST_CASE("P3: plain mode gives every container MASTER_ADDR/PORT, WORLD_SIZE and its RANK") {
  Json job = t9k::SetDefaults(PlainJob());
  Json env = PodEnv(job, {1, 1});
  std::map<std::string, std::string> m;
  for (const Json& e : env) m[e["name"]] = e["value"];
  CHECK(m["MASTER_ADDR"] == MasterName(job));
  CHECK(m["MASTER_PORT"] == "23456");
  CHECK(m["WORLD_SIZE"] == "3");
  CHECK(m["RANK"] == "2");
  CHECK(!m.count("PET_RDZV_ENDPOINT"));
}

TEST_CASE("P4: torchrun mode runs `torchrun <config> <args>` with the rendezvous in env") {
  Json job = t9k::SetDefaults(TutorialJob());
  Json pod = *DesiredPod(job, {0, 0}, Launch::kTemplate);
  const Json& c = pod["spec"]["containers"][0];
  CHECK(c["command"] == Json::array({"torchrun"}));
  CHECK(c["args"] == Json::array({"--nnodes=1", "--nproc_per_node=4", "--rdzv_backend=c10d",
                                  "--rdzv_id=uid-1", "--max_restarts=3", "train.py",
                                  "--backend", "gloo"}));
  bool endpoint = false;
  for (const Json& e : c["env"]) {
    if (e["name"] == "PET_RDZV_ENDPOINT") endpoint = e["value"] == kMaster + ":23456";
    CHECK(e["name"] != "RANK");
  }
  CHECK(endpoint);
}

TEST_CASE("P4: procPerNode \"gpu\" counts the replica's GPUs, a word is refused") {
  Json job = TutorialJob();
  job["spec"]["torchrunConfig"]["procPerNode"] = "gpu";
  job["spec"]["replicaSpecs"][0]["template"]["spec"]["containers"][0]["resources"] = {
      {"limits", {{"nvidia.com/gpu", 2}}}};
  auto args = TorchrunArgs(t9k::SetDefaults(job), job["spec"]["replicaSpecs"][0]);
  REQUIRE(args.ok());
  CHECK((*args)[1] == "--nproc_per_node=2");
  job["spec"]["torchrunConfig"]["procPerNode"] = "many";
  CHECK(TorchrunArgs(t9k::SetDefaults(job), job["spec"]["replicaSpecs"][0]).status().code() ==
        Code::kInvalid);
}

TEST_CASE("P5: Pending until every replica runs, then Running with the console's conditions") {
  Json job = After(TutorialJob(), Pass(TutorialJob()));
  Sync pending = Pass(job, {PodOf(job, 0, 0, "Pending")});
  CHECK(pending.status["phase"] == "Pending");
  Sync running = Pass(job, {PodOf(job, 0, 0, "Running")});
  CHECK(running.status["phase"] == "Running");
  CHECK(Conds(running.status) == std::vector<std::string>{"Initialized/True/",
                                                         "Completed/False/NotFinished",
                                                         "Running/True/", "ReplicaFailure/False/"});
  CHECK(running.status["conditions"][2]["message"] ==
        "All pods are running normally or have completed successfully.");
  CHECK(Reasons(running).empty());
}

TEST_CASE("P6: the job succeeds when its master does, with T9k's condition set") {
  Json job = After(TutorialJob(), Pass(TutorialJob()));
  job = After(job, Pass(job, {PodOf(job, 0, 0, "Running")}));
  Sync s = Pass(job, {PodOf(job, 0, 0, "Succeeded", 0)});
  CHECK(s.status["phase"] == "Succeeded");
  CHECK(Conds(s.status) == std::vector<std::string>{"Initialized/True/",
                                                   "Completed/True/Succeeded",
                                                   "Running/False/Succeeded",
                                                   "ReplicaFailure/False/", "Failed/False/Succeeded"});
  CHECK(s.status["conditions"][1]["message"] == "The job has finished successfully.");
  CHECK(Reasons(s) == std::vector<std::string>{"Succeeded"});
  api::WorkloadState st = api::StateOf(api::PyTorchTrainingJobs(), After(job, s));
  CHECK(st.finished);
  CHECK(st.succeeded);
  CHECK(st.state == "Succeeded");
}

TEST_CASE("P7: ExitCode restarts a replica killed by a signal (137) and counts the backoff") {
  Json job = After(TutorialJob(), Pass(TutorialJob()));
  Sync s = Pass(job, {PodOf(job, 0, 0, "Failed", 137)});
  CHECK(Named(s, Kind::kDelete, "pods") == std::vector<std::string>{kMaster});
  CHECK(s.status["backoffCount"] == 1);
  CHECK(s.status["tasks"][0]["restartCount"] == 1);
  CHECK(s.status["phase"] == "Pending");
  CHECK(Reasons(s) == std::vector<std::string>{"RestartReplica"});
  CHECK(Conds(s.status).back() == "ReplicaFailure/True/ReplicaFailed");
  // The pod is gone on the next pass: it is made again under the same name, without NewReplica.
  Sync again = Pass(After(job, s));
  CHECK(Named(again, Kind::kCreate, "pods") == std::vector<std::string>{kMaster});
  CHECK(Reasons(again).empty());
}

TEST_CASE("P7: ExitCode fails the job on a code it does not retry, Never on any failure") {
  for (auto [policy, code] : {std::pair{"ExitCode", 1}, std::pair{"Never", 137}}) {
    Json job = TutorialJob();
    job["spec"]["replicaSpecs"][0]["restartPolicy"] = policy;
    job = After(job, Pass(job));
    Sync s = Pass(job, {PodOf(job, 0, 0, "Failed", code)});
    CHECK(s.status["phase"] == "Failed");
    CHECK(Conds(s.status)[1] == "Completed/False/Failed");
    CHECK(s.status["conditions"][1]["message"] == "The job exited with an error code.");
    CHECK(Named(s, Kind::kDelete, "pods").empty());  // cleanUpPolicy None
    CHECK(api::StateOf(api::PyTorchTrainingJobs(), After(job, s)).finished);
  }
  CHECK(RestartsAfterFailure("OnFailure", 1));
  CHECK(RestartsAfterFailure("Always", 2));
  for (int code : {130, 137, 138, 143}) CHECK(RestartsAfterFailure("ExitCode", code));
  for (int code : {1, 2, 139, 255}) CHECK_FALSE(RestartsAfterFailure("ExitCode", code));
}

TEST_CASE("P8: the job-wide backoffLimit (default 3) fails the job on the failure after it") {
  Json job = TutorialJob();
  job["spec"]["replicaSpecs"][0]["restartPolicy"] = "OnFailure";
  job = After(job, Pass(job));
  for (int i = 1; i <= 3; ++i) {
    Sync s = Pass(job, {PodOf(job, 0, 0, "Failed", 1)});
    REQUIRE(s.status["backoffCount"] == i);
    job = After(job, s);
  }
  Sync s = Pass(job, {PodOf(job, 0, 0, "Failed", 1)});
  CHECK(s.status["phase"] == "Failed");
  CHECK(Conds(s.status)[1] == "Completed/False/BackoffLimitExceeded");
  CHECK(s.status["backoffCount"] == 3);
}

TEST_CASE("P9: cleanUpPolicy All deletes every pod and the Service, Unfinished the running") {
  Json job = PlainJob();
  job["spec"]["runPolicy"] = {{"cleanUpPolicy", "Unfinished"}};
  job = After(job, Pass(job));
  std::vector<Json> pods = {PodOf(job, 0, 0, "Succeeded", 0), PodOf(job, 1, 0, "Running"),
                            PodOf(job, 1, 1, "Succeeded", 0)};
  Sync s = Pass(job, pods);
  CHECK(s.status["phase"] == "Succeeded");
  CHECK(Named(s, Kind::kDelete, "pods").size() == 1);
  job["spec"]["runPolicy"]["cleanUpPolicy"] = "All";
  s = ComputeSync(t9k::SetDefaults(job), Children{pods, {DesiredMasterService(job)}, {}}, kT0);
  CHECK(Named(s, Kind::kDelete, "pods").size() == 3);
  CHECK(Named(s, Kind::kDelete, "services").size() == 1);
}

TEST_CASE("P10: activeDeadlineSeconds fails the job and stops its replicas") {
  Json job = TutorialJob();
  job["spec"]["runPolicy"] = {{"activeDeadlineSeconds", 60}};
  job = After(job, Pass(job));
  Sync early = Pass(job, {PodOf(job, 0, 0, "Running")}, kT0 + std::chrono::seconds(20));
  REQUIRE(early.requeue_after);
  CHECK(*early.requeue_after == std::chrono::seconds(40));
  Sync late = Pass(job, {PodOf(job, 0, 0, "Running")}, kT0 + std::chrono::seconds(60));
  CHECK(late.status["phase"] == "Failed");
  CHECK(Conds(late.status)[1] == "Completed/False/DeadlineExceeded");
  CHECK(Named(late, Kind::kDelete, "pods") == std::vector<std::string>{kMaster});
}

TEST_CASE("P11: pause deletes the replicas, resuming makes them with resumeSpecs") {
  Json job = TutorialJob();
  job["spec"]["runMode"] = {{"pause",
                             {{"enabled", true},
                              {"resumeSpecs", Json::array({{{"type", "node"},
                                                            {"command", {"python3"}},
                                                            {"args", {"resume.py"}}}})}}}};
  job = After(job, Pass(TutorialJob()));
  Sync paused = Pass(job, {PodOf(job, 0, 0, "Running")});
  CHECK(paused.status["phase"] == "Paused");
  CHECK(Named(paused, Kind::kDelete, "pods") == std::vector<std::string>{kMaster});
  CHECK(Conds(paused.status).back() == "Paused/True/Paused");
  job = After(job, paused);
  job["spec"]["runMode"]["pause"]["enabled"] = false;
  Sync resuming = Pass(job);
  CHECK(resuming.status["phase"] == "Resuming");
  REQUIRE(Named(resuming, Kind::kCreate, "pods").size() == 1);
  const Json& c = resuming.actions.back().type == &api::Pods() ? resuming.actions.back().object
                                                               : resuming.actions.front().object;
  (void)c;
  Json pod = *DesiredPod(t9k::SetDefaults(job), {0, 0}, Launch::kResume);
  CHECK(pod["spec"]["containers"][0]["args"].back() == "resume.py");
  Sync running = Pass(After(job, resuming), {PodOf(job, 0, 0, "Running")});
  CHECK(running.status["phase"] == "Running");
}

TEST_CASE("P12: debug mode starts `sleep inf` (or its command) instead of the training") {
  Json job = TutorialJob();
  job["spec"]["runMode"] = {{"debug", {{"enabled", true}}}};
  Json pod = *DesiredPod(t9k::SetDefaults(job), {0, 0}, Launch::kDebug);
  CHECK(pod["spec"]["containers"][0]["command"] == Json::array({"sleep", "inf"}));
  CHECK_FALSE(pod["spec"]["containers"][0].contains("args"));
  job["spec"]["runMode"]["debug"]["replicaSpecs"] =
      Json::array({{{"type", "node"}, {"command", {"bash", "-c", "sleep 5"}}}});
  Sync s = Pass(job);
  for (const Action& a : s.actions) {
    if (a.kind == Kind::kCreate && a.type == &api::Pods()) {
      CHECK(a.object["spec"]["containers"][0]["command"] ==
            Json::array({"bash", "-c", "sleep 5"}));
    }
  }
}

TEST_CASE("P13: elastic jobs run expectedReplicas and follow its changes") {
  Json job = TutorialJob();
  job["spec"]["elastic"] = {
      {"enabled", true}, {"minReplicas", 1}, {"maxReplicas", 4}, {"expectedReplicas", 3}};
  job = After(job, Pass(job));
  std::vector<Json> pods;
  for (int i = 0; i < 3; ++i) pods.push_back(PodOf(job, 0, i, "Running"));
  CHECK(Pass(job).actions.size() >= 3);
  auto args = TorchrunArgs(t9k::SetDefaults(job), job["spec"]["replicaSpecs"][0]);
  CHECK((*args)[0] == "--nnodes=1:4");
  job["spec"]["elastic"]["expectedReplicas"] = 2;
  Sync s = Pass(job, pods);
  CHECK(Named(s, Kind::kDelete, "pods") ==
        std::vector<std::string>{"torch-mnist-" + t9k::NameSuffix(job) + "-node-2"});
}

TEST_CASE("P14: tensorboardSpec makes a TensorBoard and reports its readiness") {
  Json job = TutorialJob();
  job["spec"]["tensorboardSpec"] = {{"trainingLogFilesets", {"t9k://pvc/tutorial/log"}}};
  Sync first = Pass(job);
  CHECK(Named(first, Kind::kCreate, "tensorboards") ==
        std::vector<std::string>{"torch-mnist-" + t9k::NameSuffix(job)});
  CHECK(first.status["tensorboard"]["ready"] == false);
  Json tb = DesiredTensorBoard(t9k::SetDefaults(job));
  tb["metadata"]["uid"] = "tb-uid";
  tb["status"] = {{"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}};
  Sync ready = Pass(After(job, first), {}, kT0, {tb});
  CHECK(ready.status["tensorboard"]["ready"] == true);
  CHECK(ready.status["tensorboard"]["reason"] == "DependentReady");
  CHECK(ready.status["tensorboard"]["action"] == "NOP");
  CHECK(ready.status["tensorboard"]["dependent"]["uid"] == "tb-uid");
  CHECK(ready.status["tensorboard"]["note"] ==
        "TensorBoard [torch-mnist-" + t9k::NameSuffix(job) + "] is ready");
}

TEST_CASE("P15: tasks list each replica with its phase and containers, aggregate counts them") {
  Json job = PlainJob();
  job = After(job, Pass(job));
  Json unscheduled = PodOf(job, 1, 1, "Pending");
  unscheduled["spec"].erase("nodeName");
  Sync s = Pass(job, {PodOf(job, 0, 0, "Running"), PodOf(job, 1, 0, "Succeeded", 0), unscheduled});
  const Json& tasks = s.status["tasks"];
  REQUIRE(tasks.size() == 2);
  CHECK(tasks[0]["type"] == "master");
  CHECK(tasks[1]["replicas"][0]["phase"] == "Succeeded");
  CHECK(tasks[1]["replicas"][0]["containers"][0] ==
        Json{{"name", "pytorch"}, {"state", "Terminated"}, {"exitCode", 0}});
  CHECK(tasks[1]["replicas"][1]["phase"] == "Creating");
  CHECK(s.status["aggregate"] == Json{{"creating", 1}, {"pending", 0},  {"running", 1},
                                      {"succeeded", 1}, {"failed", 0}, {"unknown", 0},
                                      {"deleted", 0}});
}

TEST_CASE("P16: admission names each bad field") {
  Json job = TutorialJob();
  CHECK(t9k::Validate(job, nullptr, nullptr).ok());
  job["spec"]["replicaSpecs"][0]["restartPolicy"] = "Sometimes";
  job["spec"]["torchrunConfig"]["procPerNode"] = "lots";
  job["spec"]["runPolicy"] = {{"cleanUpPolicy", "Some"}, {"activeDeadlineSeconds", 0}};
  Status s = t9k::Validate(job, nullptr, nullptr);
  CHECK(s.code() == Code::kInvalid);
  std::vector<std::string> fields;
  for (const Json& c : s.details()["causes"]) fields.push_back(c["field"]);
  CHECK(fields == std::vector<std::string>{"spec.replicaSpecs[0].restartPolicy",
                                           "spec.torchrunConfig.procPerNode",
                                           "spec.runPolicy.activeDeadlineSeconds",
                                           "spec.runPolicy.cleanUpPolicy"});
  CHECK(s.message().rfind("PyTorchTrainingJob.batch.tensorstack.dev \"torch-mnist\" is invalid: ",
                          0) == 0);
  Json empty = TutorialJob();
  empty["spec"]["replicaSpecs"] = Json::array();
  CHECK(t9k::Validate(empty, nullptr, nullptr).details()["causes"][0]["field"] ==
        "spec.replicaSpecs");
}

TEST_CASE("P16: elastic bounds hold and are immutable, resumeSpecs are immutable") {
  Json job = TutorialJob();
  job["spec"]["elastic"] = {
      {"enabled", true}, {"minReplicas", 2}, {"maxReplicas", 4}, {"expectedReplicas", 5}};
  CHECK(t9k::FieldErrors(job, nullptr).at(0).field == "spec.elastic.expectedReplicas");
  Json old = job;
  old["spec"]["elastic"]["expectedReplicas"] = 3;
  Json now = old;
  now["spec"]["elastic"]["expectedReplicas"] = 4;
  CHECK(t9k::FieldErrors(now, &old).empty());
  now["spec"]["elastic"]["maxReplicas"] = 6;
  CHECK(t9k::FieldErrors(now, &old).at(0).field == "spec.elastic.maxReplicas");
}

TEST_CASE("P17: the workload table reads a job's state, pods and master for the CLI") {
  const api::ResourceType& type = api::PyTorchTrainingJobs();
  REQUIRE(type.workload != nullptr);
  Json job = TutorialJob();
  CHECK(type.workload->pod_selector(job) == "tensorstack.dev/owner-name=torch-mnist");
  CHECK(type.workload->primary_pod(job) == kMaster);
  CHECK(type.workload->primary_container(job)["name"] == "pytorch");
  CHECK(api::WorkloadTypeOf(job) == &type);
  CHECK(type.short_names == std::vector<std::string>{"pj"});
}

}  // namespace
}  // namespace pjemu::t9kjob
