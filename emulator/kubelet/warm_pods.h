// WarmPods: which of the kubelet's pods are kept as JSON trees. A kubelet holds every pod bound
// to its node for the pod's whole life, but reads one only when something happens to it (an
// update, a process exit, a timer): at rest a pod is parked, kept as packed JSON
// (common/packed_json.h, about a fifteenth of the tree's memory), and unparked when next read.
// The `capacity` pods read most recently stay trees. The others are parked by a task of their
// own, posted after the current one (so no reference a caller took into a tree goes away under
// it): it hands their trees to a packing thread, and a task the thread posts when done installs
// the packed bytes in each pod not read or replaced meanwhile, then hands the trees back to the
// thread, so that the trees no pod holds any more are freed there. Parking changes how a pod is
// held, never what it reads as, so when it completes has no effect on what the kubelet does.
// Thread safety: Touch, Forget and the destructor on the kubelet's EventLoop thread; the packing
// thread only packs and frees trees it was handed (immutable, shared) and posts to the loop.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "emulator/common/batch_thread.h"
#include "emulator/common/event_loop.h"
#include "emulator/common/status.h"

namespace pjemu::kubelet {

// What WarmPods parks: a holder of one tree that can keep it packed instead.
class Parkable {
 public:
  // The tree to park; null when there is none (already parked).
  virtual std::shared_ptr<const Json> ParkingTree() const = 0;
  // `packed` is PackJson of `tree`, the tree ParkingTree gave, still the one held: keep the
  // bytes and drop the tree.
  virtual void Parked(std::string packed) = 0;

 protected:
  ~Parkable() = default;
};

class WarmPods {
 public:
  // `loop` must outlive this. capacity 0: every pod is parked after each task that read it.
  WarmPods(EventLoop& loop, std::size_t capacity);
  ~WarmPods();  // stops the packing thread; what it has not installed stays a tree
  WarmPods(const WarmPods&) = delete;
  WarmPods& operator=(const WarmPods&) = delete;

  // `p` holds a new or unparked tree: the most recently used (a parking of it under way is
  // called off).
  void Touch(Parkable* p);
  // `p` is going (its destructor): never parked after this.
  void Forget(Parkable* p);
  std::size_t warm() const { return lru_.size(); }
  // Waits until the packing thread has packed all it was handed, then installs it (tests).
  void Flush();

 private:
  struct Job {
    Parkable* who;  // null: a tree handed back by Install, to be freed on the packing thread
    std::shared_ptr<const Json> tree;
    std::string packed;
  };
  void ParkBeyondCapacity();
  void Pack(std::vector<Job>& jobs);  // the packing thread's work
  void Install();

  EventLoop& loop_;
  const std::size_t capacity_;
  std::list<Parkable*> lru_;  // most recent first
  std::unordered_map<Parkable*, std::list<Parkable*>::iterator> where_;
  // Handed to the thread, not installed yet: the tree each was handed with.
  std::unordered_map<Parkable*, std::shared_ptr<const Json>> parking_;
  EventLoop::TimerId park_task_ = 0;  // the posted ParkBeyondCapacity, 0 when none
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for the thread's tasks

  std::mutex mu_;
  std::vector<Job> done_;  // packed, not installed yet; GUARDED_BY(mu_)
  BatchThread<Job> packer_{[this](std::vector<Job>& jobs) { Pack(jobs); }};  // last: stops first
};

}  // namespace pjemu::kubelet
