#include "emulator/faults/faulty_process_runner.h"

#include <csignal>

namespace pjemu::faults {

namespace {

// "<ns>/<pod>/<container>" split into its parts (a name without slashes is the pod).
RunningProcess ParseName(const std::string& name) {
  RunningProcess p;
  std::size_t a = name.find('/');
  std::size_t b = a == std::string::npos ? std::string::npos : name.find('/', a + 1);
  if (a == std::string::npos) {
    p.pod = name;
  } else if (b == std::string::npos) {
    p.ns = name.substr(0, a);
    p.pod = name.substr(a + 1);
  } else {
    p.ns = name.substr(0, a);
    p.pod = name.substr(a + 1, b - a - 1);
    p.container = name.substr(b + 1);
  }
  return p;
}

}  // namespace

Result<process::Pid> FaultyProcessRunner::Start(const process::ProcessSpec& spec,
                                                process::ExitCallback on_exit) {
  // The callback runs on the EventLoop after this decorator recorded the pid.
  auto pid = inner_.Start(spec, [this, on_exit](const process::ProcessExit& exit) {
    process::ProcessExit reported = exit;
    if (auto it = exit_override_.find(exit.pid); it != exit_override_.end()) {
      reported.exit_code = it->second.exit_code;
      reported.signal = it->second.oom ? SIGKILL : 0;
      reported.oom_killed = it->second.oom;
      exit_override_.erase(it);
    }
    procs_.erase(exit.pid);
    if (on_exit) on_exit(reported);
  });
  if (!pid.ok()) return pid;
  RunningProcess p = ParseName(spec.name);
  p.pid = *pid;
  procs_[*pid] = p;
  started_.push_back(*pid);
  return pid;
}

std::vector<RunningProcess> FaultyProcessRunner::Find(std::string_view ns, std::string_view pod,
                                                      std::string_view container) const {
  std::vector<RunningProcess> out;
  for (const auto& [pid, p] : procs_) {
    if (p.ns == ns && p.pod == pod && (container.empty() || p.container == container)) {
      out.push_back(p);
    }
  }
  return out;
}

Status FaultyProcessRunner::Kill(std::string_view ns, std::string_view pod, int sig,
                                 std::string_view container) {
  auto found = Find(ns, pod, container);
  if (found.empty()) {
    return Status(Code::kNotFound,
                  "pod " + std::string(ns) + "/" + std::string(pod) + " has no running process");
  }
  for (const RunningProcess& p : found) RETURN_IF_ERROR(inner_.Signal(p.pid, sig));
  ++acted_;
  return Status::Ok();
}

Status FaultyProcessRunner::Hang(std::string_view ns, std::string_view pod,
                                 std::string_view container) {
  return Kill(ns, pod, SIGSTOP, container);
}

Status FaultyProcessRunner::ExitWith(std::string_view ns, std::string_view pod, int exit_code,
                                     std::string_view container) {
  for (const RunningProcess& p : Find(ns, pod, container)) {
    exit_override_[p.pid] = {exit_code, false};
  }
  Status s = Kill(ns, pod, SIGKILL, container);
  if (!s.ok()) {
    for (const RunningProcess& p : Find(ns, pod, container)) exit_override_.erase(p.pid);
  }
  return s;
}

}  // namespace pjemu::faults

namespace pjemu::faults {

Status FaultyProcessRunner::OomKill(std::string_view ns, std::string_view pod,
                                    std::string_view container) {
  for (const RunningProcess& p : Find(ns, pod, container)) exit_override_[p.pid] = {137, true};
  Status s = Kill(ns, pod, SIGKILL, container);
  if (!s.ok()) {
    for (const RunningProcess& p : Find(ns, pod, container)) exit_override_.erase(p.pid);
  }
  return s;
}

}  // namespace pjemu::faults
