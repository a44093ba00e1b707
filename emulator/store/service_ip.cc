#include "emulator/store/service_ip.h"

#include <cstdint>
#include <cstdio>
#include <optional>

#include "emulator/api/json_fields.h"
#include "emulator/api/resources.h"
#include "emulator/store/object_meta.h"

namespace pjemu::store {
namespace {

constexpr std::uint32_t kBase = (10u << 24) | (96u << 16);  // 10.96.0.0
constexpr std::uint32_t kSize = 1u << 20;                   // /12
constexpr std::uint32_t kFirstDynamic = 11;                 // 10.96.0.11

std::optional<std::uint32_t> Parse(const std::string& ip) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  char extra = 0;
  if (std::sscanf(ip.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &extra) != 4) return std::nullopt;
  if (a > 255 || b > 255 || c > 255 || d > 255) return std::nullopt;
  return (a << 24) | (b << 16) | (c << 8) | d;
}

std::string Format(std::uint32_t v) {
  return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 255) + "." +
         std::to_string((v >> 8) & 255) + "." + std::to_string(v & 255);
}

Status Invalid(const Json& service, const std::string& field, const Json& value,
               const std::string& detail) {
  return InvalidError(api::Services(), api::Str(api::Field(service, "metadata"), "name"),
                      {InvalidField(field, value, detail)});
}

void Set(Json& spec, const std::string& ip) {
  spec["clusterIP"] = ip;
  spec["clusterIPs"] = Json::array({ip});
}

// A create's address: the client's, checked, or the lowest free one.
Status Allocate(Json& service, const UsedClusterIps& used) {
  Json& spec = service["spec"];
  std::string want = api::Str(spec, "clusterIP");
  if (want.empty() && api::Field(spec, "clusterIPs").is_array() && !spec["clusterIPs"].empty() &&
      spec["clusterIPs"][0].is_string()) {
    want = spec["clusterIPs"][0].get<std::string>();
  }
  if (want == "None") {
    spec["clusterIPs"] = Json::array({"None"});
    return Status::Ok();
  }
  std::set<std::string> taken = used();
  if (!want.empty()) {
    auto v = Parse(want);
    std::string prefix = "failed to allocate IP " + want + ": ";
    if (!v || (*v & ~(kSize - 1)) != kBase) {
      return Invalid(service, "spec.clusterIPs", Json::array({want}),
                     prefix + "the provided IP (" + want +
                         ") is not in the valid range. The range of valid IPs is " +
                         kServiceCidr);
    }
    if (taken.count(want)) {
      return Invalid(service, "spec.clusterIPs", Json::array({want}),
                     prefix + "provided IP is already allocated");
    }
    Set(spec, want);
    return Status::Ok();
  }
  for (std::uint32_t i = kFirstDynamic; i < kSize - 1; ++i) {
    std::string ip = Format(kBase + i);
    if (!taken.count(ip)) {
      Set(spec, ip);
      return Status::Ok();
    }
  }
  return Invalid(service, "spec.clusterIPs", Json::array(),
                 "failed to allocate IP: range is full");
}

}  // namespace

Status AssignClusterIp(Json& service, const Json* old, const UsedClusterIps& used) {
  if (!service.is_object()) return Status::Ok();
  if (!service["spec"].is_object()) service["spec"] = Json::object();
  Json& spec = service["spec"];
  if (api::Str(spec, "type") == "ExternalName") return Status::Ok();
  if (old == nullptr) return Allocate(service, used);
  const Json& old_spec = api::ObjectOr(api::Field(*old, "spec"));
  std::string before = api::Str(old_spec, "clusterIP");
  std::string now = api::Str(spec, "clusterIP");
  if (now.empty()) {
    if (old_spec.contains("clusterIP")) spec["clusterIP"] = old_spec["clusterIP"];
    if (old_spec.contains("clusterIPs") && !spec.contains("clusterIPs")) {
      spec["clusterIPs"] = old_spec["clusterIPs"];
    }
    return Status::Ok();
  }
  if (!before.empty() && now != before) {
    return Invalid(service, "spec.clusterIP", now, "field is immutable");
  }
  if (before.empty()) return Allocate(service, used);  // stored before pjemu allocated
  if (!spec.contains("clusterIPs")) spec["clusterIPs"] = Json::array({now});
  return Status::Ok();
}

}  // namespace pjemu::store
