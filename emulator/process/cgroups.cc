#include "emulator/process/cgroups.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "emulator/process/exec_path.h"

namespace pjemu::process {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kCfsPeriodUs = 100000;  // the kubelet's CFS period
constexpr std::int64_t kMinQuotaUs = 1000;     // and its smallest quota

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `key value` lines (memory.stat, cpu.stat, memory.events, memory.oom_control): value of key, or 0.
std::int64_t KeyedValue(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  std::int64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

std::int64_t NumberIn(const std::string& path) {
  std::ifstream in(path);
  std::int64_t v = 0;
  in >> v;
  return v;
}

Status WriteFile(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return InternalError("cgroup: open " + path + ": " + ErrnoText(errno));
  ssize_t n = write(fd, value.data(), value.size());
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return InternalError("cgroup: write \"" + value + "\" to " + path + ": " + ErrnoText(err));
  }
  return Status::Ok();
}

struct Hierarchy {
  std::string mount;  // where it is mounted
  std::string root;   // the mount's root inside the hierarchy
};

// The cgroup mounts of this mount namespace: v1 by controller, v2 as "".
std::map<std::string, Hierarchy> Mounts() {
  std::map<std::string, Hierarchy> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream pre(line.substr(0, dash)), post(line.substr(dash + 3));
    std::string id, parent, dev, root, point, fstype, source, super;
    if (!(pre >> id >> parent >> dev >> root >> point) || !(post >> fstype >> source >> super)) {
      continue;
    }
    if (fstype == "cgroup2") {
      out.emplace("", Hierarchy{point, root});
    } else if (fstype == "cgroup") {
      std::istringstream opts(super);
      std::string opt;
      while (std::getline(opts, opt, ',')) out.emplace(opt, Hierarchy{point, root});
    }
  }
  return out;
}

// This process's cgroup in each hierarchy (/proc/self/cgroup): v1 by controller, v2 as "".
std::map<std::string, std::string> OwnPaths() {
  std::map<std::string, std::string> out;
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    auto a = line.find(':');
    auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (controllers.empty()) {
      out.emplace("", path);
      continue;
    }
    std::istringstream list(controllers);
    std::string c;
    while (std::getline(list, c, ',')) out.emplace(c, path);
  }
  return out;
}

// Where this process's cgroup of `controller` is, as a directory ("" when not mounted).
std::string OwnDir(const std::map<std::string, Hierarchy>& mounts,
                   const std::map<std::string, std::string>& own, const std::string& controller) {
  auto m = mounts.find(controller);
  auto p = own.find(controller);
  if (m == mounts.end() || p == own.end()) return "";
  std::string path = p->second;
  const std::string& root = m->second.root;
  if (root != "/" && path.compare(0, root.size(), root) == 0) path = path.substr(root.size());
  std::string dir = m->second.mount + (path == "/" ? "" : path);
  return dir;
}

// Parents left by emulators that died (pjemu-<pid> of a process that is gone): their empty
// container cgroups, then themselves. A directory with processes in it stays.
void RemoveStale(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("pjemu-", 0) != 0 || !e.is_directory()) continue;
    std::string pid = name.substr(6);
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (kill(std::stoi(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code ec2;
    for (const auto& child : fs::directory_iterator(e.path(), ec2)) {
      if (child.is_directory()) rmdir(child.path().c_str());
    }
    rmdir(e.path().c_str());
  }
}

Status MakeParent(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status(Code::kUnavailable, "cgroups unavailable: mkdir " + dir + ": " + ErrnoText(errno));
  }
  return Status::Ok();
}

}  // namespace

std::uint64_t CpuShares(std::int64_t request_millis) {
  if (request_millis <= 0) return 2;
  std::uint64_t shares = static_cast<std::uint64_t>(request_millis) * 1024 / 1000;
  return std::clamp<std::uint64_t>(shares, 2, 262144);
}

std::uint64_t CpuWeight(std::uint64_t shares) {
  if (shares < 2) shares = 2;
  if (shares > 262144) shares = 262144;
  return 1 + ((shares - 2) * 9999) / 262142;
}

// The shares of the node's allocatable CPUs (what the kubelet gives its kubepods cgroup).
static std::uint64_t NodeShares() {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return CpuShares(std::max<long>(1, cpus) * 1000);
}

