// pjemu-test-program: the small program the process and kubelet tests run as a "container".
// Each flag is an action, run in the order given:
//   --print TEXT        write TEXT and a newline to stdout
//   --stderr TEXT       write TEXT and a newline to stderr
//   --print-env NAME    print NAME=value (or NAME unset)
//   --print-cwd         print the working directory
//   --print-args        print every argument after this one on its own line, then stop
//   --sleep-ms N        sleep N milliseconds
//   --ignore-sigterm    ignore SIGTERM from now on
//   --alloc-mb N        allocate and touch N MiB
//   --fork-child        fork a child that sleeps forever (same process group); print its pid
//   --pid-file PATH     append this process's pid to PATH
//   --append PATH TEXT  append TEXT and a newline to PATH
//   --listen-env NAME   bind a TCP socket on 0.0.0.0:$NAME (kept open); exit 98 if in use
//   --exit N            exit with code N now
// With no --exit the program exits 0 after the last action.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<char*> blocks;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : "";
    if (flag == "--print") {
      std::printf("%s\n", value), ++i;
    } else if (flag == "--stderr") {
      std::fprintf(stderr, "%s\n", value), ++i;
    } else if (flag == "--print-env") {
      const char* v = std::getenv(value);
      if (v) {
        std::printf("%s=%s\n", value, v);
      } else {
        std::printf("%s unset\n", value);
      }
      ++i;
    } else if (flag == "--print-cwd") {
      char buf[4096];
      std::printf("%s\n", getcwd(buf, sizeof buf) ? buf : "?");
    } else if (flag == "--print-args") {
      for (int j = i + 1; j < argc; ++j) std::printf("%s\n", argv[j]);
      break;
    } else if (flag == "--sleep-ms") {
      std::fflush(nullptr);
      usleep(static_cast<useconds_t>(std::atol(value)) * 1000), ++i;
    } else if (flag == "--ignore-sigterm") {
      signal(SIGTERM, SIG_IGN);
    } else if (flag == "--alloc-mb") {
      std::size_t bytes = static_cast<std::size_t>(std::atol(value)) << 20;
      char* p = static_cast<char*>(std::malloc(bytes));
      if (p) std::memset(p, 1, bytes), blocks.push_back(p);
      ++i;
    } else if (flag == "--fork-child") {
      std::fflush(nullptr);
      pid_t pid = fork();
      if (pid == 0) {
        while (true) pause();
      }
      std::printf("child %d\n", pid);
    } else if (flag == "--pid-file") {
      if (FILE* f = std::fopen(value, "a")) std::fprintf(f, "%d\n", getpid()), std::fclose(f);
      ++i;
    } else if (flag == "--append") {
      const char* text = i + 2 < argc ? argv[i + 2] : "";
      if (FILE* f = std::fopen(value, "a")) std::fprintf(f, "%s\n", text), std::fclose(f);
      i += 2;
    } else if (flag == "--listen-env") {
      const char* port = std::getenv(value);
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_ANY);
      addr.sin_port = htons(static_cast<uint16_t>(port ? std::atoi(port) : 0));
      if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
          listen(fd, 1) != 0) {
        std::printf("bind %s failed\n", port ? port : "?");
        std::fflush(nullptr);
        return 98;
      }
      std::printf("listening on %s\n", port ? port : "?");
      ++i;
    } else if (flag == "--exit") {
      std::fflush(nullptr);
      return std::atoi(value);
    } else {
      std::fprintf(stderr, "pjemu-test-program: unknown flag %s\n", flag.c_str());
      return 2;
    }
    std::fflush(nullptr);
  }
  for (char* p : blocks) std::free(p);  // a leak would fail the sanitizer build's run (exit 1)
  return 0;
}
