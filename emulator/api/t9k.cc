#include "emulator/api/t9k.h"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "emulator/api/json_fields.h"
#include "emulator/api/resource_quantity.h"
#include "emulator/common/strings.h"

namespace pjemu::api::t9k {
namespace {

// The pre-2024 spelling `enable` of torchrunConfig and runMode.debug/pause reads as `enabled`.
void RenameLegacyEnable(Json& section) {
  if (!section.is_object() || section.contains("enabled") || !section.contains("enable")) return;
  Json enable = std::move(section["enable"]);
  section.erase("enable");
  section["enabled"] = std::move(enable);
}

void DefaultReplicaSpecs(Json& spec) {
  Json& specs = spec["replicaSpecs"];
  if (!specs.is_array()) return;
  for (Json& rspec : specs) {
    if (!rspec.is_object()) continue;
    if (!rspec.contains("replicas") || rspec["replicas"].is_null()) rspec["replicas"] = 1;
    if (Str(rspec, "restartPolicy").empty()) rspec["restartPolicy"] = "OnFailure";
  }
}

void DefaultRunPolicy(Json& spec) {
  Json& policy = spec["runPolicy"];
  if (!policy.is_object()) policy = Json::object();
  if (!policy.contains("backoffLimit") || policy["backoffLimit"].is_null()) {
    policy["backoffLimit"] = kDefaultBackoffLimit;
  }
  if (Str(policy, "cleanUpPolicy").empty()) policy["cleanUpPolicy"] = "None";
}

bool Enabled(const Json& section) {
  const Json& e = Field(section, "enabled");
  return e.is_boolean() && e.get<bool>();
}

const Json& ByType(const Json& list, const std::string& type) {
  for (const Json& item : ArrayOr(list)) {
    if (Str(item, "type") == type) return item;
  }
  static const Json kNull;
  return kNull;
}

}  // namespace

Json SetDefaults(Json job) {
  if (!job.is_object()) return job;
  Json& spec = job["spec"];
  if (!spec.is_object()) spec = Json::object();
  if (spec.contains("torchrunConfig")) {
    Json& torchrun = spec["torchrunConfig"];
    RenameLegacyEnable(torchrun);
    if (torchrun.is_object() && Str(torchrun, "rdzvBackend").empty()) {
      torchrun["rdzvBackend"] = kDefaultRdzvBackend;
    }
  }
  if (spec.contains("runMode") && spec["runMode"].is_object()) {
    for (const char* mode : {"debug", "pause"}) {
      if (spec["runMode"].contains(mode)) RenameLegacyEnable(spec["runMode"][mode]);
    }
  }
  DefaultReplicaSpecs(spec);
  DefaultRunPolicy(spec);
  return job;
}

const Json& ReplicaSpecs(const Json& job) { return ArrayOr(Field(Field(job, "spec"), "replicaSpecs")); }

std::int64_t Replicas(const Json& job, std::size_t spec_index) {
  const Json& specs = ReplicaSpecs(job);
  if (spec_index >= specs.size()) return 0;
  if (spec_index == 0 && ElasticEnabled(job)) {
    const Json& elastic = Field(Field(job, "spec"), "elastic");
    if (auto expected = OptInt(elastic, "expectedReplicas")) return *expected;
  }
  return OptInt(specs[spec_index], "replicas").value_or(1);
}

std::string TypeName(const Json& rspec) {
  return AsciiLower(Str(rspec, "type"));
}

std::string RestartPolicy(const Json& rspec) { return Str(rspec, "restartPolicy"); }

bool TorchrunEnabled(const Json& job) { return Enabled(Field(Field(job, "spec"), "torchrunConfig")); }
bool ElasticEnabled(const Json& job) {
  return TorchrunEnabled(job) && Enabled(Field(Field(job, "spec"), "elastic"));
}
bool DebugEnabled(const Json& job) {
  return Enabled(FieldAt(job, {"spec", "runMode", "debug"}));
}
bool PauseEnabled(const Json& job) {
  return Enabled(FieldAt(job, {"spec", "runMode", "pause"}));
}

const Json& DebugSpecFor(const Json& job, const std::string& type) {
  return ByType(FieldAt(job, {"spec", "runMode", "debug", "replicaSpecs"}), type);
}
const Json& ResumeSpecFor(const Json& job, const std::string& type) {
  return ByType(FieldAt(job, {"spec", "runMode", "pause", "resumeSpecs"}), type);
}

Result<std::int64_t> ProcPerNode(const Json& job, const Json& rspec) {
  const Json& v = FieldAt(job, {"spec", "torchrunConfig", "procPerNode"});
  if (v.is_null()) return std::int64_t{1};
  if (v.is_number_integer() && v.get<std::int64_t>() > 0) return v.get<std::int64_t>();
  const std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s == "gpu") {
    const Json& containers = ArrayOr(FieldAt(rspec, {"template", "spec", "containers"}));
    static const Json kNone;
    const Json& c0 = containers.empty() ? kNone : containers[0];
    for (const char* section : {"limits", "requests"}) {
      const Json& gpu = FieldAt(c0, {"resources", section, "nvidia.com/gpu"});
      if (gpu.is_null()) continue;
      auto q = Quantity::FromJson(gpu);
      if (q.ok() && q->Value() > 0) return q->Value();
    }
    return std::int64_t{1};
  }
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < 1) {
    return Status(Code::kInvalid, fmt::format(
        "spec.torchrunConfig.procPerNode: Invalid value: \"{}\": must be a positive number or "
        "\"gpu\"",
        s));
  }
  return n;
}

std::string Phase(const Json& job) { return Str(Field(job, "status"), "phase"); }

std::string NameSuffix(const Json& job) {
  // A hash of the UID: stable for the job's life, different between jobs.
  return fmt::format("{:05x}", Fnv1a32(Str(Field(job, "metadata"), "uid")) & 0xfffffu);
}

}  // namespace pjemu::api::t9k
