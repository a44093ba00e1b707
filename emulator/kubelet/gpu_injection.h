// What a container from an image gets of the host's NVIDIA driver when it asks for
// nvidia.com/gpu, found the way the NVIDIA container toolkit's CDI generator discovers it:
//  - device nodes: /dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidia-uvm-tools, /dev/nvidia-modeset
//    (those present) and /dev/nvidia<N> for each of the pod's GPUs;
//  - the driver's libraries (libcuda, libnvidia-*, libcudadebugger, libnvcuvid, ...) bound
//    read-only at /usr/local/nvidia/lib64 under each name the host gives them (the SONAME
//    links too, which the toolkit's create-symlinks hook makes), and its programs
//    (nvidia-smi, nvidia-debugdump, ...) at /usr/local/nvidia/bin, the paths CUDA images put on
//    LD_LIBRARY_PATH and PATH (GpuDriverEnv adds them when the image does not).
// Deviations: the toolkit binds the libraries at their host paths and runs ldconfig in the
// container (its update-ldcache hook); pjemu runs no hooks. A CDI spec in /etc/cdi is not
// read: the files are discovered as `nvidia-ctk cdi generate` would list them.
// Thread safety: functions; the host's files are read once and cached.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pjemu::kubelet {

std::vector<std::string> GpuDeviceNodes(const std::vector<int>& gpus);

// (host file, path inside the container) of every driver file to bind; empty without a driver.
std::vector<std::pair<std::string, std::string>> GpuDriverMounts();

inline constexpr const char* kGpuLibDir = "/usr/local/nvidia/lib64";
inline constexpr const char* kGpuBinDir = "/usr/local/nvidia/bin";

}  // namespace pjemu::kubelet
