// The PyTorchJob's merge rules (field_schema.h), from the Training Operator v1.9 CRD's OpenAPI
// schema (kubeflow.org_pytorchjobs.yaml, generated from pkg/apis/kubeflow.org/v1): the replica
// specs are `additionalProperties` (a map keyed Master/Worker), each template a PodTemplateSpec
// whose spec carries core/v1's list markers (x-kubernetes-list-type / -list-map-keys); the
// replica statuses and the scheduling policy's minResources are maps too. A custom resource's
// zero object is empty (unstructured), so a create adds `.spec` itself. Its known fields (the
// API server's field validation) are the same CRD's.
#include "emulator/api/field_schema.h"
#include "emulator/api/known_fields.h"

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

const KnownFields* PyTorchJobKnownFields() {
  static const KnownFields* s = [] {
    KnownFields* job = ObjectFields({"apiVersion", "kind", "status"});
    job->fields["metadata"] = ObjectMetaFields();
    KnownFields* template_spec = ObjectFields({});
    // The CRD's embedded ObjectMeta keeps only these five fields.
    template_spec->fields["metadata"] =
        ObjectFields({"annotations", "finalizers", "labels", "name", "namespace"});
    template_spec->fields["spec"] = PodSpecFields();
    KnownFields* replica = ObjectFields({"replicas", "restartPolicy"});
    replica->fields["template"] = template_spec;
    auto* replicas = new KnownFields;  // NOLINT: lives for the whole program
    replicas->open = false;
    replicas->values = replica;
    KnownFields* run_policy = ObjectFields({"cleanPodPolicy", "ttlSecondsAfterFinished",
                                            "activeDeadlineSeconds", "backoffLimit", "suspend",
                                            "managedBy"});
    run_policy->fields["schedulingPolicy"] = ObjectFields(
        {"minAvailable", "queue", "minResources", "priorityClass", "scheduleTimeoutSeconds"});
    KnownFields* elastic =
        ObjectFields({"minReplicas", "maxReplicas", "rdzvBackend", "rdzvPort", "rdzvHost",
                      "rdzvId", "standalone", "nProcPerNode", "maxRestarts", "metrics"});
    elastic->fields["rdzvConf"] = ArrayOf(ObjectFields({"key", "value"}));
    KnownFields* spec = ObjectFields({"nprocPerNode"});
    spec->fields["pytorchReplicaSpecs"] = replicas;
    spec->fields["runPolicy"] = run_policy;
    spec->fields["elasticPolicy"] = elastic;
    job->fields["spec"] = spec;
    return job;
  }();
  return s;
}

}  // namespace pjemu::api
