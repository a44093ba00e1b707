// Given Services created and updated through the store, spec.clusterIP should be as
// kube-apiserver's allocator makes it: the lowest free address from 10.96.0.11 at create, None
// kept for headless, a client's address checked (in range, free), kept on an update that leaves
// it out, and immutable.
#include <catch2/catch.hpp>

#include "emulator/api/resources.h"
#include "emulator/common/clock.h"
#include "emulator/store/store.h"

namespace pjemu::store {
namespace {

Json Svc(const std::string& name, const std::string& ip = "") {
  Json spec = {{"ports", Json::array({{{"port", 80}}})}};
  if (!ip.empty()) spec["clusterIP"] = ip;
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", spec}};
}

TEST_CASE("service cluster IPs: allocated at create, immutable", "[store][service]") {
  FakeClock clock;
  Store store(clock);
  (void)store.Create(api::Namespaces(), "", {{"metadata", {{"name", "default"}}}});  // if absent
  auto a = store.Create(api::Services(), "default", Svc("a"));
  REQUIRE(a.ok());
  CHECK((*a)["spec"]["clusterIP"] == "10.96.0.11");
  CHECK((*a)["spec"]["clusterIPs"] == Json::array({"10.96.0.11"}));
  auto h = store.Create(api::Services(), "default", Svc("h", "None"));
  REQUIRE(h.ok());
  CHECK((*h)["spec"]["clusterIP"] == "None");
  auto b = store.Create(api::Services(), "default", Svc("b"));
  REQUIRE(b.ok());
  CHECK((*b)["spec"]["clusterIP"] == "10.96.0.12");

  auto taken = store.Create(api::Services(), "default", Svc("c", "10.96.0.11"));
  REQUIRE(taken.status().code() == Code::kInvalid);
  CHECK_THAT(taken.status().message(), Catch::Contains("provided IP is already allocated"));
  auto outside = store.Create(api::Services(), "default", Svc("c", "192.168.0.1"));
  CHECK_THAT(outside.status().message(), Catch::Contains("not in the valid range"));
  auto chosen = store.Create(api::Services(), "default", Svc("c", "10.96.5.5"));
  REQUIRE(chosen.ok());

  Json update = Svc("a");  // clusterIP left out: kept
  update["metadata"]["labels"] = {{"x", "y"}};
  auto kept = store.Update(api::Services(), "default", update);
  REQUIRE(kept.ok());
  CHECK((*kept)["spec"]["clusterIP"] == "10.96.0.11");
  auto changed = store.Update(api::Services(), "default", Svc("a", "10.96.0.99"));
  REQUIRE(changed.status().code() == Code::kInvalid);
  CHECK_THAT(changed.status().message(), Catch::Contains("field is immutable"));

  REQUIRE(store.Delete(api::Services(), "default", "a").ok());
  auto reused = store.Create(api::Services(), "default", Svc("d"));
  REQUIRE(reused.ok());
  CHECK((*reused)["spec"]["clusterIP"] == "10.96.0.11");
}

}  // namespace
}  // namespace pjemu::store
