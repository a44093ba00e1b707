// PodWorker's builtin wait-for-service (the Training Operator's init-pytorch loop, which the
// image map turns into a lookup the kubelet answers itself): its tries, its nslookup-like log
// lines, and the wake-ups EndpointWaiters brings when a pod its Service selects gets Ready.
#include "emulator/kubelet/pod_worker.h"
#include "emulator/process/cri_log_writer.h"

namespace pjemu::kubelet {
namespace {

using Phase = ContainerState::Phase;

}  // namespace

void PodWorker::StartBuiltin(bool init, std::size_t i, const ImagePlan& plan) {
  ContainerState& c = Container(init, i);
  c.phase = Phase::kRunning;
  c.reason.clear();
  c.message.clear();
  c.builtin_service = plan.service;
  c.builtin_tries = 0;
  c.builtin_max_tries = plan.max_tries;
  c.started_at = ctx_.loop.Now();
  c.pid = -1;  // no process: the kubelet answers the lookup itself
  Event("Normal", "Started", "Started container " + c.name);
  c.timer = After(Duration(0), [init, i](PodWorker& w) { w.PollService(init, i); });
}

void PodWorker::PollService(bool init, std::size_t i) {
  ContainerState& c = Container(init, i);
  c.timer = 0;
  if (c.phase != Phase::kRunning || c.pid != -1) return;
  const std::string service = c.builtin_service;
  process::CriLogWriter log(ctx_.loop.clock(), LogPath(c.name, c.restart_count));
  auto target = Resolve(service, true);
  process::ProcessExit e;
  e.pid = -1;
  if (target) {
    log.Write("stdout", "Server:\t\t127.0.0.53\nAddress:\t127.0.0.53:53\n\nName:\t" + service +
                            "\nAddress: " + target->ip + "\n\n");
    e.exit_code = 0;
  } else {
    log.Write("stderr", "nslookup: can't resolve '" + service + "'\n");
    log.Write("stdout", "waiting for master\n");
    if (++c.builtin_tries < c.builtin_max_tries) {
      WaitForEndpoint(service);
      c.timer = After(ctx_.options.service_poll_interval,
                      [init, i](PodWorker& w) { w.PollService(init, i); });
      return;
    }
    e.exit_code = 1;
  }
  log.Flush();
  e.finished_at = ctx_.loop.Now();
  OnExit(init, i, e);
}

void PodWorker::EndpointReady() {
  ctx_.endpoint_waiters.Remove(uid_);  // a builtin that still waits files itself again
  auto self = weak_from_this();
  for (bool init : {true, false}) {
    for (std::size_t i = 0; i < (init ? state_.init.size() : state_.main.size()); ++i) {
      ContainerState& c = Container(init, i);
      if (c.phase != Phase::kRunning || c.pid != -1 || !c.timer) continue;
      ctx_.loop.Cancel(c.timer);
      c.timer = 0;
      PollService(init, i);
      if (self.expired()) return;
    }
  }
}

}  // namespace pjemu::kubelet
