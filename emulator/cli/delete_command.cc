// `pjemu delete (-f FILE | TYPE NAME... | TYPE/NAME...) [--ignore-not-found] [--wait]`: kubectl
// delete against `pjemu serve`, Background propagation (the job's pods and services go with it),
// waiting (through a watch) until the objects are gone as kubectl's default --wait=true does.
#include <iostream>

#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/object_wait.h"

namespace pjemu::cli {
namespace {

struct DeleteFlags {
  RemoteFlags remote;
  std::vector<std::string> files;
  std::vector<std::string> args;
  bool ignore_not_found = false;
  bool wait = true;
  std::string timeout = "60s";
};

int RunDelete(const DeleteFlags& flags) {
  auto session = ConnectWithTimeout(flags.remote, flags.timeout);
  if (!session) return static_cast<int>(ExitCode::kInvalidInput);
  Remote* remote = &session->remote;
  auto targets = ResolveTargets(flags.files, flags.args, remote->ns);
  if (!targets.ok()) {
    std::cerr << "error: " << targets.status().message() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  int rc = 0;
  std::vector<Target> deleted;
  for (const Target& t : *targets) {
    api::DeleteOptions options;
    options.propagation_policy = "Background";
    auto result = remote->client->Delete(*t.ref.type, t.ns, t.ref.name, options);
    if (!result.ok()) {
      if (result.status().code() == Code::kNotFound && flags.ignore_not_found) continue;
      std::string where = t.source.empty() ? "" : "error when deleting \"" + t.source + "\": ";
      std::cerr << "Error from server (" << ReasonOf(result.status().code()) << "): " << where
                << result.status().message() << "\n";
      rc = static_cast<int>(ExitCode::kFailed);
      continue;
    }
    std::cout << KindName(*t.ref.type) << " \"" << t.ref.name << "\" deleted\n";
    deleted.push_back(t);
  }
  if (flags.wait) {
    auto deadline = std::chrono::steady_clock::now() + session->timeout;
    for (const Target& t : deleted) {
      Status s = WaitForObject(*remote->client, t, [](const Json* obj) { return obj == nullptr; },
                               deadline);
      if (s.code() == Code::kTimeout) {
        std::cerr << "error: timed out waiting for the deletion of " << t.ref.type->plural << "/"
                  << t.ref.name << "\n";
        return static_cast<int>(ExitCode::kFailed);
      }
      if (!s.ok()) {
        std::cerr << ErrorLine(s) << "\n";
        return static_cast<int>(ExitCode::kFailed);
      }
    }
  }
  return rc;
}

}  // namespace

void SetupDelete(CLI::App& command, int& exit_code) {
  auto flags = std::make_shared<DeleteFlags>();
  AddRemoteFlags(command, &flags->remote);
  command.add_option("-f,--filename", flags->files, "manifest file naming the objects");
  command.add_option("args", flags->args, "TYPE NAME... or TYPE/NAME...");
  command.add_flag("--ignore-not-found", flags->ignore_not_found, "treat NotFound as success");
  command.add_option("--wait", flags->wait, "wait until the objects are gone (default true)");
  command.add_option("--timeout", flags->timeout, "how long --wait waits (default 60s)");
  command.footer(
      "\nExamples:\n  pjemu delete -f fixtures/seeds/pytorch-simple.yaml\n"
      "  pjemu delete pytorchjob pytorch-simple -n kubeflow");
  command.callback([flags, &exit_code] { exit_code = RunDelete(*flags); });
}

}  // namespace pjemu::cli
