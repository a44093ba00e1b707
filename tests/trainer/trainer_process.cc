#include "trainer_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace pjemu::trainer::testing {

std::string TrainerPath() { return std::string(PJEMU_BINARY_DIR) + "/bin/pjemu-trainer"; }

Child Start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
            const std::string& out_path) {
  Child c;
  c.out = out_path;
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) merged[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const char* k : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) merged.erase(k);
  for (const auto& [k, v] : env) {
    if (v.empty()) {
      merged.erase(k);
    } else if (v == kEmptyValue) {
      merged[k] = "";
    } else {
      merged[k] = v;
    }
  }
  std::vector<std::string> envs;
  for (const auto& [k, v] : merged) envs.push_back(k + "=" + v);
  std::vector<std::string> argv = {TrainerPath()};
  argv.insert(argv.end(), args.begin(), args.end());

  c.pid = fork();
  if (c.pid == 0) {
    int fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> av, ev;
    for (auto& a : argv) av.push_back(a.data());
    av.push_back(nullptr);
    for (auto& e : envs) ev.push_back(e.data());
    ev.push_back(nullptr);
    execve(av[0], av.data(), ev.data());
    _exit(127);
  }
  return c;
}

int Wait(Child& c, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    int status = 0;
    pid_t r = waitpid(c.pid, &status, WNOHANG);
    if (r == c.pid) {
      c.pid = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -2;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(c.pid, SIGKILL);
      waitpid(c.pid, &status, 0);
      c.pid = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool WaitForText(const Child& c, const std::string& text, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ReadFile(c.out).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace pjemu::trainer::testing
