// `pjemu wait --for=condition=C[=V] | --for=delete (TYPE/NAME... | TYPE NAME... | -f FILE)
// [--timeout=30s]`: kubectl wait's condition test (the first condition of that type, case
// insensitive, status True unless =V says otherwise) against `pjemu serve`, through a watch.
#include <iostream>

#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/object_wait.h"

namespace pjemu::cli {
namespace {

struct WaitFlags {
  RemoteFlags remote;
  std::vector<std::string> args;
  std::vector<std::string> files;
  std::string for_condition;
  std::string timeout = "30s";
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool ConditionMet(const Json& obj, const std::string& type, const std::string& want) {
  if (!obj.contains("status") || !obj["status"].contains("conditions")) return false;
  for (const Json& c : obj["status"]["conditions"]) {
    if (EqualsIgnoreCase(c.value("type", ""), type)) {
      return EqualsIgnoreCase(c.value("status", ""), want);
    }
  }
  return false;
}

int RunWait(const WaitFlags& flags) {
  auto session = ConnectWithTimeout(flags.remote, flags.timeout);
  if (!session) return static_cast<int>(ExitCode::kInvalidInput);
  bool for_delete = flags.for_condition == "delete";
  std::string type, want = "True";
  if (!for_delete) {
    if (flags.for_condition.rfind("condition=", 0) != 0) {
      std::cerr << "error: --for must be \"delete\" or \"condition=condition-name[=condition-value]\"\n";
      return static_cast<int>(ExitCode::kInvalidInput);
    }
    type = flags.for_condition.substr(10);
    if (auto eq = type.find('='); eq != std::string::npos) {
      want = type.substr(eq + 1);
      type = type.substr(0, eq);
    }
  }
  auto targets = ResolveTargets(flags.files, flags.args, session->remote.ns);
  if (!targets.ok()) {
    std::cerr << "error: " << targets.status().message() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  auto deadline = std::chrono::steady_clock::now() + session->timeout;
  for (const Target& t : *targets) {
    // kubectl wait: a missing object is an error for conditions (NotFound), success for delete.
    bool missing = false;
    Status s = WaitForObject(
        *session->remote.client, t,
        [&](const Json* obj) {
          if (obj == nullptr) {
            missing = true;
            return true;
          }
          return !for_delete && ConditionMet(*obj, type, want);
        },
        deadline);
    if (s.code() == Code::kTimeout) {
      std::cerr << "error: timed out waiting for the condition on " << t.ref.type->plural << "/"
                << t.ref.name << "\n";
      return static_cast<int>(ExitCode::kFailed);
    }
    if (!s.ok()) {
      std::cerr << ErrorLine(s) << "\n";
      return static_cast<int>(ExitCode::kFailed);
    }
    if (missing && !for_delete) {
      std::cerr << "Error from server (NotFound): " << KindName(*t.ref.type) << " \""
                << t.ref.name << "\" not found\n";
      return static_cast<int>(ExitCode::kFailed);
    }
    std::cout << KindName(*t.ref.type) << "/" << t.ref.name << " condition met\n";
  }
  return 0;
}

}  // namespace

void SetupWait(CLI::App& command, int& exit_code) {
  auto flags = std::make_shared<WaitFlags>();
  AddRemoteFlags(command, &flags->remote);
  command.add_option("args", flags->args, "TYPE/NAME... or TYPE NAME...");
  command.add_option("-f,--filename", flags->files, "manifest file naming the objects");
  command.add_option("--for", flags->for_condition, "condition=NAME[=VALUE] or delete")->required();
  command.add_option("--timeout", flags->timeout, "give up after this long (default 30s)");
  command.footer(
      "\nExample:\n  pjemu wait --for=condition=Succeeded pytorchjob/pytorch-simple -n kubeflow "
      "--timeout=10m");
  command.callback([flags, &exit_code] { exit_code = RunWait(*flags); });
}

}  // namespace pjemu::cli
