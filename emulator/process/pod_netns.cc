#include "emulator/process/pod_netns.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "emulator/process/exec_path.h"
#include "emulator/process/named_netns.h"

extern char** environ;

namespace pjemu::process {
namespace {

// The network part of an IPv4 address with a prefix: "10.244.0.1", 16 -> "10.244.0.0/16".
std::string NetworkOf(const std::string& ip, int prefix) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (std::sscanf(ip.c_str(), "%u.%u.%u.%u", &a, &b, &c, &d) != 4) return "";
  std::uint32_t addr = (a << 24) | (b << 16) | (c << 8) | d;
  std::uint32_t mask = prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
  addr &= mask;
  return std::to_string(addr >> 24) + "." + std::to_string((addr >> 16) & 255) + "." +
         std::to_string((addr >> 8) & 255) + "." + std::to_string(addr & 255) + "/" +
         std::to_string(prefix);
}

bool ValidPodName(const std::string& name) {
  if (name.empty() || name.size() > 20) return false;
  for (char c : name) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'z') || c == '-')) {
      return false;
    }
  }
  return true;
}

// Namespaces of emulators that are gone: pjemu-<pid>-* where <pid> no longer runs.
void RemoveStale() {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(kNetnsRunDir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("pjemu-", 0) != 0) continue;
    auto dash = name.find('-', 6);
    std::string pid = name.substr(6, dash == std::string::npos ? std::string::npos : dash - 6);
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (kill(std::stoi(pid), 0) == 0 || errno != ESRCH) continue;
    (void)DeleteNamedNetns(name);
  }
}

}  // namespace

