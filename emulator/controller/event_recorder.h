// EventRecorder: writes core/v1 Events about a PyTorchJob through the Client, like client-go's
// record.EventRecorder with its correlator: the first occurrence creates `<job>.<hex nanos>`
// (involvedObject kind/namespace/name/uid/apiVersion/resourceVersion, source.component
// pytorchjob-controller, first/lastTimestamp, count 1); an identical event (same object,
// type, reason, message) is merged into the earlier one: count+1, lastTimestamp = now.
// Thread safety: not thread-safe; used from the controller's EventLoop thread only.
#pragma once

#include <map>
#include <string>
#include <tuple>

#include "emulator/client/client.h"
#include "emulator/common/clock.h"

namespace pjemu::controller {

class EventRecorder {
 public:
  EventRecorder(client::Client& client, const Clock& clock) : client_(client), clock_(clock) {}

  // Records an event about `object` (a stored object with metadata.uid). Failures are returned
  // but callers normally ignore them, as client-go's recorder drops events it cannot write.
  Status Record(const Json& object, const std::string& type, const std::string& reason,
                const std::string& message);

 private:
  using Key =
      std::tuple<std::string, std::string, std::string, std::string>;  // uid,type,reason,msg
  client::Client& client_;
  const Clock& clock_;
  std::map<Key, std::string> names_;  // correlator cache: key -> event name
};

}  // namespace pjemu::controller
