#include "emulator/process/sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "emulator/process/exec_path.h"

namespace pjemu::process {
namespace {

// Where the host's root stays reachable, inside the new root, while the mounts are made.
constexpr const char* kHostRoot = "/.pjemu-host";

struct FlagName {
  const char* option;   // in /proc/self/mountinfo's per-mount options
  unsigned long vfs;    // statvfs f_flag
  unsigned long mount;  // mount(2) flag
};
// The per-mount flags a read-only remount must keep (a user namespace refuses to drop them).
constexpr FlagName kKeptFlags[] = {
    {"nosuid", ST_NOSUID, MS_NOSUID},
    {"nodev", ST_NODEV, MS_NODEV},
    {"noexec", ST_NOEXEC, MS_NOEXEC},
    {"noatime", ST_NOATIME, MS_NOATIME},
    {"nodiratime", ST_NODIRATIME, MS_NODIRATIME},
    {"relatime", ST_RELATIME, MS_RELATIME},
};

struct HostMount {
  std::string path;
  unsigned long flags = 0;  // kKeptFlags of the mount
};

// mountinfo escapes ' ', '\t', '\n' and '\\' as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool UnderAny(const std::string& path, std::initializer_list<const char*> roots) {
  for (const char* r : roots) {
    std::size_t n = std::strlen(r);
    if (path.compare(0, n, r) == 0 && (path.size() == n || path[n] == '/')) return true;
  }
  return false;
}

// The host's mounts to re-bind read-only in a container's root: all but / and what lives
// under /proc, /dev and /sys (those come whole), parents before children.
std::vector<HostMount> ReadHostMounts() {
  std::vector<HostMount> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point, options;
    if (!(fields >> id >> parent >> dev >> root >> point >> options)) continue;
    HostMount m{Unescape(point), 0};
    if (m.path == "/" || UnderAny(m.path, {"/proc", "/dev", "/sys"})) continue;
    std::string opts = "," + options + ",";
    for (const auto& f : kKeptFlags) {
      if (opts.find("," + std::string(f.option) + ",") != std::string::npos) m.flags |= f.mount;
    }
    out.push_back(std::move(m));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const HostMount& a, const HostMount& b) { return a.path < b.path; });
  return out;
}

// Mounts rarely change: the table is re-read at most every 10 seconds, or when the caller is
// in another mount namespace than the one it was read in.
std::vector<HostMount> HostMounts() {
  static std::mutex mu;
  static std::vector<HostMount> cached;
  static std::string cached_ns;
  static std::chrono::steady_clock::time_point read_at{};
  std::error_code ec;
  std::string ns = std::filesystem::read_symlink("/proc/self/ns/mnt", ec).string();
  std::lock_guard<std::mutex> lock(mu);
  auto now = std::chrono::steady_clock::now();
  if (ns != cached_ns || read_at == std::chrono::steady_clock::time_point{} ||
      now - read_at > std::chrono::seconds(10)) {
    cached = ReadHostMounts();
    cached_ns = ns;
    read_at = now;
  }
  return cached;
}

unsigned long SourceFlags(const std::string& path) {
  struct statvfs st {};
  if (statvfs(path.c_str(), &st) != 0) return 0;
  unsigned long flags = 0;
  for (const auto& f : kKeptFlags) {
    if (st.f_flag & f.vfs) flags |= f.mount;
  }
  return flags;
}

