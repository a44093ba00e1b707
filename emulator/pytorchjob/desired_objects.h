// Desired objects of a PyTorchJob: the pod and headless service of every replica
// (<job>-<type>-<index>), the injected torch env (BEHAVIOUR.md points 17-21), the worker init
// container (point 22) and the elastic HPA (point 42). Pure functions of a DEFAULTED job
// (SetDefaults); the reconciler creates what they return through the Client. Pods keep the
// template's annotations, finalizers and spec.
// Thread safety: pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::pytorchjob {

struct InitContainerOptions {
  std::string image = "alpine:3.10";  // --pytorch-init-container-image
  int max_tries = 100;                // --pytorch-init-container-max-tries
};

// The env appended to every container of the pod of (rtype, index), in the operator's order:
// PYTHONUNBUFFERED, MASTER_PORT, PET_MASTER_PORT, MASTER_ADDR, PET_MASTER_ADDR, WORLD_SIZE,
// RANK, PET_NODE_RANK, PET_NPROC_PER_NODE, then PET_NNODES or the elastic variables.
// Errors: kInvalid for a Master index other than 0, kNotFound when a port is missing.
Result<Json> PodEnv(const Json& job, const std::string& rtype, std::int64_t index);
// The elastic generator alone (PET_RDZV_ENDPOINT, PET_RDZV_BACKEND, PET_NNODES, ...);
// an empty array when elasticPolicy is absent.
Result<Json> ElasticEnv(const Json& job);
// The init containers added to the pod (init-pytorch for Workers of jobs with a Master).
Json InitContainers(const Json& job, const std::string& rtype,
                    const InitContainerOptions& options = {});

// The pod of (rtype, index), ready for Client::Create: labels (template labels, the four
// training.kubeflow.org labels, job-role on the master role, the legacy pytorch_job_name),
// ownerReference, env, init container, pod restartPolicy from the replica's policy.
Result<Json> DesiredPod(const Json& job, const std::string& rtype, std::int64_t index,
                        const InitContainerOptions& options = {});
// The headless service of (rtype, index); kNotFound when the replica has no pytorch container.
Result<Json> DesiredService(const Json& job, const std::string& rtype, std::int64_t index);
// Every pod / service of the job, replica types in ReplicaTypes order, index ascending.
Result<std::vector<Json>> DesiredPods(const Json& job, const InitContainerOptions& options = {});
Result<std::vector<Json>> DesiredServices(const Json& job);
// The HorizontalPodAutoscaler `<job>` for elastic jobs with metrics; null otherwise.
Json DesiredHpa(const Json& job);

// Pod restartPolicy for a replica restartPolicy: ExitCode -> Never, others unchanged.
std::string PodRestartPolicy(const std::string& replica_policy);
// True when the job has a Master role at (rtype, index): the Master, or worker-0 without Master.
bool IsMasterRole(const Json& job, const std::string& rtype, std::int64_t index);

}  // namespace pjemu::pytorchjob
