// Observer: what a scenario run sees while it plays. It follows the jobs, pods and Events of the
// cluster's Client with one client::Informer each (so a watch the server ends, as a real API
// server does after 30-60 minutes, is resumed, and a 410 relists) and records, at each Drain,
// the job conditions that turned True (into
// Observed::history and the text timeline), job deletions, every pod uid and pod phase change,
// each job's and pod's last state, and every Event's reason and count (the store drops a deleted
// object's events, expectations count these). Thread safety: the thread that drives the cluster's
// loop (the informers' EventLoop).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "emulator/client/client.h"
#include "emulator/client/informer.h"
#include "emulator/common/event_loop.h"
#include "emulator/scenario/expectation.h"
#include "emulator/scenario/timeline.h"

namespace pjemu::scenario {

// "+1m30s": a time as an offset from the start.
std::string Since(Time start, Time now);

class Observer {
 public:
  // Starts the informers on `loop` (in namespace ns; "" = every namespace); ob, timeline and
  // events must outlive the Observer, the client and the loop too.
  Observer(client::Client& client, EventLoop& loop, Observed* ob,
           std::vector<std::string>* timeline, Timeline* events, const std::string& ns = "");
  ~Observer();  // stops the informers
  // OK, or why an informer could not start (its list or watch refused): then nothing is seen.
  const Status& status() const { return status_; }
  Observer(const Observer&) = delete;
  Observer& operator=(const Observer&) = delete;

  // Records everything the watches delivered since the last call; now is the cluster's time.
  void Drain(Time start, Time now);
  // True when the last state seen of every job ("ns/name") has finished (Succeeded or Failed).
  bool SawFinished(const std::vector<std::string>& job_keys) const;

 private:
  void DrainEvents();
  void DrainJobs(Time start, Time now);
  // A pod's phase as it changes (a re-created pod starts again from its first phase).
  void RecordPod(const api::WatchEvent& ev, Duration at);

  Observed* ob_;
  std::vector<std::string>* timeline_;
  Timeline* events_;
  std::map<std::string, std::pair<std::string, std::string>> phase_;  // pod -> (uid, phase)
  // What each informer delivered since the last Drain, in order.
  std::deque<api::WatchEvent> jobs_, pods_, events_watch_;
  std::vector<std::unique_ptr<client::Informer>> informers_;
  Status status_;
  std::map<std::string, std::set<std::string>> true_;
};

}  // namespace pjemu::scenario
