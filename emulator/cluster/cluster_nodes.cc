// The cluster's nodes: one kubelet per ResolveNodes entry, routed for logs and exec, and the
// node-level fault actions (cluster.h).
#include "emulator/cluster/cluster.h"
#include "emulator/cluster/cluster_parts.h"

namespace pjemu::cluster {

void Cluster::Parts::MakeNodes() {
  bool detect = options.gpus < 0 && options.nodes.empty() && options.node_count > 1;
  for (const NodeConfig& n : options.nodes) detect |= n.gpus > 0;
  const int machine_gpus = detect ? kubelet::DetectGpuCount() : 0;
  auto network = std::make_shared<kubelet::ClusterNetwork>();  // shared; survives power cycles
  const std::vector<NodeConfig> configs = ResolveNodes(options, machine_gpus);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const NodeConfig& n = configs[i];
    Node node;
    kubelet::KubeletOptions& ko = node.options;
    ko.node_name = n.name;
    ko.node_index = static_cast<int>(i);
    ko.node_labels = n.labels;
    ko.node_taints = n.taints;
    ko.gpu_indices = n.gpu_indices;
    ko.gpus = n.gpus;
    ko.cpu = n.cpu;
    ko.memory = n.memory;
    ko.max_pods = n.max_pods;
    ko.network = network;
    ko.root_dir = state_dir + "/kubelet";  // shared: pod directories are named by uid
    ko.image_map_path = BuiltinImageMapPath(options);
    ko.user_image_map_path = options.image_map;
    ko.image_vars = image_vars;
    ko.gpu_sharing = options.gpu_sharing;
    ko.backoff_scale = options.backoff_scale;
    ko.sandbox = options.sandbox;
    // One node as before: GPUs as --gpus said, or detected by the kubelet.
    if (configs.size() == 1 && options.nodes.empty() && options.gpus < 0) {
      ko.gpus.reset();
      ko.gpu_indices.clear();
    }
    nodes.push_back(std::move(node));
  }
}

void Cluster::Parts::RouteNodes() {
  std::vector<kubelet::Kubelet*> kubelets;
  for (Node& n : nodes) kubelets.push_back(n.kubelet.get());
  router.Set(std::move(kubelets));
}

void Cluster::Parts::NewKubelet(std::size_t i) {
  Node& node = nodes[i];
  kubelet::KubeletOptions ko = node.options;
  ko.in_cluster = in_cluster;
  ko.image_service = wrapped_image_service ? wrapped_image_service.get() : image_service.get();
  std::unique_ptr<kubelet::ImageCache> cache;
  std::unique_ptr<kubelet::ImagePuller> puller;
  if (options.wrap_images) {
    cache = std::make_unique<kubelet::ImageCache>();
    puller = options.wrap_images(*cache);
    ko.image_puller = puller.get();
  }
  // The old kubelet (stopped) goes before the image cache it used.
  node.kubelet = std::make_unique<kubelet::Kubelet>(actors(), loop, runner(), ko);
  node.image_puller = std::move(puller);
  node.image_cache = std::move(cache);
}

// Down: the kubelet stops (its processes die with it). Up: a fresh kubelet registers the node.
Status Cluster::SetNodePower(const std::string& node, bool up) {
  if (!parts_) return Status(Code::kInvalid, "cluster not started");
  if (parts_->api) return Status(Code::kInvalid, "node power: not with the API server");
  Parts* p = parts_.get();
  return p->OnLoop([p, node, up]() -> Status {
    for (std::size_t i = 0; i < p->nodes.size(); ++i) {
      Parts::Node& n = p->nodes[i];
      if (n.options.node_name != node) continue;
      if (up == n.up) return Status::Ok();
      n.up = up;
      if (!up) {
        n.kubelet->Stop();
        return Status::Ok();
      }
      p->NewKubelet(i);
      p->RouteNodes();
      return p->nodes[i].kubelet->Start();
    }
    return NotFoundError("nodes", node);
  });
}

Status Cluster::EvictPod(const std::string& ns, const std::string& name,
                         const std::string& message) {
  if (!parts_) return Status(Code::kInvalid, "cluster not started");
  Parts* p = parts_.get();
  return p->OnLoop([&] {
    Status last = NotFoundError("pods", name);
    for (Parts::Node& n : p->nodes) {
      if (!n.up) continue;
      last = n.kubelet->EvictPod(ns, name, message);
      if (last.code() != Code::kNotFound) return last;
    }
    return last;
  });
}

}  // namespace pjemu::cluster
