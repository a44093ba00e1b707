#include "emulator/cluster/real_time_cluster.h"

#include <unistd.h>

#include <filesystem>

#include "emulator/client/local_client.h"
#include "emulator/cluster/parts_actions.h"
#include "emulator/cluster/trainer_runner.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/validation.h"
#include "emulator/kubelet/kubelet.h"
#include "emulator/process/posix_process_runner.h"
#include "emulator/scheduler/scheduler.h"
#include "emulator/store/store.h"

namespace pjemu::cluster {

// Every component, declared in construction order (destroyed in reverse).
class RealTimeCluster::Parts {
 public:
  RealClock clock;
  EventLoop loop{clock};
  std::unique_ptr<store::Store> store;
  std::unique_ptr<client::Client> local;
  std::unique_ptr<client::Client> wrapped_client;
  std::unique_ptr<process::PosixProcessRunner> posix;
  std::unique_ptr<TrainerRunner> trainer;
  std::unique_ptr<process::ProcessRunner> wrapped_runner;
  std::unique_ptr<controller::Controller> controller;
  std::unique_ptr<scheduler::Scheduler> scheduler;
  std::unique_ptr<kubelet::Kubelet> kubelet;
  kubelet::KubeletOptions kubelet_options;
  bool node_up = true;

  client::Client& actors() { return wrapped_client ? *wrapped_client : *local; }
  process::ProcessRunner& runner() {
    return wrapped_runner ? *wrapped_runner : static_cast<process::ProcessRunner&>(*trainer);
  }
};

RealTimeCluster::RealTimeCluster(RealTimeClusterOptions options) : options_(std::move(options)) {}

RealTimeCluster::~RealTimeCluster() { Stop(); }

Status RealTimeCluster::Start() {
  if (parts_) return Status(Code::kInvalid, "cluster already started");
  std::error_code ec;
  if (options_.state_dir.empty()) {
    std::string tmpl =
        (std::filesystem::temp_directory_path(ec) / "pjemu-scenario-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return InternalError("cannot create " + tmpl);
    state_dir_ = tmpl;
    temp_state_dir_ = true;
  } else {
    state_dir_ = std::filesystem::absolute(options_.state_dir, ec).string();
    std::filesystem::create_directories(state_dir_, ec);
    if (ec) return InternalError("cannot create " + state_dir_ + ": " + ec.message());
  }
  auto p = std::make_unique<Parts>();
  store::StoreOptions so;
  so.seed = options_.seed;
  p->store = std::make_unique<store::Store>(p->clock, so);
  p->store->SetValidator(api::PyTorchJobs(), controller::ValidatePyTorchJob);
  p->local = client::MakeLocalClient(*p->store);
  if (options_.wrap_client) p->wrapped_client = options_.wrap_client(*p->local);
  p->posix = std::make_unique<process::PosixProcessRunner>(p->loop);
  p->trainer = std::make_unique<TrainerRunner>(*p->posix, options_.trainer_path, state_dir_,
                                               options_.dataset_dir);
  if (options_.wrap_runner) p->wrapped_runner = options_.wrap_runner(*p->trainer);

  kubelet::KubeletOptions& ko = p->kubelet_options;
  ko.node_name = options_.node_name;
  ko.root_dir = state_dir_ + "/kubelet";
  ko.image_map_path = options_.image_map;
  ko.image_vars = {
      {"PJEMU_TRAINER", options_.trainer_path},
      {"PJEMU_BIN", std::filesystem::path(options_.trainer_path).parent_path().string()}};
  ko.gpus = options_.gpus;
  ko.backoff_scale = options_.backoff_scale;
  ko.network = std::make_shared<kubelet::ClusterNetwork>();
  parts_ = std::move(p);
  if (Status started = CreateAndStartActorsIn(parts_.get()); !started.ok()) {
    Stop();
    return started;
  }
  parts_->loop.RunUntilIdle();
  return Status::Ok();
}

void RealTimeCluster::Stop() {
  if (parts_) {
    Parts* p = parts_.get();
    StopActorsIn(p);
    p->loop.RunUntil([p] { return p->runner().running() == 0; }, 10s);
    parts_.reset();  // the PosixProcessRunner's destructor reaps anything left
  }
  if (temp_state_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(state_dir_, ec);
    temp_state_dir_ = false;
  }
}

void RealTimeCluster::Step(Duration d) {
  parts_->loop.RunUntil([] { return false; }, d);
}

Status RealTimeCluster::RestartController() { return RestartControllerIn(parts_.get()); }

Status RealTimeCluster::SetNodePower(const std::string& node, bool up) {
  return SetNodePowerIn(parts_.get(), node, up);
}

Status RealTimeCluster::EvictPod(const std::string& ns, const std::string& name,
                                const std::string& message) {
  return EvictPodIn(parts_.get(), ns, name, message);
}

void RealTimeCluster::SetPullDelay(const std::string& glob, Duration delay) {
  if (parts_) parts_->kubelet->SetPullDelay(glob, delay);
}

std::string RealTimeCluster::MetricsPath(const Json& pod) const {
  return TrainerMetricsPath(state_dir_, pod);
}

client::Client& RealTimeCluster::client() { return *parts_->local; }
EventLoop& RealTimeCluster::loop() { return parts_->loop; }
api::PodLogs& RealTimeCluster::logs() { return *parts_->kubelet; }

}  // namespace pjemu::cluster
