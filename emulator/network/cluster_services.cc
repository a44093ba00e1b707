#include "emulator/network/cluster_services.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "emulator/api/resources.h"
#include "emulator/process/exec_path.h"

namespace pjemu::network {
namespace {

namespace fs = std::filesystem;

// Directories of emulators that are gone: /run/pjemu-<pid>-dns where <pid> no longer runs.
void RemoveStaleDirs() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/run", ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("pjemu-", 0) != 0 || name.size() < 11 ||
        name.compare(name.size() - 4, 4, "-dns") != 0) {
      continue;
    }
    std::string pid = name.substr(6, name.size() - 10);
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (kill(std::stoi(pid), 0) == 0 || errno != ESRCH) continue;
    fs::remove_all(e.path(), ec);
  }
}

// `dir` and `dir/hosts`, readable by everyone (dnsmasq reads as `nobody`).
Status MakeDirs(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir + "/hosts", ec);
  if (ec) return Status(Code::kUnavailable, "cannot create " + dir + ": " + ec.message());
  const auto mode = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                    fs::perms::others_read | fs::perms::others_exec;
  fs::permissions(dir, mode, ec);
  fs::permissions(dir + "/hosts", mode, ec);
  return Status::Ok();
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << text;
  out.close();
  if (!out) return InternalError("cannot write " + path);
  std::error_code ec;
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                            fs::perms::others_read, ec);
  return Status::Ok();
}

std::vector<const Json*> Values(const std::map<std::string, std::shared_ptr<const Json>>& m) {
  std::vector<const Json*> out;
  out.reserve(m.size());
  for (const auto& [key, object] : m) out.push_back(object.get());
  return out;
}

}  // namespace

ClusterServices::ClusterServices(client::Client& client, EventLoop& loop,
                                 std::shared_ptr<process::BridgeNetwork> bridge,
                                 ClusterServicesOptions options)
    : loop_(loop), bridge_(std::move(bridge)), options_(std::move(options)) {
  client::InformerOptions so;
  so.name = "cluster dns services";
  service_informer_ = std::make_unique<client::Informer>(
      client, loop, api::Services(), so,
      [this](const api::WatchEvent& e) { Take(services_, e); });
  client::InformerOptions po;
  po.name = "cluster dns pods";
  pod_informer_ = std::make_unique<client::Informer>(
      client, loop, api::Pods(), po, [this](const api::WatchEvent& e) { Take(pods_, e); });
}

Result<std::unique_ptr<ClusterServices>> ClusterServices::Start(
    client::Client& client, EventLoop& loop, std::shared_ptr<process::BridgeNetwork> bridge,
    ClusterServicesOptions options) {
  if (!bridge) return Status(Code::kUnavailable, "no pod network");
  if (options.dir.empty()) options.dir = "/run/pjemu-" + std::to_string(getpid()) + "-dns";
  RemoveStaleDirs();
  RETURN_IF_ERROR(MakeDirs(options.dir));
  std::unique_ptr<ClusterServices> s(
      new ClusterServices(client, loop, std::move(bridge), std::move(options)));
  const ClusterServicesOptions& o = s->options_;
  RETURN_IF_ERROR(s->WriteHosts(""));
  Status added = s->bridge_->AddNodeAddress(o.dns_ip);
  if (!added.ok()) return Status(Code::kUnavailable, added.message());
  DnsmasqOptions dns;
  dns.netns_path = s->bridge_->node_netns_path();
  dns.listen_address = o.dns_ip;
  dns.hosts_dir = o.dir + "/hosts";
  dns.log_file = o.dir + "/dnsmasq.log";
  dns.guard = o.guard;
  ASSIGN_OR_RETURN(s->dnsmasq_, Dnsmasq::Start(dns, [](const Status& started) {
                     if (started.ok()) return;
                     std::fprintf(stderr, "pjemu: cluster: DNS off: %s\n",
                                  started.message().c_str());
                   }));
  s->SetUpClusterIps();
  RETURN_IF_ERROR(s->service_informer_->Start());
  RETURN_IF_ERROR(s->pod_informer_->Start());
  return s;
}

ClusterServices::~ClusterServices() { Stop(); }

