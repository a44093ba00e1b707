// The JobSet a TrainJob runs as (Trainer v2.3.0's runtime framework, its plugins written as a
// fixed, ordered list of plain steps over the JobSet being built):
//   0. runtimePatches, in order, each merged over the runtime's spec (api::trainjob::
//      RuntimeSpecSchema: server-side apply's merge), so the TrainJob's own fields below win
//      over every patch and every patch over the runtime;
//   1. jobset plugin: the runtime's JobSet template, named after the TrainJob, its labels and
//      annotations (with the TrainJob's spec.labels/annotations), the controller ownerReference
//      and spec.suspend from the TrainJob;
//   2. torch plugin (when the runtime's mlPolicy has `torch`): the trainer step's Job
//      (ancestor label `trainer`) gets parallelism = completions = numNodes, its container
//      `node` the trainer's image, command, args, env, resourcesPerNode, then PET_NNODES,
//      PET_NPROC_PER_NODE, PET_NODE_RANK (the completion index), PET_MASTER_ADDR
//      (`<tj>-node-0-0.<tj>`), PET_MASTER_PORT and container port 29500;
//   3. coscheduling plugin (when the runtime's podGroupPolicy has `coscheduling`): the
//      pod-group label on every replicatedJob's pod template (coscheduling.h).
// Thread safety: pure functions; safe from any thread.
#pragma once

#include <string>

#include "emulator/common/status.h"

namespace pjemu::trainjob {

// The runtime with the TrainJob's runtimePatches merged over its spec, in order (the runtime
// itself when there are none).
Json PatchedRuntime(const Json& trainjob, const Json& runtime);

// REQUIRES: trainjob was defaulted by admission (api::trainjob::SetDefaults); runtime is a
// (Cluster)TrainingRuntime.
Json DesiredJobSet(const Json& trainjob, const Json& runtime);

// trainer.numNodes, else the runtime's mlPolicy.numNodes, else 1.
std::int64_t NumNodes(const Json& trainjob, const Json& runtime);
// PET_NPROC_PER_NODE: trainer.numProcPerNode, else the runtime's torch.numProcPerNode, else
// "auto"; "auto" with resourcesPerNode and no GPU resource becomes the CPU limit (else request)
// rounded up, at least 1.
std::string NumProcPerNode(const Json& trainjob, const Json& runtime);

}  // namespace pjemu::trainjob
