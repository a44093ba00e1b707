// `pjemu wait --for=condition=C[=V] | --for=delete (TYPE/NAME... | TYPE NAME... | -f FILE)
// [--timeout=30s]`: kubectl wait's condition test (the first condition of that type, case
// insensitive, status True unless =V says otherwise) against `pjemu serve`.
#include <iostream>
#include <thread>

#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/inputs.h"
#include "emulator/cli/remote.h"

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
  std::vector<ObjectRef> refs;
  if (!flags.files.empty()) {
    auto inputs = LoadInputs(flags.files);
    if (!inputs.ok()) {
      std::cerr << "error: " << inputs.status().message() << "\n";
      return static_cast<int>(ExitCode::kInvalidInput);
    }
    for (const auto& m : *inputs) {
      auto t = TypeOf(m);
      if (t.ok()) refs.push_back({*t, m.object["metadata"].value("name", "")});
    }
  } else {
    auto parsed = ParseObjectArgs(flags.args);
    if (!parsed.ok()) {
      std::cerr << "error: " << parsed.status().message() << "\n";
      return static_cast<int>(ExitCode::kInvalidInput);
    }
    refs = *parsed;
  }
  auto deadline = std::chrono::steady_clock::now() + *timeout;
  for (const ObjectRef& ref : refs) {
    while (true) {
      auto obj = remote->client->Get(*ref.type, remote->ns, ref.name);
      if (for_delete && !obj.ok() && obj.status().code() == Code::kNotFound) {
        std::cout << KindName(*ref.type) << "/" << ref.name << " condition met\n";
        break;
      }
      if (!obj.ok() && !for_delete) {
        std::cerr << ErrorLine(obj.status()) << "\n";
        return static_cast<int>(ExitCode::kFailed);
      }
      if (!for_delete && ConditionMet(*obj, type, want)) {
        std::cout << KindName(*ref.type) << "/" << ref.name << " condition met\n";
        break;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        std::cerr << "error: timed out waiting for the condition on " << ref.type->plural << "/"
                  << ref.name << "\n";
        return static_cast<int>(ExitCode::kFailed);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
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
