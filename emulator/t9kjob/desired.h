// The objects a PyTorchTrainingJob's controller makes, as pure functions of a DEFAULTED job
// (api::t9k::SetDefaults): each replica's pod `<job>-<suffix>-<type>-<index>` with its labels,
// owner reference, env and launch command (plain, torchrun, debug or resume), the master's
// headless Service, and the TensorBoard of spec.tensorboardSpec. Where T9k's documentation is
// silent the choices are named in README "Assumptions about T9k" and BEHAVIOUR.md.
// Thread safety: pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::t9kjob {

// One replica: its replica spec's position in spec.replicaSpecs and its index within the type.
struct Replica {
  std::size_t spec = 0;
  std::int64_t index = 0;
};

// How the pod's containers start: as the template says, torchrun's rewrite, debug mode's
// command, or pause's resumeSpecs on the way out of a pause.
enum class Launch { kTemplate, kDebug, kResume };

// "<job>-<suffix>-<type>-<index>".
std::string PodName(const Json& job, const Replica& r);
// The master's pod and Service name: the first replica of the first replica spec.
std::string MasterName(const Json& job);
// The replicas the job wants now, spec order then index (elastic: expectedReplicas of the first).
std::vector<Replica> DesiredReplicas(const Json& job);
// RANK of a replica in plain mode: its position in DesiredReplicas; WORLD_SIZE is their count.
std::int64_t GlobalRank(const Json& job, const Replica& r);

// The env added to every container: MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK (plain mode);
// MASTER_ADDR, MASTER_PORT, PET_RDZV_ENDPOINT (torchrun mode, where torchrun gives each process
// its RANK and WORLD_SIZE).
Json PodEnv(const Json& job, const Replica& r);
// torchrun's arguments before the script's (torchrun mode): --nnodes (min:max when elastic),
// --nproc_per_node, --rdzv_backend, --rdzv_id, --max_restarts, then extraOptions.
// Errors: kInvalid for a bad procPerNode.
Result<std::vector<std::string>> TorchrunArgs(const Json& job, const Json& rspec);

// The pod of a replica, ready for Client::Create. Errors: kInvalid (procPerNode).
Result<Json> DesiredPod(const Json& job, const Replica& r, Launch launch);
// The master's headless Service (selects the master pod, exposes the master port).
Json DesiredMasterService(const Json& job);
// The TensorBoard `<job>-<suffix>` of spec.tensorboardSpec; null when the job asks for none.
Json DesiredTensorBoard(const Json& job);

}  // namespace pjemu::t9kjob
