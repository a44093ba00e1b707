#include "emulator/cli/object_wait.h"

#include <iostream>
#include <thread>

#include "emulator/cli/inputs.h"

namespace pjemu::cli {

std::optional<TimedRemote> ConnectWithTimeout(const RemoteFlags& flags,
                                              const std::string& timeout_text) {
  auto remote = Connect(flags);
  if (!remote.ok()) {
    std::cerr << "error: " << remote.status().message() << "\n";
    return std::nullopt;
  }
  auto timeout = ParseDuration(timeout_text);
  if (!timeout) {
    std::cerr << "error: invalid --timeout \"" << timeout_text << "\"\n";
    return std::nullopt;
  }
  return TimedRemote{std::move(*remote), *timeout};
}

Result<std::vector<Target>> ResolveTargets(const std::vector<std::string>& files,
                                           const std::vector<std::string>& args,
                                           const std::string& default_ns) {
  std::vector<Target> targets;
  if (files.empty()) {
    ASSIGN_OR_RETURN(std::vector<ObjectRef> refs, ParseObjectArgs(args));
    for (const ObjectRef& r : refs) targets.push_back({r, default_ns, ""});
    return targets;
  }
  ASSIGN_OR_RETURN(std::vector<manifest::Manifest> inputs, LoadInputs(files));
  for (const manifest::Manifest& m : inputs) {
    ASSIGN_OR_RETURN(const api::ResourceType* type, TypeOf(m));
    const Json meta = m.object.value("metadata", Json::object());
    targets.push_back({{type, meta.value("name", "")},
                       type->namespaced ? meta.value("namespace", default_ns) : "",
                       m.source});
  }
  return targets;
}

namespace {

// One list + watch round: Ok when done held, kTimeout at the deadline, the server's Status when
// it refused; *relist when the watch ended or expired and a new round should start.
Status WaitOnce(client::Client& client, const Target& t,
                const std::function<bool(const Json*)>& done,
                std::chrono::steady_clock::time_point deadline, bool* relist) {
  *relist = false;
  api::ListOptions list_options;
  list_options.field_selector = "metadata.name=" + t.ref.name;
  ASSIGN_OR_RETURN(Json list, client.List(*t.ref.type, t.ns, list_options));
  const Json& items = list.value("items", Json::array());
  if (done(items.empty() ? nullptr : &items[0])) return Status::Ok();
  api::WatchOptions watch_options;
  watch_options.field_selector = list_options.field_selector;
  watch_options.resource_version =
      list.value("metadata", Json::object()).value("resourceVersion", "");
  ASSIGN_OR_RETURN(std::shared_ptr<api::Watch> watch,
                   client.Watch(*t.ref.type, t.ns, watch_options));
  struct StopOnExit {
    api::Watch& w;
    ~StopOnExit() { w.Stop(); }
  } stop{*watch};
  while (true) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return Status(Code::kTimeout, "timed out");
    auto ev = watch->Next(std::chrono::duration_cast<Duration>(deadline - now));
    if (!ev) {
      if (watch->Done()) {
        *relist = true;
        return Status(Code::kUnavailable, "the watch ended");
      }
      continue;
    }
    using Type = api::WatchEvent::Type;
    switch (ev->type) {
      case Type::kAdded:
      case Type::kModified:
        if (done(&ev->object)) return Status::Ok();
        break;
      case Type::kDeleted:
        if (done(nullptr)) return Status::Ok();
        break;
      case Type::kBookmark:
        break;
      case Type::kError:
        // 410 Expired and a dropped stream: start over from a fresh list, as client-go does.
        *relist = true;
        return Status::FromStatusJson(ev->object, 0);
    }
  }
}

}  // namespace

Status WaitForObject(client::Client& client, const Target& target,
                     const std::function<bool(const Json*)>& done,
                     std::chrono::steady_clock::time_point deadline) {
  while (true) {
    bool relist = false;
    Status s = WaitOnce(client, target, done, deadline, &relist);
    if (!relist) return s;
    // The watch ended (server timeout, expired resourceVersion): relist, after a short pause
    // so that a server going away is not hammered.
    if (std::chrono::steady_clock::now() >= deadline) return Status(Code::kTimeout, "timed out");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace pjemu::cli
