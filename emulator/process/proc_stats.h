// Process-group statistics read from /proc, used by PosixProcessRunner to enforce container
// memory limits the way the kernel's memory cgroup would (without needing cgroups or root), and
// by ResourceSampler for the console's CPU and memory charts.
// Thread safety: pure functions over /proc; safe from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace pjemu::process {

// Pids of the live processes whose process group is pgid.
std::vector<pid_t> GroupMembers(pid_t pgid);
// Resident set size in bytes summed over each process group in pgids, in one pass over /proc
// (a group with no live member is absent from the map).
std::map<pid_t, std::int64_t> RssByGroup(const std::set<pid_t>& pgids);

struct GroupUsage {
  std::int64_t cpu_ticks = 0;  // utime + stime of the live members, in clock ticks
  std::int64_t rss_bytes = 0;
};
// CPU time and RSS summed over each process group in pgids, in one pass over /proc.
std::map<pid_t, GroupUsage> UsageByGroup(const std::set<pid_t>& pgids);

}  // namespace pjemu::process
