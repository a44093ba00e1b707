// The commands of the pjemu CLI (private to emulator/cli): each *_command.cc defines one Setup
// function that declares the command's flags on its CLI11 subcommand and installs a callback
// which runs the command and stores its exit code. cli.cc lists them in kCommands[].
// Thread safety: called on the main thread during parsing.
#pragma once

#include <CLI/CLI.hpp>

#include "emulator/cluster/cluster_options.h"

namespace pjemu::cli {

using CommandSetup = void (*)(CLI::App& command, int& exit_code);

struct Command {
  const char* name;
  const char* summary;
  CommandSetup setup;
};

void SetupRun(CLI::App& command, int& exit_code);
void SetupServe(CLI::App& command, int& exit_code);
void SetupValidate(CLI::App& command, int& exit_code);
void SetupVersion(CLI::App& command, int& exit_code);
void SetupCreate(CLI::App& command, int& exit_code);
void SetupApply(CLI::App& command, int& exit_code);
void SetupGet(CLI::App& command, int& exit_code);
void SetupDescribe(CLI::App& command, int& exit_code);
void SetupLogs(CLI::App& command, int& exit_code);
void SetupWait(CLI::App& command, int& exit_code);
void SetupDelete(CLI::App& command, int& exit_code);
void SetupScenario(CLI::App& command, int& exit_code);
void SetupImage(CLI::App& command, int& exit_code);

// `--sandbox auto|on|off` (ClusterOptions::sandbox), shared by run and serve.
void AddSandboxOption(CLI::App& command, cluster::ClusterOptions& options);
// `--image-store DIR` (default image::ImageStore::DefaultRoot()) and `--image-store-max SIZE`
// (ClusterOptions::image_store, image_store_max_bytes), shared by run and serve.
void AddImageStoreOption(CLI::App& command, cluster::ClusterOptions& options);
// `--config FILE` (a kind-shaped cluster config) and `--nodes N` (cluster_shape_options.cc).
void AddClusterShapeOptions(CLI::App& command, cluster::ClusterOptions& options);

}  // namespace pjemu::cli
