// Objects the eviction tests share: a PodDisruptionBudget keeping one pod of the "mnist" job
// available, and the status patch that makes a pod Running and Ready (what such a budget counts).
#pragma once

#include "emulator/common/status.h"

namespace pjemu::testing {

// policy/v1 PodDisruptionBudget "keep": minAvailable 1 over training.kubeflow.org/job-name=mnist.
inline Json KeepOneMnistPod() {
  return {{"apiVersion", "policy/v1"},
          {"kind", "PodDisruptionBudget"},
          {"metadata", {{"name", "keep"}}},
          {"spec",
           {{"minAvailable", 1},
            {"selector", {{"matchLabels", {{"training.kubeflow.org/job-name", "mnist"}}}}}}}};
}

// A merge patch of the status subresource: phase Running, condition Ready True.
inline Json RunningReadyStatus() {
  return {{"status",
           {{"phase", "Running"},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

}  // namespace pjemu::testing
