#include "emulator/scenario/runner.h"

#include <fnmatch.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "emulator/api/job_conditions.h"
#include "emulator/api/workload.h"
#include "emulator/client/workloads.h"
#include "emulator/cluster/cluster.h"
#include "emulator/faults/faulty_client.h"
#include "emulator/faults/faulty_process_runner.h"
#include "emulator/faults/injector.h"
#include "emulator/faults/slow_registry.h"
#include "emulator/manifest/manifest.h"
#include "emulator/scenario/observer.h"
#include "emulator/scenario/run_parts.h"

namespace pjemu::scenario {

namespace internal {

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

Status CreateObjects(client::Client& client, const Scenario& sc,
                     std::vector<std::string>* timeline) {
  Status first;
  for (const Json& object : sc.objects) {
    const api::ResourceType* type =
        api::FindByKind(object.value("apiVersion", ""), object.value("kind", ""));
    const Json meta = object.value("metadata", Json::object());
    const std::string ns = type->namespaced ? meta.value("namespace", "default") : "";
    const std::string what =
        "create " + type->kind + " " + (ns.empty() ? "" : ns + "/") + meta.value("name", "");
    Status s = client.Create(*type, ns, object).status();
    timeline->push_back("+0s " + what + ": " + (s.ok() ? "accepted" : s.ToString()));
    if (!s.ok() && first.ok()) first = s.WithContext(sc.path + ": " + what);
  }
  return first;
}

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

void RecordLoss(const std::string& key, const std::string& metrics, Timeline* events) {
  std::istringstream in(metrics);
  std::string line;
  while (std::getline(in, line)) {
    Json rec = Json::parse(line, nullptr, false);
    if (!rec.is_object() || rec.value("type", "") != "step") continue;
    events->loss[key].push_back({rec.value("step", 0.0), rec.value("loss", 0.0)});
  }
}

bool AllEnded(client::Client& client, const std::vector<std::string>& job_keys) {
  for (const std::string& key : job_keys) {
    auto slash = key.find('/');
    auto job = client::GetJob(client, key.substr(0, slash), key.substr(slash + 1));
    if (job.ok() && !api::StateOf(*job->first, job->second).finished) return false;
  }
  return true;
}

Status AddFaults(faults::Injector& injector, const Scenario& scenario) {
  for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
    Status s = injector.Add(scenario.faults[i]);
    if (!s.ok()) {
      return s.WithContext(scenario.path + ":" + std::to_string(scenario.fault_lines[i]));
    }
  }
  return Status::Ok();
}

void RecordFaults(const faults::Injector& injector, Time start, RunReport* report) {
  for (const auto& rec : injector.log()) {
    std::string line = Since(start, rec.at) + " " + rec.id + " " + rec.what + ": " +
                       (rec.result.ok() ? "OK" : rec.result.ToString());
    report->observed.fault_log.push_back(line);
    report->timeline.push_back(line + " (fault)");
    report->events.events.push_back(
        {rec.at - start, TimelineEvent::Kind::kFault, rec.id, rec.what, rec.result.ok()});
  }
}

}  // namespace internal

