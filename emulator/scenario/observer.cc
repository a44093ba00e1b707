#include "emulator/scenario/observer.h"

#include <algorithm>

#include "emulator/api/job_conditions.h"
#include "emulator/api/workload.h"

namespace pjemu::scenario {

std::string Since(Time start, Time now) { return "+" + FormatAge(now - start); }

Observer::Observer(client::Client& client, EventLoop& loop, Observed* ob,
                   std::vector<std::string>* timeline, Timeline* events, const std::string& ns)
    : ob_(ob), timeline_(timeline), events_(events) {
  std::vector<std::pair<const api::ResourceType*, std::deque<api::WatchEvent>*>> followed = {
      {&api::Pods(), &pods_}, {&api::Events(), &events_watch_}};
  for (const api::ResourceType* kind : api::WorkloadTypes()) followed.push_back({kind, &jobs_});
  for (const auto& [type, queue] : followed) {
    client::InformerOptions options;
    options.name = "scenario " + type->plural;
    options.ns = ns;
    auto informer = std::make_unique<client::Informer>(
        client, loop, *type, std::move(options),
        [queue = queue](const api::WatchEvent& ev) { queue->push_back(ev); });
    if (Status s = informer->Start(); !s.ok() && status_.ok()) status_ = s;
    informers_.push_back(std::move(informer));
  }
}

Observer::~Observer() {
  for (auto& informer : informers_) informer->Stop();
}

void Observer::Drain(Time start, Time now) {
  for (auto& informer : informers_) informer->Drain();
  DrainEvents();
  DrainJobs(start, now);
  for (; !pods_.empty(); pods_.pop_front()) {
    const api::WatchEvent* ev = &pods_.front();
    const Json& meta = ev->object()["metadata"];
    ob_->pod_uids[meta.value("name", "")].insert(meta.value("uid", ""));
    ob_->last_pods[meta.value("name", "")] = ev->object();
    RecordPod(*ev, now - start);
  }
}

bool Observer::SawFinished(const std::vector<std::string>& job_keys) const {
  for (const std::string& key : job_keys) {
    auto it = ob_->last_jobs.find(key);
    if (it == ob_->last_jobs.end() ||
        !api::StateOf(it->second).finished) {
      return false;
    }
  }
  return true;
}

void Observer::DrainEvents() {
  for (; !events_watch_.empty(); events_watch_.pop_front()) {
    const api::WatchEvent* ev = &events_watch_.front();
    if (ev->type != api::WatchEvent::Type::kAdded && ev->type != api::WatchEvent::Type::kModified) {
      continue;
    }
    const Json& meta = ev->object()["metadata"];
    auto& [reason, count] = ob_->events[meta.value("namespace", "") + "/" + meta.value("name", "")];
    reason = ev->object().value("reason", "");
    count = std::max(count, std::max(ev->object().value("count", 1), 1));
  }
}

void Observer::DrainJobs(Time start, Time now) {
  for (; !jobs_.empty(); jobs_.pop_front()) {
    const api::WatchEvent* ev = &jobs_.front();
    const Json& meta = ev->object()["metadata"];
    std::string key = meta.value("namespace", "") + "/" + meta.value("name", "");
    ob_->last_jobs[key] = ev->object();
    std::set<std::string>& on = true_[key];
    std::set<std::string> now_true;
    for (const Json& c :
         ev->object().value("status", Json::object()).value("conditions", Json::array())) {
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
}

void Observer::RecordPod(const api::WatchEvent& ev, Duration at) {
  const Json& meta = ev.object()["metadata"];
  std::string key = meta.value("namespace", "") + "/" + meta.value("name", "");
  std::string uid = meta.value("uid", "");
  if (ev.type == api::WatchEvent::Type::kDeleted) {
    events_->events.push_back({at, TimelineEvent::Kind::kPodDeleted, key, "Deleted"});
    phase_.erase(key);
    return;
  }
  std::string phase = ev.object().value("status", Json::object()).value("phase", "Pending");
  auto& [seen_uid, seen_phase] = phase_[key];
  if (seen_uid == uid && seen_phase == phase) return;
  seen_uid = uid;
  seen_phase = phase;
  events_->events.push_back({at, TimelineEvent::Kind::kPodPhase, key, phase});
}

}  // namespace pjemu::scenario
