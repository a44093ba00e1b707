// Informer: one resource type kept in sync through a Client, client-go's reflector in small. It
// lists, then watches from the list's resourceVersion, and hands every change to a handler on
// the EventLoop thread: ADDED for each listed item (in list order), then the stream's events.
// It remembers the last resourceVersion seen and the identity of every object it delivered (uid,
// resourceVersion, ownerReferences; not the object, so that what no consumer keeps is freed and
// the store can pack it), so its consumer is never left behind:
//  - a stream that ends cleanly is re-watched from the last resourceVersion at once (one that
//    ends again at once, with no event, counts as an error);
//  - 410 Expired (Watch answering kExpired, or an ERROR event with code 410 or reason Expired)
//    relists at once;
//  - any other failure (the List call, the Watch call, an ERROR event: the stream may have lost
//    an event) relists after a capped exponential backoff on the loop's clock, again and again:
//    it never gives up. Stop() is the only end.
// A relist reconciles against what the consumer was told: first DELETED for every key that
// vanished or whose uid changed (its object is the last known identity: apiVersion, kind and
// metadata name, namespace, uid, resourceVersion, ownerReferences), then, in list order, ADDED
// for keys new to the consumer and MODIFIED for the others, unchanged ones included (a relist is
// a resync: level-based consumers re-check everything, as they did when a re-watch from ""
// replayed every object). So the consumer ends with exactly the server's objects.
// Each relist and each error is counted (relists(), errors()) and logged, one line each, on
// options.logger (by default the "informer" spdlog logger, on stderr).
//
// Delivery: events wait in the informer (a list's) or on the stream until a drain delivers them.
// A stream notification, and Start when the list has items, post one drain onto the loop
// (coalesced: at most one is pending; a retry drains in its own task); Drain() delivers
// synchronously, e.g. right after Start or before a pass that must see every change so far.
// Thread safety: everything runs on the EventLoop thread; watch notifications arrive on any
// thread and only Post onto the loop. The handler may call Stop() or destroy the informer; the
// drain then ends. The Client and the EventLoop must outlive the informer.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "emulator/api/requests.h"
#include "emulator/api/resources.h"
#include "emulator/client/client.h"
#include "emulator/common/event_loop.h"

namespace spdlog {
class logger;
}

namespace pjemu::client {

// Where an error came from: the List call, the Watch call, or an ERROR event on the stream.
enum class InformerStep { kList, kWatch, kStream };
const char* InformerStepName(InformerStep step);  // "list", "watch", "stream"

struct InformerOptions {
  std::string name;  // names the informer in log lines ("scheduler pods"); "" = the plural
  std::string ns;    // "" = every namespace
  std::string label_selector;
  std::string field_selector;
  Duration initial_backoff = 1s;  // the first retry after an error; doubles with each error
  Duration max_backoff = 30s;     // the cap
  // Called for every error, Start's included (after it was counted and logged), before the
  // retry is armed. It may Stop() the informer, e.g. when a refused request is final for the
  // consumer.
  std::function<void(InformerStep step, const Status& status)> on_error;
  // Called with the number of listed items after each list (Start's and every relist's) was
  // queued, before its events are delivered: e.g. to notice that an awaited object is absent.
  std::function<void(std::size_t items)> on_list;
  // Where relists and errors are logged; nullptr = the shared "informer" logger (stderr).
  std::shared_ptr<spdlog::logger> logger;

  // Options with just a name (and a label selector): what most actors' informers need.
  static InformerOptions Named(std::string name, std::string label_selector = "") {
    InformerOptions options;
    options.name = std::move(name);
    options.label_selector = std::move(label_selector);
    return options;
  }
};

class Informer {
 public:
  // Gets ADDED, MODIFIED and DELETED (BOOKMARK and ERROR events are the informer's own).
  using Handler = std::function<void(const api::WatchEvent& event)>;

