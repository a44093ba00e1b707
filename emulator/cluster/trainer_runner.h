// TrainerRunner: a process::ProcessRunner decorator the Cluster puts between the kubelet and the
// PosixProcessRunner. For processes that run the mapped trainer (argv[0] == trainer path) it
// gives each pod a working directory of its own under the cluster's state directory (so the
// trainer's relative --dir, "logs" by default, lands there and two jobs never share a metrics
// file) and passes --data-dir when ClusterOptions::dataset_dir is set (first, so that flags in the
// pod's own command line win). In a container with a filesystem of its own (an enabled
// process::MountPlan) that directory, an absolute --dir and the dataset folder are bound into it
// at the same paths,
// so the metrics the cluster reads from the host are the ones the trainer wrote. Every other
// process is passed through unchanged.
// Thread safety: as the wrapped runner (EventLoop thread).
#pragma once

#include <string>

#include "emulator/common/status.h"
#include "emulator/process/process_runner.h"

namespace pjemu::cluster {

// "<state_dir>/work/<ns>_<pod>": the working directory of a trainer pod.
std::string PodWorkDir(const std::string& state_dir, const std::string& ns,
                       const std::string& pod);

// Where the trainer of `pod` writes rank 0's metrics: "<work dir>/<dir>/metrics-rank0.jsonl",
// <dir> being the last --dir of its containers' command lines (relative to the pod's working
// directory unless absolute), "logs" (the trainer's default) when none.
std::string TrainerMetricsPath(const std::string& state_dir, const Json& pod);

class TrainerRunner final : public process::ProcessRunner {
 public:
  TrainerRunner(process::ProcessRunner& inner, std::string trainer_path, std::string state_dir,
                std::string data_dir);

  Result<process::Pid> Start(const process::ProcessSpec& spec,
                             process::ExitCallback on_exit) override;
  Status Signal(process::Pid pid, int sig) override { return inner_.Signal(pid, sig); }
  void KillAll() override { inner_.KillAll(); }
  std::size_t running() const override { return inner_.running(); }
  bool real() const override { return inner_.real(); }

 private:
  process::ProcessRunner& inner_;
  std::string trainer_path_;
  std::string state_dir_;
  std::string data_dir_;
};

}  // namespace pjemu::cluster
