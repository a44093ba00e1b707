// ClusterOptions: everything that shapes an embedded cluster (style G12), set by the CLI's flags
// (`run`, `serve`) or by tests, and checked by Validate() before anything starts. Defaults are
// the in-class initialisers; every CLI flag names the field it sets.
// Thread safety: a plain value.
#pragma once

#include <cstdint>
#include <string>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::cluster {

struct ClusterOptions {
  // Node: its name and GPU count (`--gpus`); -1 detects GPUs (nvidia-smi, /proc/driver/nvidia).
  std::string node_name = "pjemu-node";
  int gpus = -1;
  // Image map file (`--image-map`); "" = the kubelet's default (fixtures/images.yaml).
  std::string image_map;
  // The trainer program behind ${PJEMU_TRAINER} in the image map; "" = "pjemu-trainer" on PATH.
  std::string trainer_path;
  // FashionMNIST directory handed to mapped trainer images (`--dataset-dir`; the trainer's
  // --data-dir); "" = the trainer's own
  // default (/usr/share/datasets/fashion-mnist).
  std::string dataset_dir;
  // Where pod logs and the trainer's metrics land (`--output-dir`); "" = a fresh temporary
  // directory, removed by Stop() unless keep_state_dir.
  std::string state_dir;
  bool keep_state_dir = false;
  // Persisted state (`--data-dir`): the store in <data_dir>/pjemu.db (SQLite, every acknowledged
  // write durable) and, unless state_dir is set, pod logs and trainer output in <data_dir>/state;
  // a restart resumes from it. "" = everything in memory.
  std::string data_dir;
  // CrashLoopBackOff scaling (1.0 = the kubelet's 10 s doubling to 5 min).
  double backoff_scale = 1.0;
  // API server (`serve`): off for `run`.
  bool api_server = false;
  std::string address = "127.0.0.1";  // `--address`
  int port = 6443;                     // `--port`; 0 picks a free one
  std::string token;                   // `--token`; "" = no authentication
  std::uint64_t seed = 1;              // uids, generateName suffixes

  // kInvalid naming the offending field (gpus < -1, port out of range, token without API
  // server, empty node name, non-positive backoff scale).
  Status Validate() const;
};

}  // namespace pjemu::cluster