  // `type` must outlive the informer (the types of api::AllResources() do).
  Informer(Client& client, EventLoop& loop, const api::ResourceType& type, InformerOptions options,
           Handler handler);
  ~Informer();  // Stop()
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Lists and opens the watch; the listed items are queued for the next drain (one is posted
  // when there are any). Errors: the List or Watch call's Status, with "list <plural>" or
  // "watch <plural>" as context (on_error gets it without); the informer is then stopped, with
  // no retry. A no-op when running. After a Stop(), Start reconciles against what was delivered
  // before, as a relist does.
  Status Start();
  // Closes the watch, cancels a pending retry and drops undelivered events. Idempotent.
  void Stop();
  // Delivers every event queued now (a list's, then the stream's, following the re-watches and
  // relists that happen meanwhile) and returns how many it delivered. 0 when stopped, and when
  // called from inside the handler.
  std::size_t Drain();

  bool running() const { return running_; }
  // Where a re-watch resumes: the last list's resourceVersion or a later event's.
  const std::string& resource_version() const { return last_rv_; }
  // Objects delivered and not deleted since (by namespace/name).
  std::size_t size() const { return known_.size(); }
  // Lists after the first one (on 410 and when retrying after an error).
  std::int64_t relists() const { return relists_; }
  // Failed List and Watch calls and ERROR events other than 410.
  std::int64_t errors() const { return errors_; }
  // The delay before the next retry: initial_backoff again once a relist opens its watch or
  // the stream delivers an event.
  Duration backoff() const { return backoff_; }

 private:

  Result<std::size_t> List();  // queues the list's reconciling events; the item count
  Status OpenWatch();
  void Relist(const std::string& why);
  void Rewatch();
  Status StartFailed(InformerStep step, const Status& status);
  // Counts, logs (`next` says what happens now) and calls on_error.
  void Report(InformerStep step, const Status& status, const std::string& next);
  // Reports, closes the watch and arms a relist after the backoff.
  void Fail(InformerStep step, const Status& status);
  // Posts one drain onto `loop` unless one is pending or the informer stopped (token expired).
  // Safe from any thread.
  static void PostDrain(Informer* self, EventLoop& loop, const std::weak_ptr<bool>& token,
                        const std::shared_ptr<std::atomic<bool>>& posted);
  bool TakeStreamEvent(api::WatchEvent event);
  bool Deliver(const api::WatchEvent& event);
  void Remember(const api::WatchEvent& event);
  // What is remembered of each delivered object: the identity a tombstone carries.
  // metadata.ownerReferences as compact JSON, with its structural hash (std::hash<Json>): a
  // delivery whose references hash the same keeps the text it has, unserialized (two different
  // lists share a hash once in 2^64).
  struct OwnerReferences {
    std::string text;
    std::size_t hash;
  };
  struct Known {
    std::string uid;
    std::string resource_version;
    // Null when none; shared with the objects remembered before it that had the same (a job's
    // pods and Services all do).
    std::shared_ptr<const OwnerReferences> owner_references;
  };
  // The DELETED for a delivered object that vanished while nothing was watching.
  api::WatchEvent Tombstone(const std::string& key, const Known& known) const;
  void CloseWatch();

  Client& client_;
  EventLoop& loop_;
  const api::ResourceType& type_;
  InformerOptions options_;
  Handler handler_;
  std::shared_ptr<spdlog::logger> logger_;

  bool running_ = false;
  bool draining_ = false;
  std::shared_ptr<api::Watch> watch_;
  std::deque<api::WatchEvent> pending_;  // the last list's events not yet delivered
  // The identity of each delivered object, by namespace/name (a relist visits them in key
  // order).
  std::unordered_map<std::string, Known> known_;
  std::shared_ptr<const OwnerReferences> last_owner_references_;  // the last remembered, shared
  // Remember's namespace/name, reused so that looking up a known key allocates nothing.
  std::string key_buffer_;
  std::string last_rv_;
  std::int64_t stream_events_ = 0;  // taken from the current stream
  Duration backoff_;
  EventLoop::TimerId retry_ = 0;
  // Alive while running: posted tasks and notifications check it, and a drain checks it after
  // each handler call (the handler may have stopped or destroyed the informer).
  std::shared_ptr<bool> token_;
  // Set while a posted drain has not started; shared with the stream's notification.
  std::shared_ptr<std::atomic<bool>> drain_posted_;
  std::int64_t relists_ = 0;
  std::int64_t errors_ = 0;
};

// What a consumer keeps of an informer's objects, for the actors that pass over all of them
// (the volume, TensorBoard and Kueue controllers): `cache` by api::ObjectKey, kept equal to the
// objects delivered (an informer handler's first step).
void ApplyToCache(std::map<std::string, Json>& cache, const api::WatchEvent& event);

}  // namespace pjemu::client