namespace {

using internal::LoadJobs;
using internal::RecordLoss;
using internal::Tail;

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

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string PodLog(cluster::Cluster& cluster, const std::string& ns, const std::string& pod,
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
void CollectPodFiles(cluster::Cluster& cluster, Observed* ob, Timeline* events) {
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
    if (metrics_path.empty()) continue;
    std::string text = ReadFile(metrics_path);
    if (text.empty()) continue;
    ob->metrics[name] = text;
    RecordLoss(ns + "/" + name, text, events);
  }
}

// The faults decorators on the cluster's seams, set as the cluster builds them.
struct Decorators {
  faults::FaultyClient* api = nullptr;
  faults::FaultyProcessRunner* procs = nullptr;
  faults::SlowRegistry* registry = nullptr;  // the current kubelet's
};

// Virtual time: FakeClock, the scenario's scripted processes, a node of 8 CPUs and 32Gi. Real
// time: real processes and the real trainer on the host's node. Either way the caller (the run)
// drives the loop, and the actors' seams are wrapped by the faults decorators.
cluster::ClusterOptions MakeClusterOptions(const Scenario& sc, const RunSettings& settings,
                                           Decorators* decorators) {
  cluster::ClusterOptions co;
  co.loop = cluster::LoopKind::kCaller;
  co.seed = sc.options.seed;
  co.gpus = sc.options.gpus;
  co.node_count = sc.options.nodes;
  co.nodes = sc.options.node_configs;
  co.gang_scheduler_name = sc.options.gang_scheduler_name;
  co.image_map = sc.options.image_map;
  co.builtin_image_map = settings.builtin_image_map;
  co.backoff_scale = sc.options.backoff_scale;
  if (sc.options.virtual_time) {
    co.clock = cluster::ClockKind::kVirtual;
    co.processes = cluster::ProcessKind::kSimulated;
    co.script = MakeScript(sc.processes);
    co.cpu = "8";
    co.memory = "32Gi";
  } else {
    co.trainer_path = settings.trainer_path.empty() ? DefaultTrainer() : settings.trainer_path;
    co.image_store = settings.image_store;
    co.dataset_dir = settings.dataset_dir;
    co.state_dir = settings.output_dir;
  }
  co.wrap_client = [decorators, seed = sc.options.seed](client::Client& inner) {
    auto c = std::make_unique<faults::FaultyClient>(inner, seed);
    decorators->api = c.get();
    return std::unique_ptr<client::Client>(std::move(c));
  };
  co.wrap_runner = [decorators](process::ProcessRunner& inner) {
    auto r = std::make_unique<faults::FaultyProcessRunner>(inner);
    decorators->procs = r.get();
    return std::unique_ptr<process::ProcessRunner>(std::move(r));
  };
  co.wrap_images = [decorators](kubelet::ImagePuller& inner) {
    auto r = std::make_unique<faults::SlowRegistry>(inner);
    decorators->registry = r.get();
    return std::unique_ptr<kubelet::ImagePuller>(std::move(r));
  };
  return co;
}

// What the injector's node faults act on: the cluster's node and the current kubelet.
faults::NodeSeams MakeNodeSeams(cluster::Cluster& cluster, Decorators& decorators) {
  faults::NodeSeams seams;
  seams.evict = [&cluster](const std::string& ns, const std::string& pod,
                           const std::string& message) {
    return cluster.EvictPod(ns, pod, message);
  };
  seams.power = [&cluster](const std::string& node, bool up) {
    return cluster.SetNodePower(node, up);
  };
  seams.pull_delay = [&decorators](const std::string& glob, Duration d) {
    if (decorators.registry != nullptr) decorators.registry->SetDelay(glob, d);
  };
  seams.read_log = [&cluster](const std::string& ns, const std::string& pod,
                              const std::string& container) {
    return PodLog(cluster, ns, pod, container);
  };
  if (cluster.options().processes == cluster::ProcessKind::kReal) {
    seams.read_metrics = [&cluster](const std::string& ns, const std::string& pod) {
      auto p = cluster.client().Get(api::Pods(), ns, pod);
      return p.ok() ? ReadFile(cluster.MetricsPath(*p)) : std::string();
    };
  }
  return seams;
}

faults::InjectorOptions MakeInjectorOptions(const Scenario& sc) {
  faults::InjectorOptions io;
  io.seed = sc.options.seed;
  if (!sc.options.virtual_time) io.poll_interval = 200ms;
  return io;
}

// One scenario played on one cluster: built by Start, then Play submits the jobs, runs the
// cluster until they ended (plus settle) or the timeout, and judges the expectations.
class ScenarioRun {
 public:
  ScenarioRun(const Scenario& sc, const RunSettings& settings)
      : sc_(sc), cluster_(MakeClusterOptions(sc, settings, &decorators_)) {}

  // Starts the cluster and hands the scenario's faults to the injector.
  Status Start();
  RunReport Play(std::vector<Json> jobs);

 private:
  // Real time: short steps, so triggers and the end are seen promptly.
  Duration step() const { return sc_.options.virtual_time ? Duration(1s) : Duration(200ms); }
  void Submit(std::vector<Json>& jobs);
  bool AllEnded();
  void RunUntil(Time end, bool stop_when_ended);
  void RecordFaults();
  void StopAndCheckSurvivors(std::vector<process::Pid> started);

