#include "emulator/cluster/cluster.h"

#include <unistd.h>

#include <filesystem>
#include <future>
#include <thread>

#include "emulator/apiserver/apiserver.h"
#include "emulator/client/local_client.h"
#include "emulator/cluster/trainer_runner.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/validation.h"
#include "emulator/kubelet/image_map.h"
#include "emulator/kubelet/kubelet.h"
#include "emulator/persist/sqlite_durability.h"
#include "emulator/process/posix_process_runner.h"
#include "emulator/process/resource_sampler.h"
#include "emulator/scheduler/scheduler.h"
#include "emulator/store/store.h"
#include "emulator/ui/console.h"

namespace pjemu::cluster {

// Every component, declared in construction order (destroyed in reverse).
class Cluster::Parts {
 public:
  RealClock clock;
  EventLoop loop{clock};
  std::unique_ptr<persist::SqliteDurability> durability;  // with --data-dir; outlives the store
  std::unique_ptr<store::Store> store;
  std::unique_ptr<client::Client> client;
  std::unique_ptr<process::PosixProcessRunner> posix;
  std::unique_ptr<process::ResourceSampler> sampler;  // the console's CPU/memory charts
  std::unique_ptr<TrainerRunner> runner;
  std::unique_ptr<controller::Controller> controller;
  std::unique_ptr<scheduler::Scheduler> scheduler;
  std::unique_ptr<kubelet::Kubelet> kubelet;
  std::unique_ptr<apiserver::ApiServer> api;
  std::thread loop_thread;
  kubelet::ImageMap images;
  std::map<std::string, std::string> image_vars;

