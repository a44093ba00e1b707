// RunRemoteScenario (remote.h): a scenario played on a real API server in a namespace of its
// own, on the wall clock: the Injector and the Observer of the embedded runner over a client
// scoped to that namespace, the expectations judged the same way.
#include "emulator/api/job_conditions.h"
#include "emulator/api/workload.h"
#include "emulator/common/event_loop.h"
#include "emulator/faults/injector.h"
#include "emulator/scenario/observer.h"
#include "emulator/scenario/remote.h"
#include "emulator/scenario/run_parts.h"

namespace pjemu::scenario {
namespace {

// A Client whose "every namespace" lists and watches of namespaced types stay in one namespace:
// the observer, the injector's selectors and the expectations never see a user's objects.
class NamespaceScope final : public client::Client {
 public:
  NamespaceScope(client::Client& inner, std::string ns) : inner_(inner), ns_(std::move(ns)) {}

  Result<Json> Create(const client::ResourceType& t, std::string_view ns, Json object,
                      const client::WriteOptions& o) override {
    return inner_.Create(t, In(t, ns), std::move(object), o);
  }
  Result<Json> Get(const client::ResourceType& t, std::string_view ns,
                   std::string_view name) override {
    return inner_.Get(t, In(t, ns), name);
  }
  Result<Json> List(const client::ResourceType& t, std::string_view ns,
                    const client::ListOptions& o) override {
    return inner_.List(t, In(t, ns), o);
  }
  Result<Json> Update(const client::ResourceType& t, std::string_view ns, Json object,
                      client::Subresource sub, const client::WriteOptions& o) override {
    return inner_.Update(t, In(t, ns), std::move(object), sub, o);
  }
  Result<Json> Patch(const client::ResourceType& t, std::string_view ns, std::string_view name,
                     client::PatchType pt, const Json& patch, client::Subresource sub,
                     const client::WriteOptions& o) override {
    return inner_.Patch(t, In(t, ns), name, pt, patch, sub, o);
  }
  Result<Json> Delete(const client::ResourceType& t, std::string_view ns, std::string_view name,
                      const client::DeleteOptions& o) override {
    return inner_.Delete(t, In(t, ns), name, o);
  }
  Result<std::shared_ptr<api::Watch>> Watch(const client::ResourceType& t, std::string_view ns,
                                            const client::WatchOptions& o) override {
    return inner_.Watch(t, In(t, ns), o);
  }
  Status Evict(std::string_view ns, std::string_view name,
               const client::DeleteOptions& o) override {
    return inner_.Evict(In(api::Pods(), ns), name, o);
  }
  Status Bind(std::string_view ns, std::string_view name, const api::PodBinding& b) override {
    return inner_.Bind(In(api::Pods(), ns), name, b);
  }

 private:
  std::string_view In(const client::ResourceType& t, std::string_view ns) const {
    return t.namespaced && ns.empty() ? std::string_view(ns_) : ns;
  }
  client::Client& inner_;
  std::string ns_;
};

// One scenario on the remote cluster: Start creates the namespace and arms nothing yet; Play
// submits, runs until the jobs ended (plus settle) or the timeout, and judges; the destructor
// deletes the namespace.
class RemoteRun {
 public:
  RemoteRun(const Scenario& sc, const RemoteSeams& seams, std::string ns)
      : sc_(sc), seams_(seams), ns_(std::move(ns)), scope_(*seams.client, ns_) {}
  ~RemoteRun();

  Status Start();
  RunReport Play(std::vector<Json> jobs);

 private:
  void Submit(std::vector<Json>& jobs);
  bool AllEnded();
  void RunUntil(Time end, bool stop_when_ended);
  // AllEnded reads the jobs afresh, so the watches may be behind it (a re-opened one most of
  // all): drains until they have delivered every job's end too, or `end`.
  void CatchUp(Time end);
  static constexpr Duration kCatchUp = 2s;
  void RecordFaults();
  void CollectPods();
  // Deletes the namespace with everything in it (once).
  Status DeleteNamespace();
  // The scoped client through the interface (its default arguments).
  client::Client& api() { return scope_; }

