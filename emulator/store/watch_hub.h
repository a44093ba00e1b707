// WatchHub: the store's event history and its open watches (private to emulator/store). Every
// committed write is recorded in a bounded ring of history entries and fanned out to the matching
// watches' queues; a watch started from a resourceVersion is first replayed from the ring.
// Thread safety: WatchHub is guarded by the Store's mutex (every method REQUIRES it held);
// WatchStream has its own mutex, and its notify callback runs with no lock held (Store::Impl
// calls NotifyAll after releasing the store mutex).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "emulator/api/requests.h"
#include "emulator/api/resources.h"
#include "emulator/api/selector.h"
#include "emulator/common/status.h"
#include "emulator/store/slot.h"
#include "emulator/store/store.h"

namespace pjemu::store {


// What a watch is interested in.
struct WatchFilter {
  api::ResourceType type;
  std::string ns;  // "" = every namespace
  api::LabelSelector labels;
  api::FieldSelector fields;
  bool bookmarks = false;
  Form form = Form::kServed;  // kServed: deferred versions are computed before they are queued
  // Namespace and selectors (not the type).
  bool Matches(const Json& object) const;
};

class WatchStream final : public api::Watch {
 public:
  WatchStream(WatchFilter filter, std::size_t queue_limit)
      : filter_(std::move(filter)),
        type_key_(filter_.type.PluralGroup()),
        queue_limit_(queue_limit) {}

  // api::Watch.
  std::optional<api::WatchEvent> Next(Duration timeout) override;
  std::optional<api::WatchEvent> TryNext() override;
  // Also calls `notify` once at once (on the caller's thread) when events are already queued or
  // the stream has ended, so a consumer that sets it after Watch() returned misses nothing.
  void SetNotify(std::function<void()> notify) override;
  void Stop() override;
  bool Done() override;

  // Producer side. Push queues an event; when the queue already holds queue_limit events the
  // stream is ended instead (the consumer re-watches from its last RV). Returns false when the
  // stream is ended or stopped, so the hub drops it. `initial` events ignore the limit.
  bool Push(api::WatchEvent event, bool initial = false);
  // The same with the stored object shared, not copied, also by the consumer's Next(): a
  // queued backlog costs a pointer per event per watch instead of a deep copy (with every job
  // submitted at once a pods watch can run thousands of events behind).
  bool Push(api::WatchEvent::Type type, ObjectPtr object, bool initial = false);
  // Ends the stream after the queued events.
  void End();
  bool Ended();
  // Runs the notify callback. REQUIRES: no store lock held.
  void Notify();
  const WatchFilter& filter() const { return filter_; }
  // filter().type.PluralGroup(), made once: the hub files the watch under it and matches the
  // history it replays to a new watch against it.
  const std::string& type_key() const { return type_key_; }

 private:
  const WatchFilter filter_;
  const std::string type_key_;
  const std::size_t queue_limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  struct Queued {
    api::WatchEvent::Type type;
    ObjectPtr object;  // immutable, shared with the store and every other watch
  };
  std::deque<Queued> queue_;
  bool ended_ = false;    // no more events will be queued
  bool stopped_ = false;  // the consumer called Stop(): drop everything
  std::function<void()> notify_;
};

class WatchHub {
 public:
  explicit WatchHub(std::size_t history_limit, std::size_t queue_limit)
      : history_limit_(history_limit), queue_limit_(queue_limit) {}

  // Records a committed change (rv is the event's resourceVersion; `old` is the state before a
  // MODIFIED or DELETED, for selector transitions) and queues it on every matching watch.
  // The history keeps the slots, so its versions are packed as the store's are.
  void Record(std::uint64_t rv, const api::ResourceType& type, api::WatchEvent::Type event,
              SlotPtr object, SlotPtr old);
  // Opens a watch. `current` lists the objects of the type now (for RV "" / "0"). `from_rv` is
  // the parsed resourceVersion (ignored when synthetic). Returns kExpired when from_rv is older
  // than the kept history.
  Result<std::shared_ptr<WatchStream>> Open(WatchFilter filter, bool synthetic,
                                            std::uint64_t from_rv,
                                            const std::vector<SlotPtr>& current);
  // After a restart: history before `compacted_rv` is gone (watches from older RVs get 410).
  void Restore(std::uint64_t compacted_rv) { evicted_rv_ = compacted_rv; }
  // Queues a BOOKMARK carrying `rv` on every watch opened with bookmarks.
  void Bookmark(std::uint64_t rv);
  // The streams that received events since the last call (to notify once the lock is released).
  std::vector<std::shared_ptr<WatchStream>> TakeTouched();

 private:
  struct Entry {
    std::uint64_t rv;
    std::string type_key;  // ResourceType::PluralGroup()
    api::WatchEvent::Type event;
    SlotPtr object;
    SlotPtr old;
  };
  // Queues `e` on `w` as the watch sees it (selector transitions). False when `w` ended.
  bool Deliver(const std::shared_ptr<WatchStream>& w, const Entry& e, bool initial);

  const std::size_t history_limit_;
  const std::size_t queue_limit_;
  std::deque<Entry> history_;
  std::uint64_t evicted_rv_ = 0;                      // the newest RV no longer in history_
  // The watches of each type (by type key), held weakly: their consumers own them.
  std::map<std::string, std::vector<std::weak_ptr<WatchStream>>, std::less<>> watchers_;
  std::vector<std::shared_ptr<WatchStream>> touched_;
};

}  // namespace pjemu::store
