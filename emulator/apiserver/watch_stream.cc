#include "emulator/apiserver/watch_stream.h"

#include "emulator/apiserver/tables.h"

namespace pjemu::apiserver {

namespace {
constexpr int kMaxEventsPerPoll = 256;  // keeps one busy watch from hogging the io thread
}  // namespace

std::string WatchLine(const char* type, const Json& object) {
  return WatchLineOfText(type, CompactText(object));
}

std::string WatchLineOfText(const char* type, const std::string& object_text) {
  // The text of {"type": type, "object": object}.dump() (keys in nlohmann's sorted order),
  // written around the object's own text: no wrapper object, no second serialization.
  std::string line = "{\"object\":";
  line.reserve(object_text.size() + 32);
  line += object_text;
  line += ",\"type\":\"";
  line += type;  // one of WatchTypeName's plain words
  line += "\"}\n";
  return line;
}

WatchStream::WatchStream(std::shared_ptr<api::Watch> watch, const api::ResourceType& type,
                         bool table, const Clock& clock, std::optional<Duration> timeout,
                         std::string prelude, std::shared_ptr<ObjectTexts> texts,
                         void (*convert)(Json&))
    : watch_(std::move(watch)),
      texts_(std::move(texts)),
      type_(type),
      table_(table),
      clock_(clock),
      timeout_(timeout),
      prelude_(std::move(prelude)),
      convert_(convert) {}

WatchStream::~WatchStream() { Stop(); }

bool WatchStream::Poll(std::string* out) {
  if (!prelude_.empty()) {
    out->append(prelude_);
    prelude_.clear();
    columns_sent_ = true;
  }
  if (!watch_) return false;
  for (int i = 0; i < kMaxEventsPerPoll; ++i) {
    auto event = watch_->TryNext();
    if (!event) break;
    const char* name = api::WatchTypeName(event->type);
    bool convert = table_ && event->type != api::WatchEvent::Type::kError &&
                   event->type != api::WatchEvent::Type::kBookmark;
    if (convert) {
      out->append(
          WatchLine(name, ObjectToTable(type_, event->object(), clock_.Now(), !columns_sent_)));
      columns_sent_ = true;
    } else if (convert_ != nullptr && event->type != api::WatchEvent::Type::kError &&
               event->type != api::WatchEvent::Type::kBookmark) {
      Json object = event->object();
      convert_(object);
      out->append(WatchLine(name, object));
    } else {
      out->append(WatchLineOfText(name, *texts_->Text(event->shared_object())));
    }
    if (event->type == api::WatchEvent::Type::kError) {
      Stop();
      return false;
    }
  }
  return !watch_->Done();
}

bool WatchStream::SetNotify(std::function<void()> notify) {
  if (watch_) watch_->SetNotify(std::move(notify));
  return true;
}

void WatchStream::Stop() {
  if (!watch_) return;
  watch_->SetNotify(nullptr);
  watch_->Stop();
}

}  // namespace pjemu::apiserver
