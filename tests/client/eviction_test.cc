// Given pods and PodDisruptionBudgets in a Store, LocalClient::Evict should decide as the served
// pods/eviction subresource does (api::EvictPod, shared with it): delete a pod no budget
// protects, refuse with 429 and the real message when the budget allows no disruption, and let
// a pod already terminating go whatever the budget says. Fake clock, no sleeps.
#include <catch2/catch.hpp>

#include "emulator/api/disruption.h"
#include "emulator/client/local_client.h"
#include "tests/support/disruption_objects.h"

namespace pjemu::client {
namespace {

// A Ready, Running pod of job "mnist" bound to node n1 (so its deletion is graceful).
Json ReadyPod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"training.kubeflow.org/job-name", "mnist"}}}}},
          {"spec",
           {{"nodeName", "n1"},
            {"terminationGracePeriodSeconds", 30},
            {"containers", Json::array({{{"name", "c"}, {"image", "busybox"}}})}}}};
}

Status MakeReady(store::Store& store, const std::string& name) {
  return store
      .Patch(api::Pods(), "default", name, PatchType::kMerge, testing::RunningReadyStatus(),
             Subresource::kStatus, {})
      .status();
}

TEST_CASE("LocalClient::Evict deletes, refuses with 429 under a budget, lets terminating go",
          "[client][eviction]") {
  FakeClock clock;
  store::Store store(clock);
  std::unique_ptr<Client> c = MakeLocalClient(store);
  REQUIRE(c->Create(api::Pods(), "default", ReadyPod("p")).ok());
  REQUIRE(MakeReady(store, "p").ok());

  SECTION("no budget: the pod is deleted gracefully") {
    REQUIRE(c->Evict("default", "p").ok());
    auto pod = c->Get(api::Pods(), "default", "p");
    REQUIRE(pod.ok());
    CHECK(pod->at("metadata").contains("deletionTimestamp"));
  }
  SECTION("a missing pod is 404") { CHECK(c->Evict("default", "nope").code() == Code::kNotFound); }
  SECTION("a budget allowing no disruption refuses with 429, then allows once met") {
    REQUIRE(c->Create(api::PodDisruptionBudgets(), "default", testing::KeepOneMnistPod()).ok());
    Status refused = c->Evict("default", "p");
    CHECK(refused.code() == Code::kTooManyRequests);
    CHECK(refused.message() == api::kEvictionRefusedMessage);
    CHECK_FALSE(c->Get(api::Pods(), "default", "p")->at("metadata").contains("deletionTimestamp"));

    REQUIRE(c->Create(api::Pods(), "default", ReadyPod("q")).ok());
    REQUIRE(MakeReady(store, "q").ok());
    CHECK(c->Evict("default", "p").ok());  // q keeps minAvailable
    CHECK(c->Evict("default", "q").code() == Code::kTooManyRequests);
  }
  SECTION("a pod already terminating skips the budget") {
    REQUIRE(c->Create(api::PodDisruptionBudgets(), "default", testing::KeepOneMnistPod()).ok());
    REQUIRE(c->Delete(api::Pods(), "default", "p").ok());  // graceful: still there, terminating
    CHECK(c->Evict("default", "p").ok());
  }
}

}  // namespace
}  // namespace pjemu::client
