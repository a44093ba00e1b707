// NodeRouter: the API server's view of the cluster's kubelets for pods/log and pods/exec: a
// request goes to the kubelet that runs the pod (the first that does not answer kNotFound),
// as the real API server proxies to the pod's node. The cluster replaces the list when a node
// powers on again.
// Thread safety: every method is safe from any thread (the list is guarded by a mutex; each
// kubelet's Find, Exec and Check are themselves safe from any thread).
#pragma once

#include <mutex>
#include <vector>

#include "emulator/api/exec.h"
#include "emulator/api/logs.h"
#include "emulator/kubelet/kubelet.h"

namespace pjemu::cluster {

class NodeRouter final : public api::PodLogs, public api::PodExec {
 public:
  // The kubelets (not owned; each must outlive its time in the list).
  void Set(std::vector<kubelet::Kubelet*> kubelets);

  Result<api::LogFile> Find(const api::LogRequest& request) override;
  Result<std::unique_ptr<api::ExecProcess>> Exec(const api::ExecRequest& request) override;
  Status Check(const api::ExecRequest& request) override;
  std::string NetworkNamespace(const std::string& ns, const std::string& pod) override;

 private:
  std::vector<kubelet::Kubelet*> Snapshot();
  std::mutex mu_;
  std::vector<kubelet::Kubelet*> kubelets_;
};

}  // namespace pjemu::cluster
