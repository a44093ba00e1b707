// Given a node that gains a NoExecute taint, the taint manager should evict the pods that do not
// tolerate it at once, those that tolerate it for tolerationSeconds after that long, and the
// others never.
#include "emulator/scheduler/taint_manager.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "emulator/api/json_fields.h"
#include "emulator/client/local_client.h"
#include "emulator/store/store.h"

namespace pjemu::scheduler {
namespace {

Json BoundPod(const std::string& name, const Json& tolerations) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"nodeName", "n1"},
            {"tolerations", tolerations},
            {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
}

TEST_CASE("NoExecute taints evict untolerated pods now, tolerated ones later", "[scheduler]") {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  auto client = client::MakeLocalClient(store);
  TaintManager manager(*client, loop);
  REQUIRE(client->Create(api::Nodes(), "", {{"apiVersion", "v1"}, {"kind", "Node"},
                                            {"metadata", {{"name", "n1"}}}}).ok());
  Json toleration = {{"key", "maintenance"}, {"operator", "Exists"}, {"effect", "NoExecute"}};
  Json for_30s = toleration;
  for_30s["tolerationSeconds"] = 30;
  REQUIRE(client->Create(api::Pods(), "default", BoundPod("plain", Json::array())).ok());
  REQUIRE(client->Create(api::Pods(), "default", BoundPod("for-30s", Json::array({for_30s}))).ok());
  REQUIRE(client->Create(api::Pods(), "default", BoundPod("forever", Json::array({toleration}))).ok());
  REQUIRE(manager.Start().ok());
  auto gone_or_deleting = [&](const std::string& name) {
    auto p = client->Get(api::Pods(), "default", name);
    return !p.ok() || api::FieldAt(*p, {"metadata", "deletionTimestamp"}).is_string();
  };
  loop.RunFor(1s);
  CHECK_FALSE(gone_or_deleting("plain"));  // no taint yet
  REQUIRE(client->Patch(api::Nodes(), "", "n1", api::PatchType::kMerge,
                        {{"spec", {{"taints", {{{"key", "maintenance"}, {"effect", "NoExecute"}}}}}}})
              .ok());
  loop.RunFor(1s);
  CHECK(gone_or_deleting("plain"));
  CHECK_FALSE(gone_or_deleting("for-30s"));
  loop.RunFor(40s);
  CHECK(gone_or_deleting("for-30s"));
  CHECK_FALSE(gone_or_deleting("forever"));
  auto events = client->List(api::Events(), "default");
  REQUIRE(events.ok());
  int marked = 0;
  for (const Json& e : (*events)["items"]) marked += e["reason"] == "TaintManagerEviction";
  CHECK(marked == 2);
}

TEST_CASE(
    "a pod bound to a node already tainted is evicted, and a pending eviction whose taint "
    "goes away is cancelled",
    "[scheduler]") {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  auto client = client::MakeLocalClient(store);
  TaintManager manager(*client, loop);
  Json taint = {{"key", "maintenance"}, {"effect", "NoExecute"}};
  REQUIRE(client
              ->Create(api::Nodes(), "",
                       {{"apiVersion", "v1"},
                        {"kind", "Node"},
                        {"metadata", {{"name", "n1"}}},
                        {"spec", {{"taints", {taint}}}}})
              .ok());
  REQUIRE(manager.Start().ok());
  loop.RunFor(1s);
  Json for_30s = {{"key", "maintenance"},
                  {"operator", "Exists"},
                  {"effect", "NoExecute"},
                  {"tolerationSeconds", 30}};
  REQUIRE(client->Create(api::Pods(), "default", BoundPod("late", Json::array())).ok());
  REQUIRE(client->Create(api::Pods(), "default", BoundPod("for-30s", Json::array({for_30s}))).ok());
  loop.RunFor(1s);
  auto deleting = [&](const std::string& name) {
    auto p = client->Get(api::Pods(), "default", name);
    return !p.ok() || api::FieldAt(*p, {"metadata", "deletionTimestamp"}).is_string();
  };
  CHECK(deleting("late"));
  CHECK_FALSE(deleting("for-30s"));
  REQUIRE(
      client
          ->Patch(api::Nodes(), "", "n1", api::PatchType::kMerge, {{"spec", {{"taints", nullptr}}}})
          .ok());
  loop.RunFor(40s);
  CHECK_FALSE(deleting("for-30s"));
  auto events = client->List(api::Events(), "default");
  REQUIRE(events.ok());
  std::vector<std::string> messages;
  for (const Json& e : (*events)["items"]) {
    if (e["reason"] == "TaintManagerEviction") messages.push_back(e["message"]);
  }
  std::sort(messages.begin(), messages.end());
  CHECK(messages == std::vector<std::string>{"Cancelling deletion of Pod default/for-30s",
                                             "Marking for deletion Pod default/late"});
}

}  // namespace
}  // namespace pjemu::scheduler
