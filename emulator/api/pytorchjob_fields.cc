// The PyTorchJob's merge rules (field_schema.h), from the Training Operator v1.9 CRD's OpenAPI
// schema (kubeflow.org_pytorchjobs.yaml, generated from pkg/apis/kubeflow.org/v1): the replica
// specs are `additionalProperties` (a map keyed Master/Worker), each template a PodTemplateSpec
// whose spec carries core/v1's list markers (x-kubernetes-list-type / -list-map-keys); the
// replica statuses and the scheduling policy's minResources are maps too. A custom resource's
// zero object is empty (unstructured), so a create adds `.spec` itself.
#include "emulator/api/field_schema.h"

namespace pjemu::api {

FieldRules PyTorchJobFieldRules() {
  const std::string replica = "spec.pytorchReplicaSpecs.*";
  std::vector<std::string> rules = ObjectMetaRules();
  for (std::string line :
       {"spec.pytorchReplicaSpecs map", "spec.runPolicy.schedulingPolicy.minResources map",
        "spec.elasticPolicy.metrics atomic", "status.replicaStatuses map",
        "status.conditions keys type"}) {
    rules.push_back(line);
  }
  rules.push_back(replica + ".template.metadata.labels map");
  rules.push_back(replica + ".template.metadata.annotations map");
  for (auto& line : PodSpecRules(replica + ".template.spec")) rules.push_back(std::move(line));
  return {std::move(rules), "{}"};
}

}  // namespace pjemu::api
