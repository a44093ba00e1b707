// Given claims, classes and pre-created volumes as wire-form objects, the PV controller's pure
// decisions should pick the volume Kubernetes picks and write what it writes.
#include "emulator/storage/volume_binding.h"

#include <catch2/catch.hpp>

#include "emulator/api/persistent_volumes.h"

namespace pjemu::storage {
namespace {

Json Claim(const std::string& size, Json cls = nullptr) {
  Json c = {
      {"metadata", {{"name", "data"}, {"namespace", "default"}, {"uid", "u1"}}},
      {"spec",
       {{"accessModes", {"ReadWriteOnce"}}, {"resources", {{"requests", {{"storage", size}}}}}}}};
  if (!cls.is_null()) c["spec"]["storageClassName"] = cls;
  return c;
}

Json Volume(const std::string& name, const std::string& size, const std::string& cls = "") {
  Json v = {{"metadata", {{"name", name}}},
            {"spec",
             {{"capacity", {{"storage", size}}},
              {"accessModes", {"ReadWriteOnce", "ReadOnlyMany"}},
              {"hostPath", {{"path", "/srv/" + name}}}}},
            {"status", {{"phase", "Available"}}}};
  if (!cls.empty()) v["spec"]["storageClassName"] = cls;
  return v;
}

TEST_CASE("a claim's class: absent, explicitly empty, named", "[storage]") {
  CHECK_FALSE(ClaimClass(Claim("1Gi")));
  CHECK(ClaimClass(Claim("1Gi", "")) == std::optional<std::string>(""));
  CHECK(ClaimClass(Claim("1Gi", "fast")) == std::optional<std::string>("fast"));
}

TEST_CASE("the default class is kind's standard", "[storage]") {
  Json sc = DefaultStorageClass();
  CHECK(sc["metadata"]["name"] == "standard");
  CHECK(api::IsDefaultStorageClass(sc));
  CHECK(WaitsForFirstConsumer(sc));
  CHECK(sc["provisioner"] == "rancher.io/local-path");
  CHECK(sc["reclaimPolicy"] == "Delete");
}

TEST_CASE("the smallest volume that holds the request, of the claim's class, wins", "[storage]") {
  std::vector<Json> vs = {Volume("big", "10Gi"), Volume("small", "2Gi"), Volume("tiny", "1Mi"),
                          Volume("classy", "2Gi", "fast")};
  CHECK(MatchVolume(Claim("1Gi", ""), "", vs, "") == std::optional<std::size_t>(1));
  CHECK(MatchVolume(Claim("1Gi", "fast"), "fast", vs, "") == std::optional<std::size_t>(3));
  CHECK_FALSE(MatchVolume(Claim("20Gi", ""), "", vs, ""));
  Json rwx = Claim("1Gi", "");
  rwx["spec"]["accessModes"] = {"ReadWriteMany"};
  CHECK_FALSE(MatchVolume(rwx, "", vs, ""));
  Json named = Claim("1Gi", "");
  named["spec"]["volumeName"] = "big";
  CHECK(MatchVolume(named, "", vs, "") == std::optional<std::size_t>(0));
}

TEST_CASE("bound, reserved and node-bound volumes", "[storage]") {
  std::vector<Json> vs = {Volume("taken", "1Gi"), Volume("mine", "5Gi"),
                          Volume("elsewhere", "1Gi")};
  vs[0]["spec"]["claimRef"] = {{"namespace", "default"}, {"name", "other"}, {"uid", "u9"}};
  vs[0]["status"]["phase"] = "Bound";
  vs[1]["spec"]["claimRef"] = {{"namespace", "default"}, {"name", "data"}};
  CHECK(MatchVolume(Claim("1Gi", ""), "", vs, "") == std::optional<std::size_t>(1));
  vs[1]["spec"]["claimRef"]["uid"] = "u-other";  // reserved for an earlier claim of that name
  vs[2]["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] = {
      {{"matchExpressions",
        {{{"key", "kubernetes.io/hostname"}, {"operator", "In"}, {"values", {"node-b"}}}}}}};
  CHECK_FALSE(MatchVolume(Claim("1Gi", ""), "", vs, "node-a"));
  CHECK(MatchVolume(Claim("1Gi", ""), "", vs, "node-b") == std::optional<std::size_t>(2));
  CHECK(api::VolumeNodes(vs[2]) == std::vector<std::string>{"node-b"});
  CHECK(api::VolumeAdmitsNode(vs[0], "anything"));
}

TEST_CASE("a provisioned volume is local-path's", "[storage]") {
  Json claim = Claim("3Gi", "standard");
  std::string dir = VolumeDirectory("/var/pjemu/storage", claim);
  CHECK(dir == "/var/pjemu/storage/pvc-u1_default_data");
  Json pv = ProvisionedVolume(claim, DefaultStorageClass(), "node-a", dir);
  CHECK(pv["metadata"]["name"] == "pvc-u1");
  CHECK(pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] ==
        "rancher.io/local-path");
  CHECK(pv["spec"]["hostPath"] == Json{{"path", dir}, {"type", "DirectoryOrCreate"}});
  CHECK(pv["spec"]["capacity"]["storage"] == "3Gi");
  CHECK(pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete");
  CHECK(pv["spec"]["storageClassName"] == "standard");
  CHECK(pv["spec"]["claimRef"]["uid"] == "u1");
  CHECK(api::VolumeNodes(pv) == std::vector<std::string>{"node-a"});
}

TEST_CASE("bind patches carry the PV controller's annotations", "[storage]") {
  Json claim = Claim("1Gi", "standard");
  Json pv = Volume("pv1", "2Gi");
  Json p = ClaimBindPatch(claim, pv, "rancher.io/local-path");
  CHECK(p["spec"]["volumeName"] == "pv1");
  CHECK(p["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes");
  CHECK(p["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes");
  CHECK(p["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"] ==
        "rancher.io/local-path");
  CHECK_FALSE(ClaimBindPatch(claim, pv, "")["metadata"]["annotations"].contains(
      "volume.beta.kubernetes.io/storage-provisioner"));
  CHECK(VolumeBindPatch(
            pv, claim)["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes");
  Json s = ClaimBoundStatus(pv);
  CHECK(s["status"]["phase"] == "Bound");
  CHECK(s["status"]["capacity"]["storage"] == "2Gi");
}

TEST_CASE("only a path strictly under the storage root is the provisioner's", "[storage]") {
  auto at = [](const std::string& path) {
    return Json{{"spec", {{"hostPath", {{"path", path}}}}}};
  };
  CHECK(OwnedPath(at("/r/storage/pvc-1_a_b"), "/r/storage") == "/r/storage/pvc-1_a_b");
  CHECK(OwnedPath(at("/r/storage/pvc-1_a_b"), "/r/storage/") == "/r/storage/pvc-1_a_b");
  CHECK(OwnedPath(at("/r/storage"), "/r/storage").empty());
  CHECK(OwnedPath(at("/r/storage/../etc"), "/r/storage").empty());
  CHECK(OwnedPath(at("/r/storage-other/x"), "/r/storage").empty());
  CHECK(OwnedPath(at("relative/x"), "/r").empty());
  CHECK(OwnedPath(Json::object(), "/r").empty());
  CHECK(ReclaimPolicy(Json::object()) == "Retain");
}

}  // namespace
}  // namespace pjemu::storage
