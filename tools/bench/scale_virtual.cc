// bench_scale_virtual: N jobs of one kind (--kind: PyTorchJob, the default, T9k, Job or
// TrainJob; 3 pods each, tools/bench/bench_job.h) through the embedded control plane in virtual
// time (a cluster::Cluster on a FakeClock, driven from here: store,
// controller, scheduler, kubelet over a SimulatedProcessRunner whose processes "run" 1 s). Submits
// every job at once, then advances virtual time one second at a time until every job has Succeeded
// (or --max-virtual-s passed). Prints one JSON line: jobs, pods, wall seconds (submit and run),
// virtual seconds, peak RSS and the RSS after start, so the caller can derive memory per pod.
// usage: bench_scale_virtual --jobs N [--kind K] [--image-map F] [--max-virtual-s S]
//        [--max-pods P] [--census]
// (--max-pods: the node's pod capacity; default room for every pod, 3 N + 10)
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "emulator/api/workload.h"
#include "emulator/cluster/cluster.h"
#include "tools/bench/bench_job.h"

namespace pjemu::bench {
namespace {

long PeakRssKb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// CPU seconds of the calling thread: the loop's (LoopKind::kCaller), less noisy than wall time on
// a shared machine, and what bounds the wall time since every actor runs on that thread.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

long CurrentRssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

// Counts the jobs of `type` that finished: succeeded (returned) and failed (*failed). Reads the
// store's own snapshots (ListObjects), so the count does not copy every job, as the actors read
// them (Cluster::in_process_client), so that it does not make the store compute managedFields the
// control plane deferred.
int CountSucceeded(client::Client& c, const api::ResourceType& type, int* failed) {
  auto list = c.ListObjects(type, "default");
  if (!list.ok()) return -1;
  int n = 0;
  *failed = 0;
  for (const Json& job : *list) {
    api::WorkloadState state = api::StateOf(type, job);
    if (state.succeeded) {
      ++n;
    } else if (state.finished) {
      ++*failed;
    }
  }
  return n;
}

// --census: what the store holds at the end, per type with objects: count, compact JSON bytes
// and the share of it in metadata.managedFields (stderr, one line each).
void PrintCensus(client::Client& c) {
  for (const api::ResourceType& type : api::AllResources()) {
    auto list = c.List(type, "");
    if (!list.ok() || (*list)["items"].empty()) continue;
    std::size_t n = 0, bytes = 0, managed = 0;
    for (const Json& item : (*list)["items"]) {
      ++n;
      bytes += item.dump().size();
      auto meta = item.find("metadata");
      if (meta != item.end() && meta->contains("managedFields")) {
        managed += (*meta)["managedFields"].dump().size();
      }
    }
    std::fprintf(stderr, "census %-40s %7zu objects %10zu B text (%zu B/object, %zu B managedFields)\n",
                 type.PluralGroup().c_str(), n, bytes, bytes / n, managed / n);
  }
}

int Main(int argc, char** argv) {
  int jobs = 10;
  int max_virtual_s = 3600;
  int max_pods = 0;  // 0 = 3 * jobs + 10
  bool census = false;
  std::string image_map = "fixtures/images.yaml";
  const BenchKind* kind = FindBenchKind("PyTorchJob");
  for (int i = 1; i < argc; i += 2) {
    if (!std::strcmp(argv[i], "--census")) {
      census = true;
      --i;
    } else if (i + 1 >= argc) {
      std::cerr << "missing value for " << argv[i] << "\n";
      return 2;
    } else if (!std::strcmp(argv[i], "--jobs"))
      jobs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--image-map"))
      image_map = argv[i + 1];
    else if (!std::strcmp(argv[i], "--max-virtual-s"))
      max_virtual_s = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--max-pods"))
      max_pods = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--kind") && FindBenchKind(argv[i + 1]))
      kind = FindBenchKind(argv[i + 1]);
    else {
      std::cerr << "usage: bench_scale_virtual --jobs N [--kind PyTorchJob|T9k|Job|TrainJob] "
                   "[--image-map F] [--max-virtual-s S] [--max-pods P] [--census]\n";
      return 2;
    }
  }
  cluster::ClusterOptions options = VirtualClusterOptions(image_map);
  options.cpu = "100000";  // room for every pod at once: the benchmark is the control plane
  options.memory = "100000Gi";
  // Room for every pod by default (the kubelet's default of 110 would hold the rest Pending).
  options.max_pods = max_pods > 0 ? max_pods : 3 * jobs + 10;
  cluster::Cluster vc(options);
  if (Status s = vc.Start(); !s.ok()) {
    std::cerr << "cannot start: " << s.message() << "\n";
    return 1;
  }
  const long base_rss = CurrentRssKb();
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = ThreadCpuSeconds();
  const Time v0 = vc.clock().Now();
  for (int i = 0; i < jobs; ++i) {
    auto created =
        vc.client().Create(kind->type(), "default",
                           kind->job("job-" + std::to_string(i), "default", "busybox:1.36", {"true"}));
    if (!created.ok()) {
      std::cerr << "create: " << created.status().message() << "\n";
      return 1;
    }
  }
  const double submit_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int succeeded = 0, failed = 0;
  while (true) {
    vc.loop().RunFor(std::chrono::seconds(1));
    succeeded = CountSucceeded(vc.in_process_client(), kind->type(), &failed);
    if (succeeded + failed >= jobs) break;
    if (vc.clock().Now() - v0 > std::chrono::seconds(max_virtual_s)) break;
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double loop_cpu_s = ThreadCpuSeconds() - cpu0;
  const double virtual_s = std::chrono::duration<double>(vc.clock().Now() - v0).count();
  const long peak = PeakRssKb();
  std::printf(
      "{\"kind\": \"%s\", \"jobs\": %d, \"pods\": %d, \"succeeded\": %d, \"failed\": %d, "
      "\"submit_s\": %.3f, "
      "\"wall_s\": %.3f, \"loop_cpu_s\": %.3f, \"virtual_s\": %.1f, \"peak_rss_kb\": %ld, "
      "\"base_rss_kb\": %ld}\n",
      kind->name, jobs, jobs * 3, succeeded, failed, submit_s, wall_s, loop_cpu_s, virtual_s, peak,
      base_rss);
  std::fflush(stdout);
  if (census) PrintCensus(vc.client());
  vc.Stop();  // not part of the measurement
  return succeeded == jobs ? 0 : 1;
}

}  // namespace
}  // namespace pjemu::bench

int main(int argc, char** argv) { return pjemu::bench::Main(argc, argv); }
