// EventRecorder: writes core/v1 Events about a PyTorchJob through the Client, like client-go's
// record.EventRecorder with its correlator: the first occurrence creates `<job>.<hex nanos>`
// (involvedObject kind/namespace/name/uid/apiVersion/resourceVersion, source.component the
// controller's name, first/lastTimestamp, count 1); an identical event (same object,
// type, reason, message) is merged into the earlier one: count+1, lastTimestamp = now. The
// correlator remembers the last kCorrelatorEntries events it wrote, least recently used first
// out, as client-go's event logger does (an LRU of 4096 entries): an identical event about an
// object past that window starts a new Event.
// Thread safety: not thread-safe; used from the controller's EventLoop thread only.
#pragma once

#include <boost/container_hash/hash.hpp>
#include <cstddef>
#include <list>
#include <string>
#include <tuple>
#include <unordered_map>

#include "emulator/client/client.h"
#include "emulator/common/clock.h"

namespace pjemu::controller {

class EventRecorder {
 public:
  // component: the event source, the controller's name ("pytorchjob-controller").
  EventRecorder(client::Client& client, const Clock& clock, std::string component)
      : client_(client), clock_(clock), component_(std::move(component)) {}

  // Records an event about `object` (a stored object with metadata.uid). Failures are returned
  // but callers normally ignore them, as client-go's recorder drops events it cannot write.
  Status Record(const Json& object, const std::string& type, const std::string& reason,
                const std::string& message);

  // client-go's maxLruCacheEntries.
  static constexpr std::size_t kCorrelatorEntries = 4096;

 private:
  using Key =
      std::tuple<std::string, std::string, std::string, std::string>;  // uid,type,reason,msg
  struct Written {
    std::string name;                      // the Event's
    std::list<const Key*>::iterator used;  // its place in used_
  };
  // Remembers `key`'s Event `name` as the most recently used, forgetting the least recently
  // used past kCorrelatorEntries.
  void Remember(const Key& key, std::string name);

  client::Client& client_;
  const Clock& clock_;
  std::string component_;
  std::unordered_map<Key, Written, boost::hash<Key>> names_;  // correlator cache: key -> its Event
  std::list<const Key*> used_;    // names_' keys, most recently used first
};

}  // namespace pjemu::controller
