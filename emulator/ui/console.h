// Console: the web console served by `pjemu serve` at /ui/. A Mount for the API
// server: the static shell (HTML, JS, CSS embedded at build time, see assets.h) is served to
// anyone; everything under /ui/api/ needs the server's token when it has one, like the
// Kubernetes API the page itself uses for lists, watches, logs, creates and deletes. /ui/api/
// adds only what that API lacks:
//   GET  /ui/api/namespaces/{ns}/pods/{pod}/metrics    the trainer's metrics (JSON lines) as
//        {"steps": [[step, loss, epoch], ...], "epochs": [{epoch, accuracy, test_loss, ...}]}
//   GET  /ui/api/namespaces/{ns}/pods/{pod}/resources  CPU and memory samples per container
//   GET  /ui/api/namespaces/{ns}/pods/{pod}/io         network and storage I/O rates per container
//   GET  /ui/api/namespaces/{ns}/tensorboards/{tb}/scalars  the scalars of the TensorBoard's
//        event files, read from the host folders in its status.logDirs (its controller's)
//   POST /ui/api/validate                              YAML text -> objects, field lines, and
//        the admission webhook's field errors at their line (nothing is created)
// Names in paths are checked as DNS-1123 names and looked up in the Store: files are found
// from the stored pod, never from the request's text.
// Thread safety: the returned handler is const and may run on several io threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "emulator/apiserver/http_types.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/store/store.h"
#include "emulator/ui/tfevents.h"

namespace pjemu::ui {

struct UsagePoint {
  Time time{};
  double cpu_cores = 0;
  std::int64_t rss_bytes = 0;
  double gpu_util_percent = -1;  // -1: no GPU figures (no NVIDIA driver)
  std::int64_t gpu_memory_bytes = -1;
};

struct ContainerUsage {
  std::string container;
  std::vector<UsagePoint> points;  // oldest first
};

// Network and storage I/O rates of a container at one time (per second).
struct IoPoint {
  Time time{};
  double rx_bytes = 0, tx_bytes = 0;        // network receive / send
  double read_bytes = 0, write_bytes = 0;   // storage throughput
  double reads = 0, writes = 0;             // storage read / write calls (IOPS)
};

struct ContainerIo {
  std::string container;
  std::vector<IoPoint> points;  // oldest first
};

struct ConsoleOptions {
  // The trainer's metrics file of a stored pod; "" when it runs no trainer. Null: no metrics.
  std::function<std::string(const Json& pod)> metrics_path;
  // CPU and memory samples of a pod's containers. Null: no resource data.
  std::function<std::vector<ContainerUsage>(const std::string& ns, const std::string& pod)> usage;
  // Network and storage I/O samples of a pod's containers. Null: no I/O data.
  std::function<std::vector<ContainerIo>(const std::string& ns, const std::string& pod)> io;
  std::size_t max_metrics_bytes = 8 * 1024 * 1024;  // only the file's last bytes are read
  LogDirLimits log_dir_limits;  // how much of a TensorBoard's log dirs a request reads
};

// The /ui/ mount for apiserver::ApiServerOptions::mounts.
apiserver::Mount MakeConsoleMount(store::Store& store, ConsoleOptions options);

}  // namespace pjemu::ui
