// Sandbox: carries out a MountPlan (mount_plan.h) in the forked child of PosixProcessRunner.
// The parent compiles the plan, the container's working directory and argv[0] into a
// SandboxProgram: flat steps over precomputed C strings (every path, every mkdir of a chain,
// every mount's options), because the child of a threaded parent may only make
// async-signal-safe calls. The child then runs them in order:
//   unshare(CLONE_NEWNS); make every mount private (nothing propagates back to the host);
//   overlay(lowerdir=/, upperdir=root_upper, workdir=root_work) at root_merged;
//   pivot_root into it, the host's root kept at /.pjemu-host while the mounts are made
//   (chroot when pivot_root is refused, as on an initramfs root);
//   /dev (rbind), /sys (rbind, read-only), a fresh proc at /proc (an rbind of the host's when
//   the kernel refuses), then the host's other mounts, each bound read-only at its own path
//   (best effort: one that cannot be bound is left out; under an image path's overlay root the
//   host's separate filesystems are therefore read-only, e.g. a tmpfs /run);
//   the plan's mounts in order, targets resolved inside the new root (so an absolute symlink
//   such as /var/run -> /run stays inside it), their parents created in the root's upper layer;
//   the host's root detached; the plan's user taken on (setgroups, setgid, setuid);
//   chdir(working_dir, "/" when empty, created when missing, as runc does); argv[0] looked up
//   in the container's PATH inside the new root, then execve.
// An image root (MountPlan::root_layers) is an overlay of the image's layers instead of the
// host's /, with its own /dev (a tmpfs holding the host's null, zero, full, random, urandom and
// tty nodes bound, a private devpts, the fd and std* links) and no host mounts; the layers'
// lowerdir names are relative to their common parent (the child enters it first) so that a
// deep image's options fit in a page, as containerd shortens them.
// A failing step is reported through the runner's report pipe as a ChildReport; Describe turns
// it into the Start error, worded as runc words it:
//   error mounting "/srv/data" to rootfs at "/opt/data": no such file or directory
//   exec: "x": executable file not found in $PATH
//   chdir to cwd ("/x") set in config.json failed: no such file or directory
// The filesystem only: the PID namespace (ProcessSpec::own_pid_namespace, a clone flag), the
// network namespace and the cgroup are the runner's to give; user and IPC namespaces are the
// emulator's, /dev the host's. The process keeps its pid, process group and PDEATHSIG, so
// signals, memory sampling and the OrphanGuard work as without a plan.
// Needs CAP_SYS_ADMIN (run as root): SandboxAvailable() says whether this host can do it.
// Unprivileged user namespaces are not used (a non-root emulator runs without plans).
// Thread safety: SandboxProgram is a plain value; RunSandboxAndExec is async-signal-safe and
// only for the forked child; SandboxAvailable may be called from any thread.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "emulator/common/status.h"
#include "emulator/process/mount_plan.h"

namespace pjemu::process {

// What the child writes to the report pipe when it cannot exec. step >= 0: that step of the
// program failed; otherwise one of the kReport* values below. err: the errno.
struct ChildReport {
  int step = 0;
  int err = 0;
};
inline constexpr int kReportExec = -1;      // execve (or the lookup of an explicit path) failed
inline constexpr int kReportNotFound = -2;  // argv[0] is in no PATH entry
inline constexpr int kReportChdir = -3;     // the working directory could not be entered
inline constexpr int kReportCgroup = -4;    // the container's cgroup could not be joined
inline constexpr int kReportNetns = -5;     // the pod's network namespace could not be joined
inline constexpr int kReportUser = -6;      // the plan's user could not be taken on

class SandboxProgram {
 public:
  // The host directories of the plan (root_upper, root_work, root_merged, each overlay's upper
  // and work) are created here, in the parent. kInvalid for a plan that cannot be expressed
  // (a relative target, a ',' or ':' in an overlay path), kInternal when a directory cannot
  // be created.
  static Result<SandboxProgram> Compile(const MountPlan& plan, const std::string& working_dir,
                                        const std::string& argv0,
                                        const std::vector<std::string>& env);

