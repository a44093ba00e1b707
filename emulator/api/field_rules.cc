// The merge rules of the core types pjemu serves (field_schema.h), each line taken from the
// markers on the Go field in k8s.io/api (core/v1/types.go, policy/v1, storage/v1):
// `+listType=map` + `+listMapKey=K` (or, on older fields, `+patchStrategy=merge` +
// `+patchMergeKey=K`) -> "keys K"; `+listType=set` -> "set"; `+listType=atomic`, `+mapType=atomic`,
// `+structType=atomic` -> "atomic"; a Go map[string]T -> "map". Lists without a marker are
// atomic, which is also the default. The zero objects are the Go types' empty JSON forms.
#include "emulator/api/field_schema.h"

namespace pjemu::api {
namespace {

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Container: ports (+listMapKey=containerPort, +listMapKey=protocol; protocol defaults to TCP),
// env (+patchMergeKey=name), volumeMounts (+patchMergeKey=mountPath), volumeDevices
// (+patchMergeKey=devicePath), resources' ResourceLists (maps), resources.claims (+listMapKey=name).
std::vector<std::string> ContainerRules(const std::string& p) {
  return {p + ".ports keys containerPort protocol=TCP",
          p + ".env keys name",
          p + ".envFrom atomic",
          p + ".volumeMounts keys mountPath",
          p + ".volumeDevices keys devicePath",
          p + ".resources.limits map",
          p + ".resources.requests map",
          p + ".resources.claims keys name",
          p + ".resizePolicy atomic"};
}

// Conditions of every built-in status: +listType=map +listMapKey=type.
std::vector<std::string> ConditionRules() { return {"status.conditions keys type"}; }

}  // namespace

std::vector<std::string> ObjectMetaRules() {
  return {"metadata.labels map", "metadata.annotations map", "metadata.finalizers set",
          "metadata.ownerReferences keys uid", "metadata.managedFields atomic"};
}

std::vector<std::string> PodSpecRules(const std::string& p) {
  std::vector<std::string> rules = {
      p + ".volumes keys name",
      p + ".containers keys name",
      p + ".initContainers keys name",
      p + ".ephemeralContainers keys name",
      p + ".imagePullSecrets keys name",
      p + ".nodeSelector atomic",  // +mapType=atomic
      p + ".tolerations atomic",   // +listType=atomic
      p + ".hostAliases keys ip",
      p + ".readinessGates atomic",
      p + ".topologySpreadConstraints keys topologyKey whenUnsatisfiable",
      p + ".overhead map",
      p + ".schedulingGates keys name",
      p + ".resourceClaims keys name",
  };
  for (const char* list : {".containers[]", ".initContainers[]", ".ephemeralContainers[]"}) {
    rules = With(std::move(rules), ContainerRules(p + list));
  }
  return rules;
}

FieldRules PodFieldRules() {
  return {With(With(ObjectMetaRules(), PodSpecRules("spec")),
               With(ConditionRules(), {"status.podIPs keys ip", "status.hostIPs keys ip"})),
          R"({"metadata":{},"spec":{"containers":null},"status":{}})"};
}

FieldRules ServiceFieldRules() {
  return {With(ObjectMetaRules(), With(ConditionRules(), {"spec.ports keys port protocol=TCP",
                                                          "spec.selector atomic"})),
          R"({"metadata":{},"spec":{},"status":{"loadBalancer":{}}})"};
}

FieldRules ConfigDataFieldRules() {
  return {With(ObjectMetaRules(), {"data map", "binaryData map", "stringData map"}),
          R"({"metadata":{}})"};
}

FieldRules NodeFieldRules() {
  return {With(ObjectMetaRules(),
               With(ConditionRules(), {"spec.podCIDRs set", "spec.taints atomic",
                                       "status.capacity map", "status.allocatable map",
                                       "status.addresses keys type"})),
          R"({"metadata":{},"spec":{},"status":{}})"};
}

FieldRules NamespaceFieldRules() {
  return {With(ObjectMetaRules(), ConditionRules()), R"({"metadata":{},"spec":{},"status":{}})"};
}

FieldRules PersistentVolumeClaimFieldRules() {
  return {With(ObjectMetaRules(),
               With(ConditionRules(), {"spec.resources.requests map", "spec.resources.limits map",
                                       "spec.selector atomic", "status.capacity map"})),
          R"({"metadata":{},"spec":{"resources":{}},"status":{}})"};
}

FieldRules PersistentVolumeFieldRules() {
  return {With(ObjectMetaRules(), {"spec.capacity map"}),
          R"({"metadata":{},"spec":{},"status":{}})"};
}

FieldRules PodDisruptionBudgetFieldRules() {
  // LabelSelector is +structType=atomic; disruptedPods is a map.
  return {With(ObjectMetaRules(),
               With(ConditionRules(), {"spec.selector atomic", "status.disruptedPods map"})),
          R"({"metadata":{},"spec":{},"status":{"disruptionsAllowed":0,"currentHealthy":0,)"
          R"("desiredHealthy":0,"expectedPods":0}})"};
}

FieldRules EventFieldRules() {
  return {ObjectMetaRules(), R"({"metadata":{},"involvedObject":{},"source":{}})"};
}

FieldRules StorageClassFieldRules() {
  return {With(ObjectMetaRules(), {"parameters map"}), R"({"metadata":{}})"};
}

}  // namespace pjemu::api
