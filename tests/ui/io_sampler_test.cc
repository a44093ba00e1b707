// The console's network and storage I/O figures: /proc/<pid>/io and /proc/<pid>/net/dev parsed,
// and rates of a real process group between two samples.
#include "emulator/process/io_sampler.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

namespace pjemu::process {
namespace {

TEST_CASE("io sampler: /proc/<pid>/io and net/dev texts") {
  IoCounters c = ParseProcIo(
      "rchar: 9000\nwchar: 800\nsyscr: 12\nsyscw: 34\nread_bytes: 4096\nwrite_bytes: 8192\n"
      "cancelled_write_bytes: 0\n");
  CHECK(c.syscr == 12);
  CHECK(c.syscw == 34);
  CHECK(c.read_bytes == 4096);
  CHECK(c.write_bytes == 8192);
  auto [rx, tx] = ParseNetDev(
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
      "    lo: 5000      50    0    0    0     0          0         0     5000      50    0    0    0     0       0          0\n"
      "  eth0: 1200      10    0    0    0     0          0         0      300       3    0    0    0     0       0          0\n"
      "veth-a:   34       1    0    0    0     0          0         0       66       1    0    0    0     0       0          0\n");
  CHECK(rx == 1234);
  CHECK(tx == 366);
}

TEST_CASE("io sampler: write calls of a process group become a rate") {
  int go[2], done[2];
  REQUIRE(::pipe(go) == 0);
  REQUIRE(::pipe(done) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::setpgid(0, 0);
    char b;
    if (::read(go[0], &b, 1) != 1) ::_exit(1);
    int null = ::open("/dev/null", O_WRONLY);
    for (int i = 0; i < 500; ++i) {
      if (::write(null, "x", 1) != 1) ::_exit(1);  // 500 write calls
    }
    if (::write(done[1], "x", 1) != 1) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  ::setpgid(child, child);
  FakeClock clock;
  IoSampler sampler(clock, [&] { return std::vector<std::pair<Pid, std::string>>{{child, "ns/pod/c"}}; });
  sampler.SampleOnce();
  REQUIRE(::write(go[1], "g", 1) == 1);
  char b;
  REQUIRE(::read(done[0], &b, 1) == 1);
  clock.Advance(std::chrono::seconds(2));
  sampler.SampleOnce();
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  auto samples = sampler.Samples("ns/pod/");
  REQUIRE(samples.count("c") == 1);
  REQUIRE(samples["c"].size() == 2);
  CHECK(samples["c"][0].writes_per_s == 0);  // the first sample has nothing to compare with
  CHECK(samples["c"][1].writes_per_s >= 250.0);  // >= 501 calls in 2 s
  CHECK(samples["c"][1].writes_per_s < 400.0);
  CHECK(samples["c"][1].rx_bytes_per_s >= 0);
}

}  // namespace
}  // namespace pjemu::process
