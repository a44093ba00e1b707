// Differential test: kubectl decodes a Pod's resources.limits through resource.Quantity
// (`kubectl set resources --local ... -o json` needs no cluster) and prints Quantity.String();
// ours must print the same, and reject exactly what it rejects, with the same message.
// Uses tools/setup's kubectl 1.20, PJEMU_KUBECTL, or kubectl on PATH; warns when none exists.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "emulator/api/resource_quantity.h"

namespace pjemu::api {
namespace {

namespace fs = std::filesystem;

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

// Runs kubectl on a Pod whose limits are a.io/q<i>: <quantities[i]>; returns its output.
std::string KubectlLimits(const std::string& kubectl, const std::vector<std::string>& quantities) {
  std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers:\n  - name: c\n"
      "    image: i\n    resources:\n      limits:\n";
  for (size_t i = 0; i < quantities.size(); ++i) {
    yaml += "        a.io/q" + std::to_string(i) + ": " + Json(quantities[i]).dump() + "\n";
  }
  fs::path file =
      fs::temp_directory_path() / ("pjemu-quantity-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(file) << yaml;
  std::string command =
      kubectl + " set resources --local -f " + file.string() + " --limits=cpu=1 -o json 2>&1";
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
    pclose(pipe);
  }
  fs::remove(file);
  return out;
}

std::vector<std::string> Candidates() {
  std::vector<std::string> out = {"0",
                                  "1",
                                  "500m",
                                  "0.5",
                                  ".5",
                                  "1.5",
                                  "2Gi",
                                  "1024Mi",
                                  "1.5Gi",
                                  "0.5Ki",
                                  "100M",
                                  "1000",
                                  "1e3",
                                  "1E3",
                                  "1.5e3",
                                  "1e-3",
                                  "+1",
                                  "-1",
                                  "01",
                                  "100u",
                                  "1n",
                                  "12E",
                                  "1.",
                                  "-",
                                  "Gi",
                                  "1e30",
                                  "16Ei",
                                  "1k",
                                  "5G",
                                  "-500m",
                                  "0.0000000001",
                                  "123456789012345678901234567890",
                                  "1.0000000001Ki",
                                  "3e-12",
                                  "8Ei",
                                  "1.2.3",
                                  "5 Gi",
                                  "1Zi",
                                  "1ki",
                                  "1mi",
                                  "1e",
                                  "1KiB",
                                  "1--1",
                                  "abc"};
  // Seeded random strings over the quantity alphabet, to reach corners no one listed.
  std::mt19937 rng(1234567);
  const std::string alphabet = "0123456789.+-eEinumkKMGTP";
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    for (size_t len = 1 + rng() % 10; s.size() < len;)
      s.push_back(alphabet[rng() % alphabet.size()]);
    out.push_back(s);
  }
  return out;
}

TEST_CASE("quantities print and fail exactly as kubectl's resource.Quantity", "[quantity]") {
  std::string kubectl = FindKubectl();
  if (kubectl.empty()) {
    WARN("kubectl not found (run tools/setup); the kubectl comparison did not run");
    return;
  }
  std::vector<std::string> accepted, rejected;
  for (const std::string& c : Candidates())
    (Quantity::Parse(c).ok() ? accepted : rejected).push_back(c);

  std::string out = KubectlLimits(kubectl, accepted);
  Json pod = Json::parse(out, nullptr, /*allow_exceptions=*/false);
  INFO("kubectl said: " << out.substr(0, 2000));
  REQUIRE(pod.is_object());
  const Json& limits = pod["spec"]["containers"][0]["resources"]["limits"];
  for (size_t i = 0; i < accepted.size(); ++i) {
    std::string key = "a.io/q" + std::to_string(i);
    CAPTURE(accepted[i]);
    REQUIRE(limits.contains(key));
    CHECK(Quantity::Parse(accepted[i])->String() == limits[key].get<std::string>());
  }

  // One kubectl run per rejected quantity is slow; check a spread of them.
  REQUIRE(rejected.size() > 10);
  for (size_t i = 0; i < rejected.size(); i += rejected.size() / 8) {
    CAPTURE(rejected[i]);
    std::string err = KubectlLimits(kubectl, {rejected[i]});
    CHECK(err.find(Quantity::Parse(rejected[i]).status().message()) != std::string::npos);
  }
}

}  // namespace
}  // namespace pjemu::api
