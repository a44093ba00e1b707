// bench_json_tree: what one Pod costs the control plane to decode from its packed bytes, and to
// copy and free as a tree, against nlohmann's own reader and nlohmann::json as the library ships
// it, measured in the same run. The Pod is a real one: a PyTorchJob's worker run through the
// embedded control plane in virtual time, as bench_scale_virtual runs thousands (its
// managedFields left out, as the store keeps them apart).
// Prints a Markdown table: microseconds per operation (the best of five rounds) and the ratio to
// the peer.
// usage: bench_json_tree [--rounds N]   (N operations per round, default 20000)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>

#include "emulator/cluster/cluster.h"
#include "emulator/common/packed_json.h"
#include "tools/bench/bench_job.h"

namespace pjemu::bench {
namespace {

// A PyTorchJob's worker Pod as the store holds it once the job ran.
Result<Json> RealPod() {
  cluster::Cluster vc(VirtualClusterOptions("fixtures/images.yaml"));
  RETURN_IF_ERROR(vc.Start());
  const BenchKind* kind = FindBenchKind("PyTorchJob");
  RETURN_IF_ERROR(
      vc.client()
          .Create(kind->type(), "default", kind->job("job-0", "default", "busybox:1.36", {"true"}))
          .status());
  vc.loop().RunFor(std::chrono::seconds(2));
  ASSIGN_OR_RETURN(Json pod, vc.client().Get(api::Pods(), "default", "job-0-worker-0"));
  vc.Stop();
  pod["metadata"].erase("managedFields");
  return pod;
}

// Microseconds per call of `op`: the best of five rounds of `n` calls.
double MicrosPerCall(int n, const std::function<void()>& op) {
  double best = 1e300;
  for (int round = 0; round < 5; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) op();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
  }
  return best;
}

void Row(const char* what, double ours, const char* peer, double theirs) {
  std::printf("| %s | %.2f | %s | %.2f | %.2f |\n", what, ours, peer, theirs, ours / theirs);
}

int Main(int argc, char** argv) {
  int n = 20000;
  if (argc == 3 && !std::strcmp(argv[1], "--rounds")) {
    n = std::atoi(argv[2]);
  } else if (argc != 1) {
    std::cerr << "usage: bench_json_tree [--rounds N]\n";
    return 2;
  }
  Result<Json> got = RealPod();
  if (!got.ok()) {
    std::cerr << "cannot run the job: " << got.status().message() << "\n";
    return 1;
  }
  const Json& pod = *got;
  // Packed as the store packs a Pod once its kind's dictionary is trained (256 Pods).
  for (int i = 0; i < 300; ++i) {
    Json other = pod;
    other["metadata"]["name"] = "pod-" + std::to_string(i);
    (void)PackJson(other);
  }
  const std::string packed = PackJson(pod);
  const std::vector<std::uint8_t> msgpack = ToMsgpack(pod);
  const nlohmann::json library_pod = nlohmann::json::parse(pod.dump());
  std::size_t sink = 0;  // keeps each result observable

  std::printf("One Pod: %zu B of JSON, %zu B of MessagePack, %zu B packed; %d calls a round\n\n",
              pod.dump().size(), msgpack.size(), packed.size(), n);
  std::printf("| operation | pjemu us | peer | peer us | ratio |\n|---|---|---|---|---|\n");
  Row("decode the packed bytes, then free the tree (UnpackJson)",
      MicrosPerCall(n, [&] { sink += UnpackJson(packed, "a Pod").size(); }),
      "the same MessagePack through nlohmann's reader (Json::from_msgpack)",
      MicrosPerCall(n, [&] { sink += Json::from_msgpack(msgpack).size(); }));
  Row("copy the tree, then free the copy (Json)",
      MicrosPerCall(n,
                    [&] {
                      Json copy = pod;
                      sink += copy.size();
                    }),
      "nlohmann::json as shipped (std::map objects, the library's free)", MicrosPerCall(n, [&] {
        nlohmann::json copy = library_pod;
        sink += copy.size();
      }));
  return sink > 0 ? 0 : 1;
}

}  // namespace
}  // namespace pjemu::bench

int main(int argc, char** argv) { return pjemu::bench::Main(argc, argv); }
