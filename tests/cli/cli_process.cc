#include "tests/cli/cli_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace pjemu::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int Counter() {
  static int n = 0;
  return ++n;
}

}  // namespace

std::string PjemuBinary() { return std::string(PJEMU_BINARY_DIR) + "/bin/pjemu"; }

std::string TempDir(const std::string& name) {
  std::string dir = std::string(PJEMU_BINARY_DIR) + "/test-cli/" + name + "-" +
                    std::to_string(::getpid()) + "-" + std::to_string(Counter());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string WriteFile(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::trunc) << text;
  return path;
}

CliProcess::CliProcess(const std::vector<std::string>& args) {
  std::string dir = TempDir("proc");
  out_path_ = dir + "/stdout";
  err_path_ = dir + "/stderr";
  std::vector<std::string> argv = {PjemuBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_ = ::fork();
  if (pid_ == 0) {
    int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(err, 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
}

CliProcess::~CliProcess() {
  if (pid_ > 0 && exit_code_ == -2) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

void CliProcess::Signal(int sig) { ::kill(pid_, sig); }

int CliProcess::Wait(std::chrono::milliseconds limit) {
  if (exit_code_ != -2) return exit_code_;
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      exit_code_ = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string CliProcess::Out() const { return ReadAll(out_path_); }
std::string CliProcess::Err() const { return ReadAll(err_path_); }

CliResult RunPjemu(const std::vector<std::string>& args, std::chrono::milliseconds limit) {
  CliProcess p(args);
  CliResult r;
  r.exit_code = p.Wait(limit);
  r.out = p.Out();
  r.err = p.Err();
  return r;
}

std::vector<pid_t> ProcessesWithEnv(const std::string& marker) {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::string env = ReadAll(entry.path().string() + "/environ");
    std::size_t start = 0;
    while (start < env.size()) {
      std::size_t end = env.find('\0', start);
      if (end == std::string::npos) end = env.size();
      if (env.compare(start, end - start, marker) == 0) {
        pids.push_back(static_cast<pid_t>(std::stoi(name)));
        break;
      }
      start = end + 1;
    }
  }
  return pids;
}

}  // namespace pjemu::testing
