// Given env values that name Services, launch-time rewriting should point them at the target
// pod's IP and the service's host port, leaving everything else alone.
#include "emulator/kubelet/pod_network.h"

#include <catch2/catch.hpp>

namespace pjemu::kubelet {
namespace {

TEST_CASE("service host names parse in all DNS forms", "[kubelet]") {
  using P = std::pair<std::string, std::string>;
  CHECK(ParseServiceHost("mnist-master-0", "ns1") == P{"mnist-master-0", "ns1"});
  CHECK(ParseServiceHost("svc.ns2", "ns1") == P{"svc", "ns2"});
  CHECK(ParseServiceHost("svc.ns2.svc", "ns1") == P{"svc", "ns2"});
  CHECK(ParseServiceHost("svc.ns2.svc.cluster.local", "ns1") == P{"svc", "ns2"});
  CHECK_FALSE(ParseServiceHost("example.com.au.org", "ns1"));
  CHECK_FALSE(ParseServiceHost("Upper", "ns1"));
  CHECK_FALSE(ParseServiceHost("/path", "ns1"));
  // Remembered by name and namespace: the same name in another pod's namespace is that one's.
  CHECK(ParseServiceHost("mnist-master-0", "ns3") == P{"mnist-master-0", "ns3"});
  CHECK(ParseServiceHost("mnist-master-0", "ns1") == P{"mnist-master-0", "ns1"});
  CHECK_FALSE(ParseServiceHost("localhost", "ns1"));
}

TEST_CASE("a pod's name through its headless service parses in all DNS forms", "[kubelet]") {
  using H = PodHost;
  CHECK(ParsePodHost("tj-node-0-0.tj", "ns1") == H{"tj-node-0-0", "tj", "ns1"});
  CHECK(ParsePodHost("tj-node-0-0.tj.ns2", "ns1") == H{"tj-node-0-0", "tj", "ns2"});
  CHECK(ParsePodHost("tj-node-0-0.tj.ns2.svc", "ns1") == H{"tj-node-0-0", "tj", "ns2"});
  CHECK(ParsePodHost("tj-node-0-0.tj.ns2.svc.cluster.local", "ns1") == H{"tj-node-0-0", "tj", "ns2"});
  CHECK_FALSE(ParsePodHost("tj-node-0-0", "ns1"));
  CHECK_FALSE(ParsePodHost("a.b.c.d", "ns1"));
  CHECK_FALSE(ParsePodHost("10.0.0.1", "ns1"));
  CHECK(ParsePodHost("tj-node-0-0.tj", "ns3") == H{"tj-node-0-0", "tj", "ns3"});
  Json pod = {{"metadata", {{"name", "tj-node-0-0-x7k2p"}, {"namespace", "ns1"}}},
              {"spec", {{"hostname", "tj-node-0-0"}, {"subdomain", "tj"}}}};
  CHECK(AnswersTo(pod, {"tj-node-0-0", "tj", "ns1"}));
  CHECK_FALSE(AnswersTo(pod, {"tj-node-0-1", "tj", "ns1"}));
  CHECK_FALSE(AnswersTo(pod, {"tj-node-0-0", "other", "ns1"}));
  CHECK_FALSE(AnswersTo(pod, {"tj-node-0-0", "tj", "ns2"}));
  CHECK(ServiceSelector({{"spec", {{"selector", {{"a", "b"}, {"c", "d"}}}}}}) == "a=b,c=d");
  CHECK(ServiceSelector({{"spec", {{"clusterIP", "None"}}}}).empty());
}

TEST_CASE("env naming a pod by hostname and subdomain is rewritten to its IP", "[kubelet]") {
  ServiceResolver resolve = [](const std::string& host) -> std::optional<ServiceTarget> {
    if (host == "tj-node-0-0.tj") return ServiceTarget{"10.244.1.5", {}};
    return std::nullopt;
  };
  EnvList env = {{"PET_MASTER_ADDR", "tj-node-0-0.tj"}, {"PET_MASTER_PORT", "29500"}};
  EnvList out = RewriteServiceEnv(env, resolve);
  CHECK(out[0].second == "10.244.1.5");
  CHECK(out[1].second == "29500");  // a headless service declares no port: nothing to map
}

TEST_CASE("env naming a service is rewritten to its pod IP and host port", "[kubelet]") {
  ServiceResolver resolve = [](const std::string& host) -> std::optional<ServiceTarget> {
    if (host == "job-master-0" || host == "job-master-0.team.svc.cluster.local") {
      return ServiceTarget{"127.42.0.7", {{23456, 40001}}};
    }
    return std::nullopt;
  };
  EnvList env = {{"MASTER_ADDR", "job-master-0"},
                 {"MASTER_PORT", "23456"},
                 {"PET_MASTER_PORT", "23456"},
                 {"WORLD_SIZE", "23456"},
                 {"RDZV", "job-master-0.team.svc.cluster.local:23456"},
                 {"OTHER_PORT", "8080"},
                 {"NAME", "unrelated"}};
  EnvList out = RewriteServiceEnv(env, resolve);
  EnvList want = {{"MASTER_ADDR", "127.42.0.7"}, {"MASTER_PORT", "40001"},
                  {"PET_MASTER_PORT", "40001"},  {"WORLD_SIZE", "23456"},
                  {"RDZV", "127.42.0.7:40001"},  {"OTHER_PORT", "8080"},
                  {"NAME", "unrelated"}};
  CHECK(out == want);
  // Without any service reference, ports are left alone.
  EnvList plain = {{"MASTER_PORT", "23456"}};
  CHECK(RewriteServiceEnv(plain, resolve) == plain);
  // Under the sandbox the pod's /etc/hosts resolves the names: only the ports change.
  EnvList ports_only = RewriteServiceEnv(env, resolve, ServiceRewrite::kPortsOnly);
  EnvList want_ports = {{"MASTER_ADDR", "job-master-0"},
                        {"MASTER_PORT", "40001"},
                        {"PET_MASTER_PORT", "40001"},
                        {"WORLD_SIZE", "23456"},
                        {"RDZV", "job-master-0.team.svc.cluster.local:40001"},
                        {"OTHER_PORT", "8080"},
                        {"NAME", "unrelated"}};
  CHECK(ports_only == want_ports);
}

TEST_CASE("cluster network gives stable, distinct pod IPs and service host ports", "[kubelet]") {
  ClusterNetwork net;
  std::string a = net.PodIp("uid-a");
  std::string b = net.PodIp("uid-b");
  CHECK(a != b);
  CHECK(a.rfind("127.42.", 0) == 0);
  CHECK(net.PodIp("uid-a") == a);
  auto p1 = net.HostPort("ns1", "job-master-0", 23456);
  auto p2 = net.HostPort("ns2", "job-master-0", 23456);
  REQUIRE(p1.ok());
  REQUIRE(p2.ok());
  CHECK(*p1 != *p2);
  CHECK(*net.HostPort("ns1", "job-master-0", 23456) == *p1);
  net.ReleasePodIp("uid-a");
  CHECK(net.PodIp("uid-c") != b);
}

TEST_CASE("cluster DNS: starting, serving or failed decides the nameserver and the answers",
          "[kubelet]") {
  ClusterNetwork net;
  CHECK(net.dns_server().empty());
  CHECK_FALSE(net.DnsResolves("web", "default"));
  CHECK_FALSE(net.DnsStarting());
  auto state = ClusterNetwork::DnsState::kStarting;
  net.SetDns(
      "10.96.0.10", [](const std::string& name, const std::string&) { return name == "web"; },
      [&state] { return state; });
  CHECK(net.DnsStarting());
  CHECK(net.dns_server() == "10.96.0.10");
  state = ClusterNetwork::DnsState::kServing;
  CHECK_FALSE(net.DnsStarting());
  CHECK(net.DnsResolves("web", "default") == std::optional<bool>(true));
  CHECK(net.DnsResolves("db", "default") == std::optional<bool>(false));
  // A server that failed to start is no cluster DNS: pods fall back to /etc/hosts.
  state = ClusterNetwork::DnsState::kFailed;
  CHECK_FALSE(net.DnsStarting());
  CHECK(net.dns_server().empty());
  CHECK_FALSE(net.DnsResolves("web", "default"));
  // Without a state function the server is taken as serving.
  net.SetDns("10.96.0.10", [](const std::string&, const std::string&) { return true; });
  CHECK_FALSE(net.DnsStarting());
  CHECK(net.dns_server() == "10.96.0.10");
  net.SetDns("", nullptr);
  CHECK(net.dns_server().empty());
}

}  // namespace
}  // namespace pjemu::kubelet
