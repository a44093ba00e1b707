// Shared helpers of the persistence tests: a fresh data directory per test process and case,
// Must(), and builders for the objects the tests write.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::persist::testing {

template <typename T>
T Must(Result<T> r) {
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(r).value();
}

// <build>/test-persist/<name>-<pid>, emptied.
inline std::string FreshDir(const std::string& name) {
  std::string dir = std::string(PJEMU_BINARY_DIR) + "/test-persist/" + name + "-" +
                    std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline const api::ResourceType& ConfigMaps() { return *api::FindResource("", "configmaps"); }

inline Json ConfigMap(const std::string& name, const std::string& value) {
  return {{"metadata", {{"name", name}}}, {"data", {{"v", value}}}};
}

}  // namespace pjemu::persist::testing
