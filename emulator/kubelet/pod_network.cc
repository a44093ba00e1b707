#include "emulator/kubelet/pod_network.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <limits>
#include <regex>

#include "emulator/api/json_fields.h"
#include "emulator/api/service_account.h"
#include "emulator/common/memo.h"

namespace pjemu::kubelet {
namespace {

// A port the kernel hands out for 0.0.0.0:0 (the c10d server binds every interface).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = 0;
  int port = -1;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

bool IsNumber(const std::string& s) {
  if (s.empty() || s.size() > 5) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::string ClusterNetwork::PodIp(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pod_ips_.find(uid);
  if (it != pod_ips_.end()) return it->second;
  std::string ip;
  do {
    std::uint32_t n = next_ip_++;
    if ((n & 0xff) == 0 || (n & 0xff) == 255) continue;
    ip = "127." + std::to_string(subnet_) + "." + std::to_string((n >> 8) & 0xff) + "." +
         std::to_string(n & 0xff);
    if (next_ip_ > 0xfffe) next_ip_ = 2;
  } while (ip.empty() || used_ips_.count(ip));
  used_ips_.insert(ip);
  pod_ips_[uid] = ip;
  return ip;
}

Status ClusterNetwork::EnableIsolation() {
  std::lock_guard<std::mutex> lock(mu_);
  if (bridge_) return Status::Ok();
  ASSIGN_OR_RETURN(std::unique_ptr<process::BridgeNetwork> bridge,
                   process::BridgeNetwork::Create(api::kPodNetworkGateway, 16));
  bridge_ = std::move(bridge);
  return Status::Ok();
}

bool ClusterNetwork::isolated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bridge_ != nullptr;
}

Result<std::optional<std::string>> ClusterNetwork::HostAddressFor(int host_port) {
  std::shared_ptr<process::BridgeNetwork> bridge;
  {
    std::lock_guard<std::mutex> lock(mu_);
    bridge = bridge_;
  }
  if (!bridge) return std::optional<std::string>();
  RETURN_IF_ERROR(bridge->RelayToHost(host_port));
  return std::optional<std::string>(bridge->gateway());
}

std::shared_ptr<process::BridgeNetwork> ClusterNetwork::bridge() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bridge_;
}

void ClusterNetwork::SetDns(std::string server, DnsResolver resolves, DnsStateFn state) {
  std::lock_guard<std::mutex> lock(mu_);
  dns_server_ = std::move(server);
  dns_resolves_ = std::move(resolves);
  dns_state_ = std::move(state);
}

ClusterNetwork::DnsState ClusterNetwork::CurrentDnsState() const {
  DnsStateFn state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (dns_server_.empty()) return DnsState::kFailed;
    state = dns_state_;
  }
  return state ? state() : DnsState::kServing;
}

std::string ClusterNetwork::dns_server() const {
  if (CurrentDnsState() == DnsState::kFailed) return "";
  std::lock_guard<std::mutex> lock(mu_);
  return dns_server_;
}

std::optional<bool> ClusterNetwork::DnsResolves(const std::string& name,
                                                const std::string& pod_ns) const {
  DnsResolver resolves;
  {
    std::lock_guard<std::mutex> lock(mu_);
    resolves = dns_resolves_;
  }
  if (!resolves || CurrentDnsState() == DnsState::kFailed) return std::nullopt;
  return resolves(name, pod_ns);
}

bool ClusterNetwork::DnsStarting() const { return CurrentDnsState() == DnsState::kStarting; }

std::string ClusterNetwork::PodCidr(int node_index) const {
  if (!isolated()) return "";
  return "10.244." + std::to_string(node_index + 1) + ".0/24";
}

Result<PodSandboxNetwork> ClusterNetwork::PodSandbox(const std::string& uid, int node_index) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!bridge_) return Status(Code::kUnavailable, "pod networks are not enabled");
  auto it = sandboxes_.find(uid);
  if (it != sandboxes_.end()) return it->second;
  // A free address in the node's /24 (.2 to .254; .1 stays free as a CNI's gateway would be).
  std::string prefix = "10.244." + std::to_string(node_index + 1) + ".";
  std::uint32_t& next = next_host_[node_index];
  std::string ip;
  for (int tries = 0; tries < 253 && ip.empty(); ++tries) {
    next = next < 2 || next >= 254 ? 2 : next + 1;
    std::string candidate = prefix + std::to_string(next);
    if (!used_ips_.count(candidate)) ip = candidate;
  }
  if (ip.empty()) return Status(Code::kUnavailable, "no free address in " + prefix + "0/24");
  // The namespace is named after the uid's first 12 hex digits (unique among live pods).
  std::string name;
  for (char c : uid) {
    if (name.size() == 12) break;
    if (std::isalnum(static_cast<unsigned char>(c))) name += static_cast<char>(std::tolower(c));
  }
  ASSIGN_OR_RETURN(std::string path, bridge_->AddPod(name, ip));
  used_ips_.insert(ip);
  pod_ips_[uid] = ip;
  return sandboxes_[uid] = PodSandboxNetwork{ip, path};
}

