// Admission of Pods' volumes and volumeMounts, as kube-apiserver's ValidatePodSpec checks them
// (ValidateVolumes, validateVolumeSource, ValidateVolumeMounts) with its messages. It is the Pods
// row's validator in the resource table, so a pod the operator creates from a bad template is
// refused (422) and the operator records FailedCreatePod, as on a cluster. The same checks over a
// PyTorchJob's pod templates serve the CLI's pre-run check (manifest/check.cc): the operator's
// webhook (v1.9) does not look into templates, so the PyTorchJob's own admission does not call it.
// Everything else of a pod spec (containers' names) is the store's (store/object_meta.h).
// Thread safety: pure functions of their arguments.
#pragma once

#include <string>
#include <vector>

#include "emulator/api/pytorchjob_validation.h"
#include "emulator/common/status.h"

namespace pjemu::api {

// The volume errors of one pod spec; `spec_path` prefixes every field ("spec" for a pod,
// "spec.pytorchReplicaSpecs.Worker.template.spec" for a job's template). Order as upstream:
// volumes, then containers' mounts, then init containers' mounts.
std::vector<FieldError> PodSpecVolumeErrors(const Json& pod_spec, const std::string& spec_path);

// The Pods row's validator: PodSpecVolumeErrors(spec) as a 422 `Pod "x" is invalid: ...`. Runs on
// create only (a pod's volumes and mounts are immutable; updates never change them).
Status ValidatePod(const Json& pod, const Json* old, std::vector<std::string>* warnings);
// The API server's defaulting of a pod's containers that the kubelet reads
// (pkg/apis/core/v1/defaults.go): imagePullPolicy, when unset, is Always for an image tagged
// (or implied) `latest`, IfNotPresent otherwise (DefaultImagePullPolicy).
void DefaultPod(Json& pod);

// PodSpecVolumeErrors over every replica spec's template of a PyTorchJob, prefixed
// `spec.pytorchReplicaSpecs.<Type>.template.spec`, replica types in the job's order.
std::vector<FieldError> PyTorchJobTemplateVolumeErrors(const Json& job);

}  // namespace pjemu::api
