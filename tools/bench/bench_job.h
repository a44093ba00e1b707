// The jobs every control-plane benchmark submits, one per kind, each of 3 pods running `image`
// with `command` (the kubelet maps the image through the image map):
//  - PyTorchJob: Master 1 + Worker 2, restartPolicy OnFailure (the operator's init container
//    guards the workers, as on a cluster);
//  - T9k (PyTorchTrainingJob): master 1 + worker 2, restartPolicy OnFailure;
//  - Job (batch/v1): completions 3, parallelism 3, restartPolicy Never;
//  - TrainJob: the default runtime torch-distributed with trainer.numNodes 3.
// And the cluster the in-process benchmarks run them on.
#pragma once

#include <string>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/cluster/cluster_options.h"
#include "emulator/common/status.h"

namespace pjemu::bench {

inline Json BenchContainer(const std::string& name, const std::string& image,
                           const std::vector<std::string>& command) {
  Json container = {{"name", name}, {"image", image}};
  if (!command.empty()) container["command"] = command;
  return container;
}

inline Json ReplicaSpec(int replicas, const std::string& image,
                        const std::vector<std::string>& command) {
  return {{"replicas", replicas},
          {"restartPolicy", "OnFailure"},
          {"template",
           {{"spec",
             {{"containers", Json::array({BenchContainer("pytorch", image, command)})}}}}}};
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

inline Json BenchT9kJob(const std::string& name, const std::string& ns, const std::string& image,
                        const std::vector<std::string>& command) {
  Json master = ReplicaSpec(1, image, command), worker = ReplicaSpec(2, image, command);
  master["type"] = "master";
  worker["type"] = "worker";
  return {{"apiVersion", "batch.tensorstack.dev/v1beta1"},
          {"kind", "PyTorchTrainingJob"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", {{"replicaSpecs", Json::array({master, worker})}}}};
}

inline Json BenchBatchJob(const std::string& name, const std::string& ns, const std::string& image,
                          const std::vector<std::string>& command) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"completions", 3},
            {"parallelism", 3},
            {"template",
             {{"spec",
               {{"restartPolicy", "Never"},
                {"containers", Json::array({BenchContainer("main", image, command)})}}}}}}}};
}

inline Json BenchTrainJob(const std::string& name, const std::string& ns, const std::string& image,
                          const std::vector<std::string>& command) {
  Json trainer = {{"numNodes", 3}, {"image", image}};
  if (!command.empty()) trainer["command"] = command;
  return {{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
          {"kind", "TrainJob"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", {{"runtimeRef", {{"name", "torch-distributed"}}}, {"trainer", trainer}}}};
}

// One benchmark kind: its --kind name, its type and its 3-pod job.
struct BenchKind {
  const char* name;
  const api::ResourceType& (*type)();
  Json (*job)(const std::string& name, const std::string& ns, const std::string& image,
              const std::vector<std::string>& command);
};

inline const BenchKind kBenchKinds[] = {
    {"PyTorchJob", &api::PyTorchJobs,
     [](const std::string& n, const std::string& ns, const std::string& i,
        const std::vector<std::string>& c) { return BenchJob(n, ns, i, c); }},
    {"T9k", &api::PyTorchTrainingJobs, &BenchT9kJob},
    {"Job", &api::Jobs, &BenchBatchJob},
    {"TrainJob", &api::TrainJobs, &BenchTrainJob},
};

// The kind named `name` (as --kind spells it), or nullptr.
inline const BenchKind* FindBenchKind(const std::string& name) {
  for (const BenchKind& k : kBenchKinds) {
    if (name == k.name) return &k;
  }
  return nullptr;
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

// The embedded control plane in virtual time, driven from the caller's thread, its processes
// simulated (each "runs" 1 s), no GPUs, images mapped through `image_map`.
inline cluster::ClusterOptions VirtualClusterOptions(const std::string& image_map) {
  cluster::ClusterOptions options;
  options.clock = cluster::ClockKind::kVirtual;
  options.processes = cluster::ProcessKind::kSimulated;
  options.loop = cluster::LoopKind::kCaller;
  options.gpus = 0;
  options.image_map = image_map;
  return options;
}

}  // namespace pjemu::bench
