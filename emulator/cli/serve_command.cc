// `pjemu serve [--port N] [--address A] [--kubeconfig F] [--dataset-dir D] [--gpus N]
// [--gpu-sharing N] [--token T]
// [--insecure-http] [--image-map F] [--output-dir D] [--data-dir D]`: the embedded cluster plus
// its Kubernetes API server, until SIGINT/SIGTERM (with --data-dir it resumes from D:
// emulator/persist/README.md). HTTPS by default, with a CA made at the first start (kept in
// D/pki with --data-dir); writes a kubeconfig carrying that CA so that `KUBECONFIG=F kubectl
// ...` (and pjemu's own kubectl-like commands) reach it; stops every process it started.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/install_paths.h"
#include "emulator/cli/remote.h"
#include "emulator/cli/signals.h"
#include "emulator/cluster/cluster.h"

namespace pjemu::cli {
namespace {

struct ServeFlags {
  cluster::ClusterOptions cluster;
  std::string kubeconfig;
  std::string output_dir;
};

int RunServe(ServeFlags flags) {
  flags.cluster.api_server = true;
  flags.cluster.state_dir = flags.output_dir;
  flags.cluster.keep_state_dir = !flags.output_dir.empty();
  if (flags.cluster.trainer_path.empty()) flags.cluster.trainer_path = DefaultTrainerPath();
  flags.cluster.builtin_image_map = DefaultImageMap();
  if (Status s = flags.cluster.Validate(); !s.ok()) {
    std::cerr << "error: " << s.message() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  std::string kubeconfig = flags.kubeconfig.empty() ? DefaultServeKubeconfig() : flags.kubeconfig;
  InstallStopSignals();
  cluster::Cluster cluster(flags.cluster);
  if (Status s = cluster.Start(); !s.ok()) {
    cluster.Stop();
    std::cerr << "error: cannot start the cluster: " << s.message() << "\n";
    return static_cast<int>(s.code() == Code::kInvalid ? ExitCode::kInvalidInput
                                                       : ExitCode::kFailed);
  }
  std::error_code ec;
  std::filesystem::path kc(kubeconfig);
  if (kc.has_parent_path()) std::filesystem::create_directories(kc.parent_path(), ec);
  {
    std::ofstream out(kubeconfig, std::ios::trunc);
    out << cluster.Kubeconfig();
    if (!out) {
      cluster.Stop();
      std::cerr << "error: cannot write the kubeconfig " << kubeconfig << "\n";
      return static_cast<int>(ExitCode::kFailed);
    }
  }
  std::filesystem::permissions(
      kubeconfig, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
  std::string scheme = flags.cluster.insecure_http ? "http" : "https";
  std::cout << fmt::format("pjemu: serving the Kubernetes API on {}://{}:{}\n", scheme,
                           flags.cluster.address, cluster.api_port())
            << "kubeconfig: " << kubeconfig << "\n"
            << "  KUBECONFIG=" << kubeconfig << " kubectl get pytorchjobs -A\n";
  if (!flags.cluster.insecure_http && !flags.cluster.data_dir.empty()) {
    std::cout << "CA: " << flags.cluster.data_dir << "/pki/ca.crt (kept across restarts)\n";
  }
  std::cout << "pod logs and trainer output: " << cluster.state_dir() << "\n"
            << "Press Ctrl-C to stop (every pod process is stopped with it).\n";
  std::cout.flush();
  while (StopSignal() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::cout << "pjemu: stopping (signal " << StopSignal() << ")\n";
  cluster.Stop();
  std::cout << "pjemu: stopped\n";
  return 0;
}

}  // namespace

void SetupServe(CLI::App& command, int& exit_code) {
  auto flags = std::make_shared<ServeFlags>();
  command
      .add_option("--port", flags->cluster.port,
                  "API server port (ClusterOptions::port; 0 = a free one)")
      ->capture_default_str();
  command
      .add_option("--address", flags->cluster.address,
                  "address to listen on (ClusterOptions::address)")
      ->capture_default_str();
  command.add_option("--kubeconfig", flags->kubeconfig,
                     "write the kubeconfig here (default ~/.pjemu/kubeconfig)");
  command.add_option("--token", flags->cluster.token,
                     "require this bearer token (ClusterOptions::token; serves https)");
  command.add_flag("--insecure-http", flags->cluster.insecure_http,
                   "serve plain HTTP instead of HTTPS (ClusterOptions::insecure_http; not with "
                   "--token)");
  command
      .add_option("--min-request-timeout", flags->cluster.min_request_timeout_seconds,
                  "end a watch without timeoutSeconds after this many seconds times a random "
                  "factor in [1, 2), as kube-apiserver does")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command.add_option("--gpus", flags->cluster.gpus, "GPUs of the node (ClusterOptions::gpus)");
  command
      .add_option("--gpu-sharing", flags->cluster.gpu_sharing,
                  "advertise each GPU N times, as the NVIDIA device plugin's time-slicing "
                  "(ClusterOptions::gpu_sharing)")
      ->check(CLI::PositiveNumber);
  command.add_option(
      "--dataset-dir", flags->cluster.dataset_dir,
      "FashionMNIST directory for mapped trainer images (ClusterOptions::dataset_dir)");
  command.add_option("--image-map", flags->cluster.image_map,
                     "your image map, layered over the built-in one (ClusterOptions::image_map)");
  AddImageStoreOption(command, flags->cluster);
  AddClusterShapeOptions(command, flags->cluster);
  AddSandboxOption(command, flags->cluster);
  command.add_option("--output-dir", flags->output_dir,
                     "keep pod logs and trainer output here (ClusterOptions::state_dir)");
  command.add_option("--data-dir", flags->cluster.data_dir,
                     "persist the cluster here and resume from it on restart: the store "
                     "(SQLite, every acknowledged write durable), pod logs and trainer output "
                     "(ClusterOptions::data_dir; default: in memory)");
  command.footer(
      "\nExample:\n  pjemu serve --port 6443 --kubeconfig /tmp/pjemu.kubeconfig &\n"
      "  KUBECONFIG=/tmp/pjemu.kubeconfig kubectl create -f fixtures/seeds/pytorch-simple.yaml");
  command.callback([flags, &exit_code] { exit_code = RunServe(*flags); });
}

}  // namespace pjemu::cli
