#include "emulator/kubelet/gpu_injection.h"

#include <sys/stat.h>

#include <filesystem>
#include <mutex>
#include <regex>

namespace pjemu::kubelet {
namespace fs = std::filesystem;
namespace {

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// The driver libraries the toolkit's discovery names (internal/discover, pkg/nvcdi).
const std::regex& DriverLibrary() {
  static const std::regex re(
      R"(^lib(cuda|cudadebugger|nvidia-[a-z0-9_-]+|nvcuvid|nvoptix|nvidia-ml)\.so(\.[0-9.]+)?$)");
  return re;
}

std::vector<std::pair<std::string, std::string>> Discover() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                          "/usr/lib", "/lib64"}) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (!std::regex_match(name, DriverLibrary())) continue;
      std::error_code ec2;
      fs::path real = fs::canonical(entry.path(), ec2);
      if (ec2 || !fs::is_regular_file(real, ec2)) continue;
      out.emplace_back(real.string(), std::string(kGpuLibDir) + "/" + name);
    }
  }
  for (const char* program : {"nvidia-smi", "nvidia-debugdump", "nvidia-persistenced",
                              "nvidia-cuda-mps-control", "nvidia-cuda-mps-server"}) {
    for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
      std::string path = std::string(dir) + "/" + program;
      if (Exists(path)) {
        out.emplace_back(path, std::string(kGpuBinDir) + "/" + program);
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> GpuDeviceNodes(const std::vector<int>& gpus) {
  std::vector<std::string> out;
  if (gpus.empty()) return out;
  for (const char* node :
       {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"}) {
    if (Exists(node)) out.push_back(node);
  }
  for (int g : gpus) {
    std::string node = "/dev/nvidia" + std::to_string(g);
    if (Exists(node)) out.push_back(node);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> GpuDriverMounts() {
  static std::once_flag once;
  static std::vector<std::pair<std::string, std::string>> cached;
  std::call_once(once, [] { cached = Discover(); });
  return cached;
}

}  // namespace pjemu::kubelet
