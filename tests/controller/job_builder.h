// Test helpers for the controller: a fluent PyTorchJob builder and pods in a given phase.
#pragma once

#include <optional>
#include <string>

#include "emulator/api/pytorchjob.h"
#include "emulator/common/status.h"
#include "emulator/pytorchjob/desired_objects.h"
#include "emulator/pytorchjob/job_spec.h"

namespace pjemu::pytorchjob::testing {

using api::SetDefaults;

inline Json Container(const std::string& name = "pytorch", const std::string& image = "img") {
  return {{"name", name}, {"image", image}};
}

inline Json ReplicaSpecJson(std::optional<int> replicas, const std::string& policy) {
  Json spec = {{"template", {{"spec", {{"containers", Json::array({Container()})}}}}}};
  if (replicas) spec["replicas"] = *replicas;
  if (!policy.empty()) spec["restartPolicy"] = policy;
  return spec;
}

class JobBuilder {
 public:
  explicit JobBuilder(std::string name) {
    job_ = {{"apiVersion", "kubeflow.org/v1"},
            {"kind", "PyTorchJob"},
            {"metadata",
             {{"name", name},
              {"namespace", "default"},
              {"uid", "uid-" + name},
              {"resourceVersion", "1"}}},
            {"spec", {{"pytorchReplicaSpecs", Json::object()}}}};
  }
  JobBuilder& Master(std::optional<int> replicas = 1, const std::string& policy = "OnFailure") {
    job_["spec"]["pytorchReplicaSpecs"]["Master"] = ReplicaSpecJson(replicas, policy);
    return *this;
  }
  JobBuilder& Worker(std::optional<int> replicas = 1, const std::string& policy = "OnFailure") {
    job_["spec"]["pytorchReplicaSpecs"]["Worker"] = ReplicaSpecJson(replicas, policy);
    return *this;
  }
  // Sets any field by JSON pointer, e.g. "/spec/runPolicy/backoffLimit".
  JobBuilder& Set(const std::string& pointer, Json value) {
    job_[Json::json_pointer(pointer)] = std::move(value);
    return *this;
  }
  Json Build() const { return job_; }
  Json Defaulted() const { return SetDefaults(job_); }

 private:
  Json job_;
};

// The pod the controller would create for (rtype, index), in `phase` (may be "").
inline Json PodIn(const Json& job, const std::string& rtype, int index, const std::string& phase) {
  Json pod = *DesiredPod(SetDefaults(job), rtype, index);
  pod["metadata"]["uid"] = "pod-uid-" + pod["metadata"]["name"].get<std::string>();
  if (!phase.empty()) pod["status"]["phase"] = phase;
  return pod;
}

inline Json ServiceFor(const Json& job, const std::string& rtype, int index) {
  return *DesiredService(SetDefaults(job), rtype, index);
}

}  // namespace pjemu::pytorchjob::testing