Status RunCommand(const std::vector<std::string>& argv, const std::string& input) {
  std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  auto path = FindExecutable(argv[0], env);
  if (!path.ok()) return Status(Code::kUnavailable, path.status().message());
  int in[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return InternalError("pipe: " + std::string(strerror(errno)));
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]);
    return InternalError("pipe: " + std::string(strerror(errno)));
  }
  // The input is a few lines: written before the spawn, it fits the pipe, and no SIGPIPE can
  // come of a child that exits without reading it.
  if (input.size() > 16384) {
    close(in[0]), close(in[1]), close(err[0]), close(err[1]);
    return Status(Code::kInvalid, "command input too long");
  }
  (void)!write(in[1], input.data(), input.size());
  close(in[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, err[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<char*> args = CStrings(argv);
  std::vector<char*> envp = CStrings(env);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, path->c_str(), &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]), close(err[1]);
  if (rc != 0) {
    close(err[0]);
    return InternalError("spawn " + argv[0] + ": " + strerror(rc));
  }
  std::string output;
  char buf[512];
  ssize_t n;
  while ((n = read(err[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) output.append(buf, static_cast<std::size_t>(n));
  }
  close(err[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return Status::Ok();
  while (!output.empty() && output.back() == '\n') output.pop_back();
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  return InternalError(cmd + ": " + (output.empty() ? "failed" : output));
}

Result<std::unique_ptr<BridgeNetwork>> BridgeNetwork::Create(const std::string& gateway,
                                                             int prefix) {
  std::unique_ptr<BridgeNetwork> net(new BridgeNetwork());
  net->base_ = "pjemu-" + std::to_string(getpid());
  net->node_ns_ = net->base_ + "-net";
  net->gateway_ = gateway;
  net->prefix_ = prefix;
  std::string cidr = NetworkOf(gateway, prefix);
  if (cidr.empty()) return Status(Code::kInvalid, "pod network: bad gateway " + gateway);
  RemoveStale();
  auto unavailable = [](const Status& s) {
    return Status(Code::kUnavailable, "pod networks unavailable: " + s.message());
  };
  auto host = RouteNetlink::Open();  // on this thread: the host's namespace
  if (!host.ok()) return unavailable(host.status());
  net->host_rtnl_ = std::move(*host);
  BridgeNetwork* raw = net.get();
  Status s = AddNamedNetns(net->node_ns_, [raw, &gateway, prefix]() -> Status {
    ASSIGN_OR_RETURN(raw->node_rtnl_, RouteNetlink::Open());  // bound to the new namespace
    RETURN_IF_ERROR(raw->node_rtnl_->LinkUp("lo"));
    RETURN_IF_ERROR(raw->node_rtnl_->AddBridge("cni0"));
    return raw->node_rtnl_->AddAddress("cni0", gateway + "/" + std::to_string(prefix));
  });
  if (!s.ok()) return unavailable(s);
  // A host process addressing a pod must fail here, never leave by the default route.
  s = net->host_rtnl_->ReplaceUnreachableRoute(cidr);
  if (!s.ok()) {
    (void)DeleteNamedNetns(net->node_ns_);
    return unavailable(s);
  }
  net->host_route_ = cidr;
  return net;
}

Status BridgeNetwork::RelayToHost(int host_port) {
  std::lock_guard<std::mutex> lock(mu_);
  if (relays_.count(host_port)) return Status::Ok();
  ASSIGN_OR_RETURN(std::unique_ptr<HostRelay> relay,
                   HostRelay::Start(NamedNetnsPath(node_ns_), gateway_, host_port, host_port));
  relays_[host_port] = std::move(relay);
  return Status::Ok();
}

Status BridgeNetwork::AddNodeAddress(const std::string& ip) {
  std::lock_guard<std::mutex> lock(mu_);
  return node_rtnl_->AddAddress("lo", ip + "/32", /*replace=*/true);
}

Status BridgeNetwork::RunInNode(const std::vector<std::string>& argv) {
  return RunInNetns(node_netns_path(), [&argv] { return RunCommand(argv); });
}

Status BridgeNetwork::SetNodeSysctl(const std::string& key, const std::string& value) {
  return WriteNetnsSysctl(node_netns_path(), key, value);
}

std::string BridgeNetwork::node_netns_path() const { return NamedNetnsPath(node_ns_); }

BridgeNetwork::~BridgeNetwork() {
  relays_.clear();  // their listeners live in the namespace deleted below
  node_rtnl_.reset();  // its socket holds the namespace
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(kNetnsRunDir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(base_ + "-", 0) == 0 && name != node_ns_) (void)DeleteNamedNetns(name);
  }
  (void)DeleteNamedNetns(node_ns_);
  // The host's route stays while another emulator's bridge (pjemu-<pid>-net) still needs it.
  bool others = false;
  for (const auto& e : std::filesystem::directory_iterator(kNetnsRunDir, ec)) {
    std::string name = e.path().filename().string();
    others = others || (name.rfind("pjemu-", 0) == 0 && name.size() > 4 &&
                        name.compare(name.size() - 4, 4, "-net") == 0);
  }
  if (!host_route_.empty() && !others) (void)host_rtnl_->DeleteUnreachableRoute(host_route_);
}

Result<std::string> BridgeNetwork::AddPod(const std::string& name, const std::string& ip) {
  if (!ValidPodName(name)) return Status(Code::kInvalid, "pod network: bad name \"" + name + "\"");
  std::lock_guard<std::mutex> lock(mu_);
  std::string ns = NsName(name);
  std::string veth = "veth" + std::to_string(++next_veth_);
  RemovePod(name);  // a namespace of the same name left by a pod that went
  // On the thread that made the pod's namespace, inside it: the veth pair from the bridge's side
  // (its peer, eth0, made here), then this side's configuration through a socket opened here.
  RouteNetlink* node = node_rtnl_.get();
  const std::string cidr = ip + "/" + std::to_string(prefix_);
  RETURN_IF_ERROR(AddNamedNetns(ns, [&]() -> Status {
    int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (self < 0) {
      return InternalError("open /proc/thread-self/ns/net: " + std::string(strerror(errno)));
    }
    Status made = node->AddVethToBridge(veth, "cni0", "eth0", self);
    close(self);
    RETURN_IF_ERROR(made);
    ASSIGN_OR_RETURN(std::unique_ptr<RouteNetlink> pod, RouteNetlink::Open());
    RETURN_IF_ERROR(pod->LinkUp("lo"));
    RETURN_IF_ERROR(pod->AddAddress("eth0", cidr));
    RETURN_IF_ERROR(pod->LinkUp("eth0"));
    return pod->AddDefaultRoute(gateway_, "eth0");
  }));
  return NamedNetnsPath(ns);
}

void BridgeNetwork::RemovePod(const std::string& name) { (void)DeleteNamedNetns(NsName(name)); }

}  // namespace pjemu::process
