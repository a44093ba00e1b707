// Test helper: an EnvLookup over a fixed map (absent keys are unset). Thread safety: a value.
#pragma once

#include <map>
#include <string>

#include "trainer/dist_env.h"

namespace pjemu::trainer::testing {

inline EnvLookup FakeEnv(std::map<std::string, std::string> m) {
  return [m = std::move(m)](const std::string& k) -> std::optional<std::string> {
    auto it = m.find(k);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace pjemu::trainer::testing