// IPv4 forwarding now (a write in process); the table once a ClusterIP Service has a ready
// endpoint (Sync): an empty one changes nothing, and `nft` is a process of its own.
void ClusterServices::SetUpClusterIps() {
  Status s = bridge_->SetNodeSysctl("net.ipv4.ip_forward", "1");
  if (s.ok() && !process::FindExecutable("nft", {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}).ok()) {
    s = Status(Code::kUnavailable, "no nft (Debian's nftables)");
  }
  if (!s.ok()) {
    std::fprintf(stderr, "pjemu: cluster: ClusterIP addresses off: %s\n", s.message().c_str());
  }
  std::lock_guard<std::mutex> lock(mu_);
  cluster_ip_status_ = s;
}

void ClusterServices::Stop() {
  *alive_ = false;
  if (service_informer_) service_informer_->Stop();
  if (pod_informer_) pod_informer_->Stop();
  dnsmasq_.reset();  // the table goes with the bridge's namespace
  std::error_code ec;
  if (!options_.dir.empty()) fs::remove_all(options_.dir, ec);
}

void ClusterServices::Take(Objects& into, const api::WatchEvent& event) {
  const Json& meta = event.object()["metadata"];
  std::string key = meta.value("namespace", "") + "/" + meta.value("name", "");
  if (event.type == api::WatchEvent::Type::kDeleted) {
    into.erase(key);
  } else {
    into[key] = event.shared_object();
  }
  if (sync_posted_) return;
  sync_posted_ = true;
  std::weak_ptr<bool> alive = alive_;
  loop_.Post([this, alive] {
    auto a = alive.lock();
    if (!a || !*a) return;
    sync_posted_ = false;
    Sync();
  });
}

void ClusterServices::Sync() {
  std::vector<const Json*> services = Values(services_), pods = Values(pods_);
  DnsRecords records = ComputeDnsRecords(services, pods);
  std::string text = HostsFileText(records);
  if (text != hosts_text_) {
    Status s = WriteHosts(text);
    if (!s.ok()) std::fprintf(stderr, "pjemu: cluster dns: %s\n", s.message().c_str());
    std::lock_guard<std::mutex> lock(mu_);
    records_ = std::move(records);
  }
  std::vector<ServiceRule> rules = ComputeServiceRules(services, pods);
  if (rules == rules_ || !cluster_ip_status().ok()) return;
  Status applied = ApplyRules(rules);
  if (applied.ok()) return;
  if (rules_loaded_) {
    std::fprintf(stderr, "pjemu: cluster services: ClusterIP rules: %s\n",
                 applied.message().c_str());
    return;
  }
  // The first table refused (the kernel's nftables, nat): no ClusterIP addresses from here on.
  std::fprintf(stderr, "pjemu: cluster: ClusterIP addresses off: %s\n", applied.message().c_str());
  std::lock_guard<std::mutex> lock(mu_);
  cluster_ip_status_ = applied;
}

Status ClusterServices::WriteHosts(const std::string& text) {
  std::string tmp = options_.dir + "/hosts/.services.tmp";  // dnsmasq skips dot files
  RETURN_IF_ERROR(WriteFile(tmp, text));
  std::error_code ec;
  fs::rename(tmp, options_.dir + "/hosts/services", ec);
  if (ec) return InternalError("rename " + tmp + ": " + ec.message());
  hosts_text_ = text;
  std::lock_guard<std::mutex> lock(mu_);
  ++writes_;
  return Status::Ok();
}

Status ClusterServices::ApplyRules(const std::vector<ServiceRule>& rules) {
  std::string path = options_.dir + "/services.nft";
  RETURN_IF_ERROR(WriteFile(path, NftRules(rules)));
  RETURN_IF_ERROR(bridge_->RunInNode({"nft", "-f", path}));
  rules_ = rules;
  rules_loaded_ = true;
  return Status::Ok();
}

bool ClusterServices::Resolves(const std::string& name, const std::string& pod_ns) const {
  std::lock_guard<std::mutex> lock(mu_);
  return network::Resolves(records_, name, pod_ns);
}

Dnsmasq::State ClusterServices::dns_state() const {
  return dnsmasq_ ? dnsmasq_->state() : Dnsmasq::State::kFailed;
}

Status ClusterServices::cluster_ip_status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cluster_ip_status_;
}

std::int64_t ClusterServices::writes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return writes_;
}

}  // namespace pjemu::network
