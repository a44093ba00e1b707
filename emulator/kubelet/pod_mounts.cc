#include "emulator/kubelet/pod_mounts.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "emulator/api/json_fields.h"

namespace pjemu::kubelet {
namespace fs = std::filesystem;
namespace {

using api::Field;
using api::Str;
using process::Mount;

std::string Normal(const std::string& path) {
  std::string s = fs::path(path).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::size_t Depth(const std::string& target) {
  return static_cast<std::size_t>(std::count(target.begin(), target.end(), '/')) - (target == "/");
}

Mount Bind(const std::string& source, const std::string& target) {
  Mount m;
  m.source = source;
  m.target = target;
  return m;
}

bool HasDotDot(const std::string& path) {
  for (const auto& part : fs::path(path)) {
    if (part == "..") return true;
  }
  return false;
}

bool Inside(const fs::path& path, const fs::path& root) {
  auto [r, p] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return r == root.end();
}

// The host path a volumeMount binds: the volume's path, or path/subPath after the checks.
Result<std::string> MountSource(const Json& vm, const std::string& field, const PodVolume& v,
                                const std::string& container) {
  std::string sub = vm.value("subPath", "");
  if (sub.empty()) return v.host_path;
  if (fs::path(sub).is_absolute()) {
    return Status(Code::kInvalid,
                  field + ".subPath: Invalid value: \"" + sub + "\": must be a relative path");
  }
  if (HasDotDot(sub)) {
    return Status(Code::kInvalid,
                  field + ".subPath: Invalid value: \"" + sub + "\": must not contain '..'");
  }
  std::error_code ec;
  fs::path root = fs::weakly_canonical(v.host_path, ec);
  fs::path joined = fs::path(v.host_path) / sub;
  if (!fs::exists(joined, ec) && !fs::is_symlink(joined, ec) && !v.atomic) {
    fs::create_directories(joined, ec);  // the kubelet creates a missing subPath
  }
  fs::path real = fs::weakly_canonical(joined, ec);
  if (ec || !Inside(real, root)) {
    return Status(Code::kInvalid, "failed to prepare subPath for volumeMount \"" +
                                      vm.value("name", "") + "\" of container \"" + container +
                                      "\"");
  }
  return real.string();
}

}  // namespace

std::string PodHostname(const Json& pod) {
  const Json& meta = Field(pod, "metadata");
  std::string hostname = Str(Field(pod, "spec"), "hostname");
  if (hostname.empty()) hostname = Str(meta, "name");
  return hostname.substr(0, 63);
}

// An image map's `files` entry: a directory as a copy-on-write overlay (upper/work under
// `layer`); a single file as a bind of a private copy (`layer`/file), since overlayfs takes
// directories only: the container may write it, the host's file never changes.
Result<Mount> ImageFileMount(const std::string& source, const std::string& layer) {
  Mount m;
  std::error_code ec;
  if (!fs::is_regular_file(source, ec)) {
    m.kind = Mount::Kind::kOverlay;
    m.source = source;
    m.upper = layer + "/upper";
    m.work = layer + "/work";
    return m;
  }
  fs::create_directories(layer, ec);
  const std::string copy = layer + "/" + fs::path(source).filename().string();
  fs::copy_file(source, copy, fs::copy_options::overwrite_existing, ec);
  if (ec) return InternalError("copy image file " + source + " to " + copy + ": " + ec.message());
  m.kind = Mount::Kind::kBind;
  m.source = copy;
  return m;
}

Result<ContainerMounts> PlanContainerMounts(const Json& container, const std::string& field,
                                            const MountInputs& in) {
  ContainerMounts out;
  process::MountPlan& plan = out.plan;
  plan.enabled = true;
  plan.hostname = in.hostname;
  plan.root_upper = in.container_dir + "/root-upper";
  plan.root_work = in.container_dir + "/root-work";
  plan.root_merged = in.container_dir + "/root";
  std::vector<Mount> mounts;
  plan.root_layers = in.root_layers;
  plan.devices = in.devices;
  plan.user = in.user;
  for (std::size_t i = 0; i < in.image_files.size(); ++i) {
    std::string layer = in.container_dir + "/layers/" + std::to_string(i);
    ASSIGN_OR_RETURN(Mount m, ImageFileMount(in.image_files[i].second, layer));
    m.target = Normal(in.image_files[i].first);
    mounts.push_back(m);
  }
  std::vector<Mount> volume_mounts;
  const std::string name = container.value("name", "");
  const Json& list = api::ArrayOr(api::Field(container, "volumeMounts"));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Json& vm = list[i];
    std::string f = field + ".volumeMounts[" + std::to_string(i) + "]";
    std::string vname = vm.value("name", "");
    auto v = in.volumes.find(vname);
    if (v == in.volumes.end()) {
      return Status(Code::kInvalid, f + ".name: Not found: \"" + vname + "\"");
    }
    std::string path = vm.value("mountPath", "");
    if (!fs::path(path).is_absolute()) {
      return Status(Code::kInvalid,
                    f + ".mountPath: Invalid value: \"" + path + "\": must be an absolute path");
    }
    Mount m;
    ASSIGN_OR_RETURN(m.source, MountSource(vm, f, v->second, name));
    m.target = Normal(path);
    m.read_only = vm.value("readOnly", false);
    volume_mounts.push_back(m);
  }
  auto taken = [&](const std::string& target) {
    return std::any_of(volume_mounts.begin(), volume_mounts.end(),
                       [&](const Mount& m) { return m.target == target; });
  };
  // An image has its own /tmp; the host's root gets an empty private one.
  if (in.root_layers.empty() && !taken("/tmp")) {
    mounts.push_back(Bind(in.container_dir + "/tmp", "/tmp"));
  }
  if (!taken("/dev/shm")) mounts.push_back(Bind(in.pod_shm, "/dev/shm"));
  mounts.insert(mounts.end(), volume_mounts.begin(), volume_mounts.end());
  if (!taken("/etc/hosts") && !in.etc_hosts.empty()) {
    mounts.push_back(Bind(in.etc_hosts, "/etc/hosts"));
  }
  for (const auto& [host, inside] : in.driver_files) {
    Mount m = Bind(host, Normal(inside));
    m.read_only = true;
    mounts.push_back(m);
  }
  for (const std::string& path : in.root_layers.empty() ? in.host_paths
                                                        : std::vector<std::string>{}) {
    Mount m = Bind(path, Normal(path));
    m.read_only = true;
    mounts.push_back(m);
  }
  std::stable_sort(mounts.begin(), mounts.end(), [](const Mount& a, const Mount& b) {
    return Depth(a.target) < Depth(b.target);
  });
  plan.mounts = std::move(mounts);
  out.working_dir = container.value("workingDir", "");
  if (out.working_dir.empty()) out.working_dir = in.image_working_dir;
  if (out.working_dir.empty()) out.working_dir = "/";
  return out;
}

std::string EtcHosts(const Json& pod, const std::string& pod_ip,
                     const std::vector<HostsService>& services) {
  const Json& meta = pod["metadata"];
  const Json& spec = api::ObjectOr(api::Field(pod, "spec"));
  std::string ns = meta.value("namespace", "default");
  std::string out =
      "# Kubernetes-managed hosts file.\n"
      "127.0.0.1\tlocalhost\n"
      "::1\tlocalhost ip6-localhost ip6-loopback\n"
      "fe00::0\tip6-localnet\n"
      "fe00::0\tip6-mcastprefix\n"
      "fe00::1\tip6-allnodes\n"
      "fe00::2\tip6-allrouters\n";
  std::string hostname = PodHostname(pod);
  if (!pod_ip.empty()) {
    std::string sub = spec.value("subdomain", "");
    out += pod_ip + "\t";
    if (!sub.empty()) out += hostname + "." + sub + "." + ns + ".svc.cluster.local\t";
    out += hostname + "\n";
  }
  for (const Json& alias : spec.value("hostAliases", Json::array())) {
    std::string names;
    for (const Json& h : alias.value("hostnames", Json::array())) {
      names += "\t" + h.get<std::string>();
    }
    if (!names.empty())
      out += "\n# Entries added by HostAliases.\n" + alias.value("ip", "") + names + "\n";
  }
  if (!services.empty()) out += "\n# Services of the cluster (pjemu: in place of cluster DNS).\n";
  for (const auto& s : services) {
    std::string full = s.name + "." + s.ns;
    out += s.ip + "\t" + (s.ns == ns ? s.name + " " : "") + full + " " + full + ".svc " + full +
           ".svc.cluster.local\n";
  }
  return out;
}

Status WriteInPlace(const std::string& path, const std::string& content) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) return Status(Code::kInternal, "write " + path + " failed");
  return Status::Ok();
}

}  // namespace pjemu::kubelet
