// TaintManager: kube-controller-manager's taint-eviction controller for the NoExecute taints
// a node's spec carries (a cluster config's, or `kubectl taint`): a pod bound to such a node
// that does not tolerate every one of them is evicted at once; one that tolerates them all with
// tolerationSeconds is evicted after the smallest of those seconds (counted from when the
// manager saw the taint), and not at all without any. Eviction: the pod's condition
// DisruptionTarget=True (reason DeletionByTaintManager, `Taint manager: deleting due to
// NoExecute taint`), a Normal TaintManagerEviction event `Marking for deletion Pod <ns>/<name>`,
// then a graceful delete (the node's kubelet ends it). A pending eviction whose taint goes away
// is cancelled (`Cancelling deletion of Pod <ns>/<name>`).
// The node lifecycle taints (node.kubernetes.io/unreachable and not-ready) are left to the
// node-down fault (faults/node_lifecycle.h), which acts out their default 300 s tolerations.
// Reads nodes and pods through two client::Informers, and keeps only the pods it may act on: a
// node that gains NoExecute taints has its pods listed then (by spec.nodeName), as upstream's
// manager reads the pods assigned to a node when the node changes; a pod's own events keep it
// while it may be evicted from a tainted node. Writes pod status, deletes and events.
// Thread safety: everything on the EventLoop thread (constructor, Start, Stop included).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "emulator/client/client.h"
#include "emulator/client/informer.h"
#include "emulator/common/event_loop.h"

namespace pjemu::scheduler {

class TaintManager {
 public:
  TaintManager(client::Client& client, EventLoop& loop);
  ~TaintManager();  // Stop()
  TaintManager(const TaintManager&) = delete;
  TaintManager& operator=(const TaintManager&) = delete;

  // Starts the informers; the Client's List and Watch errors.
  Status Start();
  void Stop();

 private:
  void Trigger();
  void Pass();
  bool OnTaintedNode(const Json& pod) const;
  // Keeps the pods bound to `node` (just tainted) that may be evicted, as listed now.
  void AddPodsOn(const std::string& node);
  // Evicts the pod `cached` names, as stored now (its conditions, its resourceVersion).
  void Evict(const Json& cached);

  client::Client& client_;
  EventLoop& loop_;
  std::map<std::string, Json> nodes_;  // name -> NoExecute taints (JSON array) of the node
  // uid -> what Pass reads of the pod (TaintView): not its whole tree, kept for every pod that is
  // bound to a tainted node, not ended and not being deleted, or whose eviction is pending.
  std::map<std::string, Json> pods_;
  std::map<std::string, EventLoop::TimerId> timers_;         // pod uid -> pending eviction
  client::Informer node_informer_;
  client::Informer pod_informer_;
  std::shared_ptr<bool> alive_;
  bool pass_pending_ = false;
};

}  // namespace pjemu::scheduler
