// Given Services and Pods as stored, the records cluster DNS serves and the ClusterIP rules
// should be what CoreDNS and kube-proxy make of them: a ClusterIP Service names its virtual
// address, a headless one its ready selected pods (not-ready ones too with
// publishNotReadyAddresses), `<hostname>.<subdomain>` names a pod of the headless Service named
// by its subdomain; a pod's search path resolves `<svc>`, `<svc>.<ns>` and the FQDN; rules DNAT
// to ready endpoints' targetPorts (numbers and names).
#include "emulator/network/service_records.h"

#include <catch2/catch.hpp>

namespace pjemu::network {
namespace {

Json Service(const std::string& ns, const std::string& name, const std::string& cluster_ip,
             Json ports = Json::array({{{"port", 80}, {"targetPort", 8080}}})) {
  Json spec = {{"selector", {{"app", name}}}, {"ports", ports}};
  if (!cluster_ip.empty()) spec["clusterIP"] = cluster_ip;
  return {{"metadata", {{"namespace", ns}, {"name", name}}}, {"spec", spec}};
}

Json Pod(const std::string& ns, const std::string& name, const std::string& app,
         const std::string& ip, bool ready = true) {
  Json status = {{"podIP", ip},
                 {"conditions", Json::array({{{"type", "Ready"},
                                              {"status", ready ? "True" : "False"}}})}};
  return {{"metadata", {{"namespace", ns}, {"name", name}, {"labels", {{"app", app}}}}},
          {"spec",
           {{"containers",
             Json::array({{{"name", "c"},
                           {"ports", Json::array({{{"name", "http"}, {"containerPort", 9090}}})}}})}}},
          {"status", status}};
}

std::vector<const Json*> Ptrs(const std::vector<Json>& v) {
  std::vector<const Json*> out;
  for (const Json& j : v) out.push_back(&j);
  return out;
}

TEST_CASE("service records: ClusterIP, headless, hostname.subdomain", "[network]") {
  std::vector<Json> services = {Service("default", "web", "10.96.0.11"),
                                Service("default", "job", "None")};
  Json late = Service("default", "late", "None");
  late["spec"]["publishNotReadyAddresses"] = true;
  services.push_back(late);
  std::vector<Json> pods = {Pod("default", "web-1", "web", "10.244.1.2"),
                            Pod("default", "job-0", "job", "10.244.1.4"),
                            Pod("default", "job-1", "job", "10.244.1.3"),
                            Pod("default", "job-2", "job", "10.244.1.5", false),
                            Pod("default", "late-0", "late", "10.244.1.6", false),
                            Pod("other", "job-x", "job", "10.244.1.7")};
  pods[1]["spec"]["hostname"] = "job-0";
  pods[1]["spec"]["subdomain"] = "job";
  pods[2]["spec"]["hostname"] = "job-1";
  pods[2]["spec"]["subdomain"] = "elsewhere";  // no Service of that name selects it
  Json deleting = Pod("default", "job-3", "job", "10.244.1.8");
  deleting["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  pods.push_back(deleting);

  DnsRecords r = ComputeDnsRecords(Ptrs(services), Ptrs(pods));
  CHECK(r["web.default.svc.cluster.local"] == std::vector<std::string>{"10.96.0.11"});
  CHECK(r["job.default.svc.cluster.local"] ==
        std::vector<std::string>{"10.244.1.3", "10.244.1.4"});
  CHECK(r["job-0.job.default.svc.cluster.local"] == std::vector<std::string>{"10.244.1.4"});
  CHECK(r["late.default.svc.cluster.local"] == std::vector<std::string>{"10.244.1.6"});
  CHECK(r.count("job-1.elsewhere.default.svc.cluster.local") == 0);
  CHECK(r.size() == 4);
  CHECK(HostsFileText(r) ==
        "10.244.1.4 job-0.job.default.svc.cluster.local\n"  // by name: '-' sorts before '.'
        "10.244.1.3 job.default.svc.cluster.local\n"
        "10.244.1.4 job.default.svc.cluster.local\n"
        "10.244.1.6 late.default.svc.cluster.local\n"
        "10.96.0.11 web.default.svc.cluster.local\n");

  SECTION("a pod resolves through its search path") {
    for (const char* name : {"web", "web.default", "web.default.svc",
                             "web.default.svc.cluster.local", "web.default.svc.cluster.local.",
                             "job-0.job"}) {
      CHECK(Resolves(r, name, "default"));
    }
    CHECK_FALSE(Resolves(r, "web", "other"));
    CHECK(Resolves(r, "web.default", "other"));
    CHECK_FALSE(Resolves(r, "web.", "default"));
    CHECK_FALSE(Resolves(r, "pypi.org", "default"));
  }
}

TEST_CASE("service rules: ready endpoints, named and numbered target ports", "[network]") {
  Json named = Service("default", "web", "10.96.0.11",
                       Json::array({{{"port", 80}, {"targetPort", "http"}},
                                    {{"port", 53}, {"protocol", "UDP"}}}));
  std::vector<Json> services = {named, Service("default", "job", "None"),
                                Service("default", "empty", "10.96.0.12")};
  std::vector<Json> pods = {Pod("default", "web-2", "web", "10.244.1.3"),
                            Pod("default", "web-1", "web", "10.244.1.2"),
                            Pod("default", "web-3", "web", "10.244.1.9", false),
                            Pod("default", "job-0", "job", "10.244.1.4")};
  std::vector<ServiceRule> rules = ComputeServiceRules(Ptrs(services), Ptrs(pods));
  REQUIRE(rules.size() == 2);
  CHECK(rules[0] == ServiceRule{"10.96.0.11", "tcp", 80,
                                {{"10.244.1.2", 9090}, {"10.244.1.3", 9090}}});
  CHECK(rules[1] == ServiceRule{"10.96.0.11", "udp", 53,
                                {{"10.244.1.2", 53}, {"10.244.1.3", 53}}});
  std::string nft = NftRules(rules);
  CHECK(nft.find("ip daddr 10.96.0.11 tcp dport 80 dnat to numgen random mod 2 map { 0 : "
                 "10.244.1.2, 1 : 10.244.1.3 }:9090\n") != std::string::npos);
  CHECK(nft.find("ct status dnat masquerade") != std::string::npos);
  CHECK(NftRules({{"10.96.0.12", "tcp", 80, {{"10.244.1.2", 8080}}}})
            .find("ip daddr 10.96.0.12 tcp dport 80 dnat to 10.244.1.2:8080\n") !=
        std::string::npos);
}

}  // namespace
}  // namespace pjemu::network
