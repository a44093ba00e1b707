// Given PersistentVolumes and StorageClasses as wire-form objects, the shared vocabulary should
// say which nodes a volume's hostname affinity admits and which class is the default, as
// Kubernetes v1.30 does (the annotation names included).
#include "emulator/api/persistent_volumes.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace pjemu::api {
namespace {

Json Volume(Json expressions) {
  Json term = {{"matchExpressions", std::move(expressions)}};
  Json terms = Json::array();
  terms.push_back(term);
  return {{"spec", {{"nodeAffinity", {{"required", {{"nodeSelectorTerms", terms}}}}}}}};
}

Json Class(const std::string& name, const std::string& created, const char* annotation) {
  Json meta = {{"name", name}, {"creationTimestamp", created}};
  if (annotation) meta["annotations"] = {{annotation, "true"}};
  return {{"metadata", meta}};
}

TEST_CASE("the annotation and label names are Kubernetes'", "[api]") {
  CHECK(std::string(kDefaultClassAnnotation) == "storageclass.kubernetes.io/is-default-class");
  CHECK(std::string(kBetaDefaultClassAnnotation) ==
        "storageclass.beta.kubernetes.io/is-default-class");
  CHECK(std::string(kSelectedNodeAnnotation) == "volume.kubernetes.io/selected-node");
  CHECK(std::string(kHostnameLabel) == "kubernetes.io/hostname");
}

TEST_CASE("a volume admits the nodes of its hostname In expressions", "[api]") {
  Json pv = Volume(Json::array(
      {Json{{"key", "kubernetes.io/hostname"}, {"operator", "In"}, {"values", {"a", "b"}}},
       Json{{"key", "zone"}, {"operator", "In"}, {"values", Json::array({"z"})}},
       Json{{"key", "kubernetes.io/hostname"},
            {"operator", "NotIn"},
            {"values", Json::array({"c"})}}}));
  CHECK(VolumeNodes(pv) == std::vector<std::string>{"a", "b"});
  CHECK(VolumeAdmitsNode(pv, "b"));
  CHECK_FALSE(VolumeAdmitsNode(pv, "c"));
  // No hostname expression, no affinity, no volume: any node.
  CHECK(VolumeNodes(Volume(Json::array())).empty());
  CHECK(VolumeAdmitsNode(Json{{"spec", Json::object()}}, "x"));
  CHECK(VolumeAdmitsNode(Json(), "x"));
}

TEST_CASE("the default class is annotated, newest first, then by name", "[api]") {
  Json plain = Class("plain", "2024-01-03T00:00:00Z", nullptr);
  Json old = Class("old", "2024-01-01T00:00:00Z", kDefaultClassAnnotation);
  Json beta = Class("beta", "2024-01-02T00:00:00Z", kBetaDefaultClassAnnotation);
  Json twin = Class("a-twin", "2024-01-02T00:00:00Z", kDefaultClassAnnotation);
  Json off = plain;
  off["metadata"]["annotations"] = {{kDefaultClassAnnotation, "false"}};
  CHECK(IsDefaultStorageClass(old));
  CHECK(IsDefaultStorageClass(beta));
  CHECK_FALSE(IsDefaultStorageClass(plain));
  CHECK_FALSE(IsDefaultStorageClass(off));
  CHECK(FindDefaultStorageClass({}) == nullptr);
  CHECK(FindDefaultStorageClass({&plain, &off, nullptr}) == nullptr);
  CHECK(FindDefaultStorageClass({&plain, &old}) == &old);
  CHECK(FindDefaultStorageClass({&old, &beta, &plain}) == &beta);
  CHECK(FindDefaultStorageClass({&beta, &twin, &old}) == &twin);
  CHECK(FindDefaultStorageClass({&twin, &beta}) == &twin);
}

}  // namespace
}  // namespace pjemu::api
