#include "emulator/scenario/observer.h"

#include <algorithm>

namespace pjemu::scenario {

std::string Since(Time start, Time now) { return "+" + FormatAge(now - start); }

Observer::Observer(client::Client& client, Observed* ob, std::vector<std::string>* timeline,
                   Timeline* events, const std::string& ns)
    : ob_(ob), timeline_(timeline), events_(events) {
  jobs_ = *client.Watch(api::PyTorchJobs(), ns);
  pods_ = *client.Watch(api::Pods(), ns);
  events_watch_ = *client.Watch(api::Events(), ns);
}

Observer::~Observer() {
  jobs_->Stop();
  pods_->Stop();
  events_watch_->Stop();
}

void Observer::Drain(Time start, Time now) {
  DrainEvents();
  DrainJobs(start, now);
  while (auto ev = pods_->TryNext()) {
    const Json& meta = ev->object()["metadata"];
    ob_->pod_uids[meta.value("name", "")].insert(meta.value("uid", ""));
    ob_->last_pods[meta.value("name", "")] = ev->object();
    RecordPod(*ev, now - start);
  }
}

void Observer::DrainEvents() {
  while (auto ev = events_watch_->TryNext()) {
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
  while (auto ev = jobs_->TryNext()) {
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
