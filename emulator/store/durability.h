// Durability: the store's narrow hook for a persistent backend (emulator/persist implements it
// with SQLite). The Store hands every write request's changes to Commit() as one batch while it
// still holds its lock, before any watcher sees them and before the request returns: a write is
// acknowledged only once Commit() returned OK. When Commit() fails the Store undoes the changes
// in memory and the request fails with that Status (normally kInternal, a 500), so memory and
// disk never disagree. Snapshot is what a backend hands back to a new Store on restart.
// Thread safety: Commit() is called under the Store's mutex, one call at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emulator/api/requests.h"
#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::store {

// One committed change: the object's state after it (for DELETED its last state, carrying the
// deletion's resourceVersion) and, for MODIFIED and DELETED, the state before (watch selectors).
struct Change {
  std::uint64_t rv = 0;
  const api::ResourceType* type = nullptr;  // an entry of api::AllResources()
  api::WatchEvent::Type event = api::WatchEvent::Type::kAdded;
  std::shared_ptr<const Json> object;
  std::shared_ptr<const Json> old;
};

class Durability {
 public:
  virtual ~Durability() = default;
  // Makes `changes` (ordered by rv, one write request's worth) durable atomically: all or none.
  virtual Status Commit(const std::vector<Change>& changes) = 0;
};

// A store's persisted state, loaded before the Store is built.
struct Snapshot {
  std::uint64_t rv = 0;  // the global resourceVersion (the last write's)
  std::vector<std::pair<const api::ResourceType*, Json>> objects;  // with their resourceVersions
  // The newest changes, oldest first, so that watches resume from a recent RV; a watch from an
  // RV older than compacted_rv gets 410 Expired as for the in-memory history.
  std::vector<Change> history;
  std::uint64_t compacted_rv = 0;
};

}  // namespace pjemu::store
