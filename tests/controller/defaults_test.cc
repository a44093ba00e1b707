// Given submitted jobs, SetDefaults should apply SetDefaults_PyTorchJob in memory (T13-T18 and
// emulator/pytorchjob/BEHAVIOUR.md points 2-6): replicas, restartPolicy, cleanPodPolicy, port,
// elastic min/max, nprocPerNode.
#include <catch2/catch.hpp>

#include "tests/controller/job_builder.h"

namespace pjemu::pytorchjob {
namespace {

using api::SetDefaults;
using testing::JobBuilder;

Json Elastic(Json elastic) {
  return JobBuilder("test").Worker(1).Set("/spec/elasticPolicy", std::move(elastic)).Defaulted();
}

TEST_CASE("T13: elasticPolicy {} with one worker gets min=max=1", "[controller]") {
  Json job = Elastic(Json::object());
  CHECK(job["spec"]["elasticPolicy"]["minReplicas"] == 1);
  CHECK(job["spec"]["elasticPolicy"]["maxReplicas"] == 1);
}

TEST_CASE("T14: elastic min=1 and max=1 are unchanged", "[controller]") {
  Json job = Elastic({{"minReplicas", 1}, {"maxReplicas", 1}});
  CHECK(job["spec"]["elasticPolicy"] == Json{{"minReplicas", 1}, {"maxReplicas", 1}});
  Json job2 = Elastic({{"minReplicas", 2}, {"maxReplicas", 5}});
  CHECK(job2["spec"]["elasticPolicy"] == Json{{"minReplicas", 2}, {"maxReplicas", 5}});
}

TEST_CASE("T15: elastic max=1 without min gets min=1", "[controller]") {
  CHECK(Elastic({{"maxReplicas", 1}})["spec"]["elasticPolicy"]["minReplicas"] == 1);
}

TEST_CASE("T16: elastic min=1 without max gets max=1", "[controller]") {
  CHECK(Elastic({{"minReplicas", 1}})["spec"]["elasticPolicy"]["maxReplicas"] == 1);
}

TEST_CASE("T17: elastic without nProcPerNode gets spec.nprocPerNode auto", "[controller]") {
  CHECK(Elastic(Json::object())["spec"]["nprocPerNode"] == "auto");
  // The deprecated elastic field set: spec.nprocPerNode stays unset.
  CHECK_FALSE(Elastic({{"nProcPerNode", 2}})["spec"].contains("nprocPerNode"));
}

TEST_CASE("T18: no elasticPolicy gets spec.nprocPerNode auto", "[controller]") {
  CHECK(JobBuilder("t").Worker(1).Defaulted()["spec"]["nprocPerNode"] == "auto");
  CHECK(JobBuilder("t")
            .Worker(1)
            .Set("/spec/nprocPerNode", "4")
            .Defaulted()["spec"]["nprocPerNode"] == "4");
}

TEST_CASE("defaults: replicas 1 - restartPolicy OnFailure - cleanPodPolicy None - port 23456",
          "[controller]") {
  Json job = JobBuilder("t").Worker(std::nullopt, "").Defaulted();
  const Json& w = job["spec"]["pytorchReplicaSpecs"]["Worker"];
  CHECK(w["replicas"] == 1);
  CHECK(w["restartPolicy"] == "OnFailure");
  CHECK(job["spec"]["runPolicy"]["cleanPodPolicy"] == "None");
  CHECK(w["template"]["spec"]["containers"][0]["ports"] ==
        Json::array({{{"name", "pytorchjob-port"}, {"containerPort", 23456}}}));
}

TEST_CASE("defaults: a user pytorchjob-port with another number is kept", "[controller]") {
  Json job = JobBuilder("t")
                 .Worker(1)
                 .Set("/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/ports",
                      Json::array({{{"name", "pytorchjob-port"}, {"containerPort", 8080}}}))
                 .Defaulted();
  CHECK(job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["ports"]
            .size() == 1);
  CHECK(*PortFromJob(job, "Worker") == 8080);
}

TEST_CASE("defaults: the port goes on the pytorch container - not container 0", "[controller]") {
  Json job = JobBuilder("t")
                 .Worker(1)
                 .Set("/spec/pytorchReplicaSpecs/Worker/template/spec/containers",
                      Json::array({testing::Container("sidecar"), testing::Container()}))
                 .Defaulted();
  const Json& cs = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"];
  CHECK_FALSE(cs[0].contains("ports"));
  CHECK(cs[1]["ports"][0]["containerPort"] == 23456);
}

TEST_CASE("defaults: replica keys are renamed case-insensitively", "[controller]") {
  Json job = JobBuilder("t").Build();
  job["spec"]["pytorchReplicaSpecs"]["worker"] = testing::ReplicaSpecJson(2, "Never");
  Json d = SetDefaults(job);
  CHECK(d["spec"]["pytorchReplicaSpecs"].contains("Worker"));
  CHECK_FALSE(d["spec"]["pytorchReplicaSpecs"].contains("worker"));
}

}  // namespace
}  // namespace pjemu::pytorchjob
