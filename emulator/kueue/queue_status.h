// The statuses Kueue's queue controllers write, as pure functions of the Workloads: a
// ClusterQueue's and a LocalQueue's counts (pending, reserving, admitted), the quota each
// flavor has reserved and in use ({name, resources[{name, total, borrowed}]}) and the Active
// condition with Kueue's reasons and messages.
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::kueue {

// `workloads` by key; `now` dates a condition that changes (lastTransitionTime); an unchanged
// one keeps its time.
Json ClusterQueueStatus(const Json& cq, const std::map<std::string, Json>& workloads,
                        const std::map<std::string, Json>& local_queues,
                        const std::map<std::string, Json>& flavors, Time now);
Json LocalQueueStatus(const Json& lq, const std::map<std::string, Json>& workloads,
                      const std::map<std::string, Json>& cluster_queues,
                      const std::map<std::string, Json>& flavors, Time now);

}  // namespace pjemu::kueue
