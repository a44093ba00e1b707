// Differential test: kubectl itself (`kubectl annotate --local -f FILE -o json` needs no
// cluster) turns a scalar-heavy manifest into JSON, and our loader must produce the same data.
// Uses tools/setup's kubectl 1.20, PJEMU_KUBECTL, or kubectl on PATH; warns when none exists.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "emulator/manifest/manifest.h"

namespace pjemu::manifest {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kOracleManifest = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: oracle
data:
  t1: yes
  t2: Yes
  t3: on
  t4: TRUE
  t5: y
  f1: no
  f2: Off
  f3: n
  n1: ~
  n2:
  n3: null
  s1: nil
  s2: tRUE
  s3: "yes"
  s4: '42'
  s5: 12:30
  s6: 2024-06-21T04:41:27Z
  s7: 500m
  s8: 1.2.3
  s9: 0o
  s10: _1
  s11: 1e400
  s12: <training image>
  i1: 0
  i2: -7
  i3: +7
  i4: 1_000
  i5: 0x1F
  i6: 0o17
  i7: 017
  i8: 0b101
  i9: -0b11
  i10: 08
  i11: 9223372036854775807
  i12: 0x_1F
  i13: 1_
  u1: 9223372036854775808
  u2: 18446744073709551616
  u3: -9223372036854775809
  d1: 1.5
  d2: .5
  d3: 1e3
  d4: 1.0
  d5: -2.5e-1
  d6: 1.
  d7: +.5
  d8: 1e-7
  d9: 123456789012345678901234567890
  tag1: !!str 12
  tag2: !!float 3
  block1: |
    a
    b
  block2: >-
    a
    b
  flow: [1, two, 'three', {k: on}]
  1.5: float key
  2: int key
  on: bool key
  base: &b {x: 1, w: 2}
  merged:
    x: 9
    <<: *b
  list-merge:
    <<: [{x: 1}, {x: 2, w: 3}]
)";

std::string FindKubectl() {
  if (const char* k = std::getenv("PJEMU_KUBECTL")) return k;
  for (const std::string& c :
       {std::string(PJEMU_BINARY_DIR) + "/kubectl-1.20/usr/bin/kubectl",
        std::string(PJEMU_SOURCE_DIR) + "/build/kubectl-1.20/usr/bin/kubectl"}) {
    if (fs::exists(c)) return c;
  }
  if (std::system("command -v kubectl >/dev/null 2>&1") == 0) return "kubectl";
  return "";
}

std::string Run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  pclose(pipe);
  return out;
}

// Equal as JSON values, comparing every number as a float64 (Go's view of it).
bool SameJson(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto& [k, v] : a.items()) {
      if (!b.contains(k) || !SameJson(v, b[k])) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SameJson(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

TEST_CASE("scalars and map keys and merges load exactly as kubectl reads them", "[manifest]") {
  std::string kubectl = FindKubectl();
  if (kubectl.empty()) {
    WARN("kubectl not found (run tools/setup); the kubectl comparison did not run");
    return;
  }
  fs::path file =
      fs::temp_directory_path() / ("pjemu-oracle-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(file) << kOracleManifest;
  std::string out = Run(kubectl + " annotate --local -f " + file.string() + " z=1 -o json 2>&1");
  fs::remove(file);
  Json theirs = Json::parse(out, nullptr, /*allow_exceptions=*/false);
  INFO(kubectl << " said: " << out);
  REQUIRE(theirs.is_object());

  auto ours = LoadManifestText(kOracleManifest, "oracle.yaml");
  INFO(ours.status().message());
  REQUIRE(ours.ok());
  const Json& want = theirs["data"];
  const Json& got = ours->at(0).object["data"];
  for (auto& [key, value] : want.items()) {
    CAPTURE(key, value.dump(), got.contains(key) ? got[key].dump() : "<missing>");
    CHECK((got.contains(key) && SameJson(value, got[key])));
  }
  CHECK(want.size() == got.size());
}

}  // namespace
}  // namespace pjemu::manifest
