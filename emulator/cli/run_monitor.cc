#include "emulator/cli/run_monitor.h"

#include <fmt/format.h>

#include "emulator/api/json_fields.h"
#include "emulator/api/pytorchjob.h"
#include "emulator/api/workload.h"
#include "emulator/cli/job_view.h"
#include "emulator/common/strings.h"

namespace pjemu::cli {
namespace {

// A container of the pod is running (not waiting in a back-off, not terminated).
bool AnyContainerRunning(const Json& pod) {
  for (const Json& c : api::ArrayOr(api::FieldAt(pod, {"status", "containerStatuses"}))) {
    if (api::FieldAt(c, {"state", "running"}).is_object()) return true;
  }
  return false;
}

std::string FirstContainer(const Json& pod) {
  const Json& containers = api::ArrayOr(api::FieldAt(pod, {"spec", "containers"}));
  return containers.empty() ? "" : api::Str(containers[0], "name");
}

std::string LowerKind(const api::ResourceType& type) {
  return AsciiLower(type.kind);
}

}  // namespace

RunMonitor::RunMonitor(client::Client& client, api::PodLogs& logs, Terminal& term,
                       MonitorOptions options)
    : client_(client), logs_(logs), term_(term), options_(std::move(options)) {}

void RunMonitor::AddJob(const api::ResourceType& type, const Json& job) {
  auto js = std::make_unique<TrackedJob>();
  js->type = &type;
  js->ns = job["metadata"].value("namespace", "default");
  js->name = job["metadata"].value("name", "");
  js->job = job;
  Json master = type.workload->primary_container(job);
  js->progress.epochs = master.is_null() ? 0 : EpochsFromArgs(master);
  jobs_.push_back(std::move(js));
}

Status RunMonitor::Poll(Time now) {
  Status image_error;
  for (auto& js : jobs_) PollJob(*js, now, &image_error);
  UpdateLive();
  return image_error;
}

void RunMonitor::PollJob(TrackedJob& js, Time now, Status* image_error) {
  (void)now;
  auto job = client_.Get(*js.type, js.ns, js.name);
  if (job.ok()) js.job = *job;
  const api::Workload& w = *js.type->workload;
  api::ListOptions lo;
  lo.label_selector = w.pod_selector(js.job);
  const std::string primary = w.primary_pod(js.job);
  auto pods = client_.List(api::Pods(), js.ns, lo);
  if (pods.ok()) {
    std::int64_t restarts = 0;
    for (auto& [name, ps] : js.pods) ps.active = false;  // gone from the list: not active
    for (const Json& pod : (*pods)["items"]) {
      std::string name = pod["metadata"].value("name", "");
      PodState& ps = js.pods[name];
      ps.active = AnyContainerRunning(pod);
      ps.stream_log = options_.all_logs || name == primary;
      std::string status = PodStatusText(pod);
      std::int64_t pod_restarts = PodRestarts(pod);
      restarts += pod_restarts;
      std::string hold = PodHoldMessage(pod);
      std::string node =
          options_.show_nodes ? pod.value("spec", Json::object()).value("nodeName", "") : "";
      if (status != ps.status || pod_restarts != ps.restarts || hold != ps.hold ||
          node != ps.node) {
        ps.status = status;
        ps.restarts = pod_restarts;
        ps.hold = hold;
        ps.node = node;
        if (!options_.quiet) {
          term_.Line(fmt::format("  {:<32} {:<18} restarts {}{}{}", name,
                                 term_.Paint(status, ColorFor(status)), pod_restarts,
                                 node.empty() ? "" : "   on " + node,
                                 hold.empty() ? "" : "   " + hold));
        }
      }
      if (auto w = PodWaiting(pod);
          w && (w->reason == "ErrImagePull" || w->reason == "InvalidImageName" ||
                w->reason == "ImagePullBackOff")) {
        *image_error =
            Status(Code::kInvalid, fmt::format("pod {}/{} container {}: {}: {}", js.ns, name,
                                               w->container, w->reason, w->message));
      }
      if (ps.stream_log) {
        auto file = logs_.Find({js.ns, name, FirstContainer(pod), false});
        if (file.ok()) ps.log.Follow(file->path);
        PrintLogs(js, ps, name);
      }
      if (name == primary) {
        std::string metrics = options_.metrics_path ? options_.metrics_path(pod) : "";
        if (!metrics.empty()) {
          ps.metrics.Follow(metrics);
          for (const std::string& line : ps.metrics.ReadNew()) ApplyMetricsLine(line, &js.progress);
        }
      }
    }
    js.restarts = restarts;
  }
  const api::WorkloadState state = w.state(js.job);
  const std::string key = state.state + "\n" + state.reason + "\n" + state.message;
  if (key != js.last_state) {
    js.last_state = key;
    if (!options_.quiet && !state.state.empty()) {
      term_.Line(fmt::format("{} {}: {}",
                             term_.Paint(LowerKind(*js.type) + "/" + js.name, Color::kBold),
                             term_.Paint(state.state, ColorFor(state.state)), state.message));
    }
  }
}

void RunMonitor::PrintLogs(TrackedJob& js, PodState& ps, const std::string& pod_name) {
  int last_decile = static_cast<int>(js.progress.epoch_fraction * 10);
  std::int64_t last_epoch = js.progress.epoch;
  for (const std::string& line : ps.log.ReadNew()) {
    ApplyLogLine(line, &js.progress);
    if (!options_.quiet) term_.Line(term_.Paint("[" + pod_name + "] ", Color::kDim) + line);
  }
  // Without a live line (not a TTY), print the bar at every tenth of an epoch.
  int decile = static_cast<int>(js.progress.epoch_fraction * 10);
  if (!term_.tty() && !options_.quiet &&
      (decile != last_decile || js.progress.epoch != last_epoch)) {
    std::string bar = RenderProgress(js.progress);
    if (!bar.empty()) term_.Line(js.name + " " + bar);
  }
}

void RunMonitor::UpdateLive() {
  if (options_.quiet || !term_.tty()) return;
  std::string live;
  for (const auto& js : jobs_) {
    std::string bar = RenderProgress(js->progress);
    if (bar.empty()) continue;
    if (!live.empty()) live += "  |  ";
    live += js->name + " " + bar;
  }
  if (!live.empty()) term_.Live(live);
}

void RunMonitor::Flush() {
  for (auto& js : jobs_) {
    for (auto& [name, ps] : js->pods) {
      if (ps.stream_log) PrintLogs(*js, ps, name);
      for (const std::string& line : ps.metrics.ReadNew()) ApplyMetricsLine(line, &js->progress);
    }
  }
  term_.ClearLive();
}

bool RunMonitor::AnyPodActive() const {
  for (const auto& js : jobs_) {
    for (const auto& [name, ps] : js->pods) {
      if (ps.active) return true;
    }
  }
  return false;
}

bool RunMonitor::AllFinished() const {
  for (const auto& js : jobs_) {
    if (!js->type->workload->state(js->job).finished) return false;
  }
  return true;
}

std::vector<JobSummary> RunMonitor::Summaries(Time now) const {
  std::vector<JobSummary> out;
  for (const auto& js : jobs_) {
    JobSummary s;
    s.ns = js->ns;
    s.name = js->name;
    const api::WorkloadState state = js->type->workload->state(js->job);
    s.kind = LowerKind(*js->type);
    s.condition = state.state;
    s.succeeded = state.succeeded;
    s.message = state.message;
    s.duration = JobDuration(js->job, state.finished_at.value_or(now));
    s.restarts = js->restarts;
    s.accuracy = js->progress.accuracy;
    s.loss = js->progress.loss;
    if (js->job.contains("status") && js->job["status"].contains("conditions")) {
      s.conditions = js->job["status"]["conditions"];
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace pjemu::cli
