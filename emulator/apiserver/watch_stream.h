// WatchStream: the chunked NDJSON body of a watch request. Turns api::WatchEvents into one
// compact JSON line each ({"type":...,"object":...}\n), as one-row Tables when the client asked
// for Table output (column definitions in the first event only, as the real server does).
// Lines rendered ahead of the live events (initial events, an ERROR for an expired version)
// go first. The session is woken through the Watch's SetNotify. An object's text comes from
// ObjectTexts, shared by every watch of the server: one serialization per change, however many
// watchers send it.
// Thread safety: Poll/Stop from one strand; the notify callback may run on any thread.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "emulator/api/requests.h"
#include "emulator/api/resources.h"
#include "emulator/apiserver/http_types.h"
#include "emulator/apiserver/object_texts.h"

namespace pjemu::apiserver {

// One watch line: {"type":"ADDED","object":{...}}\n.
std::string WatchLine(const char* type, const Json& object);
// The same around an object's compact text (CompactText).
std::string WatchLineOfText(const char* type, const std::string& object_text);

class WatchStream : public StreamSource {
 public:
  // `watch` may be null (only `prelude` is sent). `table` renders objects as one-row Tables.
  // `texts` must not be null. `convert` (may be null) rewrites each event's object first (an
  // older served version's from_stored).
  WatchStream(std::shared_ptr<api::Watch> watch, const api::ResourceType& type, bool table,
              const Clock& clock, std::optional<Duration> timeout, std::string prelude,
              std::shared_ptr<ObjectTexts> texts, void (*convert)(Json&) = nullptr);
  ~WatchStream() override;
  bool Poll(std::string* out) override;
  bool SetNotify(std::function<void()> notify) override;
  std::optional<Duration> Timeout() const override { return timeout_; }
  void Stop() override;
  bool IsWatch() const override { return true; }

 private:
  std::shared_ptr<api::Watch> watch_;
  std::shared_ptr<ObjectTexts> texts_;
  const api::ResourceType& type_;
  bool table_;
  const Clock& clock_;
  std::optional<Duration> timeout_;
  std::string prelude_;
  bool columns_sent_ = false;
  void (*convert_)(Json&) = nullptr;
};

}  // namespace pjemu::apiserver
