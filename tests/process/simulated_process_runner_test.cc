// Given scripted outcomes, the simulated runner should exit processes in virtual time.
#include "emulator/process/simulated_process_runner.h"

#include <catch2/catch.hpp>
#include <csignal>

namespace pjemu::process {
namespace {

ProcessSpec Spec(std::vector<std::string> argv, std::string log = "", std::int64_t mem = 0,
                 std::string dir = "") {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.log_path = std::move(log);
  spec.memory_limit_bytes = mem;
  spec.working_dir = std::move(dir);
  return spec;
}

TEST_CASE("simulated processes exit after their scripted virtual runtime", "[process]") {
  FakeClock clock;
  EventLoop loop(clock);
  SimulatedProcessRunner runner(loop, [](const ProcessSpec& spec) {
    SimulatedOutcome o;
    o.runtime = 30s;
    o.exit_code = spec.argv[0] == "fail" ? 3 : 0;
    return o;
  });
  std::vector<ProcessExit> exits;
  auto ok = runner.Start(Spec({"ok"}), [&](const ProcessExit& e) { exits.push_back(e); });
  auto fail = runner.Start(Spec({"fail"}), [&](const ProcessExit& e) { exits.push_back(e); });
  REQUIRE(ok.ok());
  REQUIRE(fail.ok());
  loop.RunFor(29s);
  CHECK(exits.empty());
  loop.RunFor(1s);
  REQUIRE(exits.size() == 2);
  CHECK(exits[0].exit_code == 0);
  CHECK(exits[1].exit_code == 3);
  CHECK(exits[1].finished_at == Time(std::chrono::seconds(FakeClock::kEpochSeconds)) + 30s);
  CHECK(runner.running() == 0);
}

TEST_CASE("simulated SIGTERM ends a process unless it ignores SIGTERM", "[process]") {
  FakeClock clock;
  EventLoop loop(clock);
  SimulatedProcessRunner runner(loop, [](const ProcessSpec& spec) {
    SimulatedOutcome o;
    o.runtime = 1h;
    o.ignores_sigterm = spec.argv[0] == "stubborn";
    return o;
  });
  std::map<std::string, ProcessExit> exits;
  auto a = runner.Start(Spec({"polite"}), [&](const ProcessExit& e) { exits["polite"] = e; });
  auto b = runner.Start(Spec({"stubborn"}), [&](const ProcessExit& e) { exits["stubborn"] = e; });
  REQUIRE(runner.Signal(*a, SIGTERM).ok());
  REQUIRE(runner.Signal(*b, SIGTERM).ok());
  loop.RunFor(1s);
  REQUIRE(exits.count("polite"));
  CHECK(exits["polite"].exit_code == 143);
  CHECK_FALSE(exits.count("stubborn"));
  REQUIRE(runner.Signal(*b, SIGKILL).ok());
  loop.RunUntilIdle();
  CHECK(exits["stubborn"].exit_code == 137);
  CHECK(runner.Signal(*b, SIGKILL).code() == Code::kNotFound);
}

TEST_CASE("simulated memory over the limit is OOMKilled", "[process]") {
  FakeClock clock;
  EventLoop loop(clock);
  SimulatedProcessRunner runner(loop, [](const ProcessSpec&) {
    SimulatedOutcome o;
    o.runtime = 10s;
    o.peak_memory_bytes = 100 << 20;
    return o;
  });
  ProcessExit exit;
  REQUIRE(runner.Start(Spec({"x"}, "", 50 << 20), [&](const ProcessExit& e) { exit = e; }).ok());
  loop.RunFor(10s);
  CHECK(exit.oom_killed);
  CHECK(exit.exit_code == 137);
}

}  // namespace
}  // namespace pjemu::process
