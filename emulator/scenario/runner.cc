#include "emulator/scenario/runner.h"

#include <fnmatch.h>

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
  Observer(client::Client& client, Observed* ob, std::vector<std::string>* timeline)
      : ob_(ob), timeline_(timeline) {
    jobs_ = *client.Watch(api::PyTorchJobs(), "");
    pods_ = *client.Watch(api::Pods(), "");
  }
  ~Observer() {
    jobs_->Stop();
    pods_->Stop();
  }
  void Drain(Time start, Time now) {
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
      }
      on = now_true;
      if (ev->type == api::WatchEvent::Type::kDeleted) {
        timeline_->push_back(Since(start, now) + " job " + key + " deleted");
      }
    }
    while (auto ev = pods_->TryNext()) {
      const Json& meta = ev->object["metadata"];
      ob_->pod_uids[meta.value("name", "")].insert(meta.value("uid", ""));
    }
  }

 private:
  Observed* ob_;
  std::vector<std::string>* timeline_;
  std::shared_ptr<api::Watch> jobs_, pods_;
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

}  // namespace

Result<RunReport> RunScenario(const Scenario& sc) {
  ASSIGN_OR_RETURN(std::vector<Json> jobs, LoadJobs(sc));
  faults::FaultyClient* api = nullptr;
  faults::FaultyProcessRunner* procs = nullptr;
  cluster::VirtualClusterOptions co;
  co.seed = sc.options.seed;
  co.gpus = sc.options.gpus;
  co.image_map = sc.options.image_map;
  co.backoff_scale = sc.options.backoff_scale;
  co.script = MakeScript(sc.processes);
  co.wrap_client = [&api, seed = sc.options.seed](client::Client& inner) {
    auto c = std::make_unique<faults::FaultyClient>(inner, seed);
    api = c.get();
    return std::unique_ptr<client::Client>(std::move(c));
  };
  co.wrap_runner = [&procs](process::ProcessRunner& inner) {
    auto r = std::make_unique<faults::FaultyProcessRunner>(inner);
    procs = r.get();
    return std::unique_ptr<process::ProcessRunner>(std::move(r));
  };
  cluster::VirtualCluster cluster(co);
  RETURN_IF_ERROR(cluster.Start().WithContext(sc.path + ": cluster"));
  EventLoop& loop = cluster.loop();

  faults::Injector injector(loop, cluster.client());
  injector.SetApiFaults(api);
  injector.SetProcessFaults(procs);
  injector.SetHook("restart-controller", [&cluster] { return cluster.RestartController(); });
  for (std::size_t i = 0; i < sc.faults.size(); ++i) {
    Status s = injector.Add(sc.faults[i]);
    if (!s.ok()) return s.WithContext(sc.path + ":" + std::to_string(sc.fault_lines[i]));
  }

  RunReport report;
  Observed& ob = report.observed;
  Observer observer(cluster.client(), &ob, &report.timeline);
  const Time start = loop.Now();
  std::vector<std::string> accepted;
  for (Json& job : jobs) {
    const Json meta = job.value("metadata", Json::object());
    std::string ns = meta.value("namespace", "default");
    std::string key = ns + "/" + meta.value("name", "");
    Status s = cluster.client().Create(api::PyTorchJobs(), ns, job).status();
    ob.job_keys.push_back(key);
    ob.submitted.push_back(s);
    report.timeline.push_back("+0s submit " + key + ": " + (s.ok() ? "accepted" : s.ToString()));
    if (s.ok()) accepted.push_back(key);
  }
  injector.Arm();

  auto all_ended = [&] {
    for (const auto& key : accepted) {
      if (!JobEnded(cluster.client(), key)) return false;
    }
    return true;
  };
  const Time deadline = start + sc.options.timeout;
  while (loop.Now() < deadline && !all_ended()) {
    loop.RunFor(1s);
    observer.Drain(start, loop.Now());
  }
  ob.finished = all_ended();
  ob.duration = loop.Now() - start;
  const Time settle_end = std::min(deadline, loop.Now() + sc.options.settle);
  while (loop.Now() < settle_end) {
    loop.RunFor(1s);
    observer.Drain(start, loop.Now());
  }
  observer.Drain(start, loop.Now());
  injector.Stop();
  for (const auto& rec : injector.log()) {
    std::string line = Since(start, rec.at) + " " + rec.id + " " + rec.what + ": " +
                       (rec.result.ok() ? "OK" : rec.result.ToString());
    ob.fault_log.push_back(line);
    report.timeline.push_back(line + " (fault)");
  }
  if (api != nullptr && api->injected() > 0) {
    report.timeline.push_back("API errors injected: " + std::to_string(api->injected()));
  }
  report.failures = CheckExpectations(sc, ob, cluster.client());
  report.passed = report.failures.empty();
  return report;
}

}  // namespace pjemu::scenario
