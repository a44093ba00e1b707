#include "emulator/cli/object_writer.h"

#include <iostream>

#include "emulator/cli/cli.h"
#include "emulator/cli/inputs.h"

namespace pjemu::cli {

int WriteEachObject(const std::vector<std::string>& files, const RemoteFlags& flags,
                    std::string_view doing, const ObjectWrite& write) {
  auto inputs = LoadInputs(files);
  if (!inputs.ok()) {
    std::cerr << "error: " << inputs.status().message() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  auto remote = Connect(flags);
  if (!remote.ok()) {
    std::cerr << "error: " << remote.status().message() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  int rc = static_cast<int>(ExitCode::kOk);
  for (const manifest::Manifest& m : *inputs) {
    auto type = TypeOf(m);
    if (!type.ok()) {
      std::cerr << "error: " << type.status().message() << "\n";
      rc = static_cast<int>(ExitCode::kFailed);
      continue;
    }
    const std::string ns = m.object["metadata"].value("namespace", remote->ns);
    auto line = write(*remote, **type, ns, m);
    if (!line.ok()) {
      std::cerr << "Error from server (" << ReasonOf(line.status().code()) << "): error when "
                << doing << " \"" << m.source << "\": " << line.status().message() << "\n";
      rc = static_cast<int>(ExitCode::kFailed);
      continue;
    }
    std::cout << KindName(**type) << "/" << *line << "\n";
  }
  return rc;
}

}  // namespace pjemu::cli