  // Runs fn on the loop thread and waits for its result.
  Status OnLoop(std::function<Status()> fn) {
    if (!loop_thread.joinable()) return fn();
    std::promise<Status> done;
    auto result = done.get_future();
    loop.Post([&] { done.set_value(fn()); });
    return result.get();
  }
};

Cluster::Cluster(ClusterOptions options) : options_(std::move(options)) {}

Cluster::~Cluster() { Stop(); }

Status Cluster::Start() {
  RETURN_IF_ERROR(options_.Validate());
  if (parts_) return Status(Code::kInvalid, "cluster already started");
  // State directory: pod logs (kubelet) and trainer working directories.
  std::error_code ec;
  if (options_.state_dir.empty() && !options_.data_dir.empty()) {
    options_.state_dir = options_.data_dir + "/state";  // logs survive with the store
    options_.keep_state_dir = true;
  }
  if (options_.state_dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path(ec) / "pjemu-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return InternalError("cannot create " + tmpl);
    state_dir_ = tmpl;
    temp_state_dir_ = !options_.keep_state_dir;
  } else {
    state_dir_ = std::filesystem::absolute(options_.state_dir, ec).string();
    std::filesystem::create_directories(state_dir_, ec);
    if (ec) return InternalError("cannot create " + state_dir_ + ": " + ec.message());
  }

  auto p = std::make_unique<Parts>();
  std::string image_map = options_.image_map.empty() ? "fixtures/images.yaml" : options_.image_map;
  auto images = kubelet::ImageMap::Load(image_map);
  if (!images.ok()) return images.status();
  p->images = std::move(*images);
  std::string trainer = options_.trainer_path.empty() ? "pjemu-trainer" : options_.trainer_path;
  p->image_vars = {{"PJEMU_TRAINER", trainer},
                   {"PJEMU_BIN", std::filesystem::path(trainer).parent_path().string()}};

  store::StoreOptions so;
  so.seed = options_.seed;
  if (options_.data_dir.empty()) {
    p->store = std::make_unique<store::Store>(p->clock, so);
  } else {
    persist::PersistOptions po;
    po.data_dir = options_.data_dir;
    auto persisted = persist::OpenStore(p->clock, so, po);
    if (!persisted.ok()) return persisted.status();
    p->durability = std::move(persisted->durability);
    p->store = std::move(persisted->store);
  }
  p->store->SetValidator(api::PyTorchJobs(), controller::ValidatePyTorchJob);
  p->client = client::MakeLocalClient(*p->store);
  p->posix = std::make_unique<process::PosixProcessRunner>(p->loop);
  p->runner = std::make_unique<TrainerRunner>(*p->posix, trainer, state_dir_, options_.dataset_dir);

  kubelet::KubeletOptions ko;
  ko.node_name = options_.node_name;
  ko.root_dir = state_dir_ + "/kubelet";
  ko.image_map_path = image_map;
  ko.image_vars = p->image_vars;
  if (options_.gpus >= 0) ko.gpus = options_.gpus;
  ko.backoff_scale = options_.backoff_scale;
  p->controller = std::make_unique<controller::Controller>(*p->client, p->loop);
  p->scheduler = std::make_unique<scheduler::Scheduler>(*p->client, p->loop);
  p->kubelet = std::make_unique<kubelet::Kubelet>(*p->client, p->loop, *p->runner, ko);

  Parts* raw = p.get();
  parts_ = std::move(p);
  raw->loop_thread = std::thread([raw] { raw->loop.Run(); });
  Status started = raw->OnLoop([raw]() -> Status {
    RETURN_IF_ERROR(raw->kubelet->Start());
    RETURN_IF_ERROR(raw->scheduler->Start());
    RETURN_IF_ERROR(raw->controller->Start());
    return Status::Ok();
  });
  if (!started.ok()) {
    Stop();
    return started;
  }
  if (options_.api_server) {
    apiserver::ApiServerOptions ao;
    ao.address = options_.address;
    ao.port = static_cast<std::uint16_t>(options_.port);
    ao.token = options_.token;
    ao.tls = !options_.token.empty();
    ao.clock = &raw->clock;
    // The web console at /ui/, with the CPU/memory sampler of the pods' processes.
    process::PosixProcessRunner* posix = raw->posix.get();
    raw->sampler = std::make_unique<process::ResourceSampler>(
        raw->clock, [posix] { return posix->Live(); });
    raw->sampler->Start();
    ui::ConsoleOptions co;
    co.metrics_path = [this](const Json& pod) { return MetricsPath(pod); };
    co.usage = [sampler = raw->sampler.get()](const std::string& ns, const std::string& pod) {
      std::vector<ui::ContainerUsage> out;
      for (auto& [container, samples] : sampler->Samples(ns + "/" + pod + "/")) {
        ui::ContainerUsage usage{container, {}};
        for (const auto& s : samples) usage.points.push_back({s.time, s.cpu_cores, s.rss_bytes});
        out.push_back(std::move(usage));
      }
      return out;
    };
    ao.mounts.push_back(ui::MakeConsoleMount(*raw->store, std::move(co)));
    raw->api = std::make_unique<apiserver::ApiServer>(*raw->store, raw->kubelet.get(), ao);
    if (Status s = raw->api->Start(); !s.ok()) {
      Stop();
      return Status(Code::kUnavailable, s.message());
    }
  }
  return Status::Ok();
}

void Cluster::Stop() {
  if (!parts_) return;
  Parts* p = parts_.get();
  if (p->api) p->api->Stop();
  if (p->sampler) p->sampler->Stop();
  if (p->loop_thread.joinable()) {
    // Actors stop on the loop thread; the kubelet SIGKILLs its pods' process groups.
    (void)p->OnLoop([p] {
      p->controller->Stop();
      p->scheduler->Stop();
      p->kubelet->Stop();
      p->runner->KillAll();
      return Status::Ok();
    });
    // Let the runner report the exits (and flush the logs) before the loop goes away.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (p->runner->running() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    p->loop.Stop();
    p->loop_thread.join();
  }
  parts_.reset();  // the PosixProcessRunner's destructor reaps anything left
  if (temp_state_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(state_dir_, ec);
    temp_state_dir_ = false;
  }
}

client::Client& Cluster::client() { return *parts_->client; }
api::PodLogs& Cluster::logs() { return *parts_->kubelet; }
Clock& Cluster::clock() { return parts_->clock; }
const std::string& Cluster::state_dir() const { return state_dir_; }
int Cluster::api_port() const { return parts_ && parts_->api ? parts_->api->port() : 0; }

std::string Cluster::Kubeconfig() const {
  return parts_ && parts_->api ? parts_->api->Kubeconfig() : std::string();
}

Status Cluster::CheckImages(const Json& job) const {
  if (!parts_) return Status(Code::kInvalid, "cluster not started");
  const Json& specs = job.value("spec", Json::object()).value("pytorchReplicaSpecs", Json::object());
  for (auto it = specs.begin(); it != specs.end(); ++it) {
    const Json& pod_spec = it.value().value("template", Json::object()).value("spec", Json::object());
    for (const char* field : {"initContainers", "containers"}) {
      const Json& list = pod_spec.value(field, Json::array());
      for (std::size_t i = 0; i < list.size(); ++i) {
        const Json& c = list[i];
        auto strings = [&](const char* key) {
          std::vector<std::string> out;
          for (const Json& v : c.value(key, Json::array())) {
            if (v.is_string()) out.push_back(v.get<std::string>());
          }
          return out;
        };
        std::string image = c.value("image", "");
        auto plan = parts_->images.Resolve(image, strings("command"), strings("args"),
                                           parts_->image_vars);
        if (!plan.ok()) {
          std::string reason = plan.status().code() == Code::kNotFound ? "ErrImagePull"
                                                                       : "InvalidImageName";
          return Status(plan.status().code(),
                        "spec.pytorchReplicaSpecs." + it.key() + " container \"" +
                            c.value("name", "") + "\": " + reason + ": " +
                            plan.status().message() +
                            "\n  pjemu runs images as local programs: map \"" + image +
                            "\" in an image map and pass it with --image-map FILE (see "
                            "fixtures/images.yaml; for the nccl seed on a CPU-only machine: "
                            "--image-map fixtures/image-maps/seed-nccl-on-cpu.yaml --gpus 2)",
                        Json{{"field", "spec.pytorchReplicaSpecs[" + it.key() + "].template.spec." +
                                           field + "[" + std::to_string(i) + "].image"}});
        }
      }
    }
  }
  return Status::Ok();
}

std::string Cluster::MetricsPath(const Json& pod) const {
  return TrainerMetricsPath(state_dir_, pod);
}

}  // namespace pjemu::cluster
