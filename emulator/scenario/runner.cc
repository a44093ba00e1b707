#include "emulator/scenario/runner.h"

#include <fnmatch.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "emulator/cluster/real_time_cluster.h"
#include "emulator/cluster/virtual_cluster.h"
#include "emulator/faults/faulty_client.h"
#include "emulator/faults/faulty_process_runner.h"
#include "emulator/faults/injector.h"
#include "emulator/manifest/manifest.h"

namespace pjemu::scenario {

namespace {

bool Glob(const std::string& pattern, const std::string& text) {
  return ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

// "<ns>/<pod>/<container>" -> what the scenario's processes: list says it does.
process::SimulationScript MakeScript(std::vector<ProcessRule> rules) {
  return [rules = std::move(rules)](const process::ProcessSpec& spec) {
    std::string pod, container;
    auto a = spec.name.find('/');
    auto b = spec.name.find('/', a + 1);
    if (a != std::string::npos && b != std::string::npos) {
      pod = spec.name.substr(a + 1, b - a - 1);
      container = spec.name.substr(b + 1);
    }
    process::SimulatedOutcome out;
    out.runtime = 1min;
    for (const ProcessRule& r : rules) {
      if (Glob(r.pod, pod) && Glob(r.container, container)) {
        out.runtime = r.runtime;
        out.exit_code = r.exit_code;
        out.output = r.output;
        out.peak_memory_bytes = r.peak_memory_bytes;
        break;
      }
    }
    return out;
  };
}

Result<std::vector<Json>> LoadJobs(const Scenario& sc) {
  std::vector<Json> jobs;
  for (const JobSource& src : sc.jobs) {
    if (!src.fixture.empty()) {
      auto docs = manifest::LoadManifestFile(src.fixture);
      if (!docs.ok()) {
        return docs.status().WithContext(sc.path + ":" + std::to_string(src.line) + ": fixture");
      }
      for (const auto& m : *docs) jobs.push_back(m.object);
    } else {
      jobs.push_back(src.inline_object);
    }
  }
  return jobs;
}

std::string Since(Time start, Time now) { return "+" + FormatAge(now - start); }

// Follows job and pod watches: condition transitions and pod uids.
class Observer {
 public:
  Observer(client::Client& client, Observed* ob, std::vector<std::string>* timeline,
           Timeline* events)
      : ob_(ob), timeline_(timeline), events_(events) {
    jobs_ = *client.Watch(api::PyTorchJobs(), "");
    pods_ = *client.Watch(api::Pods(), "");
    events_watch_ = *client.Watch(api::Events(), "");
  }
  ~Observer() {
    jobs_->Stop();
    pods_->Stop();
    events_watch_->Stop();
  }
  void Drain(Time start, Time now) {
    // Every Event seen (the store drops a deleted object's events; expectations count these).
    while (auto ev = events_watch_->TryNext()) {
      if (ev->type != api::WatchEvent::Type::kAdded &&
          ev->type != api::WatchEvent::Type::kModified) {
        continue;
      }
      const Json& meta = ev->object["metadata"];
      auto& [reason, count] =
          ob_->events[meta.value("namespace", "") + "/" + meta.value("name", "")];
      reason = ev->object.value("reason", "");
      count = std::max(count, std::max(ev->object.value("count", 1), 1));
    }
    while (auto ev = jobs_->TryNext()) {
      const Json& meta = ev->object["metadata"];
      std::string key = meta.value("namespace", "") + "/" + meta.value("name", "");
      std::set<std::string>& on = true_[key];
      std::set<std::string> now_true;
      for (const Json& c :
           ev->object.value("status", Json::object()).value("conditions", Json::array())) {
        if (c.value("status", "") == "True") now_true.insert(c.value("type", ""));
      }
      for (const auto& t : now_true) {
        if (on.count(t)) continue;
        ob_->history[key].push_back(t);
        timeline_->push_back(Since(start, now) + " job " + key + " " + t);
        events_->events.push_back({now - start, TimelineEvent::Kind::kJobCondition, key, t});
      }
      on = now_true;
      if (ev->type == api::WatchEvent::Type::kDeleted) {
        timeline_->push_back(Since(start, now) + " job " + key + " deleted");
        events_->events.push_back({now - start, TimelineEvent::Kind::kJobDeleted, key, "deleted"});
      }
    }
    while (auto ev = pods_->TryNext()) {
      const Json& meta = ev->object["metadata"];
      ob_->pod_uids[meta.value("name", "")].insert(meta.value("uid", ""));
      RecordPod(*ev, now - start);
    }
  }

 private:
  // A pod's phase as it changes (a re-created pod starts again from its first phase).
  void RecordPod(const api::WatchEvent& ev, Duration at) {
    const Json& meta = ev.object["metadata"];
    std::string key = meta.value("namespace", "") + "/" + meta.value("name", "");
    std::string uid = meta.value("uid", "");
    if (ev.type == api::WatchEvent::Type::kDeleted) {
      events_->events.push_back({at, TimelineEvent::Kind::kPodDeleted, key, "Deleted"});
      phase_.erase(key);
      return;
    }
    std::string phase = ev.object.value("status", Json::object()).value("phase", "Pending");
    auto& [seen_uid, seen_phase] = phase_[key];
    if (seen_uid == uid && seen_phase == phase) return;
    seen_uid = uid;
    seen_phase = phase;
    events_->events.push_back({at, TimelineEvent::Kind::kPodPhase, key, phase});
  }

  Observed* ob_;
  std::vector<std::string>* timeline_;
  Timeline* events_;
  std::map<std::string, std::pair<std::string, std::string>> phase_;  // pod -> (uid, phase)
  std::shared_ptr<api::Watch> jobs_, pods_, events_watch_;
  std::map<std::string, std::set<std::string>> true_;
};

bool JobEnded(client::Client& client, const std::string& key) {
  auto slash = key.find('/');
  auto job = client.Get(api::PyTorchJobs(), key.substr(0, slash), key.substr(slash + 1));
  if (!job.ok()) return true;  // deleted (TTL) counts as ended
  for (const Json& c : job->value("status", Json::object()).value("conditions", Json::array())) {
    std::string type = c.value("type", "");
    if ((type == "Succeeded" || type == "Failed") && c.value("status", "") == "True") return true;
  }
  return false;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The last n lines of text, CRI prefixes ("<time> <stream> <F|P> ") removed.
std::string Tail(const std::string& text, std::size_t n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::size_t a = line.find(' ');
    std::size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
    std::size_t c = b == std::string::npos ? b : line.find(' ', b + 1);
    if (c != std::string::npos && line.size() > 30 && line[4] == '-') line = line.substr(c + 1);
    lines.push_back(line);
  }
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) {
    out += lines[i] + "\n";
  }
  return out;
}

std::string PodLog(cluster::ScenarioCluster& cluster, const std::string& ns, const std::string& pod,
                   const std::string& container) {
  auto file = cluster.logs().Find({ns, pod, container, false});
  return file.ok() ? ReadFile(file->path) : "";
}

// pjemu-trainer next to this program (bin/), else the name for a PATH lookup.
std::string DefaultTrainer() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto candidate = self.parent_path() / "pjemu-trainer";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "pjemu-trainer";
}

// Whatever the store still holds at the end: each pod's log tail and trainer metrics.
void CollectPodFiles(cluster::ScenarioCluster& cluster, Observed* ob, Timeline* events) {
  auto pods = cluster.client().List(api::Pods(), "");
  if (!pods.ok()) return;
  for (const Json& pod : pods->value("items", Json::array())) {
    const std::string ns = pod["metadata"].value("namespace", "default");
    const std::string name = pod["metadata"].value("name", "");
    std::string tail;
    for (const Json& c : pod.value("spec", Json::object()).value("containers", Json::array())) {
      std::string text = Tail(PodLog(cluster, ns, name, c.value("name", "")), 6);
      if (!text.empty()) tail += "[" + c.value("name", "") + "]\n" + text;
    }
    if (!tail.empty()) ob->log_tails[name] = tail;
    std::string metrics_path = cluster.MetricsPath(pod);
    if (!metrics_path.empty()) {
      std::string text = ReadFile(metrics_path);
      if (text.empty()) continue;
      ob->metrics[name] = text;
      std::istringstream in(text);
      std::string line;
      while (std::getline(in, line)) {
        Json rec = Json::parse(line, nullptr, false);
        if (!rec.is_object() || rec.value("type", "") != "step") continue;
        events->loss[ns + "/" + name].push_back({rec.value("step", 0.0), rec.value("loss", 0.0)});
      }
    }
  }
}

}  // namespace

