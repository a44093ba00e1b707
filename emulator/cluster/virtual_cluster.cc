#include "emulator/cluster/virtual_cluster.h"

#include <unistd.h>

#include <filesystem>

#include "emulator/cluster/parts_actions.h"
#include "emulator/client/local_client.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/validation.h"
#include "emulator/kubelet/image_map.h"
#include "emulator/kubelet/kubelet.h"
#include "emulator/scheduler/scheduler.h"
#include "emulator/store/store.h"

namespace pjemu::cluster {

// Every component, declared in construction order (destroyed in reverse).
class VirtualCluster::Parts {
 public:
  FakeClock clock;
  EventLoop loop{clock};
  std::unique_ptr<store::Store> store;
  std::unique_ptr<client::Client> local;
  std::unique_ptr<client::Client> wrapped_client;
  std::unique_ptr<process::SimulatedProcessRunner> simulated;
  std::unique_ptr<process::ProcessRunner> wrapped_runner;
  std::unique_ptr<controller::Controller> controller;
  std::unique_ptr<scheduler::Scheduler> scheduler;
  std::unique_ptr<kubelet::Kubelet> kubelet;
  kubelet::KubeletOptions kubelet_options;  // to power the node on again
  bool node_up = true;
  kubelet::ImageMap images;

  client::Client& actors() { return wrapped_client ? *wrapped_client : *local; }
  process::ProcessRunner& runner() {
    return wrapped_runner ? *wrapped_runner : static_cast<process::ProcessRunner&>(*simulated);
  }
};

VirtualCluster::VirtualCluster(VirtualClusterOptions options) : options_(std::move(options)) {}

VirtualCluster::~VirtualCluster() { Stop(); }

Status VirtualCluster::Start() {
  if (parts_) return Status(Code::kInvalid, "cluster already started");
  std::error_code ec;
  if (options_.root_dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path(ec) / "pjemu-virtual-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return InternalError("cannot create " + tmpl);
    root_dir_ = tmpl;
    temp_root_ = true;
  } else {
    root_dir_ = options_.root_dir;
    std::filesystem::create_directories(root_dir_, ec);
  }
  auto p = std::make_unique<Parts>();
  auto images = kubelet::ImageMap::Load(options_.image_map);
  if (!images.ok()) return images.status();
  p->images = std::move(*images);

  store::StoreOptions so;
  so.seed = options_.seed;
  // The cluster's own watches are drained on this loop and always catch up; a queued event is a
  // pointer to the stored object. With the default 20,000 a burst of 10,000 jobs (30,000 pods)
  // ended the controller's, scheduler's and kubelet's watches, each end costing a full replay
  // (issue 10).
  so.watch_queue_limit = 1'000'000;
  p->store = std::make_unique<store::Store>(p->clock, so);
  p->store->SetValidator(api::PyTorchJobs(), controller::ValidatePyTorchJob);
  p->local = client::MakeLocalClient(*p->store);
  if (options_.wrap_client) p->wrapped_client = options_.wrap_client(*p->local);
  p->simulated = std::make_unique<process::SimulatedProcessRunner>(p->loop, options_.script);
  if (options_.wrap_runner) p->wrapped_runner = options_.wrap_runner(*p->simulated);

  kubelet::KubeletOptions ko;
  ko.node_name = options_.node_name;
  ko.root_dir = root_dir_ + "/kubelet";
  ko.image_map_path = options_.image_map;
  ko.image_vars = {{"PJEMU_TRAINER", "pjemu-trainer"}, {"PJEMU_BIN", ""}};
  ko.gpus = options_.gpus;
  ko.cpu = options_.cpu;
  ko.memory = options_.memory;
  ko.max_pods = options_.max_pods;
  ko.backoff_scale = options_.backoff_scale;
  ko.network = std::make_shared<kubelet::ClusterNetwork>();
  p->kubelet_options = ko;
  parts_ = std::move(p);
  if (Status started = CreateAndStartActorsIn(parts_.get()); !started.ok()) {
    Stop();
    return started;
  }
  parts_->loop.RunUntilIdle();
  return Status::Ok();
}

void VirtualCluster::Stop() {
  if (parts_) {
    Parts* p = parts_.get();
    StopActorsIn(p);
    p->loop.RunUntil([p] { return p->simulated->running() == 0; }, 1min);
    parts_.reset();
  }
  if (temp_root_) {
    std::error_code ec;
    std::filesystem::remove_all(root_dir_, ec);
    temp_root_ = false;
  }
}

Status VirtualCluster::RestartController() { return RestartControllerIn(parts_.get()); }

Status VirtualCluster::SetNodePower(const std::string& node, bool up) {
  return SetNodePowerIn(parts_.get(), node, up);
}

Status VirtualCluster::EvictPod(const std::string& ns, const std::string& name,
                               const std::string& message) {
  return EvictPodIn(parts_.get(), ns, name, message);
}

void VirtualCluster::SetPullDelay(const std::string& glob, Duration delay) {
  if (parts_) parts_->kubelet->SetPullDelay(glob, delay);
}

client::Client& VirtualCluster::client() { return *parts_->local; }
client::Client& VirtualCluster::actor_client() { return parts_->actors(); }
process::ProcessRunner& VirtualCluster::runner() { return parts_->runner(); }
api::PodLogs& VirtualCluster::logs() { return *parts_->kubelet; }
EventLoop& VirtualCluster::loop() { return parts_->loop; }
FakeClock& VirtualCluster::clock() { return parts_->clock; }

Status VirtualCluster::CheckImage(const std::string& image) const {
  if (!parts_) return Status(Code::kInvalid, "cluster not started");
  auto plan = parts_->images.Resolve(image, {}, {}, {{"PJEMU_TRAINER", "pjemu-trainer"}});
  return plan.status();
}

}  // namespace pjemu::cluster
