// `pjemu create -f FILE [-n NS] [--dry-run=server]`: kubectl create against `pjemu serve`.
// Prints "pytorchjob.kubeflow.org/NAME created" per object; refusals as kubectl prints them.
#include <iostream>

#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/inputs.h"
#include "emulator/cli/remote.h"

namespace pjemu::cli {
namespace {

struct CreateFlags {
  RemoteFlags remote;
  std::vector<std::string> files;
  std::string dry_run = "none";
};

int RunCreate(const CreateFlags& flags) {
  auto inputs = LoadInputs(flags.files);
  if (!inputs.ok()) {
    std::cerr << "error: " << inputs.status().message() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  auto remote = Connect(flags.remote);
  if (!remote.ok()) {
    std::cerr << "error: " << remote.status().message() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  int rc = 0;
  for (const manifest::Manifest& m : *inputs) {
    auto type = TypeOf(m);
    if (!type.ok()) {
      std::cerr << "error: " << type.status().message() << "\n";
      rc = static_cast<int>(ExitCode::kFailed);
      continue;
    }
    std::string ns = m.object["metadata"].value("namespace", remote->ns);
    api::WriteOptions wo;
    wo.dry_run = flags.dry_run == "server";
    auto created = remote->client->Create(**type, ns, m.object, wo);
    if (!created.ok()) {
      std::cerr << "Error from server (" << ReasonOf(created.status().code())
                << "): error when creating \"" << m.source << "\": " << created.status().message()
                << "\n";
      rc = static_cast<int>(ExitCode::kFailed);
      continue;
    }
    std::cout << KindName(**type) << "/" << (*created)["metadata"].value("name", "") << " created"
              << (wo.dry_run ? " (server dry run)" : "") << "\n";
  }
  return rc;
}

}  // namespace

void SetupCreate(CLI::App& command, int& exit_code) {
  auto flags = std::make_shared<CreateFlags>();
  AddRemoteFlags(command, &flags->remote);
  command.add_option("-f,--filename", flags->files, "manifest file (YAML or JSON; - for stdin)")
      ->required();
  command.add_option("--dry-run", flags->dry_run, "none|server")
      ->check(CLI::IsMember({"none", "server"}));
  command.footer("\nExample:\n  pjemu create -f fixtures/seeds/pytorch-simple.yaml");
  command.callback([flags, &exit_code] { exit_code = RunCreate(*flags); });
}

}  // namespace pjemu::cli
