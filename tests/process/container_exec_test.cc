// Given a running "container" process (here the test itself, without namespaces), an exec
// should run its argv with the given environment and working directory, carry stdin, stdout
// and stderr, report the exit code, and word a missing program or a gone container as a
// container runtime does.
#include "emulator/process/container_exec.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

namespace pjemu::process {
namespace {

std::string ReadAll(int fd) {
  std::string all;
  char buf[256];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) all.append(buf, static_cast<std::size_t>(n));
  return all;
}

ContainerExecSpec Spec(std::vector<std::string> argv) {
  ContainerExecSpec spec;
  spec.target = getpid();
  spec.argv = std::move(argv);
  spec.env = {"PATH=/usr/bin:/bin", "FOO=bar"};
  return spec;
}

TEST_CASE("an exec runs argv with the container's env and working dir", "[exec]") {
  ContainerExecSpec spec = Spec({"sh", "-c", "echo $FOO; pwd; echo oops >&2; exit 7"});
  spec.working_dir = "/tmp";
  auto p = StartInContainer(spec);
  REQUIRE(p.ok());
  CHECK((*p)->stdin_fd() == -1);
  CHECK(ReadAll((*p)->stdout_fd()) == "bar\n/tmp\n");
  CHECK(ReadAll((*p)->stderr_fd()) == "oops\n");
  CHECK((*p)->Wait() == 7);
}

TEST_CASE("an exec's stdin ends when it is closed", "[exec]") {
  ContainerExecSpec spec = Spec({"cat"});
  spec.with_stdin = true;
  auto p = StartInContainer(spec);
  REQUIRE(p.ok());
  REQUIRE(write((*p)->stdin_fd(), "abc", 3) == 3);
  (*p)->CloseStdin();
  CHECK(ReadAll((*p)->stdout_fd()) == "abc");
  CHECK((*p)->Wait() == 0);
}

TEST_CASE("a killed exec reports 128 + the signal", "[exec]") {
  auto p = StartInContainer(Spec({"sleep", "30"}));
  REQUIRE(p.ok());
  (*p)->Kill();
  CHECK((*p)->Wait() == 128 + SIGKILL);
}

TEST_CASE("a missing program or a gone container is an error before anything runs", "[exec]") {
  auto missing = StartInContainer(Spec({"no-such-program-pjemu"}));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == Code::kNotFound);
  CHECK(missing.status().message() ==
        "exec: \"no-such-program-pjemu\": executable file not found in $PATH");
  ContainerExecSpec bad_dir = Spec({"true"});
  bad_dir.working_dir = "/no/such/dir";
  CHECK(StartInContainer(bad_dir).status().message().rfind("chdir to cwd (\"/no/such/dir\")", 0) ==
        0);
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  ContainerExecSpec spec = Spec({"true"});
  spec.target = gone;
  CHECK(StartInContainer(spec).status().message() == "container not running");
  CHECK(StartInContainer(Spec({})).status().code() == Code::kInvalid);
}

}  // namespace
}  // namespace pjemu::process