  const Scenario& sc_;
  RemoteSeams seams_;
  std::string ns_;
  NamespaceScope scope_;
  RealClock clock_;
  EventLoop loop_{clock_};
  bool created_ = false;
  std::unique_ptr<faults::Injector> injector_;
  std::unique_ptr<Observer> observer_;
  RunReport report_;
  std::vector<std::string> accepted_;
  Time start_{};
};

RemoteRun::~RemoteRun() {
  observer_.reset();
  if (injector_) injector_->Stop();
  (void)DeleteNamespace();  // when Play did not run (a refused fault)
}

Status RemoteRun::DeleteNamespace() {
  if (!created_) return Status::Ok();
  created_ = false;
  return seams_.client->Delete(api::Namespaces(), "", ns_).status();
}

Status RemoteRun::Start() {
  Json ns = {{"apiVersion", "v1"},
             {"kind", "Namespace"},
             {"metadata",
              {{"name", ns_}, {"labels", {{"app.kubernetes.io/managed-by", "pjemu-scenario"}}}}}};
  RETURN_IF_ERROR(seams_.client->Create(api::Namespaces(), "", ns)
                      .status()
                      .WithContext(sc_.path + ": create namespace " + ns_));
  created_ = true;
  faults::InjectorOptions io;
  io.seed = sc_.options.seed;
  io.poll_interval = 200ms;
  injector_ = std::make_unique<faults::Injector>(loop_, scope_, io);
  faults::NodeSeams node;
  node.read_log = seams_.read_log;
  node.read_metrics = [read = seams_.read_log](const std::string& ns, const std::string& pod) {
    return MetricsFromLog(read(ns, pod, ""));
  };
  injector_->SetNodeSeams(std::move(node));
  return internal::AddFaults(*injector_, sc_);
}

RunReport RemoteRun::Play(std::vector<Json> jobs) {
  Observed& ob = report_.observed;
  observer_ =
      std::make_unique<Observer>(scope_, loop_, &ob, &report_.timeline, &report_.events, ns_);
  start_ = loop_.Now();
  report_.timeline.push_back("+0s namespace " + ns_);
  injector_->Arm();
  const Status objects = internal::CreateObjects(api(), sc_, &report_.timeline);
  Submit(jobs);
  const Time deadline = start_ + sc_.options.timeout;
  RunUntil(deadline, /*stop_when_ended=*/true);
  ob.finished = AllEnded();
  CatchUp(std::min(deadline, loop_.Now() + kCatchUp));
  ob.duration = loop_.Now() - start_;
  RunUntil(std::min(deadline, loop_.Now() + sc_.options.settle), false);
  observer_->Drain(start_, loop_.Now());
  injector_->Stop();
  RecordFaults();
  CollectPods();
  report_.failures = CheckExpectations(sc_, ob, scope_);
  if (!objects.ok()) report_.failures.insert(report_.failures.begin(), objects.ToString());
  if (const Status& watched = observer_->status(); !watched.ok()) {
    report_.failures.insert(report_.failures.begin(), "observe: " + watched.ToString());
  }
  ob.stopped = true;  // what is left running was read from the containers' states
  for (auto& f : CheckProcessesLeft(sc_, ob)) report_.failures.push_back(f);
  observer_.reset();
  if (Status s = DeleteNamespace(); !s.ok()) {
    report_.failures.push_back(sc_.path + ": could not delete namespace " + ns_ + ": " +
                               s.ToString());
  } else {
    report_.timeline.push_back(Since(start_, loop_.Now()) + " namespace " + ns_ + " deleted");
  }
  report_.passed = report_.failures.empty();
  return std::move(report_);
}

void RemoteRun::Submit(std::vector<Json>& jobs) {
  Observed& ob = report_.observed;
  for (Json& job : jobs) {
    job["metadata"]["namespace"] = ns_;
    std::string key = ns_ + "/" + job["metadata"].value("name", "");
    const api::ResourceType* type = api::WorkloadTypeOf(job);
    Status s = type ? api().Create(*type, ns_, job).status()
                    : Status(Code::kInvalid, key + ": not a job kind pjemu runs");
    ob.job_keys.push_back(key);
    ob.submitted.push_back(s);
    report_.timeline.push_back("+0s submit " + key + ": " + (s.ok() ? "accepted" : s.ToString()));
    report_.events.events.push_back({Duration(0), TimelineEvent::Kind::kSubmit, key,
                                     s.ok() ? "accepted" : s.ToString(), s.ok()});
    if (s.ok()) accepted_.push_back(key);
  }
}

bool RemoteRun::AllEnded() { return internal::AllEnded(scope_, accepted_); }

// Runs the injector's timers on the wall clock in 200 ms steps, draining the observer.
void RemoteRun::RunUntil(Time end, bool stop_when_ended) {
  while (loop_.Now() < end && !(stop_when_ended && AllEnded()) &&
         !(seams_.interrupted && seams_.interrupted())) {
    loop_.RunUntil([] { return false; }, std::min<Duration>(200ms, end - loop_.Now()));
    observer_->Drain(start_, loop_.Now());
  }
}

void RemoteRun::CatchUp(Time end) {
  while (loop_.Now() < end && !observer_->SawFinished(accepted_)) {
    loop_.RunUntil([] { return false; }, std::min<Duration>(50ms, end - loop_.Now()));
    observer_->Drain(start_, loop_.Now());
  }
}

void RemoteRun::RecordFaults() { internal::RecordFaults(*injector_, start_, &report_); }

// Each pod's log tail and trainer metrics (from its log), and the containers still running.
void RemoteRun::CollectPods() {
  Observed& ob = report_.observed;
  auto pods = api().List(api::Pods(), ns_);
  if (!pods.ok()) return;
  for (const Json& pod : pods->value("items", Json::array())) {
    const std::string name = pod["metadata"].value("name", "");
    std::string tail, metrics;
    for (const Json& c : pod.value("spec", Json::object()).value("containers", Json::array())) {
      std::string log = seams_.read_log(ns_, name, c.value("name", ""));
      std::string text = internal::Tail(log, 6);
      if (!text.empty()) tail += "[" + c.value("name", "") + "]\n" + text;
      metrics += MetricsFromLog(log);
    }
    if (!tail.empty()) ob.log_tails[name] = tail;
    if (!metrics.empty()) {
      ob.metrics[name] = metrics;
      internal::RecordLoss(ns_ + "/" + name, metrics, &report_.events);
    }
    for (const Json& cs :
         pod.value("status", Json::object()).value("containerStatuses", Json::array())) {
      if (cs.value("state", Json::object()).contains("running")) ++ob.running_at_end;
    }
  }
}

}  // namespace

Result<RunReport> RunRemoteScenario(const Scenario& scenario, const RemoteSeams& seams,
                                    const std::string& ns) {
  if (seams.client == nullptr || !seams.read_log) {
    return Status(Code::kInvalid, "remote run: no client or log reader");
  }
  ASSIGN_OR_RETURN(Scenario sc, InNamespace(scenario, ns));
  ASSIGN_OR_RETURN(std::vector<Json> jobs, internal::LoadJobs(sc));
  RemoteRun run(sc, seams, ns);
  RETURN_IF_ERROR(run.Start());
  return run.Play(std::move(jobs));
}

}  // namespace pjemu::scenario