Status MakeHostDir(const std::string& path) {
  if (path.empty() || path[0] != '/') {
    return Status(Code::kInvalid, "mount plan: host directory \"" + path + "\" is not absolute");
  }
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return InternalError("mkdir " + path + ": " + ec.message());
  return Status::Ok();
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

// overlayfs splits its options at ',' and lowerdir at ':'; a backslash escapes them.
std::string OverlayPath(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == ',' || c == ':' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

int SandboxProgram::Str(std::string s) {
  strs_.push_back(std::move(s));
  return static_cast<int>(strs_.size()) - 1;
}

void SandboxProgram::AddMkdirs(const std::string& path, bool including_last, int message) {
  for (std::size_t pos = path.find('/', 1); pos != std::string::npos;
       pos = path.find('/', pos + 1)) {
    Add({.op = Op::kMkdir, .a = Str(path.substr(0, pos)), .message = message});
  }
  if (including_last && path.size() > 1)
    Add({.op = Op::kMkdir, .a = Str(path), .message = message});
}

// /sys read-only (the host's, whole) and a fresh /proc (an rbind of the host's when the kernel
// refuses one), after pivot_root.
void SandboxProgram::AddSysAndProc() {
  const std::string host = kHostRoot;
  Add({.op = Op::kMount,
       .a = Str(host + "/sys"),
       .b = Str("/sys"),
       .flags = MS_BIND | MS_REC,
       .message = Str("error mounting \"/sys\" to rootfs at \"/sys\"")});
  Add({.op = Op::kMount,
       .b = Str("/sys"),
       .flags = MS_REMOUNT | MS_BIND | MS_RDONLY | SourceFlags("/sys"),
       .optional = true});
  Add({.op = Op::kMount,
       .a = Str("proc"),
       .b = Str("/proc"),
       .fstype = Str("proc"),
       .flags = MS_NOSUID | MS_NODEV | MS_NOEXEC,
       .alt = Str(host + "/proc"),
       .message = Str("error mounting \"proc\" to rootfs at \"/proc\"")});
}

// After pivot_root: /dev and /sys whole, a fresh /proc, the host's other mounts read-only.
void SandboxProgram::AddHostMounts() {
  const std::string host = kHostRoot;
  Add({.op = Op::kMount,
       .a = Str(host + "/dev"),
       .b = Str("/dev"),
       .flags = MS_BIND | MS_REC,
       .message = Str("error mounting \"/dev\" to rootfs at \"/dev\"")});
  AddSysAndProc();
  for (const HostMount& m : HostMounts()) {
    int target = Str(m.path);
    Add({.op = Op::kMount,
         .a = Str(host + m.path),
         .b = target,
         .flags = MS_BIND,
         .optional = true,
         .skip = 1});
    Add({.op = Op::kMount,
         .b = target,
         .flags = MS_REMOUNT | MS_BIND | MS_RDONLY | m.flags,
         .optional = true,
         .detach_on_fail = true});
  }
}

Status SandboxProgram::AddPlanMount(const Mount& m) {
  if (m.target.size() < 2 || m.target[0] != '/') {
    return Status(Code::kInvalid,
                  "mount plan: target " + Quote(m.target) + " is not an absolute path");
  }
  const std::string host = kHostRoot;
  std::string source = m.kind == Mount::Kind::kTmpfs ? "tmpfs" : m.source;
  int message = Str("error mounting " + Quote(source) + " to rootfs at " + Quote(m.target));
  int target = Str(m.target);
  std::size_t first = steps_.size();
  Step mount{.op = Op::kMount, .b = target, .message = message};
  switch (m.kind) {
    case Mount::Kind::kBind: {
      struct stat st {};
      bool is_file = stat(m.source.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
      AddMkdirs(m.target, !is_file, message);
      if (is_file) Add({.op = Op::kTouch, .a = target, .message = message});
      mount.a = Str(host + m.source);
      mount.flags = MS_BIND | MS_REC;
      break;
    }
    case Mount::Kind::kOverlay: {
      RETURN_IF_ERROR(MakeHostDir(m.upper));
      RETURN_IF_ERROR(MakeHostDir(m.work));
      AddMkdirs(m.target, true, message);
      mount.a = Str("overlay");
      mount.fstype = mount.a;
      mount.data = Str("lowerdir=" + OverlayPath(host + m.source) + ",upperdir=" +
                       OverlayPath(host + m.upper) + ",workdir=" + OverlayPath(host + m.work));
      break;
    }
    case Mount::Kind::kTmpfs:
      AddMkdirs(m.target, true, message);
      mount.a = Str("tmpfs");
      mount.fstype = mount.a;
      mount.flags = MS_NOSUID | MS_NODEV;
      if (m.size_bytes > 0) mount.data = Str("size=" + std::to_string(m.size_bytes));
      break;
  }
  Add(mount);
  if (m.read_only) {
    unsigned long kept = m.kind == Mount::Kind::kBind ? SourceFlags(m.source) : mount.flags;
    Add({.op = Op::kMount,
         .b = target,
         .flags = MS_REMOUNT | MS_BIND | MS_RDONLY | kept,
         .message = message});
  }
  for (std::size_t i = first; i < steps_.size(); ++i) steps_[i].pod = true;
  return Status::Ok();
}

Result<SandboxProgram> SandboxProgram::Compile(const MountPlan& plan,
                                               const std::string& working_dir,
                                               const std::string& argv0,
                                               const std::vector<std::string>& env) {
  SandboxProgram p;
  for (const std::string* dir : {&plan.root_upper, &plan.root_work, &plan.root_merged}) {
    RETURN_IF_ERROR(MakeHostDir(*dir));
  }
  const std::string merged = plan.root_merged;
  p.Add({.op = Op::kUnshare, .message = p.Str("unshare mount namespace")});
  if (!plan.hostname.empty()) {
    p.Add({.op = Op::kHostname, .a = p.Str(plan.hostname), .message = p.Str("sethostname")});
  }
  p.Add({.op = Op::kMount,
         .b = p.Str("/"),
         .flags = MS_REC | MS_PRIVATE,
         .message = p.Str("make mounts private")});
  int root_message = p.Str("error mounting \"overlay\" to rootfs at \"/\"");
  p.AddRootOverlay(plan, root_message);
  p.Add({.op = Op::kMkdir, .a = p.Str(merged + kHostRoot), .message = root_message});
  p.Add({.op = Op::kPivot,
         .a = p.Str(merged),
         .b = p.Str(merged + kHostRoot),
         .message = p.Str("pivot_root " + Quote(merged))});
  if (plan.root_layers.empty()) {
    p.AddHostMounts();
  } else {
    p.AddImageRootMounts(plan);
  }
  for (const Mount& m : plan.mounts) RETURN_IF_ERROR(p.AddPlanMount(m));
  p.Add({.op = Op::kDetach, .a = p.Str(kHostRoot), .message = p.Str("unmount the host's root")});
  p.Add({.op = Op::kRmdir, .a = p.Str(kHostRoot), .optional = true});
  p.SetExec(argv0, working_dir, env);
  p.user_ = plan.user;
  p.groups_.assign(plan.user.groups.begin(), plan.user.groups.end());
  return p;
}

void SandboxProgram::AddRootOverlay(const MountPlan& plan, int message) {
  std::string lower = "/";
  if (!plan.root_layers.empty()) {
    // containerd's trick for long lowerdir lists: enter the layers' common parent and name them
    // relative to it (the mount is made before pivot_root, in the host's tree).
    std::filesystem::path parent = std::filesystem::path(plan.root_layers.front()).parent_path();
    bool common = std::all_of(plan.root_layers.begin(), plan.root_layers.end(),
                              [&](const std::string& l) {
                                return std::filesystem::path(l).parent_path() == parent;
                              });
    lower.clear();
    for (const std::string& layer : plan.root_layers) {
      std::string name = common ? std::filesystem::path(layer).filename().string() : layer;
      lower += (lower.empty() ? "" : ":") + OverlayPath(name);
    }
    if (common) Add({.op = Op::kChdir, .a = Str(parent.string()), .message = message});
  }
  Add({.op = Op::kMount,
       .a = Str("overlay"),
       .b = Str(plan.root_merged),
       .fstype = Str("overlay"),
       .data = Str("lowerdir=" + lower + ",upperdir=" + OverlayPath(plan.root_upper) +
                   ",workdir=" + OverlayPath(plan.root_work)),
       .message = message});
}

// An image root's /dev as runc makes it: a tmpfs with the standard nodes bound from the host
// (a container may not mknod), a private devpts, the links; then /sys read-only and /proc.
void SandboxProgram::AddImageRootMounts(const MountPlan& plan) {
  const std::string host = kHostRoot;
  int dev_message = Str("error mounting \"tmpfs\" to rootfs at \"/dev\"");
  Add({.op = Op::kMkdir, .a = Str("/dev"), .message = dev_message});
  Add({.op = Op::kMount,
       .a = Str("tmpfs"),
       .b = Str("/dev"),
       .fstype = Str("tmpfs"),
       .data = Str("mode=755,size=65536k"),
       .flags = MS_NOSUID | MS_STRICTATIME,
       .message = dev_message});
  std::vector<std::string> nodes = {"/dev/null", "/dev/zero", "/dev/full",
                                    "/dev/random", "/dev/urandom", "/dev/tty"};
  nodes.insert(nodes.end(), plan.devices.begin(), plan.devices.end());
  for (const std::string& node : nodes) {
    int message = Str("error mounting " + Quote(node) + " to rootfs at " + Quote(node));
    AddMkdirs(node, false, message);
    Add({.op = Op::kTouch, .a = Str(node), .message = message});
    Add({.op = Op::kMount, .a = Str(host + node), .b = Str(node), .flags = MS_BIND,
         .message = message});
  }
  Add({.op = Op::kMkdir, .a = Str("/dev/pts")});
  Add({.op = Op::kMount,
       .a = Str("devpts"),
       .b = Str("/dev/pts"),
       .fstype = Str("devpts"),
       .data = Str("newinstance,ptmxmode=0666,mode=0620"),
       .flags = MS_NOSUID | MS_NOEXEC,
       .optional = true});
  const std::pair<const char*, const char*> links[] = {{"/proc/self/fd", "/dev/fd"},
                                                       {"/proc/self/fd/0", "/dev/stdin"},
                                                       {"/proc/self/fd/1", "/dev/stdout"},
                                                       {"/proc/self/fd/2", "/dev/stderr"},
                                                       {"pts/ptmx", "/dev/ptmx"}};
  for (const auto& [to, at] : links) {
    Add({.op = Op::kSymlink, .a = Str(to), .b = Str(at), .optional = true});
  }
  for (const char* dir : {"/sys", "/proc"}) Add({.op = Op::kMkdir, .a = Str(dir)});
  AddSysAndProc();
}

// argv[0]: the candidates FindExecutable would try, tried inside the new root (after pivot_root).
void SandboxProgram::SetExec(const std::string& argv0, const std::string& working_dir,
                             const std::vector<std::string>& env) {
  argv0_ = argv0;
  working_dir_text_ = working_dir.empty() ? "/" : working_dir;
  working_dir_ = Str(working_dir_text_);
  searched_ = argv0.find('/') == std::string::npos;
  if (!searched_) {
    candidates_.push_back(Str(argv0));
    return;
  }
  for (const std::string& candidate : PathCandidates(argv0, env)) {
    candidates_.push_back(Str(candidate));
  }
}

Status SandboxProgram::Describe(const ChildReport& r) const {
  switch (r.step) {
    case kReportNotFound:
      return Status(Code::kNotFound,
                    "exec: " + Quote(argv0_) + ": executable file not found in $PATH");
    case kReportExec:
      return Status(Code::kNotFound, "exec: " + Quote(argv0_) + ": " + ErrnoText(r.err));
    case kReportUser:
      return Status(Code::kInvalid, "setup user: " + ErrnoText(r.err));
    case kReportChdir:
      return Status(Code::kInvalid, "chdir to cwd (" + Quote(working_dir_text_) +
                                        ") set in config.json failed: " + ErrnoText(r.err));
    default:
      break;
  }
  if (r.step < 0 || r.step >= static_cast<int>(steps_.size())) {
    return InternalError("container setup failed: " + ErrnoText(r.err));
  }
  const Step& s = steps_[r.step];
  std::string what = s.message >= 0 ? strs_[s.message] : "container setup";
  // A plan mount is the pod's configuration (kInvalid); the root's own steps are the node's.
  return Status(s.pod ? Code::kInvalid : Code::kInternal, what + ": " + ErrnoText(r.err));
}

int SandboxProgram::RunStep(const Step& s) const noexcept {
  switch (s.op) {
    case Op::kUnshare:
      return unshare(CLONE_NEWNS) == 0 ? 0 : errno;
    case Op::kHostname:
      if (unshare(CLONE_NEWUTS) != 0) return errno;
      return sethostname(C(s.a), strlen(C(s.a))) == 0 ? 0 : errno;
    case Op::kMkdir:
      if (mkdir(C(s.a), 0755) == 0 || errno == EEXIST) return 0;
      return errno;
    case Op::kTouch: {
      int fd = open(C(s.a), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd >= 0) return close(fd), 0;
      return errno == EEXIST ? 0 : errno;
    }
    case Op::kMount:
      if (mount(C(s.a), C(s.b), C(s.fstype), s.flags, C(s.data)) == 0) return 0;
      if (s.alt < 0) return errno;
      return mount(C(s.alt), C(s.b), nullptr, MS_BIND | MS_REC, nullptr) == 0 ? 0 : errno;
    case Op::kPivot:
      // pivot_root is refused on an initramfs root: keep the host's root reachable by a bind
      // and chroot instead.
      if (syscall(SYS_pivot_root, C(s.a), C(s.b)) != 0) {
        if (mount("/", C(s.b), nullptr, MS_BIND | MS_REC, nullptr) != 0) return errno;
        if (chroot(C(s.a)) != 0) return errno;
      }
      return chdir("/") == 0 ? 0 : errno;
    case Op::kDetach:
      return umount2(C(s.a), MNT_DETACH) == 0 ? 0 : errno;
    case Op::kRmdir:
      return rmdir(C(s.a)) == 0 ? 0 : errno;
    case Op::kSymlink:
      return symlink(C(s.a), C(s.b)) == 0 || errno == EEXIST ? 0 : errno;
    case Op::kChdir:
      return chdir(C(s.a)) == 0 ? 0 : errno;
  }
  return EINVAL;
}

int SandboxProgram::Run(ChildReport* report) const noexcept {
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    int err = RunStep(steps_[i]);
    if (err == 0) continue;
    if (steps_[i].optional) {
      if (steps_[i].detach_on_fail) umount2(C(steps_[i].b), MNT_DETACH);
      i += steps_[i].skip;
      continue;
    }
    report->step = static_cast<int>(i);
    report->err = err;
    return -1;
  }
  return 0;
}

// mkdir -p of an absolute path, 0755, in the child after fork (no allocation): what the
// container runtime does for a workingDir the image or volume does not have.
void MakeDirs(const char* path) noexcept {
  char buf[4096];
  std::size_t n = 0;
  for (; path[n] != '\0' && n + 1 < sizeof buf; ++n) buf[n] = path[n];
  buf[n] = '\0';
  for (std::size_t i = 1; i <= n; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    const char saved = buf[i];
    buf[i] = '\0';
    (void)mkdir(buf, 0755);
    buf[i] = saved;
  }
}

void SandboxProgram::RunAndExec(char* const* argv, char* const* envp,
                                ChildReport* report) const noexcept {
  if (Run(report) != 0) return;
  if (chdir(C(working_dir_)) != 0 && errno == ENOENT) MakeDirs(C(working_dir_));
  if (user_.set) {
    if (setgroups(groups_.size(), groups_.data()) != 0 || setgid(user_.gid) != 0 ||
        setuid(user_.uid) != 0) {
      *report = {kReportUser, errno};
      return;
    }
  }
  if (chdir(C(working_dir_)) != 0) {
    *report = {kReportChdir, errno};
    return;
  }
  int last = ENOENT;
  for (int c : candidates_) {
    struct stat st {};
    if (stat(C(c), &st) == 0 && S_ISREG(st.st_mode) && access(C(c), X_OK) == 0) {
      execve(C(c), argv, envp);
      *report = {kReportExec, errno};
      return;
    }
    if (!searched_) last = access(C(c), F_OK) == 0 ? EACCES : ENOENT;
  }
  *report = {searched_ ? kReportNotFound : kReportExec, last};
}

namespace {

Status Probe(const std::string& scratch_parent) {
  std::string tmpl = scratch_parent + "/pjemu-sandbox-probe-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    return InternalError("sandbox probe: mkdtemp in " + scratch_parent + ": " + ErrnoText(errno));
  }
  MountPlan plan;
  plan.enabled = true;
  plan.root_upper = tmpl + "/upper";
  plan.root_work = tmpl + "/work";
  plan.root_merged = tmpl + "/merged";
  auto program = SandboxProgram::Compile(plan, "", "true", {});
  Status result = Status::Ok();
  int fds[2];
  if (!program.ok()) {
    result = program.status();
  } else if (pipe2(fds, O_CLOEXEC) != 0) {
    result = InternalError("sandbox probe: pipe: " + ErrnoText(errno));
  } else {
    pid_t pid = fork();
    if (pid == 0) {
      ChildReport r;
      if (program->Run(&r) == 0) _exit(0);
      (void)!write(fds[1], &r, sizeof r);
      _exit(1);
    }
    close(fds[1]);
    ChildReport r;
    ssize_t n = pid < 0 ? -1 : read(fds[0], &r, sizeof r);
    close(fds[0]);
    if (pid > 0) waitpid(pid, nullptr, 0);
    if (pid < 0) {
      result = InternalError("sandbox probe: fork: " + ErrnoText(errno));
    } else if (n == static_cast<ssize_t>(sizeof r)) {
      result = program->Describe(r);
      std::string why =
          r.err == EPERM && geteuid() != 0 ? " (mount namespaces need root, CAP_SYS_ADMIN)" : "";
      result = Status(Code::kUnavailable,
                      "container filesystems unavailable: " + result.message() + why);
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
  return result;
}

}  // namespace

Status SandboxAvailable(const std::string& scratch_dir) {
  static std::mutex mu;
  static std::map<std::string, Status> cache;
  std::string dir = scratch_dir;
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    dir = tmp != nullptr && tmp[0] == '/' ? tmp : "/tmp";
  }
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(dir);
  if (it == cache.end()) it = cache.emplace(dir, Probe(dir)).first;
  return it->second;
}

Status PidNamespaceAvailable() {
  static const Status result = [] {
    pid_t pid = static_cast<pid_t>(
        syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
    if (pid == 0) _exit(getpid() == 1 ? 0 : 1);
    if (pid < 0) {
      return Status(Code::kUnavailable, "pid namespaces unavailable: " + ErrnoText(errno));
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      return Status(Code::kUnavailable, "pid namespaces unavailable: the child is not PID 1");
    }
    return Status::Ok();
  }();
  return result;
}

}  // namespace pjemu::process
