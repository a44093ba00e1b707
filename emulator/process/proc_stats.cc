#include "emulator/process/proc_stats.h"

#include <dirent.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>

namespace pjemu::process {
namespace {

// Reads pgrp and state from /proc/<pid>/stat; false when the process is gone.
bool ReadStat(pid_t pid, pid_t* pgrp, char* state) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  std::FILE* f = std::fopen(path, "re");
  if (!f) return false;
  char buf[1024];
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // The command name may hold spaces and parentheses: parse after the last ')'.
  const char* close = std::strrchr(buf, ')');
  if (!close) return false;
  int ppid = 0, pg = 0;
  if (std::sscanf(close + 1, " %c %d %d", state, &ppid, &pg) != 3) return false;
  *pgrp = pg;
  return true;
}

// Calls fn(pid, pgrp) for every live (non-zombie) process.
template <typename Fn>
void ForEachProcess(Fn fn) {
  DIR* dir = opendir("/proc");
  if (!dir) return;
  while (dirent* e = readdir(dir)) {
    if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    pid_t pgrp = 0;
    char state = 0;
    if (ReadStat(pid, &pgrp, &state) && state != 'Z') fn(pid, pgrp);
  }
  closedir(dir);
}

std::int64_t RssBytes(pid_t pid) {
  static const long kPage = sysconf(_SC_PAGESIZE);
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/statm", pid);
  std::FILE* f = std::fopen(path, "re");
  if (!f) return 0;
  long size = 0, resident = 0;
  std::int64_t bytes = 0;
  if (std::fscanf(f, "%ld %ld", &size, &resident) == 2) bytes = resident * kPage;
  std::fclose(f);
  return bytes;
}

// utime + stime (fields 14 and 15 of /proc/<pid>/stat), in clock ticks; 0 when gone.
std::int64_t CpuTicks(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  std::FILE* f = std::fopen(path, "re");
  if (!f) return 0;
  char buf[1024];
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');
  if (!close) return 0;
  unsigned long long utime = 0, stime = 0;
  // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
  if (std::sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
                  &stime) != 2) {
    return 0;
  }
  return static_cast<std::int64_t>(utime + stime);
}

}  // namespace

std::vector<pid_t> GroupMembers(pid_t pgid) {
  std::vector<pid_t> out;
  ForEachProcess([&](pid_t pid, pid_t pgrp) {
    if (pgrp == pgid) out.push_back(pid);
  });
  return out;
}

std::map<pid_t, std::int64_t> RssByGroup(const std::set<pid_t>& pgids) {
  std::map<pid_t, std::int64_t> out;
  if (pgids.empty()) return out;
  ForEachProcess([&](pid_t pid, pid_t pgrp) {
    if (pgids.count(pgrp)) out[pgrp] += RssBytes(pid);
  });
  return out;
}

std::map<pid_t, GroupUsage> UsageByGroup(const std::set<pid_t>& pgids) {
  std::map<pid_t, GroupUsage> out;
  if (pgids.empty()) return out;
  ForEachProcess([&](pid_t pid, pid_t pgrp) {
    if (!pgids.count(pgrp)) return;
    GroupUsage& usage = out[pgrp];
    usage.cpu_ticks += CpuTicks(pid);
    usage.rss_bytes += RssBytes(pid);
  });
  return out;
}

}  // namespace pjemu::process
