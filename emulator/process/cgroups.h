// Cgroups: the kernel's limits and accounting for each container, as the kubelet's cgroup
// manager and runc give them, on cgroup v2 (a unified /sys/fs/cgroup) or v1 (memory, cpu and
// cpuacct hierarchies), whichever the host has.
//
// Layout: one parent per runner, `pjemu-<emulator pid>`, under the emulator's own cgroup of each
// hierarchy (as a kubelet's cgroup root, so whatever limits the emulator lives under apply to
// its pods too), and one child per container process, `<n>`. A container's cgroup gets:
//   memory limit   v1 memory.limit_in_bytes (and memsw when present, so it cannot swap past it)
//                  v2 memory.max (memory.swap.max 0)
//   CPU limit      CFS quota: cpu.cfs_quota_us / cpu.max = limit x 100 ms period
//   CPU request    v1 cpu.shares = request x 1024 (2 without one, the kubelet's BestEffort share)
//                  v2 cpu.weight, the kubelet's conversion of those shares
// The forked child joins it before exec by writing "0" to each hierarchy's cgroup.procs (the fds
// are opened beforehand: the child of a threaded parent makes only async-signal-safe calls).
// OomKills() reads the kernel's oom_kill counter (v1 memory.oom_control, v2 memory.events);
// Usage() the cumulative CPU time (v1 cpuacct.usage, v2 cpu.stat usage_usec) and the working set
// as cAdvisor computes it (usage minus inactive file pages), which is what metrics-server and
// `kubectl top` report.
// Every CgroupRoot of a process shares its parent (`pjemu-<pid>`), so container cgroups are
// numbered process-wide: two runners (two clusters in one process) never share one, and a
// runner that removes its container's cgroup never kills another runner's process in it.
// Thread safety: CgroupRoot is safe from any thread (the numbering is atomic; Remove only
// removes directories); a ContainerCgroup is a plain value whose readers may be called from any
// thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::process {

struct CgroupLimits {
  std::int64_t memory_bytes = 0;        // 0 = none
  std::int64_t cpu_limit_millis = 0;    // 0 = none
  std::int64_t cpu_request_millis = 0;  // 0 = none (BestEffort: the minimum share)
};

struct CgroupUsage {
  std::int64_t cpu_usage_ns = 0;       // cumulative CPU time of every process ever in it
  std::int64_t working_set_bytes = 0;  // memory usage minus inactive file pages
  std::int64_t throttled_periods = 0;  // CFS periods in which the quota stopped it
};

class ContainerCgroup {
 public:
  ContainerCgroup() = default;
  // The cgroup.procs of each hierarchy, opened for writing (owned; closed by CloseProcs).
  const std::vector<int>& procs_fds() const { return procs_fds_; }
  void CloseProcs();
  // How many processes the kernel's OOM killer killed in it.
  std::int64_t OomKills() const;
  CgroupUsage Usage() const;
  // The processes in it (the memory hierarchy's cgroup.procs, as the host sees them).
  std::vector<int> Members() const;
  // The directories, one per hierarchy (memory's first).
  const std::vector<std::string>& dirs() const { return dirs_; }
  bool v2() const { return v2_; }

 private:
  friend class CgroupRoot;
  bool v2_ = false;
  std::string memory_dir_, cpu_dir_, cpuacct_dir_;
  std::vector<std::string> dirs_;
  std::vector<int> procs_fds_;
};

class CgroupRoot {
 public:
  // Finds the hierarchies and makes this runner's parent. kUnavailable with the reason when the
  // host cannot (`cgroups unavailable: mkdir /sys/fs/cgroup/memory/pjemu-12: permission denied`):
  // not root, no memory or cpu controller, a v2 cgroup with processes that cannot delegate.
  // Parents of emulators that are gone (`pjemu-<pid>` of a dead pid) are removed on the way.
  static Result<std::shared_ptr<CgroupRoot>> Open();
  ~CgroupRoot();  // removes the parent (empty by then, or left for the next Open)
  CgroupRoot(const CgroupRoot&) = delete;
  CgroupRoot& operator=(const CgroupRoot&) = delete;

  // A cgroup with these limits for a process about to start. kInternal when it cannot be made
  // or a limit cannot be written (the message names the file).
  Result<ContainerCgroup> Create(const CgroupLimits& limits);
  // Removes a container's cgroup; false while processes remain in it (call again later).
  bool Remove(const ContainerCgroup& cgroup);

  bool v2() const { return v2_; }

 private:
  CgroupRoot() = default;
  bool v2_ = false;
  // The parent directory in each hierarchy: v1 {memory, cpu, cpuacct} (cpu and cpuacct may be
  // one directory when co-mounted), v2 {unified}.
  std::string memory_, cpu_, cpuacct_;
};

// The cpu.shares the kubelet gives a request (2 for none), and its cgroup v2 weight.
std::uint64_t CpuShares(std::int64_t request_millis);
std::uint64_t CpuWeight(std::uint64_t shares);

}  // namespace pjemu::process
