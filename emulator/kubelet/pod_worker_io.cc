// PodWorker's conversations with the rest of the cluster: name resolution against Services
// and Pods, status writes, events, and the log index Find() reads.
#include <algorithm>
#include <cstdio>
#include <functional>

#include "emulator/api/event.h"
#include "emulator/api/json_fields.h"
#include "emulator/kubelet/pod_worker.h"

namespace pjemu::kubelet {

void PodWorker::WaitForEndpoint(const std::string& host) {
  auto parsed = ParseServiceHost(host, ns_);
  if (!parsed) return;
  const auto& [service, ns] = *parsed;
  auto svc = ctx_.client.Get(api::Services(), ns, service);
  if (!svc.ok()) return;  // not created yet: the next try looks again
  const Json& spec = (*svc)["spec"];
  if (spec.is_object() && spec.contains("selector")) {
    ctx_.endpoint_waiters.Add(uid_, ns, spec["selector"]);
  }
}

namespace {

bool PodReady(const Json& pod) {
  for (const Json& c : api::ArrayOr(api::FieldAt(pod, {"status", "conditions"}))) {
    if (c.value("type", "") == "Ready" && c.value("status", "") == "True") return true;
  }
  return false;
}

}  // namespace

// As ResolveNow, once per name within a container start (start_resolved_).
std::optional<ServiceTarget> PodWorker::Resolve(const std::string& host, bool need_ready) {
  if (!start_resolved_) return ResolveNow(host, need_ready);
  auto key = std::pair(host, need_ready);
  if (auto it = start_resolved_->find(key); it != start_resolved_->end()) return it->second;
  auto target = ResolveNow(host, need_ready);
  start_resolved_->emplace(std::move(key), target);
  return target;
}

// A pod's name through its subdomain (`<hostname>.<subdomain>`, a JobSet's pods) first, then
// the Service forms; nullopt when neither answers yet.
std::optional<ServiceTarget> PodWorker::ResolveNow(const std::string& host, bool need_ready) {
  if (auto pod_host = ParsePodHost(host, ns_)) {
    if (auto target = ResolveTarget(pod_host->subdomain, pod_host->ns, &*pod_host, need_ready)) {
      return target;
    }
  }
  auto parsed = ParseServiceHost(host, ns_);
  if (!parsed) return std::nullopt;
  return ResolveTarget(parsed->first, parsed->second, nullptr, need_ready);
}

// The IP of the first pod (by name) the Service selects, or of the one answering to `pod_host`,
// with an IP (and Ready when asked), and the Service's ports mapped to host ports.
std::optional<ServiceTarget> PodWorker::ResolveTarget(const std::string& service,
                                                      const std::string& ns,
                                                      const PodHost* pod_host, bool need_ready) {
  auto svc = ctx_.client.GetShared(api::Services(), ns, service);
  if (!svc.ok()) return std::nullopt;
  const Json& spec = api::ObjectOr(api::Field(**svc, "spec"));
  api::ListOptions opts;
  opts.label_selector = ServiceSelector(**svc);
  if (opts.label_selector.empty()) return std::nullopt;
  auto pods = ctx_.client.ListObjects(api::Pods(), ns, opts);
  if (!pods.ok()) return std::nullopt;
  // Read as shared snapshots (no copy of the pods): by name, the first with an IP (and Ready)
  // wins.
  std::vector<const Json*> items;
  for (const Json& p : *pods) items.push_back(&p);
  std::sort(items.begin(), items.end(), [](const Json* a, const Json* b) {
    return (*a)["metadata"].value("name", "") < (*b)["metadata"].value("name", "");
  });
  ServiceTarget target;
  for (const Json* p : items) {
    if ((*p)["metadata"].contains("deletionTimestamp")) continue;
    if (pod_host && !AnswersTo(*p, *pod_host)) continue;
    std::string ip = api::ObjectOr(api::Field(*p, "status")).value("podIP", "");
    if (ip.empty() || (need_ready && !PodReady(*p))) continue;
    target.ip = ip;
    break;
  }
  if (target.ip.empty()) return std::nullopt;
  for (const Json& port : api::ArrayOr(api::Field(spec, "ports"))) {
    int p = port.value("port", 0);
    if (p <= 0) continue;
    auto host_port = ctx_.network->HostPort(ns, service, p);
    if (!host_port.ok()) continue;
    target.ports[p] = *host_port;
    if (port.contains("targetPort") && port["targetPort"].is_number_integer()) {
      target.ports[port["targetPort"].get<int>()] = *host_port;
    }
  }
  return target;
}

void PodWorker::WriteStatus() {
  PublishLogs();
  if (deleted_) return;
  Time now = ctx_.loop.Now();
  for (int attempt = 0; attempt < 5; ++attempt) {
    Json status = ComputePodStatus(pod(), state_, now);
    // Nothing to write when the pod holds this status already (the status manager finds its
    // patch empty and sends none): after this worker's own write, or another's.
    if (status == api::Field(pod(), "status")) return;
    auto written =
        ctx_.client.UpdateShared(api::Pods(), ns_, api::StatusWriteBody(pod(), std::move(status)),
                                 api::Subresource::kStatus);
    if (written.ok()) {
      SetPod(std::move(*written));  // in process, the snapshot the informer will deliver
      if (own_rvs_.size() == kOwnVersions) own_rvs_.erase(own_rvs_.begin());
      own_rvs_.push_back(rv_);
      return;
    }
    const Code code = written.status().code();
    if (code == Code::kNotFound || code == Code::kInvalid) return;  // gone, or refused for good
    if (code != Code::kConflict) {
      // A transient API error (503, 500, timeout): a kubelet keeps the status it owes and tries
      // again, or a finished pod would never be reported.
      std::weak_ptr<PodWorker> self = weak_from_this();
      ctx_.loop.PostAfter(std::chrono::seconds(1), [self] {
        if (auto w = self.lock()) w->WriteStatus();
      });
      return;
    }
    auto current = ctx_.client.Get(api::Pods(), ns_, name_);
    if (!current.ok() || (*current)["metadata"].value("uid", "") != uid_) return;
    SetPod(std::make_shared<const Json>(std::move(*current)));
  }
}

void PodWorker::PublishLogs() {
  PodLogInfo info;
  info.dir = ctx_.options.root_dir + "/pods/" + ns_ + "_" + name_ + "_" + uid_;
  info.netns_path = netns_path_;
  for (auto* list : {&state_.init, &state_.main}) {
    for (const auto& c : *list) {
      ContainerLogInfo l;
      l.name = c.name;
      l.restart_count = c.restart_count;
      l.running = c.phase == ContainerState::Phase::kRunning;
      l.ever_started = c.started_at != Time{} || c.phase != ContainerState::Phase::kWaiting ||
                       !c.last_state.empty();
      l.waiting_reason = c.phase == ContainerState::Phase::kWaiting ? c.reason : "";
      if (l.running && c.pid > 0) {
        l.pid = c.pid;
        l.env = c.env;
        l.working_dir = c.working_dir;
        l.sandboxed = c.sandboxed;
      }
      (list == &state_.init ? info.init : info.main).push_back(l);
    }
  }
  std::lock_guard<std::mutex> lock(ctx_.logs_mu);
  ctx_.logs[ns_ + "/" + name_] = std::move(info);
}

void PodWorker::Event(const std::string& type, const std::string& reason,
                      const std::string& message) {
  const Json involved = {
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"name", name_}, {"namespace", ns_}, {"uid", uid_}};
  (void)ctx_.client.CreateShared(api::Events(), ns_,
                                 api::MakeEvent(involved, type, reason, message,
                                                {"kubelet", ctx_.node_name}, ctx_.loop.Now()));
}

}  // namespace pjemu::kubelet