Result<RunReport> RunScenario(const Scenario& sc) { return RunScenario(sc, RunSettings{}); }

Result<RunReport> RunScenario(const Scenario& sc, const RunSettings& settings) {
  ASSIGN_OR_RETURN(std::vector<Json> jobs, LoadJobs(sc));
  faults::FaultyClient* api = nullptr;
  faults::FaultyProcessRunner* procs = nullptr;
  auto wrap_client = [&api, seed = sc.options.seed](client::Client& inner) {
    auto c = std::make_unique<faults::FaultyClient>(inner, seed);
    api = c.get();
    return std::unique_ptr<client::Client>(std::move(c));
  };
  auto wrap_runner = [&procs](process::ProcessRunner& inner) {
    auto r = std::make_unique<faults::FaultyProcessRunner>(inner);
    procs = r.get();
    return std::unique_ptr<process::ProcessRunner>(std::move(r));
  };
  std::unique_ptr<cluster::ScenarioCluster> owned;
  if (sc.options.virtual_time) {
    cluster::VirtualClusterOptions co;
    co.seed = sc.options.seed;
    co.gpus = sc.options.gpus;
    co.image_map = sc.options.image_map;
    co.backoff_scale = sc.options.backoff_scale;
    co.script = MakeScript(sc.processes);
    co.wrap_client = wrap_client;
    co.wrap_runner = wrap_runner;
    owned = std::make_unique<cluster::VirtualCluster>(co);
  } else {
    cluster::RealTimeClusterOptions co;
    co.seed = sc.options.seed;
    co.gpus = sc.options.gpus;
    co.image_map = sc.options.image_map;
    co.backoff_scale = sc.options.backoff_scale;
    co.trainer_path = settings.trainer_path.empty() ? DefaultTrainer() : settings.trainer_path;
    co.dataset_dir = settings.dataset_dir;
    co.state_dir = settings.output_dir;
    co.wrap_client = wrap_client;
    co.wrap_runner = wrap_runner;
    owned = std::make_unique<cluster::RealTimeCluster>(co);
  }
  cluster::ScenarioCluster& cluster = *owned;
  RETURN_IF_ERROR(cluster.Start().WithContext(sc.path + ": cluster"));
  EventLoop& loop = cluster.loop();
  // Real time: short steps, so triggers and the end are seen promptly.
  const Duration step = sc.options.virtual_time ? Duration(1s) : Duration(200ms);

  faults::InjectorOptions io;
  io.seed = sc.options.seed;
  if (!sc.options.virtual_time) io.poll_interval = 200ms;
  faults::Injector injector(loop, cluster.client(), io);
  injector.SetApiFaults(api);
  injector.SetProcessFaults(procs);
  injector.SetHook("restart-controller", [&cluster] { return cluster.RestartController(); });
  faults::NodeSeams seams;
  seams.evict = [&cluster](const std::string& ns, const std::string& pod,
                           const std::string& message) {
    return cluster.EvictPod(ns, pod, message);
  };
  seams.power = [&cluster](const std::string& node, bool up) {
    return cluster.SetNodePower(node, up);
  };
  seams.pull_delay = [&cluster](const std::string& glob, Duration d) {
    cluster.SetPullDelay(glob, d);
  };
  seams.read_log = [&cluster](const std::string& ns, const std::string& pod,
                              const std::string& container) {
    return PodLog(cluster, ns, pod, container);
  };
  if (cluster.real_time()) {
    seams.read_metrics = [&cluster](const std::string& ns, const std::string& pod) {
      auto p = cluster.client().Get(api::Pods(), ns, pod);
      return p.ok() ? ReadFile(cluster.MetricsPath(*p)) : std::string();
    };
  }
  injector.SetNodeSeams(seams);
  for (std::size_t i = 0; i < sc.faults.size(); ++i) {
    Status s = injector.Add(sc.faults[i]);
    if (!s.ok()) return s.WithContext(sc.path + ":" + std::to_string(sc.fault_lines[i]));
  }

  RunReport report;
  Observed& ob = report.observed;
  auto observer =
      std::make_unique<Observer>(cluster.client(), &ob, &report.timeline, &report.events);
  const Time start = loop.Now();
  // Armed before the submissions, so that an `at: 0s` fault runs before anything the
  // submissions set off (all of it happens at the same instant).
  injector.Arm();
  std::vector<std::string> accepted;
  for (Json& job : jobs) {
    const Json meta = job.value("metadata", Json::object());
    std::string ns = meta.value("namespace", "default");
    std::string key = ns + "/" + meta.value("name", "");
    Status s = cluster.client().Create(api::PyTorchJobs(), ns, job).status();
    ob.job_keys.push_back(key);
    ob.submitted.push_back(s);
    report.timeline.push_back("+0s submit " + key + ": " + (s.ok() ? "accepted" : s.ToString()));
    report.events.events.push_back({Duration(0), TimelineEvent::Kind::kSubmit, key,
                                    s.ok() ? "accepted" : s.ToString(), s.ok()});
    if (s.ok()) accepted.push_back(key);
  }

  auto all_ended = [&] {
    for (const auto& key : accepted) {
      if (!JobEnded(cluster.client(), key)) return false;
    }
    return true;
  };
  const Time deadline = start + sc.options.timeout;
  while (loop.Now() < deadline && !all_ended()) {
    cluster.Step(step);
    observer->Drain(start, loop.Now());
  }
  ob.finished = all_ended();
  ob.duration = loop.Now() - start;
  const Time settle_end = std::min(deadline, loop.Now() + sc.options.settle);
  while (loop.Now() < settle_end) {
    cluster.Step(step);
    observer->Drain(start, loop.Now());
  }
  observer->Drain(start, loop.Now());
  injector.Stop();
  for (const auto& rec : injector.log()) {
    std::string line = Since(start, rec.at) + " " + rec.id + " " + rec.what + ": " +
                       (rec.result.ok() ? "OK" : rec.result.ToString());
    ob.fault_log.push_back(line);
    report.timeline.push_back(line + " (fault)");
    report.events.events.push_back(
        {rec.at - start, TimelineEvent::Kind::kFault, rec.id, rec.what, rec.result.ok()});
  }
  if (api != nullptr && api->injected() > 0) {
    report.timeline.push_back("API errors injected: " + std::to_string(api->injected()));
  }
  ob.running_at_end = procs != nullptr ? static_cast<int>(procs->running()) : 0;
  CollectPodFiles(cluster, &ob, &report.events);
  report.failures = CheckExpectations(sc, ob, cluster.client());

  // Stop the cluster, then look for process groups that outlived it (real processes only).
  std::vector<process::Pid> started =
      procs != nullptr ? procs->started() : std::vector<process::Pid>{};
  observer.reset();
  cluster.Stop();
  ob.stopped = true;
  if (cluster.real_time()) {
    for (process::Pid pid : started) {
      if (pid > 0 && ::kill(-pid, 0) == 0) ob.survivors.push_back(std::to_string(pid));
    }
    if (!ob.survivors.empty()) {
      std::string pids;
      for (const auto& p : ob.survivors) pids += " " + p;
      report.failures.push_back(sc.path + ": expected no process left behind, process groups" +
                                pids + " outlived the cluster");
    }
  }
  for (auto& f : CheckProcessesLeft(sc, ob)) report.failures.push_back(f);
  report.passed = report.failures.empty();
  return report;
}

}  // namespace pjemu::scenario
