// The PyTorchJob every control-plane benchmark submits: Master 1 + Worker 2, restartPolicy
// OnFailure, one container each running `image` with `command` (the kubelet maps the image
// through the image map; the operator's init container guards the workers, as on a cluster).
#pragma once

#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::bench {

inline Json ReplicaSpec(int replicas, const std::string& image,
                        const std::vector<std::string>& command) {
  Json container = {{"name", "pytorch"}, {"image", image}};
  if (!command.empty()) container["command"] = command;
  return {{"replicas", replicas},
          {"restartPolicy", "OnFailure"},
          {"template", {{"spec", {{"containers", Json::array({container})}}}}}};
}

inline Json BenchJob(const std::string& name, const std::string& ns, const std::string& image,
                     const std::vector<std::string>& command = {}) {
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"pytorchReplicaSpecs",
             {{"Master", ReplicaSpec(1, image, command)},
              {"Worker", ReplicaSpec(2, image, command)}}}}}};
}

// True when the job's status carries condition `type` with status "True".
inline bool HasCondition(const Json& job, const char* type) {
  auto st = job.find("status");
  if (st == job.end()) return false;
  auto conds = st->find("conditions");
  if (conds == st->end() || !conds->is_array()) return false;
  for (const Json& c : *conds) {
    if (c.value("type", "") == type && c.value("status", "") == "True") return true;
  }
  return false;
}

}  // namespace pjemu::bench
