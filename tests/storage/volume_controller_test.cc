// Given a Store (virtual time) and a storage root on disk, the volume controller should do what
// kind's local-path provisioner and the PV controller do: a default class, claims bound at once
// or once the scheduler picks a node, pre-created volumes bound, volumes reclaimed by policy.
#include "emulator/storage/volume_controller.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "emulator/client/local_client.h"
#include "emulator/scheduler/scheduler.h"
#include "emulator/store/store.h"
#include "tests/support/temp_dir.h"

namespace pjemu::storage {
namespace {

namespace fs = std::filesystem;

Json ClaimObject(const std::string& name, Json cls) {
  Json c = {
      {"apiVersion", "v1"},
      {"kind", "PersistentVolumeClaim"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"accessModes", {"ReadWriteOnce"}}, {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  if (!cls.is_null()) c["spec"]["storageClassName"] = cls;
  return c;
}

Json ClassObject(const std::string& name, const std::string& mode, const std::string& policy) {
  return {{"apiVersion", "storage.k8s.io/v1"}, {"kind", "StorageClass"},
          {"metadata", {{"name", name}}},      {"provisioner", "rancher.io/local-path"},
          {"reclaimPolicy", policy},           {"volumeBindingMode", mode}};
}

struct Fixture {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  std::unique_ptr<client::Client> client = client::MakeLocalClient(store);
  pjemu::testing::TempDir dir;
  std::string root = dir / "storage";
  std::unique_ptr<VolumeController> controller;

  Fixture() {
    VolumeControllerOptions options;
    options.storage_root = root;
    options.node_name = "node-a";
    controller = std::make_unique<VolumeController>(*client, loop, options);
  }
  ~Fixture() { controller.reset(); }
  void Start() {
    REQUIRE(controller->Start().ok());
    loop.RunFor(1s);
  }
  Json Claim(const std::string& name) {
    auto c = client->Get(api::PersistentVolumeClaims(), "default", name);
    REQUIRE(c.ok());
    return *c;
  }
  Json Volumes() {
    auto list = client->List(api::PersistentVolumes(), "");
    REQUIRE(list.ok());
    return (*list)["items"];
  }
  Json Volume(const std::string& claim) {
    auto pv = client->Get(api::PersistentVolumes(), "",
                          Claim(claim)["spec"]["volumeName"].get<std::string>());
    REQUIRE(pv.ok());
    return *pv;
  }
  std::vector<std::string> Reasons() {
    auto list = client->List(api::Events(), "default");
    REQUIRE(list.ok());
    std::vector<std::string> out;
    for (const Json& e : (*list)["items"]) out.push_back(e["reason"]);
    return out;
  }
};

TEST_CASE("the default class standard is created once", "[storage]") {
  Fixture f;
  f.Start();
  auto sc = f.client->Get(api::StorageClasses(), "", "standard");
  REQUIRE(sc.ok());
  CHECK((*sc)["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] == "true");
  CHECK((*sc)["volumeBindingMode"] == "WaitForFirstConsumer");
  Fixture other;
  Json own = ClassObject("fast", "Immediate", "Delete");
  own["metadata"]["annotations"] = {{"storageclass.kubernetes.io/is-default-class", "true"}};
  REQUIRE(other.client->Create(api::StorageClasses(), "", own).ok());
  other.Start();
  CHECK(other.client->Get(api::StorageClasses(), "", "standard").status().code() ==
        Code::kNotFound);
}

TEST_CASE("an Immediate claim is provisioned and bound at once", "[storage]") {
  Fixture f;
  f.Start();
  REQUIRE(
      f.client->Create(api::StorageClasses(), "", ClassObject("now", "Immediate", "Delete")).ok());
  REQUIRE(
      f.client->Create(api::PersistentVolumeClaims(), "default", ClaimObject("data", "now")).ok());
  f.loop.RunFor(1s);
  Json c = f.Claim("data");
  std::string uid = c["metadata"]["uid"];
  CHECK(c["status"]["phase"] == "Bound");
  CHECK(c["spec"]["volumeName"] == "pvc-" + uid);
  CHECK(c["status"]["capacity"]["storage"] == "1Gi");
  CHECK(c["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes");
  CHECK(c["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"] ==
        "rancher.io/local-path");
  CHECK(c["metadata"]["finalizers"] == Json{"kubernetes.io/pvc-protection"});
  Json pv = *f.client->Get(api::PersistentVolumes(), "", "pvc-" + uid);
  CHECK(pv["status"]["phase"] == "Bound");
  const std::string dir = f.root + "/pvc-" + uid + "_default_data";
  CHECK(pv["spec"]["hostPath"]["path"] == dir);
  CHECK(pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
          ["values"][0] == "node-a");
  REQUIRE(fs::is_directory(dir));
  CHECK((fs::status(dir).permissions() & fs::perms::all) == fs::perms::all);
  CHECK(f.Reasons() ==
        std::vector<std::string>{"ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"});
}

TEST_CASE("a WaitForFirstConsumer claim binds once a node is selected", "[storage]") {
  Fixture f;
  f.Start();
  REQUIRE(f.client->Create(api::PersistentVolumeClaims(), "default", ClaimObject("data", nullptr))
              .ok());
  f.loop.RunFor(5s);
  Json c = f.Claim("data");
  CHECK(c["spec"]["storageClassName"] == "standard");  // the default class, assigned
  CHECK_FALSE(c["spec"].contains("volumeName"));
  CHECK(f.Volumes().empty());
  CHECK(f.Reasons() == std::vector<std::string>{"WaitForFirstConsumer"});
  Json annotate = {
      {"metadata", {{"annotations", {{"volume.kubernetes.io/selected-node", "node-b"}}}}}};
  REQUIRE(f.client
              ->Patch(api::PersistentVolumeClaims(), "default", "data", api::PatchType::kMerge,
                      annotate)
              .ok());
  f.loop.RunFor(1s);
  c = f.Claim("data");
  CHECK(c["status"]["phase"] == "Bound");
  Json pv = f.Volumes()[0];
  CHECK(pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
          ["values"][0] == "node-b");
  CHECK(pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete");
}

TEST_CASE("a pre-created volume binds to a claim without class", "[storage]") {
  Fixture f;
  f.Start();
  Json pv = {{"apiVersion", "v1"},
             {"kind", "PersistentVolume"},
             {"metadata", {{"name", "dataset"}}},
             {"spec",
              {{"capacity", {{"storage", "5Gi"}}},
               {"accessModes", {"ReadWriteOnce"}},
               {"storageClassName", ""},
               {"hostPath", {{"path", "/srv/datasets"}}}}}};
  REQUIRE(f.client->Create(api::PersistentVolumes(), "", pv).ok());
  f.loop.RunFor(1s);
  CHECK(f.Volumes()[0]["status"]["phase"] == "Available");
  REQUIRE(f.client->Create(api::PersistentVolumeClaims(), "default", ClaimObject("data", "")).ok());
  f.loop.RunFor(1s);
  Json c = f.Claim("data");
  CHECK(c["spec"]["volumeName"] == "dataset");
  CHECK(c["status"]["phase"] == "Bound");
  CHECK(c["status"]["capacity"]["storage"] == "5Gi");
  CHECK_FALSE(c["metadata"]["annotations"].contains("volume.kubernetes.io/storage-provisioner"));
  Json bound = f.Volumes()[0];
  CHECK(bound["status"]["phase"] == "Bound");
  CHECK(bound["spec"]["claimRef"]["name"] == "data");
  CHECK(bound["spec"]["claimRef"]["uid"] == c["metadata"]["uid"]);
  // Deleted claim: the volume (Retain, the API's default for a pre-created one) is Released.
  REQUIRE(f.client->Delete(api::PersistentVolumeClaims(), "default", "data").ok());
  f.loop.RunFor(1s);
  CHECK(f.Volumes()[0]["status"]["phase"] == "Released");
}

TEST_CASE("reclaimPolicy Delete removes the directory and the volume, Retain keeps both",
          "[storage]") {
  Fixture f;
  f.Start();
  REQUIRE(
      f.client->Create(api::StorageClasses(), "", ClassObject("del", "Immediate", "Delete")).ok());
  REQUIRE(
      f.client->Create(api::StorageClasses(), "", ClassObject("keep", "Immediate", "Retain")).ok());
  REQUIRE(f.client->Create(api::PersistentVolumeClaims(), "default", ClaimObject("a", "del")).ok());
  REQUIRE(
      f.client->Create(api::PersistentVolumeClaims(), "default", ClaimObject("b", "keep")).ok());
  f.loop.RunFor(1s);
  const std::string dir_a = f.Volume("a")["spec"]["hostPath"]["path"];
  const std::string dir_b = f.Volume("b")["spec"]["hostPath"]["path"];
  REQUIRE(fs::is_directory(dir_a));
  REQUIRE(fs::is_directory(dir_b));
  for (const char* name : {"a", "b"})
    REQUIRE(f.client->Delete(api::PersistentVolumeClaims(), "default", name).ok());
  f.loop.RunFor(1s);
  CHECK_FALSE(fs::exists(dir_a));
  CHECK(fs::is_directory(dir_b));
  Json left = f.Volumes();
  REQUIRE(left.size() == 1);
  CHECK(left[0]["spec"]["hostPath"]["path"] == dir_b);
  CHECK(left[0]["status"]["phase"] == "Released");
}

TEST_CASE("a claim in use by a pod is deleted only after the pod", "[storage]") {
  Fixture f;
  f.Start();
  REQUIRE(
      f.client->Create(api::StorageClasses(), "", ClassObject("now", "Immediate", "Delete")).ok());
  REQUIRE(
      f.client->Create(api::PersistentVolumeClaims(), "default", ClaimObject("data", "now")).ok());
  Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "user"}}},
      {"spec",
       {{"containers", {{{"name", "c"}, {"image", "busybox"}}}},
        {"volumes", {{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "data"}}}}}}}}};
  REQUIRE(f.client->Create(api::Pods(), "default", pod).ok());
  f.loop.RunFor(1s);
  REQUIRE(f.client->Delete(api::PersistentVolumeClaims(), "default", "data").ok());
  f.loop.RunFor(1s);
  Json c = f.Claim("data");
  CHECK(c["metadata"].contains("deletionTimestamp"));
  CHECK(f.Volumes().size() == 1);
  api::DeleteOptions now;
  now.grace_period_seconds = 0;
  REQUIRE(f.client->Delete(api::Pods(), "default", "user", now).ok());
  f.loop.RunFor(1s);
  CHECK(f.client->Get(api::PersistentVolumeClaims(), "default", "data").status().code() ==
        Code::kNotFound);
  CHECK(f.Volumes().empty());
}

TEST_CASE("a claim naming its volume waits for it, a bound claim whose volume goes is Lost",
          "[storage]") {
  Fixture f;
  f.Start();
  REQUIRE(
      f.client->Create(api::StorageClasses(), "", ClassObject("now", "Immediate", "Retain")).ok());
  Json named = ClaimObject("named", "now");
  named["spec"]["volumeName"] = "later";
  REQUIRE(f.client->Create(api::PersistentVolumeClaims(), "default", named).ok());
  REQUIRE(
      f.client->Create(api::PersistentVolumeClaims(), "default", ClaimObject("data", "now")).ok());
  f.loop.RunFor(1s);
  CHECK(f.Claim("named")["status"]["phase"] == "Pending");
  REQUIRE(f.Volumes().size() == 1);  // data's only
  const std::string pv = f.Claim("data")["spec"]["volumeName"];
  REQUIRE(f.client->Delete(api::PersistentVolumes(), "", pv).ok());
  f.loop.RunFor(1s);
  CHECK(f.Claim("data")["status"]["phase"] == "Lost");
  CHECK(f.Volumes().empty());  // not provisioned again
}

TEST_CASE("a claim of a missing class waits with ProvisioningFailed", "[storage]") {
  Fixture f;
  f.Start();
  REQUIRE(
      f.client->Create(api::PersistentVolumeClaims(), "default", ClaimObject("data", "gold")).ok());
  f.loop.RunFor(30s);
  CHECK_FALSE(f.Claim("data")["spec"].contains("volumeName"));
  CHECK(f.Reasons() == std::vector<std::string>{"ProvisioningFailed"});
  REQUIRE(
      f.client->Create(api::StorageClasses(), "", ClassObject("gold", "Immediate", "Delete")).ok());
  f.loop.RunFor(1s);
  CHECK(f.Claim("data")["status"]["phase"] == "Bound");
}

}  // namespace
}  // namespace pjemu::storage