void ContainerCgroup::CloseProcs() {
  for (int fd : procs_fds_) close(fd);
  procs_fds_.clear();
}

std::int64_t ContainerCgroup::OomKills() const {
  return v2_ ? KeyedValue(memory_dir_ + "/memory.events", "oom_kill")
             : KeyedValue(memory_dir_ + "/memory.oom_control", "oom_kill");
}

std::vector<int> ContainerCgroup::Members() const {
  std::vector<int> out;
  std::ifstream in(memory_dir_ + "/cgroup.procs");
  int pid;
  while (in >> pid) out.push_back(pid);
  return out;
}

CgroupUsage ContainerCgroup::Usage() const {
  CgroupUsage u;
  if (v2_) {
    u.cpu_usage_ns = KeyedValue(cpu_dir_ + "/cpu.stat", "usage_usec") * 1000;
    u.throttled_periods = KeyedValue(cpu_dir_ + "/cpu.stat", "nr_throttled");
    std::int64_t usage = NumberIn(memory_dir_ + "/memory.current");
    u.working_set_bytes = std::max<std::int64_t>(
        0, usage - KeyedValue(memory_dir_ + "/memory.stat", "inactive_file"));
  } else {
    u.cpu_usage_ns = NumberIn(cpuacct_dir_ + "/cpuacct.usage");
    u.throttled_periods = KeyedValue(cpu_dir_ + "/cpu.stat", "nr_throttled");
    std::int64_t usage = NumberIn(memory_dir_ + "/memory.usage_in_bytes");
    u.working_set_bytes = std::max<std::int64_t>(
        0, usage - KeyedValue(memory_dir_ + "/memory.stat", "total_inactive_file"));
  }
  return u;
}

Result<std::shared_ptr<CgroupRoot>> CgroupRoot::Open() {
  auto mounts = Mounts();
  auto own = OwnPaths();
  std::shared_ptr<CgroupRoot> root(new CgroupRoot());
  std::string leaf = "/pjemu-" + std::to_string(getpid());
  std::string memory = OwnDir(mounts, own, "memory");
  std::string cpu = OwnDir(mounts, own, "cpu");
  std::string cpuacct = OwnDir(mounts, own, "cpuacct");
  if (!memory.empty() && !cpu.empty() && !cpuacct.empty()) {
    std::vector<std::string> parents = {memory, cpu};
    if (cpuacct != cpu) parents.push_back(cpuacct);
    for (const std::string& p : parents) {
      RemoveStale(p);
      RETURN_IF_ERROR(MakeParent(p + leaf));
    }
    root->memory_ = memory + leaf;
    root->cpu_ = cpu + leaf;
    root->cpuacct_ = cpuacct + leaf;
    // The pods' parent weighs as the kubelet's kubepods does: the node's CPUs in shares.
    (void)WriteFile(root->cpu_ + "/cpu.shares", std::to_string(NodeShares()));
    return root;
  }
  std::string unified = OwnDir(mounts, own, "");
  if (unified.empty()) {
    return Status(Code::kUnavailable,
                  "cgroups unavailable: no memory, cpu and cpuacct hierarchies (v1) or unified "
                  "hierarchy (v2) mounted");
  }
  std::string controllers = " " + ReadFile(unified + "/cgroup.controllers");
  for (const char* c : {" memory", " cpu"}) {
    if (controllers.find(c) == std::string::npos) {
      return Status(Code::kUnavailable, "cgroups unavailable: the " + std::string(c + 1) +
                                            " controller is not available in " + unified);
    }
  }
  RemoveStale(unified);
  // cgroup v2 enables a controller for children only in a cgroup without processes (the root
  // excepted): the emulator's own cgroup must delegate, as a kubelet's cgroup root does.
  Status enabled = WriteFile(unified + "/cgroup.subtree_control", "+memory +cpu");
  if (!enabled.ok()) {
    return Status(Code::kUnavailable, "cgroups unavailable: " + enabled.message());
  }
  RETURN_IF_ERROR(MakeParent(unified + leaf));
  Status sub = WriteFile(unified + leaf + "/cgroup.subtree_control", "+memory +cpu");
  if (!sub.ok()) return Status(Code::kUnavailable, "cgroups unavailable: " + sub.message());
  root->v2_ = true;
  root->memory_ = root->cpu_ = root->cpuacct_ = unified + leaf;
  (void)WriteFile(root->cpu_ + "/cpu.weight", std::to_string(CpuWeight(NodeShares())));
  return root;
}

