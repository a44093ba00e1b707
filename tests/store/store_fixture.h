// Shared set-up of the store tests: a Store over a FakeClock, object builders, and Must(), which
// fails the test with the Status message when a Result is not OK.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/common/clock.h"
#include "emulator/store/store.h"

namespace pjemu::store::testing {

template <typename T>
T Must(Result<T> r) {
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(r).value();
}

// Watch options that resume from `rv`.
inline api::WatchOptions From(const std::string& rv) {
  api::WatchOptions o;
  o.resource_version = rv;
  return o;
}

inline Json PodJson(const std::string& name, Json labels = Json::object()) {
  return {{"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox"}}}}}}};
}

// A replica spec the PyTorchJob webhook admits: `replicas` copies of the pytorch container.
inline Json ReplicaJson(int replicas) {
  Json container = {{"name", "pytorch"}, {"image", "busybox"}};
  return {{"replicas", replicas},
          {"template", {{"spec", {{"containers", Json::array({container})}}}}}};
}

// A PyTorchJob the store admits (the webhook in the resource table): one Master.
inline Json JobJson(const std::string& name) {
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", {{"name", name}}},
          {"spec", {{"pytorchReplicaSpecs", {{"Master", ReplicaJson(1)}}}}}};
}

// `object` with an ownerReference to `owner` (controller: true).
inline Json OwnedBy(Json object, const Json& owner) {
  object["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", owner["apiVersion"]},
                                                        {"kind", owner["kind"]},
                                                        {"name", owner["metadata"]["name"]},
                                                        {"uid", owner["metadata"]["uid"]},
                                                        {"controller", true},
                                                        {"blockOwnerDeletion", true}}});
  return object;
}

inline Json EventAbout(const std::string& name, const Json& object, const std::string& reason) {
  return {{"metadata", {{"name", name}}},
          {"involvedObject",
           {{"kind", object["kind"]},
            {"namespace", object["metadata"]["namespace"]},
            {"name", object["metadata"]["name"]},
            {"uid", object["metadata"]["uid"]},
            {"apiVersion", object["apiVersion"]}}},
          {"reason", reason},
          {"type", "Normal"},
          {"source", {{"component", "pytorchjob-controller"}}}};
}

// Write options naming the field manager (and force, dry run).
inline api::WriteOptions By(const std::string& manager, bool force = false, bool dry_run = false) {
  api::WriteOptions o;
  o.field_manager = manager;
  o.force = force;
  o.dry_run = dry_run;
  return o;
}

inline std::string Rv(const Json& object) {
  return object["metadata"]["resourceVersion"].get<std::string>();
}

// Every queued event of `w` as "TYPE name" strings.
inline std::vector<std::string> Drain(api::Watch& w) {
  std::vector<std::string> out;
  while (auto e = w.TryNext()) {
    std::string name = e->object()["metadata"].value("name", "");
    out.push_back(std::string(api::WatchTypeName(e->type)) + (name.empty() ? "" : " " + name));
  }
  return out;
}

struct StoreFixture {
  FakeClock clock;
  Store store{clock};
};

}  // namespace pjemu::store::testing