namespace pjemu::storage {
namespace {

// The scheduler and the volume controller together, as the cluster wires them: a pod naming a
// claim of the default class (WaitForFirstConsumer) is bound once its volume is provisioned on
// the node the scheduler chose.
TEST_CASE("a pod's WaitForFirstConsumer claim is provisioned on the scheduler's node",
          "[storage]") {
  Fixture f;
  scheduler::Scheduler sched(*f.client, f.loop);
  Json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", "node-a"}}},
               {"status",
                {{"allocatable", {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}}},
                 {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  REQUIRE(f.client->Create(api::Nodes(), "", node).ok());
  f.Start();
  REQUIRE(sched.Start().ok());
  Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "trainer"}}},
      {"spec",
       {{"containers", {{{"name", "c"}, {"image", "busybox"}}}},
        {"volumes", {{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "data"}}}}}}}}};
  REQUIRE(f.client->Create(api::Pods(), "default", pod).ok());
  REQUIRE(f.client->Create(api::PersistentVolumeClaims(), "default", ClaimObject("data", nullptr))
              .ok());
  f.loop.RunFor(5s);
  Json c = f.Claim("data");
  CHECK(c["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "node-a");
  CHECK(c["status"]["phase"] == "Bound");
  CHECK(fs::is_directory(f.Volume("data")["spec"]["hostPath"]["path"].get<std::string>()));
  auto p = f.client->Get(api::Pods(), "default", "trainer");
  REQUIRE(p.ok());
  CHECK((*p)["spec"]["nodeName"] == "node-a");
  // The scheduler chose the node in the same instant the claim appeared: no WaitForFirstConsumer.
  CHECK(f.Reasons() == std::vector<std::string>{"ExternalProvisioning", "Provisioning",
                                                "ProvisioningSucceeded", "Scheduled"});
  sched.Stop();
}

}  // namespace
}  // namespace pjemu::storage
