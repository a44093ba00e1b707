// `pjemu version [-o json]`: the emulator's version and what it emulates.
#include <iostream>

#include "emulator/cli/commands.h"
#include "emulator/common/status.h"

#ifndef PJEMU_VERSION
#define PJEMU_VERSION "0.0.0-dev"
#endif

namespace pjemu::cli {

void SetupVersion(CLI::App& command, int& exit_code) {
  auto output = std::make_shared<std::string>();
  command.add_option("-o,--output", *output, "json for a machine-readable answer")
      ->check(CLI::IsMember({"json"}));
  command.callback([output, &exit_code] {
    if (*output == "json") {
      std::cout << Json{{"pjemu", PJEMU_VERSION},
                        {"trainingOperator", "v1.9.4"},
                        {"pytorchJobApi", "kubeflow.org/v1"}}
                       .dump(2)
                << "\n";
    } else {
      std::cout << "pjemu version " << PJEMU_VERSION << "\n"
                << "emulates: Kubeflow Training Operator v1.9.4 (kubeflow.org/v1 PyTorchJob)\n";
    }
    exit_code = 0;
  });
}

}  // namespace pjemu::cli
