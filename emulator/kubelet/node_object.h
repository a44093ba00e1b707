// The Node object a kubelet registers and heartbeats: capacity/allocatable (cpu, memory,
// nvidia.com/gpu, pods, ephemeral-storage), Ready/MemoryPressure/DiskPressure/PIDPressure
// conditions, InternalIP/Hostname addresses, nodeInfo and the usual kubernetes.io labels.
// GPUs come from options or are detected (nvidia-smi -L, else /proc/driver/nvidia/gpus); with
// time-slicing replicas, nvidia.com/gpu is GPUs x replicas and the node carries the labels the
// NVIDIA GPU feature discovery writes for it (nvidia.com/gpu.replicas, .sharing-strategy).
// Thread safety: pure functions, except DetectGpuCount which reads the host.
#pragma once

#include <map>
#include <string>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::kubelet {

struct NodeResources {
  std::string cpu;       // e.g. "16"
  std::string memory;    // e.g. "131072000Ki"
  int gpus = 0;          // physical GPUs
  int gpu_replicas = 1;  // time-slicing replicas per GPU (KubeletOptions::gpu_sharing)
  int max_pods = 110;
};

// Number of NVIDIA GPUs on this host (0 when none or no driver).
int DetectGpuCount();
// Host cpu count and memory ("<kB>Ki" from /proc/meminfo).
NodeResources DetectHostResources();

// The complete Node object (metadata, spec, status) for registration.
// `taints` becomes spec.taints (when not empty) and `pod_cidr` spec.podCIDR(s) (when not "").
Json BuildNode(const std::string& name, const std::string& ip,
               const std::map<std::string, std::string>& labels, const NodeResources& res,
               Time now, const Json& taints = Json::array(), const std::string& pod_cidr = "");
// The node status conditions at now (Ready True, pressures False), for heartbeats; keeps
// lastTransitionTime of an unchanged condition from old.
Json NodeConditions(const Json& old, bool ready, Time now);

}  // namespace pjemu::kubelet
