#include "emulator/cluster/cluster_options.h"

#include <set>

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
  if (node_count < 1 || node_count > 250) {
    return invalid("node_count: must be in 1..250, got " + std::to_string(node_count));
  }
  if (!nodes.empty() && node_count != 1) return invalid("node_count: not with a config's nodes");
  std::set<std::string> names;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::string at = "nodes[" + std::to_string(i) + "]";
    if (nodes[i].name.empty()) return invalid(at + ".name: must not be empty");
    if (!names.insert(nodes[i].name).second)
      return invalid(at + ".name: Duplicate value: \"" + nodes[i].name + "\"");
    if (nodes[i].gpus < -1) return invalid(at + ".gpus: must be >= 0");
  }
  if (processes == ProcessKind::kSimulated && !script) {
    return invalid("script: simulated processes need a script");
  }
  return Status::Ok();
}

std::vector<NodeConfig> ResolveNodes(const ClusterOptions& options, int machine_gpus) {
  std::vector<NodeConfig> nodes = options.nodes;
  const bool from_flags = nodes.empty();
  if (from_flags) {
    for (int i = 0; i < options.node_count; ++i) {
      NodeConfig n;
      n.name = options.node_name + (i == 0 ? "" : std::to_string(i + 1));
      n.role = "";
      if (options.gpus >= 0) {
        n.gpus = options.gpus;
      } else {  // detected: the machine's GPUs shared out in order
        int from = machine_gpus * i / options.node_count;
        int to = machine_gpus * (i + 1) / options.node_count;
        for (int g = from; g < to; ++g) n.gpu_indices.push_back(g);
        n.gpus = 0;
      }
      nodes.push_back(std::move(n));
    }
  }
  std::set<int> owned;
  for (const NodeConfig& n : nodes) owned.insert(n.gpu_indices.begin(), n.gpu_indices.end());
  int next = 0;
  for (NodeConfig& n : nodes) {
    if (n.cpu.empty()) n.cpu = options.cpu;
    if (n.memory.empty()) n.memory = options.memory;
    if (n.max_pods <= 0) n.max_pods = options.max_pods;
    if (!n.gpu_indices.empty() || n.gpus <= 0) {
      n.gpus = 0;
      continue;
    }
    // A count: the machine's next free GPUs while it has them (one node: as `--gpus N` always
    // did, indices from 0), pretend ones beyond.
    if (nodes.size() == 1) continue;
    while (n.gpus > 0 && next < machine_gpus) {
      if (!owned.count(next)) {
        n.gpu_indices.push_back(next);
        owned.insert(next);
        --n.gpus;
      }
      ++next;
    }
    if (!n.gpu_indices.empty() && n.gpus > 0) {
      // Part real, part pretend: pretend ones continue the numbering past the machine's.
      for (int g = 0; g < n.gpus; ++g) n.gpu_indices.push_back(machine_gpus + g);
      n.gpus = 0;
    }
  }
  return nodes;
}

}  // namespace pjemu::cluster
