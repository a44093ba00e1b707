// EndpointWaiters: the pods whose wait-for-service builtin waits for a Service's endpoint, so
// that a pod becoming Ready wakes exactly the waiters whose Service selects it, at once, instead
// of the waiters finding out on their next try. A waiter is filed under the Service's namespace
// and the first term of its selector (in key order); a pod looks up each of its own labels
// there and checks the whole selector, so one event costs a lookup per label plus the waiters
// that share that first term, not a pass over every waiter.
// Thread safety: none (the kubelet's EventLoop thread).
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::kubelet {

class EndpointWaiters {
 public:
  // Pod `uid` waits for a Service of namespace `ns` whose spec.selector is `selector` (an
  // object of label -> value; an empty or malformed one selects nothing and is not filed).
  // A pod may wait for several Services at once.
  void Add(const std::string& uid, const std::string& ns, const Json& selector);
  // Forgets every wait of pod `uid`.
  void Remove(const std::string& uid);
  // The uids (each once, in order) of the waiters whose Service, by namespace and selector,
  // selects `pod` (its metadata.namespace, "default" when absent, and metadata.labels).
  std::vector<std::string> Selecting(const Json& pod) const;
  bool empty() const { return by_uid_.empty(); }

 private:
  using Selector = std::map<std::string, std::string>;
  // ns + '\n' + key + '=' + value of a selector's first term -> (uid, whole selector).
  std::unordered_map<std::string, std::multimap<std::string, Selector>> by_term_;
  std::unordered_map<std::string, std::vector<std::string>> by_uid_;  // uid -> its terms
};

}  // namespace pjemu::kubelet
