// Scheduler: binds pods with an empty spec.nodeName to a Ready node that fits their requests
// (cpu, memory, nvidia.com/gpu, pod count, nodeSelector), kube-scheduler style: PodScheduled=True
// and spec.nodeName on success (the status first, so a kubelet never sees a bound pod without
// it) plus a Scheduled event; PodScheduled=False reason Unschedulable with the kube-scheduler's
// message and a FailedScheduling Warning event otherwise, retried whenever a pod, node or
// PersistentVolumeClaim changes. A pod's persistentVolumeClaim volumes are VolumeBinding's
// (fit.h ClaimView): a missing or unbound Immediate claim keeps it Unschedulable; an unbound
// WaitForFirstConsumer claim gets the chosen node in its volume.kubernetes.io/selected-node
// annotation (for the provisioner, storage::VolumeController) and the pod is bound only once
// every claim is bound, as kube-scheduler's PreBind waits.
// Reads pods, nodes and claims through three client::Informers (pods and claims kept in caches),
// storage classes and volumes with Get when a pod names a claim; writes pods, claims'
// annotation and events, all through client::Client.
// Thread safety: constructor, Start and Stop on the EventLoop thread (or before it runs);
// everything else runs on the EventLoop thread.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "emulator/api/pod_resources.h"
#include "emulator/client/client.h"
#include "emulator/client/informer.h"
#include "emulator/common/event_loop.h"
#include "emulator/scheduler/fit.h"

namespace pjemu::scheduler {

struct SchedulerOptions {
  // Pods whose spec.schedulerName is empty or this name are scheduled.
  std::string scheduler_name = "default-scheduler";
  // Gang schedulers served too (the Training Operator's --gang-scheduler-name: Volcano's
  // `volcano`, scheduler-plugins' `scheduler-plugins-scheduler`): their pods that name a PodGroup
  // (api/podgroup.h) are bound all or nothing, as coscheduling's Permit does (gang.cc).
  std::vector<std::string> gang_scheduler_names;
  // Unschedulable pods are retried when room may have been made (a bound pod ended or was
  // deleted, a node changed) and at least this often.
  Duration retry_interval = 10s;
};

class Scheduler {
 public:
  Scheduler(client::Client& client, EventLoop& loop, SchedulerOptions options = {});
  ~Scheduler();  // Stop()
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Starts the pod and node informers; the Client's List and Watch errors.
  Status Start();
  void Stop();

  // One scheduling pass over every pending pod (also what each change triggers).
  void ScheduleAll();

 private:
  // The pods as last delivered by the informer (a cache, as kube-scheduler keeps): bound pods'
  // requests summed per node, and the pods waiting for a node in FIFO order, so that a pass
  // costs O(pending), not a List and a re-parse of every pod.
  struct CachedPod {
    // A pending pod: the informer's snapshot itself (immutable, shared with the store and the
    // other watchers), a pointer, not a copy. A bound one: only what is read of it (BoundView),
    // so that the cache does not keep every running pod's whole tree.
    std::shared_ptr<const Json> pod;
    std::string node;      // spec.nodeName
    bool counted = false;  // bound, non-terminal: its requests are in used_[node]
    api::ResourceList requests;
    std::string order;          // creationTimestamp + '\n' + ns/name: the pending FIFO key
    std::string request_error;  // PodRequests' error; requests is empty then
    // Tried and found unfit since room was last made: skipped until then, as kube-scheduler's
    // unschedulable queue (room only shrinks in between, so the pod would not fit), which keeps
    // a pod event from costing O(pending).
    bool unschedulable = false;
    std::string group;  // its PodGroup's key (GangKey) when it names one, else ""
    bool gang = false;  // scheduled by a gang scheduler: bound with its group, all or nothing
    bool anti_affinity = false;    // NodeView::HasRequiredAntiAffinity
    bool placement_terms = false;  // NodeView::HasPlacementTerms
    // metadata.generation when the fields above that the spec decides (order, requests,
    // anti_affinity, placement_terms) were read: a pod event with the same generation keeps
    // them (every spec change but the binding's moves it, and none of them reads nodeName);
    // 0 reads them again at every event.
    std::int64_t generation = 0;
  };
  // "<group>/<ns>/<name>" of a PodGroup kind's object.
  static std::string GangKey(const std::string& group, const std::string& ns,
                             const std::string& name);
  // Coscheduling for one group's pending pods (gang.cc): all of them that fit are bound once
  // bound + fitting reach minMember, none otherwise; the others are told why. True while a pod
  // of the group still waits.
  bool ScheduleGang(const std::string& key, std::vector<NodeView>& nodes);
  // Writes the status of the groups whose pods changed (gang.cc).
  void UpdatePodGroups();
  // Places `entry` on nodes[i] for the rest of the pass.
  static void Place(const CachedPod& entry, NodeView& node);
  void Trigger();
  // Reads the entry's spec-decided fields from `pod`; true when its requests are those it had.
  bool Reread(CachedPod& entry, const Json& pod, std::int64_t generation);
  // Applies a pod change to the cache; outside a pass, asks for one.
  void OnPod(const api::WatchEvent& event);
  // A node changed: room may have been made.
  void OnNode();
  // A claim changed: pods naming it are tried again.
  void OnClaim(const api::WatchEvent& event);
  // The VolumeBinding view of the claims a pod names (empty when none).
  std::vector<ClaimView> ClaimsOf(const Json& pod);
  // Asks for the pod's unbound WaitForFirstConsumer claims to be provisioned on `node`; true
  // while any claim of the pod is unbound (the pod waits).
  bool AwaitVolumes(const Json& pod, const std::vector<ClaimView>& claims, const std::string& node);
  void Upsert(std::shared_ptr<const Json> snapshot);
  void Forget(const std::string& uid);
  void Count(const CachedPod& entry, int sign);
  Status Bind(const Json& pod, const std::string& node);
  void MarkUnschedulable(const Json& pod, const std::string& message);
  void Event(const Json& pod, const std::string& type, const std::string& reason,
             const std::string& message);

  client::Client& client_;
  EventLoop& loop_;
  SchedulerOptions options_;
  client::Informer pods_;
  client::Informer nodes_;
  client::Informer claims_;
  std::map<std::string, Json> claim_cache_;  // namespace/name -> claim
  std::shared_ptr<bool> alive_;
  bool pass_pending_ = false;
  bool in_pass_ = false;             // ScheduleAll is draining the pods informer
  bool retry_unschedulable_ = true;  // room may have been made: the next pass tries every pod
  EventLoop::TimerId retry_ = 0;
  std::map<std::string, std::string> last_message_;  // pod uid -> last FailedScheduling message
  // Hashed: every pod event looks its entry up. Passes over all of them only count (the nodes'
  // placement terms), so their order does not matter.
  std::unordered_map<std::string, CachedPod> pods_by_uid_;
  // How many of them have placement terms: while none has, a pass does not list the pods
  // bound to each node (nothing reads them), which kept every pass O(cached pods).
  std::size_t with_placement_terms_ = 0;
  std::map<std::string, api::ResourceList> used_;  // node -> requests of its counted pods
  std::map<std::string, std::string> pending_;     // CachedPod::order -> uid
  std::map<std::string, std::set<std::string>> gang_members_;  // group key -> pod uids
  std::set<std::string> dirty_gangs_;                 // groups whose status may have changed
  std::map<std::string, std::string> gang_reason_;    // group key -> why it is not scheduled
  std::map<std::string, Time> gang_waiting_since_;    // group key -> start of its Permit wait
};

}  // namespace pjemu::scheduler