CgroupRoot::~CgroupRoot() {
  for (const std::string* d : {&memory_, &cpu_, &cpuacct_}) {
    if (!d->empty()) rmdir(d->c_str());
  }
}

Result<ContainerCgroup> CgroupRoot::Create(const CgroupLimits& limits) {
  static std::atomic<std::uint64_t> next{0};  // process-wide: the roots share one parent
  const std::uint64_t n = ++next;
  ContainerCgroup cg;
  cg.v2_ = v2_;
  std::string name = "/" + std::to_string(n);
  cg.memory_dir_ = memory_ + name;
  cg.cpu_dir_ = cpu_ + name;
  cg.cpuacct_dir_ = cpuacct_ + name;
  for (const std::string* d : {&cg.memory_dir_, &cg.cpu_dir_, &cg.cpuacct_dir_}) {
    if (std::find(cg.dirs_.begin(), cg.dirs_.end(), *d) != cg.dirs_.end()) continue;
    if (mkdir(d->c_str(), 0755) != 0 && errno != EEXIST) {
      Status s = InternalError("cgroup: mkdir " + *d + ": " + ErrnoText(errno));
      Remove(cg);
      return s;
    }
    cg.dirs_.push_back(*d);
  }
  auto fail = [&](Status s) {
    Remove(cg);
    return s;
  };
  std::uint64_t shares = CpuShares(limits.cpu_request_millis);
  std::int64_t quota =
      limits.cpu_limit_millis > 0
          ? std::max<std::int64_t>(kMinQuotaUs, limits.cpu_limit_millis * kCfsPeriodUs / 1000)
          : 0;
  if (v2_) {
    if (limits.memory_bytes > 0) {
      Status s = WriteFile(cg.memory_dir_ + "/memory.max", std::to_string(limits.memory_bytes));
      if (!s.ok()) return fail(s);
      (void)WriteFile(cg.memory_dir_ + "/memory.swap.max", "0");
    }
    Status s = WriteFile(cg.cpu_dir_ + "/cpu.weight", std::to_string(CpuWeight(shares)));
    if (s.ok() && quota > 0) {
      s = WriteFile(cg.cpu_dir_ + "/cpu.max",
                    std::to_string(quota) + " " + std::to_string(kCfsPeriodUs));
    }
    if (!s.ok()) return fail(s);
  } else {
    if (limits.memory_bytes > 0) {
      Status s =
          WriteFile(cg.memory_dir_ + "/memory.limit_in_bytes", std::to_string(limits.memory_bytes));
      if (!s.ok()) return fail(s);
      // With swap accounting the limit covers swap too, so nothing swaps past it.
      if (access((cg.memory_dir_ + "/memory.memsw.limit_in_bytes").c_str(), F_OK) == 0) {
        (void)WriteFile(cg.memory_dir_ + "/memory.memsw.limit_in_bytes",
                        std::to_string(limits.memory_bytes));
      }
    }
    Status s = WriteFile(cg.cpu_dir_ + "/cpu.shares", std::to_string(shares));
    if (s.ok() && quota > 0) {
      s = WriteFile(cg.cpu_dir_ + "/cpu.cfs_period_us", std::to_string(kCfsPeriodUs));
      if (s.ok()) s = WriteFile(cg.cpu_dir_ + "/cpu.cfs_quota_us", std::to_string(quota));
    }
    if (!s.ok()) return fail(s);
  }
  for (const std::string& d : cg.dirs_) {
    int fd = open((d + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      Status s = InternalError("cgroup: open " + d + "/cgroup.procs: " + ErrnoText(errno));
      cg.CloseProcs();
      return fail(s);
    }
    cg.procs_fds_.push_back(fd);
  }
  return cg;
}

bool CgroupRoot::Remove(const ContainerCgroup& cgroup) {
  bool gone = true;
  for (const std::string& d : cgroup.dirs_) {
    if (rmdir(d.c_str()) != 0 && errno != ENOENT) gone = false;
  }
  return gone;
}

}  // namespace pjemu::process