  // The error Start returns for a report of this program's child.
  Status Describe(const ChildReport& report) const;

  // Forked child only. Runs the steps, then execs argv[0]; returns only on failure, with
  // *report filled in.
  void RunAndExec(char* const* argv, char* const* envp, ChildReport* report) const noexcept;
  // Forked child only. Runs the steps (no exec): 0, or -1 with *report filled in (the probe).
  int Run(ChildReport* report) const noexcept;

  std::size_t steps() const { return steps_.size(); }

 private:
  enum class Op {
    kUnshare, kHostname, kMkdir, kTouch, kMount, kPivot, kDetach, kRmdir, kSymlink, kChdir
  };
  struct Step {
    Op op = Op::kMkdir;
    int a = -1;  // indices into strs_ (-1 = none): path / mount source
    int b = -1;  // mount target, pivot put_old
    int fstype = -1;
    int data = -1;
    unsigned long flags = 0;
    int alt = -1;                 // kMount: rbind this source instead when the mount is refused
    bool optional = false;        // a failure skips the step and the next `skip` ones
    bool detach_on_fail = false;  // optional kMount: a failure also detaches b (a bind that
                                  // could not be made read-only is not left writable)
    int skip = 0;
    int message = -1;  // index into strs_: what failed, for Describe
    bool pod = false;  // a step of the plan's own mounts: its failure is the pod's (kInvalid)
  };
  int Str(std::string s);
  void Add(Step s) { steps_.push_back(s); }
  void AddMkdirs(const std::string& path, bool including_last, int message);
  void AddHostMounts();
  void AddSysAndProc();
  // An image root's /dev, /sys and /proc (mount_plan.h).
  void AddImageRootMounts(const MountPlan& plan);
  // The root's overlay: over the host's / or the image's layers.
  void AddRootOverlay(const MountPlan& plan, int message);
  Status AddPlanMount(const Mount& m);
  const char* C(int i) const noexcept { return i < 0 ? nullptr : strs_[i].c_str(); }
  void SetExec(const std::string& argv0, const std::string& working_dir,
               const std::vector<std::string>& env);
  int RunStep(const Step& s) const noexcept;

  std::vector<std::string> strs_;
  std::vector<Step> steps_;
  std::vector<int> candidates_;  // argv[0] candidates in lookup order (indices into strs_)
  bool searched_ = false;        // argv[0] had no '/': a PATH lookup
  int working_dir_ = -1;
  std::string argv0_;
  Identity user_;
  std::vector<gid_t> groups_;  // user_.groups as gid_t, for setgroups in the child
  std::string working_dir_text_;
};

// Whether this host can run sandboxed containers: a forked child does what a sandboxed start
// does (unshare, overlay of / with its upper layer in a scratch directory under scratch_dir,
// pivot_root, the host's mounts) and exits. Pass the directory the plans' root_upper will live
// in (the kubelet's root dir): an overlay upper layer cannot be on every filesystem (not on an
// overlayfs, e.g.). "" = $TMPDIR or /tmp. Once per directory per process (cached).
// kUnavailable with the reason, e.g. `container filesystems unavailable: unshare mount
// namespace: operation not permitted (mount namespaces need root, CAP_SYS_ADMIN)`: an emulator
// not run as root (no unprivileged user namespaces are tried), a kernel without overlayfs, a
// seccomp profile refusing mount(2) (an unprivileged Docker container).
Status SandboxAvailable(const std::string& scratch_dir = "");

// Whether a process can be started as PID 1 of a PID namespace of its own
// (ProcessSpec::own_pid_namespace): a clone(CLONE_NEWPID) child that exits at once. Cached.
// kUnavailable with the reason (`pid namespaces unavailable: operation not permitted`).
Status PidNamespaceAvailable();

}  // namespace pjemu::process
