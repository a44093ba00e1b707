#include "emulator/process/exec_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace pjemu::process {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

Result<std::string> FindExecutable(const std::string& argv0, const std::vector<std::string>& env) {
  if (argv0.find('/') != std::string::npos) {
    if (IsExecutableFile(argv0)) return argv0;
    const char* why =
        access(argv0.c_str(), F_OK) == 0 ? "permission denied" : "no such file or directory";
    return Status(Code::kNotFound, "exec: \"" + argv0 + "\": " + why);
  }
  std::string path = kDefaultPath;
  for (const auto& kv : env) {
    if (kv.rfind("PATH=", 0) == 0) path = kv.substr(5);
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    // An empty PATH entry means the current directory, as in execvp.
    std::string candidate =
        end > start ? std::string(std::string_view(path).substr(start, end - start)) : ".";
    candidate += "/";
    candidate += argv0;
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return Status(Code::kNotFound, "exec: \"" + argv0 + "\": executable file not found in $PATH");
}

}  // namespace pjemu::process
