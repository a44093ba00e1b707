#include "emulator/cli/object_wait.h"

#include <spdlog/logger.h>

#include <iostream>
#include <optional>

#include "emulator/cli/inputs.h"
#include "emulator/client/informer.h"
#include "emulator/common/event_loop.h"

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

// The informer the wait follows: the one object, by name. Errors that end the wait are reported
// by the command, so the informer's own log lines stay off the user's terminal.
client::InformerOptions WaitInformerOptions(const Target& t) {
  client::InformerOptions options;
  options.name = "wait " + t.ref.type->plural + "/" + t.ref.name;
  options.ns = t.ns;
  options.field_selector = "metadata.name=" + t.ref.name;
  // After a broken stream, relist after a short pause so that a server going away is not
  // hammered.
  options.initial_backoff = 200ms;
  options.max_backoff = 5s;
  options.logger = std::make_shared<spdlog::logger>("wait");  // no sinks: silent
  return options;
}

}  // namespace

Status WaitForObject(client::Client& client, const Target& target,
                     const std::function<bool(const Json*)>& done,
                     std::chrono::steady_clock::time_point deadline) {
  // kubectl's UntilWithSync on a loop of its own: the informer lists, watches and relists;
  // its notifications (from the HttpClient's reader thread) wake the loop.
  RealClock clock;
  EventLoop loop(clock);
  std::optional<Status> result;
  client::InformerOptions options = WaitInformerOptions(target);
  options.on_list = [&](std::size_t items) {
    if (items == 0 && !result && done(nullptr)) result = Status::Ok();
  };
  options.on_error = [&](client::InformerStep step, const Status& status) {
    // A refused List or Watch ends the wait; a broken stream is relisted.
    if (step != client::InformerStep::kStream && !result) result = status;
  };
  client::Informer informer(client, loop, *target.ref.type, std::move(options),
                            [&](const api::WatchEvent& event) {
                              if (result) return;
                              bool gone = event.type == api::WatchEvent::Type::kDeleted;
                              if (done(gone ? nullptr : &event.object())) result = Status::Ok();
                            });
  if (Status started = informer.Start(); !started.ok()) return result ? *result : started;
  informer.Drain();
  auto left = std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now());
  loop.RunUntil([&] { return result.has_value(); }, left);
  informer.Stop();
  return result ? *result : Status(Code::kTimeout, "timed out");
}

}  // namespace pjemu::cli
