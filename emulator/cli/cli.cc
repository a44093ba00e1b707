#include "emulator/cli/cli.h"

#include <cstdio>
#include <iostream>

#include "emulator/cli/commands.h"

namespace pjemu::cli {
namespace {

constexpr Command kCommands[] = {
    {"run", "run PyTorchJobs on an embedded cluster and wait for them", &SetupRun},
    {"serve", "run the cluster and its Kubernetes API server until stopped", &SetupServe},
    {"validate", "default and validate PyTorchJob manifests; start nothing", &SetupValidate},
    {"create", "create objects from manifests on a running `pjemu serve`", &SetupCreate},
    {"apply", "create or update objects from manifests on a running `pjemu serve`", &SetupApply},
    {"get", "list or show objects, like kubectl get", &SetupGet},
    {"describe", "show an object and its events, like kubectl describe", &SetupDescribe},
    {"logs", "print (or follow) a pod's log", &SetupLogs},
    {"wait", "wait for a condition on objects, like kubectl wait", &SetupWait},
    {"delete", "delete objects by manifest or by name", &SetupDelete},
    {"scenario", "run scenario files (faults and expectations): pjemu scenario run FILE...",
     &SetupScenario},
    {"image", "the node's image store: pjemu image ls|pull|load|rm|prune", &SetupImage},
    {"version", "print the pjemu version", &SetupVersion},
};

constexpr char kExamples[] = R"(
Examples:
  # Run the seed job end to end on an embedded cluster (exit 0 when it Succeeded)
  pjemu run -f fixtures/seeds/pytorch-simple.yaml

  # The nccl seed on a CPU-only machine: map its placeholder image onto the trainer with gloo
  pjemu run -f fixtures/seeds/pytorch_job_mnist_nccl.yaml \
      --image-map fixtures/image-maps/seed-nccl-on-cpu.yaml

  # Check a manifest without running it (prints the defaulted job)
  pjemu validate -f fixtures/seeds/pytorch-simple.yaml

  # Run fault-injection scenarios; JUnit XML and one HTML report per file
  pjemu scenario run scenarios/*.yaml --junit out/junit.xml --output-dir out

  # Serve the Kubernetes API and use kubectl (or pjemu's own kubectl-like commands)
  pjemu serve --port 6443 --kubeconfig /tmp/pjemu.kubeconfig &
  KUBECONFIG=/tmp/pjemu.kubeconfig kubectl create -f fixtures/seeds/pytorch-simple.yaml
  pjemu --kubeconfig /tmp/pjemu.kubeconfig get pytorchjobs -n kubeflow
  pjemu wait --for=condition=Succeeded pytorchjob/pytorch-simple -n kubeflow --timeout=10m

Exit codes: 0 ok, 1 a job failed or a request was refused, 2 invalid input, 3 timeout,
130 interrupted.)";

}  // namespace

int Main(int argc, char** argv) {
  CLI::App app("pjemu: a local Kubernetes cluster emulator for Kubeflow PyTorchJobs", "pjemu");
  app.footer(kExamples);
  app.require_subcommand(1);
  int exit_code = 0;
  for (const Command& command : kCommands) {
    CLI::App* sub = app.add_subcommand(command.name, command.summary);
    command.setup(*sub, exit_code);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // --help and --version are successes; every other parse error is invalid input.
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kInvalidInput);
  }
  std::fflush(stdout);
  return exit_code;
}

}  // namespace pjemu::cli
