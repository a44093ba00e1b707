#include "emulator/cluster/node_router.h"

namespace pjemu::cluster {

void NodeRouter::Set(std::vector<kubelet::Kubelet*> kubelets) {
  std::lock_guard<std::mutex> lock(mu_);
  kubelets_ = std::move(kubelets);
}

std::vector<kubelet::Kubelet*> NodeRouter::Snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  return kubelets_;
}

Result<api::LogFile> NodeRouter::Find(const api::LogRequest& request) {
  Result<api::LogFile> last = NotFoundError("pods", request.pod);
  for (kubelet::Kubelet* k : Snapshot()) {
    last = k->Find(request);
    if (last.ok() || last.status().code() != Code::kNotFound) return last;
  }
  return last;
}

Status NodeRouter::Check(const api::ExecRequest& request) {
  Status last = NotFoundError("pods", request.pod);
  for (kubelet::Kubelet* k : Snapshot()) {
    last = k->Check(request);
    if (last.ok() || last.code() != Code::kNotFound) return last;
  }
  return last;
}

Result<std::unique_ptr<api::ExecProcess>> NodeRouter::Exec(const api::ExecRequest& request) {
  for (kubelet::Kubelet* k : Snapshot()) {
    Status s = k->Check(request);
    if (s.code() == Code::kNotFound) continue;
    return k->Exec(request);
  }
  return NotFoundError("pods", request.pod);
}

std::string NodeRouter::NetworkNamespace(const std::string& ns, const std::string& pod) {
  for (kubelet::Kubelet* k : Snapshot()) {
    api::ExecRequest probe;
    probe.ns = ns;
    probe.pod = pod;
    probe.command = {"true"};
    if (k->Check(probe).code() == Code::kNotFound) continue;
    return k->NetworkNamespace(ns, pod);
  }
  return "";
}

}  // namespace pjemu::cluster
