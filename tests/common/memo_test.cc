// Memo: a bounded memo of a pure function computes each key once while it is remembered, and
// forgets everything when full.
#include "emulator/common/memo.h"

#include <catch2/catch.hpp>
#include <string>

namespace pjemu {
namespace {

TEST_CASE("a memo computes each key once, until it is full", "[common]") {
  Memo<std::string, 4> memo;
  int computed = 0;
  auto upper = [&](const std::string& key) {
    return memo.Get(key, [&] {
      ++computed;
      std::string out = key;
      for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return out;
    });
  };
  CHECK(upper("a") == "A");
  CHECK(upper("a") == "A");
  CHECK(upper("b") == "B");
  CHECK(computed == 2);
  CHECK(upper("c") == "C");
  CHECK(upper("d") == "D");
  CHECK(computed == 4);
  // Full: the next new key empties it, so "a" is computed again.
  CHECK(upper("e") == "E");
  CHECK(upper("a") == "A");
  CHECK(computed == 6);
  CHECK(upper("e") == "E");
  CHECK(computed == 6);
}

}  // namespace
}  // namespace pjemu
