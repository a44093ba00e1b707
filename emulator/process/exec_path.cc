#include "emulator/process/exec_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
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

std::vector<std::string> PathCandidates(const std::string& argv0,
                                        const std::vector<std::string>& env) {
  std::string path = kDefaultPath;
  for (const auto& kv : env) {
    if (kv.rfind("PATH=", 0) == 0) path = kv.substr(5);
  }
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    // An empty PATH entry means the current directory, as in execvp.
    std::string dir = end > start ? path.substr(start, end - start) : ".";
    out.push_back(dir + "/" + argv0);
    start = end + 1;
  }
  return out;
}

Result<std::string> FindExecutable(const std::string& argv0, const std::vector<std::string>& env) {
  if (argv0.find('/') != std::string::npos) {
    if (IsExecutableFile(argv0)) return argv0;
    const char* why =
        access(argv0.c_str(), F_OK) == 0 ? "permission denied" : "no such file or directory";
    return Status(Code::kNotFound, "exec: \"" + argv0 + "\": " + why);
  }
  for (const std::string& candidate : PathCandidates(argv0, env)) {
    if (IsExecutableFile(candidate)) return candidate;
  }
  return Status(Code::kNotFound, "exec: \"" + argv0 + "\": executable file not found in $PATH");
}

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

std::string ErrnoText(int err) {
  std::string s = std::strerror(err);
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

}  // namespace pjemu::process