  const Scenario& sc_;
  Decorators decorators_;
  cluster::Cluster cluster_;
  std::unique_ptr<faults::Injector> injector_;
  RunReport report_;
  std::unique_ptr<Observer> observer_;
  std::vector<std::string> accepted_;
  Time start_{};
};

Status ScenarioRun::Start() {
  RETURN_IF_ERROR(cluster_.Start().WithContext(sc_.path + ": cluster"));
  injector_ = std::make_unique<faults::Injector>(cluster_.loop(), cluster_.client(),
                                                 MakeInjectorOptions(sc_));
  injector_->SetApiFaults(decorators_.api);
  injector_->SetProcessFaults(decorators_.procs);
  injector_->SetHook("restart-controller", [this] { return cluster_.RestartController(); });
  injector_->SetNodeSeams(MakeNodeSeams(cluster_, decorators_));
  return internal::AddFaults(*injector_, sc_);
}

RunReport ScenarioRun::Play(std::vector<Json> jobs) {
  Observed& ob = report_.observed;
  observer_ = std::make_unique<Observer>(cluster_.client(), cluster_.loop(), &ob, &report_.timeline,
                                         &report_.events);
  start_ = cluster_.loop().Now();
  // Armed before the submissions, so that an `at: 0s` fault runs before anything the
  // submissions set off (all of it happens at the same instant).
  injector_->Arm();
  const Status objects = internal::CreateObjects(cluster_.client(), sc_, &report_.timeline);
  Submit(jobs);
  const Time deadline = start_ + sc_.options.timeout;
  RunUntil(deadline, /*stop_when_ended=*/true);
  ob.finished = AllEnded();
  ob.duration = cluster_.loop().Now() - start_;
  RunUntil(std::min(deadline, cluster_.loop().Now() + sc_.options.settle), false);
  observer_->Drain(start_, cluster_.loop().Now());
  injector_->Stop();
  RecordFaults();
  ob.running_at_end =
      decorators_.procs != nullptr ? static_cast<int>(decorators_.procs->running()) : 0;
  CollectPodFiles(cluster_, &ob, &report_.events);
  report_.failures = CheckExpectations(sc_, ob, cluster_.client());
  if (!objects.ok()) report_.failures.insert(report_.failures.begin(), objects.ToString());
  if (const Status& watched = observer_->status(); !watched.ok()) {
    report_.failures.insert(report_.failures.begin(), "observe: " + watched.ToString());
  }
  StopAndCheckSurvivors(decorators_.procs != nullptr ? decorators_.procs->started()
                                                     : std::vector<process::Pid>{});
  for (auto& f : CheckProcessesLeft(sc_, ob)) report_.failures.push_back(f);
  report_.passed = report_.failures.empty();
  return std::move(report_);
}

void ScenarioRun::Submit(std::vector<Json>& jobs) {
  Observed& ob = report_.observed;
  for (Json& job : jobs) {
    const Json meta = job.value("metadata", Json::object());
    std::string ns = meta.value("namespace", "default");
    std::string key = ns + "/" + meta.value("name", "");
    const api::ResourceType* type = api::WorkloadTypeOf(job);
    Status s = type ? cluster_.client().Create(*type, ns, job).status()
                    : Status(Code::kInvalid, key + ": not a job kind pjemu runs");
    ob.job_keys.push_back(key);
    ob.submitted.push_back(s);
    report_.timeline.push_back("+0s submit " + key + ": " + (s.ok() ? "accepted" : s.ToString()));
    report_.events.events.push_back({Duration(0), TimelineEvent::Kind::kSubmit, key,
                                     s.ok() ? "accepted" : s.ToString(), s.ok()});
    if (s.ok()) accepted_.push_back(key);
  }
}

bool ScenarioRun::AllEnded() { return internal::AllEnded(cluster_.client(), accepted_); }

// Steps the cluster and drains the observer until `end` (or every accepted job ended).
void ScenarioRun::RunUntil(Time end, bool stop_when_ended) {
  EventLoop& loop = cluster_.loop();
  while (loop.Now() < end && !(stop_when_ended && AllEnded())) {
    cluster_.Step(step());
    observer_->Drain(start_, loop.Now());
  }
}

// The injector's log into the observed fault log and both timelines.
void ScenarioRun::RecordFaults() {
  internal::RecordFaults(*injector_, start_, &report_);
  if (decorators_.api != nullptr && decorators_.api->injected() > 0) {
    report_.timeline.push_back("API errors injected: " +
                               std::to_string(decorators_.api->injected()));
  }
}

// Stops the cluster, then looks for process groups that outlived it (real processes only).
void ScenarioRun::StopAndCheckSurvivors(std::vector<process::Pid> started) {
  Observed& ob = report_.observed;
  observer_.reset();
  cluster_.Stop();
  ob.stopped = true;
  if (cluster_.options().processes != cluster::ProcessKind::kReal) return;
  for (process::Pid pid : started) {
    if (pid > 0 && ::kill(-pid, 0) == 0) ob.survivors.push_back(std::to_string(pid));
  }
  if (ob.survivors.empty()) return;
  std::string pids;
  for (const auto& p : ob.survivors) pids += " " + p;
  report_.failures.push_back(sc_.path + ": expected no process left behind, process groups" + pids +
                             " outlived the cluster");
}

}  // namespace

Result<RunReport> RunScenario(const Scenario& sc) { return RunScenario(sc, RunSettings{}); }

Result<RunReport> RunScenario(const Scenario& sc, const RunSettings& settings) {
  ASSIGN_OR_RETURN(std::vector<Json> jobs, LoadJobs(sc));
  ScenarioRun run(sc, settings);
  RETURN_IF_ERROR(run.Start());
  return run.Play(std::move(jobs));
}

}  // namespace pjemu::scenario
