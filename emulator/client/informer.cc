#include "emulator/client/informer.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "emulator/api/json_fields.h"

namespace pjemu::client {
namespace {

using Type = api::WatchEvent::Type;

const Json& Meta(const Json& object) {
  static const Json kEmpty = Json::object();
  auto it = object.find("metadata");
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

// A metadata string member ("" when absent or not a string), as a view into `meta`.
std::string_view TextView(const Json& meta, const char* key) {
  auto it = meta.find(key);
  return it != meta.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>())
                                             : std::string_view();
}

std::string Text(const Json& meta, const char* key) { return std::string(TextView(meta, key)); }

// The object's "namespace/name", written into `out` (a caller may keep it, so that its buffer
// is reused).
void KeyInto(const Json& meta, std::string& out) {
  out.assign(TextView(meta, "namespace"));
  out += '/';
  out += TextView(meta, "name");
}

std::string KeyOf(const Json& meta) {
  std::string key;
  KeyInto(meta, key);
  return key;
}

// `to` = `from`, written only when they differ (an object's uid is the same in every event).
void AssignIfChanged(std::string& to, std::string_view from) {
  if (to != from) to.assign(from);
}

// An ERROR event's v1 Status says the watched resourceVersion is gone.
bool IsExpired(const Json& status) {
  if (!status.is_object()) return false;
  return status.value("code", 0) == 410 || status.value("reason", "") == "Expired" ||
         status.value("reason", "") == "Gone";
}

std::string Millis(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + "ms";
}

std::shared_ptr<spdlog::logger> SharedLogger() {
  static const std::shared_ptr<spdlog::logger> logger = [] {
    auto existing = spdlog::get("informer");
    return existing ? existing : spdlog::stderr_color_mt("informer");
  }();
  return logger;
}

}  // namespace

const char* InformerStepName(InformerStep step) {
  switch (step) {
    case InformerStep::kList:
      return "list";
    case InformerStep::kWatch:
      return "watch";
    case InformerStep::kStream:
      return "stream";
  }
  return "?";
}

Informer::Informer(Client& client, EventLoop& loop, const api::ResourceType& type,
                   InformerOptions options, Handler handler)
    : client_(client),
      loop_(loop),
      type_(type),
      options_(std::move(options)),
      handler_(std::move(handler)),
      logger_(options_.logger ? options_.logger : SharedLogger()),
      backoff_(options_.initial_backoff) {
  if (options_.name.empty()) options_.name = type_.plural;
}

Informer::~Informer() { Stop(); }

Status Informer::Start() {
  if (running_) return Status::Ok();
  running_ = true;
  token_ = std::make_shared<bool>(true);
  drain_posted_ = std::make_shared<std::atomic<bool>>(false);
  backoff_ = options_.initial_backoff;
  std::weak_ptr<bool> token = token_;
  Result<std::size_t> listed = List();
  if (!listed.ok()) return StartFailed(InformerStep::kList, listed.status());
  if (options_.on_list) options_.on_list(*listed);
  if (token.expired()) return Status::Ok();  // on_list stopped us
  if (Status watched = OpenWatch(); !watched.ok()) {
    return StartFailed(InformerStep::kWatch, watched);
  }
  if (!pending_.empty()) PostDrain(this, loop_, token_, drain_posted_);
  return Status::Ok();
}

Status Informer::StartFailed(InformerStep step, const Status& status) {
  Report(step, status, "not retried: Start fails");
  Stop();
  return status.WithContext(std::string(InformerStepName(step)) + " " + type_.PluralGroup());
}

void Informer::Stop() {
  if (!running_) return;
  running_ = false;
  draining_ = false;
  token_.reset();
  CloseWatch();
  if (retry_) loop_.Cancel(retry_), retry_ = 0;
  pending_.clear();
}

std::size_t Informer::Drain() {
  if (!running_ || draining_) return 0;
  draining_ = true;
  std::weak_ptr<bool> token = token_;
  std::size_t delivered = 0;
  bool rewatched = false;
  while (true) {
    if (!pending_.empty()) {
      api::WatchEvent event = std::move(pending_.front());
      pending_.pop_front();
      ++delivered;
      if (!Deliver(event)) return delivered;  // stopped or destroyed: touch nothing
      continue;
    }
    if (!watch_) break;  // a retry is armed
    if (std::optional<api::WatchEvent> event = watch_->TryNext()) {
      delivered += event->type != Type::kBookmark && event->type != Type::kError;
      if (!TakeStreamEvent(std::move(*event))) return delivered;
      continue;
    }
    if (!watch_->Done()) break;
    if (rewatched && stream_events_ == 0) {
      // A stream that ends as soon as it is opened would make this loop spin: back off.
      Fail(InformerStep::kStream, Status(Code::kUnavailable, "the watch ended at once"));
    } else {
      rewatched = true;
      Rewatch();
    }
    if (token.expired()) return delivered;  // on_error or on_list stopped us
  }
  draining_ = false;
  return delivered;
}

Result<std::size_t> Informer::List() {
  api::ListOptions options;
  options.label_selector = options_.label_selector;
  options.field_selector = options_.field_selector;
  ASSIGN_OR_RETURN(Json list, client_.List(type_, options_.ns, options));
  Json& items = list["items"];
  if (!items.is_array()) items = Json::array();
  // Reconcile against what the consumer was told: the vanished (or replaced) first.
  std::map<std::string, std::string> listed_uids;
  for (const Json& item : items) listed_uids[KeyOf(Meta(item))] = Text(Meta(item), "uid");
  pending_.clear();
  std::vector<const std::pair<const std::string, Known>*> by_key;
  by_key.reserve(known_.size());
  for (const auto& entry : known_) by_key.push_back(&entry);
  std::sort(by_key.begin(), by_key.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  for (const auto* entry : by_key) {
    const auto& [key, known] = *entry;
    auto it = listed_uids.find(key);
    if (it == listed_uids.end() || it->second != known.uid) {
      pending_.push_back(Tombstone(key, known));
    }
  }
  for (Json& item : items) {
    const Json& meta = Meta(item);
    auto it = known_.find(KeyOf(meta));
    bool same = it != known_.end() && it->second.uid == Text(meta, "uid");
    pending_.push_back({same ? Type::kModified : Type::kAdded, std::move(item)});
  }
  last_rv_ = Text(Meta(list), "resourceVersion");
  return items.size();
}

Status Informer::OpenWatch() {
  api::WatchOptions options;
  options.label_selector = options_.label_selector;
  options.field_selector = options_.field_selector;
  options.resource_version = last_rv_;
  ASSIGN_OR_RETURN(watch_, client_.Watch(type_, options_.ns, options));
  stream_events_ = 0;
  // Runs on the writer's thread: it touches nothing but copies and the loop.
  watch_->SetNotify([this, token = std::weak_ptr<bool>(token_), posted = drain_posted_] {
    PostDrain(this, loop_, token, posted);
  });
  return Status::Ok();
}

void Informer::PostDrain(Informer* self, EventLoop& loop, const std::weak_ptr<bool>& token,
                         const std::shared_ptr<std::atomic<bool>>& posted) {
  if (token.expired() || posted->exchange(true)) return;
  loop.Post([self, token, posted] {
    if (token.expired()) return;
    posted->store(false);
    self->Drain();
  });
}

void Informer::Rewatch() {
  CloseWatch();
  Status watched = OpenWatch();
  if (watched.ok()) return;
  if (watched.code() == Code::kExpired) return Relist(watched.message());
  Fail(InformerStep::kWatch, watched);
}

void Informer::Relist(const std::string& why) {
  ++relists_;
  logger_->warn("{}: relisting {} ({})", options_.name, type_.PluralGroup(), why);
  CloseWatch();
  std::weak_ptr<bool> token = token_;
  Result<std::size_t> listed = List();
  if (!listed.ok()) return Fail(InformerStep::kList, listed.status());
  if (options_.on_list) options_.on_list(*listed);
  if (token.expired()) return;
  // A list this fresh cannot have expired: an Expired watch now is an error like any other.
  if (Status watched = OpenWatch(); !watched.ok()) return Fail(InformerStep::kWatch, watched);
  backoff_ = options_.initial_backoff;
}

void Informer::Report(InformerStep step, const Status& status, const std::string& next) {
  ++errors_;
  logger_->warn("{}: {} {} failed: {}; {}", options_.name, InformerStepName(step),
                type_.PluralGroup(), status.ToString(), next);
  if (options_.on_error) options_.on_error(step, status);
}

void Informer::Fail(InformerStep step, const Status& status) {
  const Duration delay = backoff_;
  backoff_ = std::min(backoff_ * 2, options_.max_backoff);
  CloseWatch();
  std::weak_ptr<bool> token = token_;
  Report(step, status, "relisting in " + Millis(delay));
  if (token.expired()) return;
  if (retry_) loop_.Cancel(retry_);
  retry_ = loop_.PostAfter(delay, [this, token] {
    if (token.expired()) return;
    retry_ = 0;
    Relist("retrying after an error");
    if (!token.expired()) Drain();
  });
}

bool Informer::TakeStreamEvent(api::WatchEvent event) {
  ++stream_events_;
  std::weak_ptr<bool> token = token_;
  if (event.type == Type::kError) {
    if (IsExpired(event.object())) {
      Relist("resourceVersion " + last_rv_ + " expired");
    } else {
      Fail(InformerStep::kStream, Status::FromStatusJson(event.object(), 0));
    }
    return !token.expired();
  }
  const std::string rv = Text(Meta(event.object()), "resourceVersion");
  if (!rv.empty()) last_rv_ = rv;
  backoff_ = options_.initial_backoff;
  if (event.type == Type::kBookmark) return true;
  return Deliver(event);
}

bool Informer::Deliver(const api::WatchEvent& event) {
  Remember(event);
  std::weak_ptr<bool> token = token_;
  handler_(event);
  return !token.expired();
}

void Informer::Remember(const api::WatchEvent& event) {
  const Json& meta = Meta(event.object());
  KeyInto(meta, key_buffer_);
  if (event.type == Type::kDeleted) {
    known_.erase(key_buffer_);
    return;
  }
  auto it = known_.find(key_buffer_);
  if (it == known_.end()) it = known_.emplace(key_buffer_, Known{}).first;
  Known& known = it->second;
  AssignIfChanged(known.uid, TextView(meta, "uid"));
  AssignIfChanged(known.resource_version, TextView(meta, "resourceVersion"));
  auto refs = meta.find("ownerReferences");
  if (refs == meta.end() || refs->is_null()) {
    known.owner_references = nullptr;
    return;
  }
  const std::size_t hash = std::hash<Json>{}(*refs);
  if (known.owner_references && known.owner_references->hash == hash) return;
  if (!last_owner_references_ || last_owner_references_->hash != hash) {
    last_owner_references_ =
        std::make_shared<const OwnerReferences>(OwnerReferences{refs->dump(), hash});
  }
  known.owner_references = last_owner_references_;
}

api::WatchEvent Informer::Tombstone(const std::string& key, const Known& known) const {
  // Only the identity: what the consumer was told, not a state it never saw end.
  std::size_t slash = key.find('/');
  std::string ns = key.substr(0, slash);
  Json meta = {{"name", key.substr(slash + 1)},
               {"uid", known.uid},
               {"resourceVersion", known.resource_version}};
  if (!ns.empty()) meta["namespace"] = ns;
  if (known.owner_references) {
    meta["ownerReferences"] = Json::parse(known.owner_references->text);
  }
  Json object = {{"apiVersion", type_.ApiVersion()}, {"kind", type_.kind}, {"metadata", meta}};
  return {Type::kDeleted, std::move(object)};
}

void Informer::CloseWatch() {
  if (!watch_) return;
  watch_->SetNotify(nullptr);
  watch_->Stop();
  watch_.reset();
}

void ApplyToCache(std::map<std::string, Json>& cache, const api::WatchEvent& event) {
  if (event.type == api::WatchEvent::Type::kDeleted) {
    cache.erase(api::ObjectKey(event.object()));
  } else {
    cache[api::ObjectKey(event.object())] = event.object();
  }
}

}  // namespace pjemu::client
