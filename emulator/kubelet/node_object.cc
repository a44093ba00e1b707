#include "emulator/kubelet/node_object.h"

#include <dirent.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <thread>

namespace pjemu::kubelet {
namespace {

Json Cond(const Json& old, const std::string& type, const std::string& status,
          const std::string& reason, const std::string& message, Time now) {
  std::string transition = FormatTime(now);
  for (const Json& o : old) {
    if (o.value("type", "") == type && o.value("status", "") == status) {
      transition = o.value("lastTransitionTime", transition);
    }
  }
  return {{"type", type},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"lastHeartbeatTime", FormatTime(now)},
          {"lastTransitionTime", transition}};
}

}  // namespace

int DetectGpuCount() {
  // nvidia-smi -L prints one "GPU n: ..." line per device.
  if (std::FILE* p = popen("nvidia-smi -L 2>/dev/null", "r")) {
    int count = 0;
    char line[512];
    while (std::fgets(line, sizeof line, p)) {
      if (std::string(line).rfind("GPU ", 0) == 0) ++count;
    }
    pclose(p);
    if (count > 0) return count;
  }
  int count = 0;
  if (DIR* d = opendir("/proc/driver/nvidia/gpus")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') ++count;
    }
    closedir(d);
  }
  return count;
}

NodeResources DetectHostResources() {
  NodeResources r;
  unsigned cpus = std::thread::hardware_concurrency();
  r.cpu = std::to_string(cpus ? cpus : 1);
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  long long kb = 0;
  r.memory = "8Gi";
  while (in >> key >> kb >> unit) {
    if (key == "MemTotal:") {
      r.memory = std::to_string(kb) + "Ki";
      break;
    }
  }
  return r;
}

Json NodeConditions(const Json& old, bool ready, Time now) {
  Json out = Json::array();
  out.push_back(Cond(old, "MemoryPressure", "False", "KubeletHasSufficientMemory",
                     "kubelet has sufficient memory available", now));
  out.push_back(Cond(old, "DiskPressure", "False", "KubeletHasNoDiskPressure",
                     "kubelet has no disk pressure", now));
  out.push_back(Cond(old, "PIDPressure", "False", "KubeletHasSufficientPID",
                     "kubelet has sufficient PID available", now));
  out.push_back(
      ready ? Cond(old, "Ready", "True", "KubeletReady", "kubelet is posting ready status", now)
            : Cond(old, "Ready", "Unknown", "NodeStatusUnknown",
                   "Kubelet stopped posting node status.", now));
  return out;
}

Json BuildNode(const std::string& name, const std::string& ip,
               const std::map<std::string, std::string>& labels, const NodeResources& res,
               Time now, const Json& taints, const std::string& pod_cidr) {
  utsname u{};
  uname(&u);
  Json node_labels = {{"kubernetes.io/hostname", name},
                      {"kubernetes.io/os", "linux"},
                      {"kubernetes.io/arch", "amd64"},
                      {"beta.kubernetes.io/os", "linux"},
                      {"beta.kubernetes.io/arch", "amd64"}};
  if (res.gpus > 0 && res.gpu_replicas > 1) {
    node_labels["nvidia.com/gpu.replicas"] = std::to_string(res.gpu_replicas);
    node_labels["nvidia.com/gpu.sharing-strategy"] = "time-slicing";
  }
  for (const auto& [k, v] : labels) node_labels[k] = v;
  Json capacity = {{"cpu", res.cpu},
                   {"memory", res.memory},
                   {"pods", std::to_string(res.max_pods)},
                   {"ephemeral-storage", "100Gi"}};
  if (res.gpus > 0) {
    capacity["nvidia.com/gpu"] = std::to_string(res.gpus * std::max(res.gpu_replicas, 1));
  }
  Json spec = Json::object();
  if (!pod_cidr.empty()) {
    spec["podCIDR"] = pod_cidr;
    spec["podCIDRs"] = Json::array({pod_cidr});
  }
  if (taints.is_array() && !taints.empty()) spec["taints"] = taints;
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", name}, {"labels", node_labels}}},
      {"spec", spec},
      {"status",
       {{"capacity", capacity},
        {"allocatable", capacity},
        {"conditions", NodeConditions(Json::array(), true, now)},
        {"addresses",
         {{{"type", "InternalIP"}, {"address", ip}}, {{"type", "Hostname"}, {"address", name}}}},
        {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
        {"nodeInfo",
         {{"machineID", ""},
          {"systemUUID", ""},
          {"bootID", ""},
          {"kernelVersion", u.release},
          {"osImage", "pjemu local processes"},
          {"containerRuntimeVersion", "pjemu://0.1.0"},
          {"kubeletVersion", "v1.27.0-pjemu"},
          {"kubeProxyVersion", "v1.27.0-pjemu"},
          {"operatingSystem", "linux"},
          {"architecture", "amd64"}}}}}};
}

}  // namespace pjemu::kubelet
