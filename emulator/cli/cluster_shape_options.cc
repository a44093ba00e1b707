// `--config FILE` and `--nodes N` on run and serve: the cluster's nodes (cluster_config.h).
#include "emulator/cli/commands.h"
#include "emulator/cluster/cluster_config.h"

namespace pjemu::cli {

void AddClusterShapeOptions(CLI::App& command, cluster::ClusterOptions& options) {
  command.add_option_function<std::string>(
      "--config",
      [&options](const std::string& path) {
        auto nodes = cluster::LoadClusterConfig(path);
        if (!nodes.ok()) throw CLI::ValidationError("--config", nodes.status().message());
        options.nodes = std::move(*nodes);
      },
      "a cluster config in kind's shape (kind: Cluster, nodes: with name, labels, taints, "
      "capacity, gpus; ClusterOptions::nodes)");
  command
      .add_option("--nodes", options.node_count,
                  "this many nodes (pjemu-node, pjemu-node2, ...; --gpus each; "
                  "ClusterOptions::node_count)")
      ->check(CLI::Range(1, 250))
      ->excludes("--config");
  command.add_option("--gang-scheduler-name", options.gang_scheduler_name,
                     "the Training Operator's gang scheduling: volcano or scheduler-plugins "
                     "(PodGroups, all-or-nothing binding; ClusterOptions::gang_scheduler_name)");
}

}  // namespace pjemu::cli
