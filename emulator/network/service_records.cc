#include "emulator/network/service_records.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "emulator/api/json_fields.h"
#include "emulator/api/pod_status.h"

namespace pjemu::network {
namespace {

// Pods of one namespace that can be endpoints: not being deleted, with an address.
using PodsByNs = std::map<std::string, std::vector<const Json*>>;

PodsByNs IndexPods(const std::vector<const Json*>& pods) {
  PodsByNs out;
  for (const Json* p : pods) {
    const Json& meta = api::ObjectOr(api::Field(*p, "metadata"));
    if (meta.contains("deletionTimestamp")) continue;
    if (api::Str(api::Field(*p, "status"), "podIP").empty()) continue;
    out[api::Str(meta, "namespace")].push_back(p);
  }
  return out;
}

std::string PodIp(const Json& pod) { return api::Str(api::Field(pod, "status"), "podIP"); }

// A Service's selector (a plain map) matches the pod's labels; an empty one matches nothing.
bool Selects(const Json& selector, const Json& pod) {
  if (!selector.is_object() || selector.empty()) return false;
  const Json& labels = api::FieldAt(pod, {"metadata", "labels"});
  for (const auto& [k, v] : selector.items()) {
    if (!labels.is_object() || !labels.contains(k) || labels[k] != v) return false;
  }
  return true;
}

// The pods a Service's endpoints list: selected, and ready unless publishNotReadyAddresses.
std::vector<const Json*> Endpoints(const Json& svc, const PodsByNs& pods) {
  const Json& spec = api::ObjectOr(api::Field(svc, "spec"));
  bool not_ready_too = api::Field(spec, "publishNotReadyAddresses") == Json(true);
  auto it = pods.find(api::Str(api::Field(svc, "metadata"), "namespace"));
  std::vector<const Json*> out;
  if (it == pods.end()) return out;
  for (const Json* p : it->second) {
    if (Selects(api::Field(spec, "selector"), *p) && (not_ready_too || api::PodReady(*p))) {
      out.push_back(p);
    }
  }
  return out;
}

bool Headless(const Json& spec) {
  std::string ip = api::Str(spec, "clusterIP");
  return ip.empty() || ip == "None";
}

std::string ServiceName(const Json& svc) {
  const Json& meta = api::ObjectOr(api::Field(svc, "metadata"));
  return api::Str(meta, "name") + "." + api::Str(meta, "namespace") + ".svc." + kClusterDomain;
}

// The pod's port for a Service port's targetPort: a number, a named container port, or the
// Service's port when absent; 0 when a name matches no container port.
int TargetPort(const Json& service_port, const Json& pod) {
  const Json& target = api::Field(service_port, "targetPort");
  if (target.is_number_integer()) return target.get<int>();
  if (!target.is_string()) return api::OptInt(service_port, "port").value_or(0);
  std::string name = target.get<std::string>();
  for (const Json& c : api::ArrayOr(api::FieldAt(pod, {"spec", "containers"}))) {
    for (const Json& p : api::ArrayOr(api::Field(c, "ports"))) {
      if (api::Str(p, "name") == name) return api::OptInt(p, "containerPort").value_or(0);
    }
  }
  return 0;
}

}  // namespace

DnsRecords ComputeDnsRecords(const std::vector<const Json*>& services,
                             const std::vector<const Json*>& pods) {
  PodsByNs by_ns = IndexPods(pods);
  DnsRecords records;
  for (const Json* svc : services) {
    const Json& spec = api::ObjectOr(api::Field(*svc, "spec"));
    if (api::Str(spec, "type") == "ExternalName") continue;
    std::string name = ServiceName(*svc);
    if (!Headless(spec)) {
      records[name].push_back(api::Str(spec, "clusterIP"));
      continue;
    }
    std::string svc_name = api::Str(api::Field(*svc, "metadata"), "name");
    for (const Json* p : Endpoints(*svc, by_ns)) {
      records[name].push_back(PodIp(*p));
      const Json& pod_spec = api::ObjectOr(api::Field(*p, "spec"));
      std::string hostname = api::Str(pod_spec, "hostname");
      if (!hostname.empty() && api::Str(pod_spec, "subdomain") == svc_name) {
        records[hostname + "." + name].push_back(PodIp(*p));
      }
    }
  }
  for (auto& [name, ips] : records) {
    std::sort(ips.begin(), ips.end());
    ips.erase(std::unique(ips.begin(), ips.end()), ips.end());
  }
  return records;
}

std::string HostsFileText(const DnsRecords& records) {
  std::string out;
  for (const auto& [name, ips] : records) {
    for (const std::string& ip : ips) out += ip + " " + name + "\n";
  }
  return out;
}

bool Resolves(const DnsRecords& records, const std::string& name, const std::string& pod_ns) {
  if (name.empty()) return false;
  if (name.back() == '.') return records.count(name.substr(0, name.size() - 1)) > 0;
  const std::string domain = kClusterDomain;
  for (const std::string& suffix :
       {pod_ns + ".svc." + domain, "svc." + domain, domain, std::string()}) {
    if (records.count(suffix.empty() ? name : name + "." + suffix)) return true;
  }
  return false;
}

bool operator==(const ServiceRule& a, const ServiceRule& b) {
  return std::tie(a.cluster_ip, a.protocol, a.port, a.endpoints) ==
         std::tie(b.cluster_ip, b.protocol, b.port, b.endpoints);
}

std::vector<ServiceRule> ComputeServiceRules(const std::vector<const Json*>& services,
                                             const std::vector<const Json*>& pods) {
  PodsByNs by_ns = IndexPods(pods);
  std::vector<ServiceRule> rules;
  for (const Json* svc : services) {
    const Json& spec = api::ObjectOr(api::Field(*svc, "spec"));
    if (Headless(spec) || api::Str(spec, "type") == "ExternalName") continue;
    std::vector<const Json*> endpoints = Endpoints(*svc, by_ns);
    for (const Json& port : api::ArrayOr(api::Field(spec, "ports"))) {
      ServiceRule rule;
      rule.cluster_ip = api::Str(spec, "clusterIP");
      std::string protocol = api::Str(port, "protocol");
      rule.protocol = protocol == "UDP" ? "udp" : "tcp";
      if (!protocol.empty() && protocol != "TCP" && protocol != "UDP") continue;
      rule.port = static_cast<int>(api::OptInt(port, "port").value_or(0));
      for (const Json* p : endpoints) {
        int target = TargetPort(port, *p);
        if (target > 0) rule.endpoints.emplace_back(PodIp(*p), target);
      }
      std::sort(rule.endpoints.begin(), rule.endpoints.end());
      if (rule.port > 0 && !rule.endpoints.empty()) rules.push_back(std::move(rule));
    }
  }
  std::sort(rules.begin(), rules.end(), [](const ServiceRule& a, const ServiceRule& b) {
    return std::tie(a.cluster_ip, a.protocol, a.port) < std::tie(b.cluster_ip, b.protocol, b.port);
  });
  return rules;
}

std::string NftRules(const std::vector<ServiceRule>& rules) {
  std::string out =
      "table ip pjemu_services\n"
      "delete table ip pjemu_services\n"
      "table ip pjemu_services {\n"
      "  chain prerouting {\n"
      "    type nat hook prerouting priority dstnat; policy accept;\n";
  for (const ServiceRule& r : rules) {
    const int port = r.endpoints.front().second;
    std::vector<std::string> ips;
    for (const auto& [ip, p] : r.endpoints) {
      if (p == port) ips.push_back(ip);
    }
    std::string match = "    ip daddr " + r.cluster_ip + " " + r.protocol + " dport " +
                        std::to_string(r.port) + " dnat to ";
    if (ips.size() == 1) {
      out += match + ips[0] + ":" + std::to_string(port) + "\n";
      continue;
    }
    std::string map;
    for (std::size_t i = 0; i < ips.size(); ++i) {
      map += (i ? ", " : "") + std::to_string(i) + " : " + ips[i];
    }
    out += match + "numgen random mod " + std::to_string(ips.size()) + " map { " + map + " }:" +
           std::to_string(port) + "\n";
  }
  out +=
      "  }\n"
      "  chain postrouting {\n"
      "    type nat hook postrouting priority srcnat; policy accept;\n"
      "    ct status dnat masquerade\n"
      "  }\n"
      "}\n";
  return out;
}

}  // namespace pjemu::network
