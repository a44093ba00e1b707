#include "emulator/cluster/cluster_options.h"

namespace pjemu::cluster {

Status ClusterOptions::Validate() const {
  auto invalid = [](const std::string& msg) { return Status(Code::kInvalid, msg); };
  if (node_name.empty()) return invalid("node_name: must not be empty");
  if (gpus < -1)
    return invalid("gpus: must be >= 0 (or -1 to detect), got " + std::to_string(gpus));
  if (gpu_sharing < 1) {
    return invalid("gpu_sharing: must be >= 1 (replicas per GPU), got " +
                   std::to_string(gpu_sharing));
  }
  if (!(backoff_scale > 0)) return invalid("backoff_scale: must be > 0");
  if (max_pods <= 0) return invalid("max_pods: must be > 0, got " + std::to_string(max_pods));
  if (port < 0 || port > 65535) {
    return invalid("port: must be in 0..65535, got " + std::to_string(port));
  }
  if (!api_server && !token.empty()) return invalid("token: needs the API server (serve)");
  if (insecure_http && !token.empty()) {
    return invalid(
        "token: a bearer token needs https (kubectl sends tokens only over TLS); "
        "drop insecure_http (--insecure-http)");
  }
  if (api_server && address.empty()) return invalid("address: must not be empty");
  if (clock == ClockKind::kVirtual && processes == ProcessKind::kReal) {
    return invalid("processes: real processes need the real clock");
  }
  if (clock == ClockKind::kVirtual && loop == LoopKind::kOwnThread) {
    return invalid("loop: a virtual clock moves only when the caller drives the loop");
  }
  if (processes == ProcessKind::kSimulated && !script) {
    return invalid("script: simulated processes need a script");
  }
  return Status::Ok();
}

}  // namespace pjemu::cluster