void ClusterNetwork::ReleasePodIp(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto s = sandboxes_.find(uid); s != sandboxes_.end()) {
    std::string name = s->second.netns_path.substr(s->second.netns_path.rfind('-') + 1);
    bridge_->RemovePod(name);
    sandboxes_.erase(s);
  }
  auto it = pod_ips_.find(uid);
  if (it == pod_ips_.end()) return;
  used_ips_.erase(it->second);
  pod_ips_.erase(it);
}

Result<int> ClusterNetwork::HostPort(const std::string& ns, const std::string& service, int port) {
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_tuple(ns, service, port);
  auto it = ports_.find(key);
  if (it != ports_.end()) return it->second;
  for (int attempt = 0; attempt < 20; ++attempt) {
    int p = FreePort();
    if (p <= 0) break;
    if (!taken_ports_.insert(p).second) continue;
    ports_[key] = p;
    return p;
  }
  return Status(Code::kUnavailable, "no free host port for service " + ns + "/" + service);
}

void ClusterNetwork::ReleaseService(const std::string& ns, const std::string& service) {
  std::lock_guard<std::mutex> lock(mu_);
  // The service's ports are adjacent in the map: from (ns, service, the lowest port) on.
  auto it = ports_.lower_bound(std::make_tuple(ns, service, std::numeric_limits<int>::min()));
  while (it != ports_.end() && std::get<0>(it->first) == ns && std::get<1>(it->first) == service) {
    taken_ports_.erase(it->second);
    it = ports_.erase(it);
  }
}

namespace {

std::optional<std::pair<std::string, std::string>> ParseServiceHostUncached(
    const std::string& host, const std::string& pod_ns) {
  static const std::regex re(
      R"(^([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.svc(\.cluster\.local)?)?)?$)");
  std::smatch m;
  // localhost is every pod's own loopback (its /etc/hosts), never looked up in cluster DNS.
  if (host == "localhost" || !std::regex_match(host, m, re)) return std::nullopt;
  std::string ns = m[4].matched ? m[4].str() : pod_ns;
  return std::make_pair(m[1].str(), ns);
}

std::optional<PodHost> ParsePodHostUncached(const std::string& host, const std::string& pod_ns) {
  static const std::regex re(
      R"(^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.svc(\.cluster\.local)?)?)?$)");
  std::smatch m;
  if (!std::regex_match(host, m, re)) return std::nullopt;
  return PodHost{m[1].str(), m[3].str(), m[6].matched ? m[6].str() : pod_ns};
}

}  // namespace

std::optional<std::pair<std::string, std::string>> ParseServiceHost(const std::string& host,
                                                                    const std::string& pod_ns) {
  // A worker's start resolves its master's name several times over: parsed once, by regex.
  thread_local Memo<std::optional<std::pair<std::string, std::string>>> memo;
  return memo.Get(host + '\n' + pod_ns, [&] { return ParseServiceHostUncached(host, pod_ns); });
}

std::optional<PodHost> ParsePodHost(const std::string& host, const std::string& pod_ns) {
  thread_local Memo<std::optional<PodHost>> memo;
  return memo.Get(host + '\n' + pod_ns, [&] { return ParsePodHostUncached(host, pod_ns); });
}

bool AnswersTo(const Json& pod, const PodHost& host) {
  const Json& meta = api::ObjectOr(api::Field(pod, "metadata"));  // read in place, not copied
  const Json& spec = api::ObjectOr(api::Field(pod, "spec"));
  std::string hostname = spec.value("hostname", "");
  if (hostname.empty()) hostname = meta.value("name", "");
  return hostname == host.hostname && spec.value("subdomain", "") == host.subdomain &&
         meta.value("namespace", "default") == host.ns;
}

std::string ServiceSelector(const Json& service) {
  std::string out;
  const Json& selector = api::ObjectOr(api::FieldAt(service, {"spec", "selector"}));
  for (const auto& [k, v] : selector.items()) {
    if (v.is_string()) out += (out.empty() ? "" : ",") + k + "=" + v.get<std::string>();
  }
  return out;
}

EnvList RewriteServiceEnv(const EnvList& env, const ServiceResolver& resolve,
                          ServiceRewrite what) {
  if (what == ServiceRewrite::kNone) return env;
  EnvList out = env;
  std::map<int, int> ports;
  for (auto& [name, value] : out) {
    std::string host = value;
    std::string port;
    auto colon = value.rfind(':');
    if (colon != std::string::npos && IsNumber(value.substr(colon + 1))) {
      host = value.substr(0, colon);
      port = value.substr(colon + 1);
    }
    if (host.empty() || std::isdigit(static_cast<unsigned char>(host[0]))) continue;
    auto target = resolve(host);
    if (!target) continue;
    ports.insert(target->ports.begin(), target->ports.end());
    value = what == ServiceRewrite::kPortsOnly ? host : target->ip;
    if (!port.empty()) {
      auto it = target->ports.find(std::stoi(port));
      value += ":" + (it != target->ports.end() ? std::to_string(it->second) : port);
    }
  }
  for (auto& [name, value] : out) {
    if (name.find("PORT") == std::string::npos || !IsNumber(value)) continue;
    auto it = ports.find(std::stoi(value));
    if (it != ports.end()) value = std::to_string(it->second);
  }
  return out;
}

}  // namespace pjemu::kubelet
