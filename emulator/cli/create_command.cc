// `pjemu create -f FILE [-n NS] [--dry-run=server]`: kubectl create against `pjemu serve`.
// Prints "pytorchjob.kubeflow.org/NAME created" per object; refusals as kubectl prints them.
#include "emulator/cli/commands.h"
#include "emulator/cli/object_writer.h"

namespace pjemu::cli {
namespace {

struct CreateFlags {
  RemoteFlags remote;
  std::vector<std::string> files;
  std::string dry_run = "none";
};

int RunCreate(const CreateFlags& flags) {
  api::WriteOptions wo;
  wo.dry_run = flags.dry_run == "server";
  return WriteEachObject(flags.files, flags.remote, "creating",
                         [&](Remote& remote, const api::ResourceType& type, const std::string& ns,
                             const manifest::Manifest& m) -> Result<std::string> {
                           ASSIGN_OR_RETURN(Json created,
                                            remote.client->Create(type, ns, m.object, wo));
                           return created["metadata"].value("name", "") + " created" +
                                  (wo.dry_run ? " (server dry run)" : "");
                         });
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
