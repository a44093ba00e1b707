// Given a container's environment, argv[0] should resolve against the container's PATH.
#include "emulator/process/exec_path.h"

#include <catch2/catch.hpp>

namespace pjemu::process {
namespace {

TEST_CASE("FindExecutable searches the container's PATH, else the runc default", "[process]") {
  auto sh = FindExecutable("sh", {});
  REQUIRE(sh.ok());
  CHECK(sh->find("/sh") != std::string::npos);
  auto none = FindExecutable("sh", {"PATH=/nonexistent"});
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == Code::kNotFound);
  CHECK(none.status().message() == "exec: \"sh\": executable file not found in $PATH");
}

TEST_CASE("FindExecutable checks explicit paths", "[process]") {
  CHECK(FindExecutable("/bin/sh", {}).ok());
  auto missing = FindExecutable("/no/such/prog", {});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "exec: \"/no/such/prog\": no such file or directory");
}

}  // namespace
}  // namespace pjemu::process
