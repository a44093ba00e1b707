// The operator-injected env: validation names the variable; no env means one process.

#include "trainer/dist_env.h"

#include <map>

#include "fake_env.h"
#include "trainer/exit_codes.h"

// LibTorch pulls in glog, whose CHECK macro would shadow Catch's.
#undef CHECK
#include <catch2/catch.hpp>

namespace pjemu::trainer {
namespace {

EnvLookup Env(std::map<std::string, std::string> m) { return testing::FakeEnv(std::move(m)); }

TEST_CASE("no WORLD_SIZE means a single process", "[trainer]") {
  auto d = ReadDistEnv(Env({}));
  REQUIRE(d.ok());
  CHECK_FALSE(d->from_env);
  CHECK(d->world_size == 1);
  CHECK(d->rank == 0);
}

TEST_CASE("a full env parses", "[trainer]") {
  auto d = ReadDistEnv(Env({{"WORLD_SIZE", "3"},
                            {"RANK", "2"},
                            {"MASTER_ADDR", "pj-master-0"},
                            {"MASTER_PORT", "23456"}}));
  REQUIRE(d.ok());
  CHECK(d->from_env);
  CHECK(d->world_size == 3);
  CHECK(d->rank == 2);
  CHECK(d->master_addr == "pj-master-0");
  CHECK(d->master_port == 23456);
}

TEST_CASE("a wrong env is a usage error naming the variable", "[trainer]") {
  const std::map<std::string, std::string> good = {
      {"WORLD_SIZE", "2"}, {"RANK", "1"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "23456"}};
  struct Case {
    std::string key, value, names;
  };
  std::vector<Case> cases = {
      {"RANK", "2", "RANK=2"},
      {"RANK", "-1", "RANK=-1"},
      {"RANK", "one", "RANK"},
      {"WORLD_SIZE", "0", "WORLD_SIZE"},
      {"MASTER_PORT", "0", "MASTER_PORT"},
      {"MASTER_PORT", "70000", "MASTER_PORT"},
      {"MASTER_PORT", "80a", "MASTER_PORT"},
      {"MASTER_ADDR", "", "MASTER_ADDR"},
  };
  for (const auto& c : cases) {
    INFO(c.key << "=" << c.value);
    auto m = good;
    m[c.key] = c.value;
    auto d = ReadDistEnv(Env(m));
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().code() == Code::kInvalid);
    CHECK(ExitCodeFor(d.status()) == kExitUsage);
    CHECK_THAT(d.status().message(), Catch::Contains(c.names));
  }
  auto m = good;
  m.erase("MASTER_PORT");
  auto d = ReadDistEnv(Env(m));
  REQUIRE_FALSE(d.ok());
  CHECK_THAT(d.status().message(), Catch::Contains("MASTER_PORT is not set"));
}

TEST_CASE("peer failures map to a retryable exit code, bad input to a permanent one", "[trainer]") {
  CHECK(ExitCodeFor(Status(Code::kUnavailable, "peer")) == kExitPeerLost);
  CHECK(kExitPeerLost >= 128);
  CHECK(ExitCodeFor(Status(Code::kNotFound, "data")) == kExitError);
  CHECK(ExitCodeFor(InternalError("corrupt")) == kExitError);
  CHECK(kExitError < 128);
}

TEST_CASE("world size 1 without env needs no rendezvous, and mpi is refused", "[trainer]") {
  DistEnv d;
  auto c = ConnectComm(d, "gloo", std::chrono::milliseconds(1000));
  REQUIRE(c.ok());
  CHECK((*c)->world_size() == 1);
  auto mpi = ConnectComm(d, "mpi", std::chrono::milliseconds(1000));
  REQUIRE_FALSE(mpi.ok());
  CHECK_THAT(mpi.status().message(), Catch::Contains("mpi"));
}

}  // namespace
}  // namespace pjemu::trainer
