// Building core/v1 Events the way client-go's recorder does, for every component that reports
// one (controller, scheduler, kubelet). They write the result through their Client.
// Thread safety: pure functions; EventName's counter is atomic.
#pragma once

#include <string>
#include <string_view>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::api {

// client-go's event name, "<object>.<unix nanoseconds in hex>"; a process-wide counter keeps
// two events of the same (virtual) nanosecond apart.
std::string EventName(std::string_view object_name, Time now);

// The ObjectReference of a stored object: apiVersion, kind, name, namespace, uid, resourceVersion.
Json ObjectReferenceOf(const Json& object);

struct EventSource {
  std::string component;  // "kubelet", "default-scheduler", "pytorchjob-controller"
  std::string host;       // the node, for node-local components; "" otherwise
};

// A first occurrence (count 1) of an Event of `type` (Normal or Warning) about `involved` (taken
// into the event: pass ObjectReferenceOf's answer as it is).
Json MakeEvent(Json involved, std::string_view type, std::string_view reason,
               std::string_view message, const EventSource& source, Time now);

}  // namespace pjemu::api
