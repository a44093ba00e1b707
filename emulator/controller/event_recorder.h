// EventRecorder: writes core/v1 Events about a PyTorchJob through the Client, like client-go's
// record.EventRecorder with its correlator: the first occurrence creates `<job>.<hex nanos>`
// (involvedObject kind/namespace/name/uid/apiVersion/resourceVersion, source.component the
// controller's name, first/lastTimestamp, count 1); an identical event (same object,
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
  // component: the event source, the controller's name ("pytorchjob-controller").
  EventRecorder(client::Client& client, const Clock& clock, std::string component)
      : client_(client), clock_(clock), component_(std::move(component)) {}

  // Records an event about `object` (a stored object with metadata.uid). Failures are returned
  // but callers normally ignore them, as client-go's recorder drops events it cannot write.
  Status Record(const Json& object, const std::string& type, const std::string& reason,
                const std::string& message);

 private:
  using Key =
      std::tuple<std::string, std::string, std::string, std::string>;  // uid,type,reason,msg
  client::Client& client_;
  const Clock& clock_;
  std::string component_;
  std::map<Key, std::string> names_;  // correlator cache: key -> event name
};

}  // namespace pjemu::controller
