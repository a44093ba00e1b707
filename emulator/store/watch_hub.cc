#include "emulator/store/watch_hub.h"

#include <algorithm>

#include "emulator/store/object_meta.h"

namespace pjemu::store {

using api::WatchEvent;

bool WatchFilter::Matches(const Json& object) const {
  if (!ns.empty() && MetaString(object, "namespace") != ns) return false;
  return labels.Matches(object) && fields.Matches(object);
}

// ---- WatchStream ----

std::optional<WatchEvent> WatchStream::Next(Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !queue_.empty() || ended_ || stopped_; });
  if (queue_.empty() || stopped_) return std::nullopt;
  Queued q = std::move(queue_.front());
  queue_.pop_front();
  return WatchEvent{q.type, std::move(q.object)};
}

std::optional<WatchEvent> WatchStream::TryNext() {
  std::lock_guard<std::mutex> lock(mu_);  // no wait: a zero timed wait is still a futex call
  if (queue_.empty() || stopped_) return std::nullopt;
  Queued q = std::move(queue_.front());
  queue_.pop_front();
  return WatchEvent{q.type, std::move(q.object)};
}

void WatchStream::SetNotify(std::function<void()> notify) {
  bool pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    notify_ = std::move(notify);
    pending = notify_ && (!queue_.empty() || ended_);
  }
  if (pending) Notify();
}

void WatchStream::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = ended_ = true;
    queue_.clear();
  }
  cv_.notify_all();
}

bool WatchStream::Ended() {
  std::lock_guard<std::mutex> lock(mu_);
  return ended_;
}

bool WatchStream::Done() {
  std::lock_guard<std::mutex> lock(mu_);
  return stopped_ || (ended_ && queue_.empty());
}

bool WatchStream::Push(WatchEvent event, bool initial) {
  return Push(event.type, event.shared_object(), initial);
}

bool WatchStream::Push(WatchEvent::Type type, ObjectPtr object, bool initial) {
  bool alive = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_) return false;
    if (!initial && queue_.size() >= queue_limit_) {
      ended_ = true;  // too slow: end it rather than block the writer or grow without bound
      alive = false;
    } else {
      queue_.push_back({type, std::move(object)});
    }
  }
  cv_.notify_all();
  return alive;
}

void WatchStream::End() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = true;
  }
  cv_.notify_all();
}

void WatchStream::Notify() {
  std::function<void()> notify;
  {
    std::lock_guard<std::mutex> lock(mu_);
    notify = notify_;
  }
  if (notify) notify();
}

// ---- WatchHub ----

bool WatchHub::Deliver(const std::shared_ptr<WatchStream>& w, const Entry& e, bool initial) {
  const WatchFilter& f = w->filter();
  if (e.type_key != w->type_key()) return true;  // history replayed to a new watch: all types
  ObjectPtr object = e.object->Read(f.form);     // shared with the store and every other watch
  bool now = f.Matches(*object);
  // Only selectors can tell the two states apart (the namespace never changes), so the old
  // state is decoded only for a watch that has them.
  ObjectPtr old = e.old && (!f.labels.Empty() || !f.fields.Empty()) ? e.old->Read(f.form) : nullptr;
  bool before = old ? f.Matches(*old) : now;
  WatchEvent::Type type = e.event;
  switch (e.event) {
    case WatchEvent::Type::kModified:
      if (before && now) {
        type = WatchEvent::Type::kModified;
      } else if (now) {
        type = WatchEvent::Type::kAdded;
      } else if (before) {
        // The watch cache's "left the selector": the previous state, at this event's RV.
        Json gone = *old;
        MutableMeta(gone)["resourceVersion"] = std::to_string(e.rv);
        type = WatchEvent::Type::kDeleted;
        object = std::make_shared<const Json>(std::move(gone));
      } else {
        return true;
      }
      break;
    case WatchEvent::Type::kDeleted:
      if (!now && !before) return true;  // the watch saw it if either state matched
      break;
    default:
      if (!now) return true;
  }
  bool alive = w->Push(type, std::move(object), initial);
  touched_.push_back(w);
  return alive;
}

void WatchHub::Record(std::uint64_t rv, const api::ResourceType& type, WatchEvent::Type event,
                      SlotPtr object, SlotPtr old) {
  Entry e{rv, type.PluralGroup(), event, std::move(object), std::move(old)};
  // Deliver to the type's watches, dropping those that ended (overflow), were stopped or were
  // released by their consumer (the hub holds them weakly, so an abandoned watch costs nothing).
  if (auto it = watchers_.find(e.type_key); it != watchers_.end()) {
    std::vector<std::weak_ptr<WatchStream>>& of_type = it->second;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < of_type.size(); ++i) {
      auto w = of_type[i].lock();
      if (!w || w->Ended() || !Deliver(w, e, false)) continue;
      if (kept != i) of_type[kept] = std::move(of_type[i]);
      ++kept;
    }
    of_type.resize(kept);
  }
  history_.push_back(std::move(e));
  while (history_.size() > history_limit_) {
    evicted_rv_ = history_.front().rv;
    history_.pop_front();
  }
}

Result<std::shared_ptr<WatchStream>> WatchHub::Open(WatchFilter filter, bool synthetic,
                                                    std::uint64_t from_rv,
                                                    const std::vector<SlotPtr>& current) {
  if (!synthetic && from_rv < evicted_rv_) {
    return Status(Code::kExpired, "too old resource version: " + std::to_string(from_rv) + " (" +
                                      std::to_string(evicted_rv_) + ")");
  }
  auto w = std::make_shared<WatchStream>(std::move(filter), queue_limit_);
  const std::string& key = w->type_key();
  if (synthetic) {
    for (const auto& slot : current) {
      Deliver(w, Entry{0, key, WatchEvent::Type::kAdded, slot, nullptr}, true);
    }
  } else {
    for (const auto& e : history_) {
      if (e.rv > from_rv) Deliver(w, e, true);
    }
  }
  touched_.clear();  // nothing to notify: the caller has not set a callback yet
  watchers_[key].push_back(w);
  return w;
}

void WatchHub::Bookmark(std::uint64_t rv) {
  for (const auto& [key, of_type] : watchers_) {
    for (const auto& weak : of_type) {
      auto w = weak.lock();
      if (!w || !w->filter().bookmarks || w->Ended()) continue;
      const auto& f = w->filter();
      Json object = {{"kind", f.type.kind},
                     {"apiVersion", f.type.ApiVersion()},
                     {"metadata", {{"resourceVersion", std::to_string(rv)}}}};
      w->Push({WatchEvent::Type::kBookmark, std::move(object)});
      touched_.push_back(w);
    }
  }
}

std::vector<std::shared_ptr<WatchStream>> WatchHub::TakeTouched() {
  std::vector<std::shared_ptr<WatchStream>> out;
  out.swap(touched_);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace pjemu::store
