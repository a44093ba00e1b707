#include "emulator/process/named_netns.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace pjemu::process {
namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// /run/netns exists and is a shared mount point, as `ip netns add` leaves it: a bind mount of
// itself the first time (mount(2) refuses MS_SHARED on a directory that is no mount point).
Status PrepareRunDir() {
  if (mkdir(kNetnsRunDir, 0755) != 0 && errno != EEXIST) {
    return Status(Code::kUnavailable, Errno(std::string("mkdir ") + kNetnsRunDir));
  }
  for (bool made = false;; made = true) {
    if (mount("", kNetnsRunDir, "none", MS_SHARED | MS_REC, nullptr) == 0) return Status::Ok();
    if (errno != EINVAL || made) break;
    if (mount(kNetnsRunDir, kNetnsRunDir, "none", MS_BIND | MS_REC, nullptr) != 0) break;
  }
  return Status(Code::kUnavailable, Errno(std::string("mount --make-shared ") + kNetnsRunDir));
}

bool IsFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

// Runs fn on a thread of its own and returns its result (the thread's namespaces die with it).
Status OnOwnThread(const std::function<Status()>& fn) {
  Status result = Status::Ok();
  std::thread t([&result, &fn] { result = fn(); });
  t.join();
  return result;
}

}  // namespace

std::string NamedNetnsPath(const std::string& name) {
  return std::string(kNetnsRunDir) + "/" + name;
}

Status AddNamedNetns(const std::string& name, const std::function<Status()>& inside) {
  if (!IsFileName(name)) return Status(Code::kInvalid, "bad network namespace name: " + name);
  RETURN_IF_ERROR(PrepareRunDir());
  const std::string path = NamedNetnsPath(name);
  int fd = open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
  if (fd < 0) {
    return Status(errno == EEXIST ? Code::kAlreadyExists : Code::kUnavailable,
                  Errno("create " + path));
  }
  close(fd);
  bool mounted = false;
  Status made = OnOwnThread([&]() -> Status {
    if (unshare(CLONE_NEWNET) != 0)
      return Status(Code::kUnavailable, Errno("unshare(CLONE_NEWNET)"));
    if (mount("/proc/thread-self/ns/net", path.c_str(), "none", MS_BIND, nullptr) != 0) {
      return Status(Code::kUnavailable, Errno("bind mount onto " + path));
    }
    mounted = true;
    return inside ? inside() : Status::Ok();
  });
  if (!made.ok()) {
    if (mounted) (void)umount2(path.c_str(), MNT_DETACH);
    (void)unlink(path.c_str());
  }
  return made;
}

Status DeleteNamedNetns(const std::string& name) {
  if (!IsFileName(name)) return Status(Code::kInvalid, "bad network namespace name: " + name);
  const std::string path = NamedNetnsPath(name);
  // EINVAL: not mounted (a file left by a failed add); the unlink below still removes it.
  if (umount2(path.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
    return InternalError(Errno("umount " + path));
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return InternalError(Errno("unlink " + path));
  return Status::Ok();
}

Status RunInNetns(const std::string& netns_path, const std::function<Status()>& fn) {
  int fd = open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(Code::kUnavailable, Errno("open " + netns_path));
  Status result = OnOwnThread([&]() -> Status {
    if (setns(fd, CLONE_NEWNET) != 0) {
      return Status(Code::kUnavailable, Errno("enter " + netns_path));
    }
    return fn();
  });
  close(fd);
  return result;
}

Status WriteNetnsSysctl(const std::string& netns_path, const std::string& key,
                        const std::string& value) {
  std::string file = "/proc/sys/" + key;
  for (std::size_t i = 10; i < file.size(); ++i) {
    if (file[i] == '.') file[i] = '/';
  }
  return RunInNetns(netns_path, [&]() -> Status {
    // Opened inside: /proc/sys/net resolves against the opening thread's namespace.
    int fd = open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return InternalError(Errno("open " + file));
    const std::string line = value + "\n";
    const bool ok = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    Status s = ok ? Status::Ok() : InternalError(Errno("write " + file));
    close(fd);
    return s;
  });
}

}  // namespace pjemu::process
