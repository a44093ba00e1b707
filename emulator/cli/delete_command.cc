// `pjemu delete (-f FILE | TYPE NAME... | TYPE/NAME...) [--ignore-not-found] [--wait]`: kubectl
// delete against `pjemu serve`, Background propagation (the job's pods and services go with it),
// waiting until the objects are gone as kubectl's default --wait=true does.
#include <iostream>
#include <thread>

#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/inputs.h"
#include "emulator/cli/remote.h"

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

struct Target {
  ObjectRef ref;
  std::string ns;
  std::string source;  // the file, for kubectl's "error when deleting" line
};

int RunDelete(const DeleteFlags& flags) {
  auto remote = Connect(flags.remote);
  if (!remote.ok()) {
    std::cerr << "error: " << remote.status().message() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  auto timeout = ParseDuration(flags.timeout);
  if (!timeout) {
    std::cerr << "error: invalid --timeout \"" << flags.timeout << "\"\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  std::vector<Target> targets;
  if (!flags.files.empty()) {
    auto inputs = LoadInputs(flags.files);
    if (!inputs.ok()) {
      std::cerr << "error: " << inputs.status().message() << "\n";
      return static_cast<int>(ExitCode::kInvalidInput);
    }
    for (const manifest::Manifest& m : *inputs) {
      auto type = TypeOf(m);
      if (!type.ok()) {
        std::cerr << "error: " << type.status().message() << "\n";
        return static_cast<int>(ExitCode::kInvalidInput);
      }
      targets.push_back({{*type, m.object["metadata"].value("name", "")},
                         m.object["metadata"].value("namespace", remote->ns), m.source});
    }
  } else {
    auto refs = ParseObjectArgs(flags.args);
    if (!refs.ok()) {
      std::cerr << "error: " << refs.status().message() << "\n";
      return static_cast<int>(ExitCode::kInvalidInput);
    }
    for (const ObjectRef& r : *refs) targets.push_back({r, remote->ns, ""});
  }
  int rc = 0;
  std::vector<Target> deleted;
  for (const Target& t : targets) {
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
    auto deadline = std::chrono::steady_clock::now() + *timeout;
    for (const Target& t : deleted) {
      while (remote->client->Get(*t.ref.type, t.ns, t.ref.name).ok()) {
        if (std::chrono::steady_clock::now() > deadline) {
          std::cerr << "error: timed out waiting for the deletion of " << t.ref.type->plural << "/"
                    << t.ref.name << "\n";
          return static_cast<int>(ExitCode::kFailed);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
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
