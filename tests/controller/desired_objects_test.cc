// Given defaulted jobs, DesiredPod/DesiredService/PodEnv should build what the operator creates
// (T19-T24, T29, T43, T48, T59 and emulator/pytorchjob/BEHAVIOUR.md points 10-22).
#include <catch2/catch.hpp>

#include "tests/controller/job_builder.h"

namespace pjemu::pytorchjob {
namespace {

using testing::JobBuilder;

std::map<std::string, std::string> EnvMap(const Json& env) {
  std::map<std::string, std::string> m;
  for (const Json& e : env) m[e["name"]] = e["value"];
  return m;
}

std::vector<std::string> EnvNames(const Json& env) {
  std::vector<std::string> names;
  for (const Json& e : env) names.push_back(e["name"]);
  return names;
}

TEST_CASE("T19: no elasticPolicy gives no elastic env", "[controller]") {
  CHECK(ElasticEnv(JobBuilder("t").Worker(1).Defaulted())->empty());
}

TEST_CASE("T20: the elastic generator's exact variables", "[controller]") {
  Json job =
      JobBuilder("t")
          .Worker(1)
          .Set("/spec/elasticPolicy",
               {{"minReplicas", 1},
                {"maxReplicas", 3},
                {"rdzvBackend", "c10d"},
                {"rdzvPort", 1234},
                {"rdzvHost", "localhost"},
                {"rdzvId", "rdzv-id"},
                {"maxRestarts", 3},
                {"rdzvConf",
                 Json::array({{{"key", "rdzv-conf-name"}, {"value", "rdzv-conf-value"}},
                              {{"key", "rdzv-conf-name-1"}, {"value", "rdzv-conf-value-1"}}})}})
          .Defaulted();
  Json env = *ElasticEnv(job);
  CHECK(EnvMap(env) ==
        std::map<std::string, std::string>{
            {"PET_MAX_RESTARTS", "3"},
            {"PET_RDZV_BACKEND", "c10d"},
            {"PET_RDZV_ENDPOINT", "localhost:1234"},
            {"PET_RDZV_ID", "rdzv-id"},
            {"PET_RDZV_CONF", "rdzv-conf-name=rdzv-conf-value,rdzv-conf-name-1=rdzv-conf-value-1"},
            {"PET_NNODES", "1:3"}});
  CHECK(EnvNames(env) == std::vector<std::string>{"PET_RDZV_ENDPOINT", "PET_RDZV_BACKEND",
                                                  "PET_NNODES", "PET_MAX_RESTARTS", "PET_RDZV_ID",
                                                  "PET_RDZV_CONF"});
}

TEST_CASE("T21: a worker-only job's worker-0 gets no init container", "[controller]") {
  Json job = JobBuilder("t").Worker(2).Defaulted();
  CHECK(InitContainers(job, "Worker").empty());
  CHECK_FALSE((*DesiredPod(job, "Worker", 0)).at("spec").contains("initContainers"));
}

TEST_CASE("T22: Master+Worker: worker-0 gets one init container init-pytorch", "[controller]") {
  Json job = JobBuilder("t").Master(1).Worker(1).Defaulted();
  Json pod = *DesiredPod(job, "Worker", 0);
  REQUIRE(pod["spec"]["initContainers"].size() == 1);
  const Json& ic = pod["spec"]["initContainers"][0];
  CHECK(ic["name"] == "init-pytorch");
  CHECK(ic["image"] == "alpine:3.10");
  CHECK(ic["imagePullPolicy"] == "IfNotPresent");
  CHECK(ic["command"][2] ==
        "err=1;for i in $(seq 100); do if nslookup t-master-0; then err=0 && break; fi;echo "
        "waiting for master; sleep 2; done; exit $err");
  CHECK(ic["resources"]["limits"] == Json{{"cpu", "100m"}, {"memory", "20Mi"}});
  CHECK_FALSE(ic.contains("env"));
}

TEST_CASE("T23: Master+Worker: master-0 gets no init container", "[controller]") {
  Json job = JobBuilder("t").Master(1).Worker(1).Defaulted();
  CHECK_FALSE((*DesiredPod(job, "Master", 0))["spec"].contains("initContainers"));
}

TEST_CASE("T24: user port 8080 is kept and becomes MASTER_PORT and the service port",
          "[controller]") {
  Json ports = Json::array({{{"name", "pytorchjob-port"}, {"containerPort", 8080}}});
  Json job = JobBuilder("test-job")
                 .Master(1)
                 .Worker(2)
                 .Set("/spec/pytorchReplicaSpecs/Master/template/spec/containers/0/ports", ports)
                 .Set("/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/ports", ports)
                 .Defaulted();
  Json pod = *DesiredPod(job, "Master", 0);
  CHECK(pod["metadata"]["name"] == "test-job-master-0");
  CHECK(pod["spec"]["containers"][0]["ports"] == ports);
  auto env = EnvMap(pod["spec"]["containers"][0]["env"]);
  CHECK(env["MASTER_PORT"] == "8080");
  CHECK(env["MASTER_ADDR"] == "test-job-master-0");
  CHECK(env["PET_NPROC_PER_NODE"] == "auto");
  Json svc = *DesiredService(job, "Master", 0);
  CHECK(svc["metadata"]["name"] == "test-job-master-0");
  CHECK(svc["spec"]["ports"] == Json::array({{{"name", "pytorchjob-port"}, {"port", 8080}}}));
  Json owner = {
      {"apiVersion", "kubeflow.org/v1"}, {"kind", "PyTorchJob"}, {"name", "test-job"},
      {"uid", "uid-test-job"},           {"controller", true},   {"blockOwnerDeletion", true}};
  CHECK(pod["metadata"]["ownerReferences"] == Json::array({owner}));
  CHECK(svc["metadata"]["ownerReferences"] == Json::array({owner}));
}

TEST_CASE("T29: elastic worker-only job: rendezvous on worker-0 with the worker port",
          "[controller]") {
  Json job =
      JobBuilder("elastic-job")
          .Worker(1)
          .Set("/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/ports",
               Json::array({{{"name", "pytorchjob-port"}, {"containerPort", 8080}}}))
          .Set(
              "/spec/elasticPolicy",
              {{"rdzvBackend", "c10d"},
               {"minReplicas", 1},
               {"maxReplicas", 3},
               {"maxRestarts", 3},
               {"metrics", Json::array({{{"type", "Resource"}, {"resource", {{"name", "cpu"}}}}})}})
          .Defaulted();
  Json pod = *DesiredPod(job, "Worker", 0);
  auto env = EnvMap(pod["spec"]["containers"][0]["env"]);
  CHECK(env["PET_RDZV_BACKEND"] == "c10d");
  CHECK(env["PET_NNODES"] == "1:3");
  CHECK(env["PET_RDZV_ENDPOINT"] == "elastic-job-worker-0:8080");
  CHECK(env["PET_MAX_RESTARTS"] == "3");
  CHECK_FALSE(env.count("MASTER_ADDR"));
  Json hpa = DesiredHpa(job);
  CHECK(hpa["metadata"]["name"] == "elastic-job");
  CHECK(hpa["spec"]["minReplicas"] == 1);
  CHECK(hpa["spec"]["maxReplicas"] == 3);
  CHECK(hpa["spec"]["scaleTargetRef"] ==
        Json{{"kind", "PyTorchJob"}, {"name", "elastic-job"}, {"apiVersion", "kubeflow.org/v1"}});
}

TEST_CASE("env: MASTER_ADDR is the service name on the master too - worker RANK is index+1",
          "[controller]") {
  Json job = JobBuilder("mnist").Master(1).Worker(2).Defaulted();
  auto master = EnvMap(*PodEnv(job, "Master", 0));
  CHECK(master["MASTER_ADDR"] == "mnist-master-0");
  CHECK(master["RANK"] == "0");
  CHECK(master["WORLD_SIZE"] == "3");
  auto w1 = EnvMap(*PodEnv(job, "Worker", 1));
  CHECK(w1["RANK"] == "2");
  CHECK(w1["PET_NODE_RANK"] == "2");
  CHECK(w1["PET_NNODES"] == "3");
  CHECK(EnvNames(*PodEnv(job, "Worker", 0)) ==
        std::vector<std::string>{"PYTHONUNBUFFERED", "MASTER_PORT", "PET_MASTER_PORT",
                                 "MASTER_ADDR", "PET_MASTER_ADDR", "WORLD_SIZE", "RANK",
                                 "PET_NODE_RANK", "PET_NPROC_PER_NODE", "PET_NNODES"});
}

TEST_CASE("env: WORLD_SIZE multiplies by an integer nprocPerNode only", "[controller]") {
  auto world = [](const char* nproc) {
    Json job = JobBuilder("m").Master(1).Worker(2).Set("/spec/nprocPerNode", nproc).Defaulted();
    return EnvMap(*PodEnv(job, "Worker", 0))["WORLD_SIZE"];
  };
  CHECK(world("4") == "12");
  CHECK(world("auto") == "3");
  CHECK(world("gpu") == "3");
}

TEST_CASE("env: a worker-only non-elastic job gets no MASTER_* - WORLD_SIZE or RANK",
          "[controller]") {
  Json job = JobBuilder("w").Worker(3).Defaulted();
  CHECK(EnvNames(*PodEnv(job, "Worker", 1)) ==
        std::vector<std::string>{"PYTHONUNBUFFERED", "PET_NPROC_PER_NODE", "PET_NNODES"});
}

TEST_CASE("env: appended after the user's env on every container - duplicates kept",
          "[controller]") {
  Json job = JobBuilder("m")
                 .Master(1)
                 .Set("/spec/pytorchReplicaSpecs/Master/template/spec/containers",
                      Json::array({{{"name", "pytorch"},
                                    {"image", "i"},
                                    {"env", Json::array({{{"name", "RANK"}, {"value", "9"}}})}},
                                   {{"name", "sidecar"}, {"image", "i"}}}))
                 .Defaulted();
  Json pod = *DesiredPod(job, "Master", 0);
  const Json& env0 = pod["spec"]["containers"][0]["env"];
  CHECK(env0[0] == Json{{"name", "RANK"}, {"value", "9"}});
  CHECK(env0[1]["name"] == "PYTHONUNBUFFERED");
  CHECK(pod["spec"]["containers"][1]["env"].size() == env0.size() - 1);
}

TEST_CASE("T43: replica restartPolicy maps onto the pod (ExitCode becomes Never)", "[controller]") {
  CHECK(PodRestartPolicy("ExitCode") == "Never");
  CHECK(PodRestartPolicy("Never") == "Never");
  CHECK(PodRestartPolicy("Always") == "Always");
  CHECK(PodRestartPolicy("OnFailure") == "OnFailure");
  Json job = JobBuilder("m").Master(1, "ExitCode").Defaulted();
  CHECK((*DesiredPod(job, "Master", 0))["spec"]["restartPolicy"] == "Never");
}

TEST_CASE("T48: GenGeneralName replaces slashes and lower-cases the type", "[controller]") {
  CHECK(GenGeneralName("1/2/3/4/5", "worker", "1") == "1-2-3-4-5-worker-1");
  CHECK(GenGeneralName("1/2/3/4/5", "WORKER", "1") == "1-2-3-4-5-worker-1");
}

TEST_CASE("T59: CreateNewService: headless - four labels - owner - error without pytorch container",
          "[controller]") {
  Json job = JobBuilder("j").Worker(1).Defaulted();
  Json svc = *DesiredService(job, "Worker", 0);
  CHECK(svc["metadata"]["name"] == "j-worker-0");
  CHECK(svc["spec"]["clusterIP"] == "None");
  Json labels = {{"training.kubeflow.org/job-name", "j"},
                 {"training.kubeflow.org/operator-name", "pytorchjob-controller"},
                 {"training.kubeflow.org/replica-index", "0"},
                 {"training.kubeflow.org/replica-type", "worker"}};
  CHECK(svc["metadata"]["labels"] == labels);
  CHECK(svc["spec"]["selector"] == labels);
  CHECK(svc["metadata"]["ownerReferences"][0]["uid"] == "uid-j");
  job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["name"] = "x";
  CHECK(DesiredService(job, "Worker", 0).status().code() == Code::kNotFound);
}

TEST_CASE("pod labels: five operator labels - template labels kept - legacy pytorch_job_name",
          "[controller]") {
  Json job =
      JobBuilder("w")
          .Worker(2)
          .Set("/spec/pytorchReplicaSpecs/Worker/template/metadata",
               {{"labels", {{"app", "x"}}}, {"annotations", {{"a", "b"}}}, {"name", "ignored"}})
          .Defaulted();
  Json p0 = *DesiredPod(job, "Worker", 0);
  CHECK(p0["metadata"]["labels"] ==
        Json{{"app", "x"},
             {"training.kubeflow.org/job-name", "w"},
             {"training.kubeflow.org/operator-name", "pytorchjob-controller"},
             {"training.kubeflow.org/replica-type", "worker"},
             {"training.kubeflow.org/replica-index", "0"},
             {"training.kubeflow.org/job-role", "master"},
             {"pytorch_job_name", "w"}});
  CHECK(p0["metadata"]["annotations"] == Json{{"a", "b"}});
  CHECK(p0["metadata"]["name"] == "w-worker-0");
  // job-role goes on worker-0 only when there is no Master.
  CHECK_FALSE((*DesiredPod(job, "Worker", 1))["metadata"]["labels"].contains(
      "training.kubeflow.org/job-role"));
}

}  // namespace
}  // namespace pjemu::pytorchjob
