// `pjemu validate -f FILE [-f FILE...] [-o yaml|json]`: loading, admission and defaulting only,
// with no cluster: prints each job as its controller sees it after the kind's defaulting
// (api::Workload::defaulted), or the errors (file:line) and exits 2.
#include <iostream>

#include "emulator/api/workload.h"
#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/inputs.h"
#include "emulator/cli/yaml_output.h"

namespace pjemu::cli {
namespace {

struct ValidateFlags {
  std::vector<std::string> files;
  std::string output = "yaml";
};

int RunValidate(const ValidateFlags& flags) {
  auto inputs = LoadInputs(flags.files);
  if (!inputs.ok()) {
    std::cerr << "error: " << inputs.status().message() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  int rc = 0;
  bool first = true;
  for (const manifest::Manifest& m : *inputs) {
    Status s = CheckManifest(m);
    if (!s.ok()) {
      std::cerr << "error: " << s.message() << "\n";
      rc = static_cast<int>(ExitCode::kInvalidInput);
      continue;
    }
    Json shown = m.object;
    if (auto type = TypeOf(m); type.ok() && (*type)->workload) {
      shown = (*type)->workload->defaulted(m.object);
    }
    if (flags.output == "json") {
      std::cout << shown.dump(4) << "\n";
    } else {
      if (!first) std::cout << "---\n";
      std::cout << ToYaml(shown);
    }
    first = false;
  }
  return rc;
}

}  // namespace

void SetupValidate(CLI::App& command, int& exit_code) {
  auto flags = std::make_shared<ValidateFlags>();
  command.add_option("-f,--filename", flags->files, "manifest file (YAML or JSON; - for stdin)")
      ->required();
  command.add_option("-o,--output", flags->output, "yaml|json")
      ->check(CLI::IsMember({"yaml", "json"}));
  command.footer("\nExample:\n  pjemu validate -f fixtures/seeds/pytorch-simple.yaml");
  command.callback([flags, &exit_code] { exit_code = RunValidate(*flags); });
}

}  // namespace pjemu::cli
