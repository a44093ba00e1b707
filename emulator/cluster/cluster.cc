#include "emulator/cluster/cluster.h"

#include <unistd.h>

#include "emulator/cluster/cluster_parts.h"

namespace pjemu::cluster {
namespace {

// The cluster's own watches (controller, scheduler, kubelet) are drained on its loop and always
// catch up, and a queued event is a pointer to the stored object; the store's default of 20,000
// would end those watches during a burst of 10,000 jobs (30,000 pods), each end costing a full
// replay. One limit for every wiring.
constexpr std::size_t kWatchQueueLimit = 1'000'000;


// Where pods reach the API server (KUBERNETES_SERVICE_HOST): pods share the host's network, so
// the address serve listens on, loopback when it listens on every address. A pod network
// changes this one value.
std::string PodApiServerHost(const std::string& listen_address) {
  if (listen_address == "0.0.0.0" || listen_address.empty()) return "127.0.0.1";
  if (listen_address == "::") return "::1";
  return listen_address;
}


}  // namespace

std::unique_ptr<Clock> MakeClock(ClockKind kind) {
  if (kind == ClockKind::kVirtual) return std::make_unique<FakeClock>();
  return std::make_unique<RealClock>();
}

std::string BuiltinImageMapPath(const ClusterOptions& options) {
  return options.builtin_image_map.empty() ? "fixtures/images.yaml" : options.builtin_image_map;
}


Status Cluster::Parts::Build() {
  RETURN_IF_ERROR(LoadImages());
  RETURN_IF_ERROR(OpenStore());
  local = client::MakeLocalClient(*store);
  in_process = client::MakeLocalClient(*store, store::Form::kInProcess);
  if (options.wrap_client) wrapped_client = options.wrap_client(*in_process);
  MakeRunner();
  if (options.api_server && !options.insecure_http) {  // pods trust serve's CA: https only
    std::string pki = options.data_dir.empty() ? "" : options.data_dir + "/pki";
    auto tokens = apiserver::ServiceAccountTokens::LoadOrCreate(pki, *clock);
    if (!tokens.ok()) return tokens.status();
    sa_tokens = std::move(*tokens);
    in_cluster = std::make_shared<api::InClusterAccess>();
    in_cluster->issuer = sa_tokens.get();
  }
  MakeNodes();
  NewControllers();
  scheduler::SchedulerOptions so;
  // The gang schedulers' names are served too (their PodGroups bound all or nothing).
  so.gang_scheduler_names = {api::kSchedulerPluginsSchedulerName, api::kVolcanoSchedulerName};
  if (!options.gang_scheduler_name.empty())
    so.gang_scheduler_names.push_back(api::GangPodSchedulerName(options.gang_scheduler_name));
  scheduler = std::make_unique<scheduler::Scheduler>(actors(), loop, so);
  taint_manager = std::make_unique<scheduler::TaintManager>(actors(), loop);
  volumes = std::make_unique<storage::VolumeController>(actors(), loop, MakeVolumeOptions());
  tensorboards = std::make_unique<tensorboard::TensorBoardController>(actors(), loop);
  kueue = std::make_unique<kueue::KueueController>(actors(), loop, kinds::All());
  for (std::size_t i = 0; i < nodes.size(); ++i) NewKubelet(i);
  RouteNodes();
  return Status::Ok();
}

// Every registered job kind's controller, in the registry's order.
void Cluster::Parts::NewControllers() {
  controllers.clear();
  // Each with the operators' flags (the Training Operator's --gang-scheduler-name).
  controller::KindOptions kind_options;
  kind_options.gang_scheduler_name = options.gang_scheduler_name;
  for (const controller::KindDescriptor* kind : kinds::All()) {
    controllers.push_back(std::make_unique<controller::Controller>(
        actors(), loop, controller::SpecOf(*kind, actors(), *clock, kind_options)));
  }
}

Status Cluster::Parts::LoadImages() {
  auto loaded = kubelet::ImageMap::LoadLayered({BuiltinImageMapPath(options), options.image_map});
  if (!loaded.ok()) return loaded.status();
  images = std::move(*loaded);
  std::string trainer = options.trainer_path.empty() ? "pjemu-trainer" : options.trainer_path;
  image_vars = {{"PJEMU_TRAINER", trainer},
                {"PJEMU_BIN", std::filesystem::path(trainer).parent_path().string()}};
  if (!options.image_store.empty()) {
    image::StoreOptions so;
    so.root = options.image_store;
    so.max_bytes = options.image_store_max_bytes;
    auto store = image::ImageStore::Open(so);
    if (!store.ok()) return store.status().WithContext("image store");
    image_service = image::MakeImageService(*store, image::RegistryOptions::FromEnvironment());
    if (options.wrap_image_service) {
      wrapped_image_service = options.wrap_image_service(*image_service);
    }
  }
  return Status::Ok();
}

Status Cluster::Parts::OpenStore() {
  store::StoreOptions so;
  so.seed = options.seed;
  so.watch_queue_limit = kWatchQueueLimit;
  so.namespace_lifecycle = true;  // the namespace controller finishes Terminating namespaces
  if (options.data_dir.empty()) {
    store = std::make_unique<store::Store>(*clock, so);
  } else {
    persist::PersistOptions po;
    po.data_dir = options.data_dir;
    auto persisted = persist::OpenStore(*clock, so, po);
    if (!persisted.ok()) return persisted.status();
    durability = std::move(persisted->durability);
    store = std::move(persisted->store);
  }
  return Status::Ok();
}

void Cluster::Parts::MakeRunner() {
  if (options.processes == ProcessKind::kSimulated) {
    base_runner = std::make_unique<process::SimulatedProcessRunner>(loop, options.script);
  } else {
    posix = std::make_unique<process::PosixProcessRunner>(loop);
    base_runner = std::make_unique<TrainerRunner>(*posix, image_vars.at("PJEMU_TRAINER"), state_dir,
                                                  options.dataset_dir);
  }
  if (options.wrap_runner) wrapped_runner = options.wrap_runner(*base_runner);
}

// Provisioned volumes live with the store (<data_dir>/storage) when it persists, else in the
// node's state (<kubelet root>/storage), as local-path keeps them on the node.
storage::VolumeControllerOptions Cluster::Parts::MakeVolumeOptions() const {
  storage::VolumeControllerOptions vo;
  std::error_code ec;
  vo.storage_root = options.data_dir.empty()
                        ? nodes.front().options.root_dir + "/storage"
                        : std::filesystem::absolute(options.data_dir, ec).string() + "/storage";
  vo.node_name = nodes.front().options.node_name;
  return vo;
}

Status Cluster::Parts::OnLoop(const std::function<Status()>& fn) {
  if (!loop_thread.joinable() || loop_thread.get_id() == std::this_thread::get_id()) return fn();
  std::promise<Status> done;
  auto result = done.get_future();
  loop.Post([&] { done.set_value(fn()); });
  return result.get();
}

void Cluster::Parts::StartClusterServices() {
  const auto& net = nodes.front().options.network;
  if (cluster_services || !net || !net->isolated()) return;
  network::ClusterServicesOptions so;
  if (posix) so.guard = &posix->guard();  // dnsmasq is held with the pods' processes
  auto started = network::ClusterServices::Start(actors(), loop, net->bridge(), so);
  if (!started.ok()) {
    std::fprintf(stderr, "pjemu: cluster: DNS off: %s\n", started.status().message().c_str());
    return;
  }
  cluster_services = std::move(*started);
  network::ClusterServices* s = cluster_services.get();
  using DnsState = kubelet::ClusterNetwork::DnsState;
  net->SetDns(
      s->dns_ip(),
      [s](const std::string& name, const std::string& pod_ns) { return s->Resolves(name, pod_ns); },
      [s] {
        switch (s->dns_state()) {
          case network::Dnsmasq::State::kStarting:
            return DnsState::kStarting;
          case network::Dnsmasq::State::kServing:
            return DnsState::kServing;
          case network::Dnsmasq::State::kFailed:
            return DnsState::kFailed;
        }
        return DnsState::kFailed;
      });
}

void Cluster::Parts::StopActors() {
  if (cluster_services) {
    nodes.front().options.network->SetDns("", nullptr);
    cluster_services.reset();
  }
  for (auto& c : controllers) c->Stop();
  kueue->Stop();
  scheduler->Stop();
  if (namespace_controller) namespace_controller->Stop();
  volumes->Stop();
  tensorboards->Stop();
  taint_manager->Stop();
  for (Node& n : nodes) n.kubelet->Stop();
  runner().KillAll();
}

Cluster::Cluster(ClusterOptions options) : options_(std::move(options)) {}

Cluster::~Cluster() { Stop(); }

Status Cluster::Start() {
  RETURN_IF_ERROR(options_.Validate());
  if (parts_) return Status(Code::kInvalid, "cluster already started");
  // Without an API server to start first (`pjemu run`; serve's /readyz comes before anything
  // else), the kubelet's sandbox probes (a forked child each: tens of ms on a loaded machine) run
  // while the rest is built; the kubelet's Start finds their results cached (joined before it).
  std::jthread probes;
  if (!options_.api_server && options_.processes == ProcessKind::kReal &&
      options_.sandbox != kubelet::KubeletOptions::Sandbox::kOff) {
    probes = std::jthread([] {
      if (process::SandboxAvailable().ok()) (void)process::PidNamespaceAvailable();
    });
  }
  RETURN_IF_ERROR(PrepareStateDir());
  auto p = std::make_unique<Parts>(options_, state_dir_);
  if (Status built = p->Build(); !built.ok()) {
    RemoveTempStateDir();
    return built;
  }
  parts_ = std::move(p);
  // The API server first: the kubelet hands its address and CA to the pods it starts.
  if (options_.api_server) {
    if (Status s = StartApiServer(); !s.ok()) {
      Stop();
      return Status(Code::kUnavailable, s.message());
    }
  }
  MakeNamespaceController();
  if (probes.joinable()) probes.join();
  if (Status started = StartActors(); !started.ok()) {
    Stop();
    return started;
  }
  return Status::Ok();
}

// Where a throwaway state directory goes: $TMPDIR when set; else, for simulated processes,
// the tmpfs at /dev/shm when there is one (they write only their log lines, and on a disk the
// kubelet's per-pod directories cost more than the control plane: ~0.6 ms a mkdir on this
// project's ext4 against microseconds on tmpfs); else the system's temporary directory.
std::filesystem::path Cluster::TempBase() const {
  std::error_code ec;
  const char* tmpdir = std::getenv("TMPDIR");
  bool simulated = options_.processes == ProcessKind::kSimulated;
  if ((tmpdir == nullptr || *tmpdir == '\0') && simulated && !options_.keep_state_dir &&
      ::access("/dev/shm", W_OK | X_OK) == 0) {
    return "/dev/shm";
  }
  return std::filesystem::temp_directory_path(ec);
}

// State directory: pod logs (kubelet) and trainer working directories.
Status Cluster::PrepareStateDir() {
  std::error_code ec;
  if (options_.state_dir.empty() && !options_.data_dir.empty()) {
    options_.state_dir = options_.data_dir + "/state";  // logs survive with the store
    options_.keep_state_dir = true;
  }
  if (options_.state_dir.empty()) {
    std::string tmpl = (TempBase() / "pjemu-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return InternalError("cannot create " + tmpl);
    state_dir_ = tmpl;
    temp_state_dir_ = !options_.keep_state_dir;
    return Status::Ok();
  }
  state_dir_ = std::filesystem::absolute(options_.state_dir, ec).string();
  std::filesystem::create_directories(state_dir_, ec);
  if (ec) return InternalError("cannot create " + state_dir_ + ": " + ec.message());
  return Status::Ok();
}

void Cluster::RemoveTempStateDir() {
  if (!temp_state_dir_) return;
  std::error_code ec;
  std::filesystem::remove_all(state_dir_, ec);
  temp_state_dir_ = false;
}

// The kubelet first, so that the node exists before anything is scheduled.
Status Cluster::StartActors() {
  Parts* p = parts_.get();
  if (options_.loop == LoopKind::kOwnThread) {
    p->loop_thread = std::thread([p] { p->loop.Run(); });
  }
  RETURN_IF_ERROR(p->OnLoop([p]() -> Status {
    for (Parts::Node& n : p->nodes) RETURN_IF_ERROR(n.kubelet->Start());
    p->StartClusterServices();
    RETURN_IF_ERROR(p->volumes->Start());
    RETURN_IF_ERROR(p->tensorboards->Start());
    RETURN_IF_ERROR(p->namespace_controller->Start());
    // As the kinds' manifests do (the Trainer's default runtime): before any of their jobs.
    for (const controller::KindDescriptor* kind : kinds::All()) {
      if (kind->install) RETURN_IF_ERROR(kind->install(*p->local));
    }
    RETURN_IF_ERROR(p->scheduler->Start());
    RETURN_IF_ERROR(p->taint_manager->Start());
    for (auto& c : p->controllers) RETURN_IF_ERROR(c->Start());
    RETURN_IF_ERROR(p->kueue->Start());
    return Status::Ok();
  }));
  if (options_.loop == LoopKind::kCaller) p->loop.RunUntilIdle();
  return Status::Ok();
}

Status Cluster::StartApiServer() {
  Parts* p = parts_.get();
  apiserver::ApiServerOptions ao;
  ao.address = options_.address;
  ao.port = static_cast<std::uint16_t>(options_.port);
  ao.token = options_.token;
  ao.tls = !options_.insecure_http;
  ao.limits.min_request_timeout = std::chrono::seconds(options_.min_request_timeout_seconds);
  if (!options_.data_dir.empty()) ao.pki_dir = options_.data_dir + "/pki";
  ao.clock = p->clock.get();
  ui::ConsoleOptions co;
  co.metrics_path = [this](const Json& pod) { return MetricsPath(pod); };
  if (p->posix) {
    // The console's CPU/memory charts sample the pods' processes.
    process::PosixProcessRunner* posix = p->posix.get();
    // With an NVIDIA driver (NVML loads), the GPU figures of each pod too.
    process::ResourceSamplerOptions so;
    if (std::shared_ptr<process::NvmlGpuUsage> nvml = process::NvmlGpuUsage::Open()) {
      so.gpu = [nvml] { return nvml->ByProcess(); };
    }
    p->sampler = std::make_unique<process::ResourceSampler>(
        *p->clock, [posix] { return posix->Live(); }, so,
        [posix](process::Pid pid) { return posix->CgroupUsageOf(pid); });
    p->sampler->Start();
    p->usage = std::make_unique<process::SampledUsage>(*p->sampler, *p->clock,
                                                       process::ResourceSamplerOptions{}.interval);
    ao.usage = p->usage.get();  // kubectl top
    co.usage = [sampler = p->sampler.get()](const std::string& ns, const std::string& pod) {
      std::vector<ui::ContainerUsage> out;
      for (auto& [container, samples] : sampler->Samples(ns + "/" + pod + "/")) {
        ui::ContainerUsage usage{container, {}};
        for (const auto& s : samples) {
          usage.points.push_back(
              {s.time, s.cpu_cores, s.memory_bytes, s.gpu_util_percent, s.gpu_memory_bytes});
        }
        out.push_back(std::move(usage));
      }
      return out;
    };
  }
  if (p->posix) p->AddIoSampler(co);
  ao.mounts.push_back(ui::MakeConsoleMount(*p->store, std::move(co)));
  ao.exec = &p->router;  // pods/exec enters the containers of the pod's kubelet
  ao.service_account_tokens = p->sa_tokens.get();
  p->api = std::make_unique<apiserver::ApiServer>(*p->store, &p->router, ao);
  RETURN_IF_ERROR(p->api->Start());
  if (!p->in_cluster) return Status::Ok();
  p->in_cluster->host = PodApiServerHost(options_.address);
  p->in_cluster->port = p->api->port();
  p->in_cluster->ca_pem = p->api->certificate_pem();
  return Status::Ok();
}

// The kube-controller-manager controllers of namespaces: with the API server they publish its
// CA as kube-root-ca.crt.
void Cluster::MakeNamespaceController() {
  Parts* p = parts_.get();
  namespaces::NamespaceControllerOptions no;
  if (p->in_cluster) no.root_ca_pem = p->in_cluster->ca_pem;
  no.lifecycle = true;
  p->namespace_controller = std::make_unique<namespaces::NamespaceController>(p->actors(), p->loop, no);
}

// The console's network and storage I/O charts sample the pods' processes too.
void Cluster::Parts::AddIoSampler(ui::ConsoleOptions& co) {
  process::PosixProcessRunner* runner = posix.get();
  io_sampler = std::make_unique<process::IoSampler>(*clock, [runner] { return runner->Live(); });
  io_sampler->Start();
  co.io = [sampler = io_sampler.get()](const std::string& ns, const std::string& pod) {
    std::vector<ui::ContainerIo> out;
    for (auto& [container, samples] : sampler->Samples(ns + "/" + pod + "/")) {
      ui::ContainerIo io{container, {}};
      for (const auto& s : samples) {
        io.points.push_back({s.time, s.rx_bytes_per_s, s.tx_bytes_per_s, s.read_bytes_per_s,
                             s.write_bytes_per_s, s.reads_per_s, s.writes_per_s});
      }
      out.push_back(std::move(io));
    }
    return out;
  };
}

void Cluster::Stop() {
  if (parts_) {
    Parts* p = parts_.get();
    if (p->api) p->api->Stop();
    if (p->sampler) p->sampler->Stop();
    if (p->io_sampler) p->io_sampler->Stop();
    (void)p->OnLoop([p] {
      p->StopActors();
      return Status::Ok();
    });
    WaitForExits();
    if (p->loop_thread.joinable()) {
      p->loop.Stop();
      p->loop_thread.join();
    }
    parts_.reset();  // the PosixProcessRunner's destructor reaps anything left
  }
  RemoveTempStateDir();
}

// Lets the runner report the exits (and the kubelet flush the logs) before the loop goes away.
void Cluster::WaitForExits() {
  Parts* p = parts_.get();
  auto running = [p] { return p->runner().running(); };
  if (!p->loop_thread.joinable()) {
    p->loop.RunUntil([&] { return running() == 0; },
                     options_.clock == ClockKind::kVirtual ? Duration(1min) : Duration(10s));
    return;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    std::size_t left = 0;
    (void)p->OnLoop([&] {
      left = running();
      return Status::Ok();
    });
    if (left == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void Cluster::Step(Duration d) {
  if (options_.clock == ClockKind::kVirtual) {
    parts_->loop.RunFor(d);
  } else {
    parts_->loop.RunUntil([] { return false; }, d);
  }
}

Status Cluster::RestartController() {
  if (!parts_) return Status(Code::kInvalid, "cluster not started");
  Parts* p = parts_.get();
  return p->OnLoop([p] {
    for (auto& c : p->controllers) c->Stop();
    p->NewControllers();
    for (auto& c : p->controllers) RETURN_IF_ERROR(c->Start());
    return Status::Ok();
  });
}

client::Client& Cluster::client() { return *parts_->local; }
client::Client& Cluster::in_process_client() { return *parts_->in_process; }
api::PodLogs& Cluster::logs() { return parts_->router; }
Clock& Cluster::clock() { return *parts_->clock; }
EventLoop& Cluster::loop() { return parts_->loop; }
const std::string& Cluster::state_dir() const { return state_dir_; }
int Cluster::api_port() const { return parts_ && parts_->api ? parts_->api->port() : 0; }

std::string Cluster::Kubeconfig() const {
  return parts_ && parts_->api ? parts_->api->Kubeconfig("default", /*trust_certificate=*/true)
                               : std::string();
}

// One container of a replica against the image map, the way the kubelet will resolve it.
Status Cluster::CheckContainerImage(const api::PodTemplateRef& t, const char* field,
                                    std::size_t i, const Json& c) const {
  auto strings = [&](const char* key) {
    std::vector<std::string> out;
    for (const Json& v : c.value(key, Json::array())) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    }
    return out;
  };
  std::string image = c.value("image", "");
  auto plan =
      parts_->images.Resolve(image, strings("command"), strings("args"), parts_->image_vars);
  if (plan.ok()) return Status::Ok();
  // With an image store, an unmapped image is the store's, or pulled: only a reference that
  // does not parse is refused here.
  if (parts_->image_service && plan.status().code() == Code::kNotFound) return Status::Ok();
  return Status(plan.status().code(),
                t.name + " container \"" + c.value("name", "") +
                    "\": " + kubelet::ResolveFailureReason(plan.status()) + ": " +
                    plan.status().message() + "\n  pjemu runs images as local programs: map \"" +
                    image +
                    "\" in an image map and pass it with --image-map FILE (see "
                    "fixtures/images.yaml; for the nccl seed on a CPU-only machine: "
                    "--image-map fixtures/image-maps/seed-nccl-on-cpu.yaml --gpus 2)",
                Json{{"field", t.field + ".spec." + field + "[" + std::to_string(i) + "].image"}});
}

Status Cluster::CheckImages(const api::ResourceType& type, const Json& job) const {
  if (!parts_) return Status(Code::kInvalid, "cluster not started");
  if (!type.workload) return Status::Ok();
  for (const api::PodTemplateRef& t : type.workload->pod_templates(job)) {
    for (const char* field : {"initContainers", "containers"}) {
      const Json& list = api::ArrayOr(api::Field(t.spec, field));
      for (std::size_t i = 0; i < list.size(); ++i) {
        RETURN_IF_ERROR(CheckContainerImage(t, field, i, list[i]));
      }
    }
  }
  return Status::Ok();
}

std::string Cluster::MetricsPath(const Json& pod) const {
  if (options_.processes == ProcessKind::kSimulated) return "";
  return TrainerMetricsPath(state_dir_, pod);
}

}  // namespace pjemu::cluster
