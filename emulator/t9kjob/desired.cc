#include "emulator/t9kjob/desired.h"

#include <fmt/format.h>

#include "emulator/api/json_fields.h"
#include "emulator/api/t9k.h"
#include "emulator/controller/children.h"

namespace pjemu::t9kjob {

namespace t9k = api::t9k;
using api::ArrayOr, api::Field, api::FieldAt, api::OptInt, api::Str;

namespace {

std::string JobName(const Json& job) { return Str(Field(job, "metadata"), "name"); }

Json Labels(const Json& job, const Replica& r) {
  const Json& rspec = t9k::ReplicaSpecs(job)[r.spec];
  Json labels = {{t9k::kOwnerNameLabel, JobName(job)},
                 {t9k::kOwnerKindLabel, t9k::kKind},
                 {t9k::kReplicaTypeLabel, t9k::TypeName(rspec)},
                 {t9k::kReplicaIndexLabel, std::to_string(r.index)}};
  if (r.spec == 0 && r.index == 0) labels[t9k::kJobRoleLabel] = t9k::kMasterRole;
  return labels;
}

Json Env(const char* name, const std::string& value) { return {{"name", name}, {"value", value}}; }

// The master's port on its first container, named as the Service's (the Kubeflow operator adds
// its port the same way).
void AddMasterPort(Json& container) {
  Json& ports = container["ports"];
  if (!ports.is_array()) ports = Json::array();
  for (const Json& p : ports) {
    if (Str(p, "name") == t9k::kPortName) return;
  }
  ports.push_back({{"name", t9k::kPortName}, {"containerPort", t9k::kMasterPort}});
}

// Debug and resume specs replace the first container's command (and args) and may drop the
// init containers.
void ApplyOverride(Json& spec, const Json& override_spec, bool debug) {
  Json& c0 = spec["containers"][0];
  if (debug) {
    const Json& command = Field(override_spec, "command");
    c0["command"] = command.is_array() && !command.empty()
                        ? command
                        : Json::array({t9k::kDebugCommand, t9k::kDebugArg});
    c0.erase("args");
  } else {
    if (Field(override_spec, "command").is_array()) c0["command"] = override_spec["command"];
    if (Field(override_spec, "args").is_array()) c0["args"] = override_spec["args"];
  }
  const Json& skip = Field(override_spec, "skipInitContainer");
  if (skip.is_boolean() && skip.get<bool>()) spec.erase("initContainers");
}

}  // namespace

std::string PodName(const Json& job, const Replica& r) {
  const Json& rspec = t9k::ReplicaSpecs(job)[r.spec];
  return fmt::format("{}-{}-{}-{}", JobName(job), t9k::NameSuffix(job), t9k::TypeName(rspec),
                     r.index);
}

std::string MasterName(const Json& job) { return PodName(job, {0, 0}); }

std::vector<Replica> DesiredReplicas(const Json& job) {
  std::vector<Replica> out;
  const Json& specs = t9k::ReplicaSpecs(job);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const std::int64_t n = t9k::Replicas(job, i);
    for (std::int64_t k = 0; k < n; ++k) out.push_back({i, k});
  }
  return out;
}

std::int64_t GlobalRank(const Json& job, const Replica& r) {
  std::int64_t rank = 0;
  for (const Replica& d : DesiredReplicas(job)) {
    if (d.spec == r.spec && d.index == r.index) return rank;
    ++rank;
  }
  return rank;
}

Json PodEnv(const Json& job, const Replica& r) {
  const std::string master = MasterName(job);
  const std::string port = std::to_string(t9k::kMasterPort);
  Json env = Json::array({Env("MASTER_ADDR", master), Env("MASTER_PORT", port)});
  if (t9k::TorchrunEnabled(job)) {
    env.push_back(Env("PET_RDZV_ENDPOINT", master + ":" + port));
  } else {
    env.push_back(Env("WORLD_SIZE", std::to_string(DesiredReplicas(job).size())));
    env.push_back(Env("RANK", std::to_string(GlobalRank(job, r))));
  }
  return env;
}

Result<std::vector<std::string>> TorchrunArgs(const Json& job, const Json& rspec) {
  const Json& torchrun = FieldAt(job, {"spec", "torchrunConfig"});
  ASSIGN_OR_RETURN(std::int64_t procs, t9k::ProcPerNode(job, rspec));
  std::string nnodes = std::to_string(DesiredReplicas(job).size());
  if (t9k::ElasticEnabled(job)) {
    const Json& elastic = FieldAt(job, {"spec", "elastic"});
    nnodes = fmt::format("{}:{}", OptInt(elastic, "minReplicas").value_or(1),
                         OptInt(elastic, "maxReplicas").value_or(1));
  }
  std::vector<std::string> args = {
      "--nnodes=" + nnodes, "--nproc_per_node=" + std::to_string(procs),
      "--rdzv_backend=" + Str(torchrun, "rdzvBackend"),
      "--rdzv_id=" + Str(Field(job, "metadata"), "uid")};
  if (auto m = OptInt(torchrun, "maxRestarts")) args.push_back(fmt::format("--max_restarts={}", *m));
  for (const Json& o : ArrayOr(Field(torchrun, "extraOptions"))) {
    if (o.is_string()) args.push_back(o.get<std::string>());
  }
  return args;
}

Result<Json> DesiredPod(const Json& job, const Replica& r, Launch launch) {
  const Json& rspec = t9k::ReplicaSpecs(job)[r.spec];
  const Json& tmpl = Field(rspec, "template");
  const Json& tmeta = Field(tmpl, "metadata");
  Json labels = Labels(job, r);
  for (const auto& [k, v] : api::ObjectOr(Field(tmeta, "labels")).items()) {
    if (!labels.contains(k)) labels[k] = v;
  }
  Json meta = {{"name", PodName(job, r)},
               {"namespace", Str(Field(job, "metadata"), "namespace")},
               {"labels", labels},
               {"ownerReferences", Json::array({controller::ControllerRef(job)})}};
  if (Field(tmeta, "annotations").is_object()) meta["annotations"] = tmeta["annotations"];
  Json spec = Field(tmpl, "spec").is_object() ? tmpl["spec"] : Json::object();
  spec["restartPolicy"] = "Never";  // the controller restarts replicas, never the kubelet
  if (!spec["containers"].is_array() || spec["containers"].empty()) {
    return Status(Code::kInvalid, "replica " + PodName(job, r) + " has no containers");
  }
  const Json env = PodEnv(job, r);
  for (Json& c : spec["containers"]) {
    if (!c["env"].is_array()) c["env"] = Json::array();
    for (const Json& e : env) c["env"].push_back(e);
  }
  if (r.spec == 0 && r.index == 0) AddMasterPort(spec["containers"][0]);
  const std::string type = Str(rspec, "type");
  if (launch == Launch::kDebug) {
    ApplyOverride(spec, t9k::DebugSpecFor(job, type), true);
  } else {
    if (launch == Launch::kResume) ApplyOverride(spec, t9k::ResumeSpecFor(job, type), false);
    if (t9k::TorchrunEnabled(job)) {
      ASSIGN_OR_RETURN(std::vector<std::string> targs, TorchrunArgs(job, rspec));
      Json& c0 = spec["containers"][0];
      Json args = Json::array();
      for (const std::string& a : targs) args.push_back(a);
      for (const Json& a : ArrayOr(Field(c0, "args"))) args.push_back(a);
      c0["command"] = Json::array({"torchrun"});
      c0["args"] = args;
    }
  }
  return Json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta}, {"spec", spec}};
}

Json DesiredMasterService(const Json& job) {
  const Replica master{0, 0};
  Json selector = Labels(job, master);
  selector.erase(t9k::kOwnerKindLabel);
  selector.erase(t9k::kJobRoleLabel);
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata",
           {{"name", MasterName(job)},
            {"namespace", Str(Field(job, "metadata"), "namespace")},
            {"labels", {{t9k::kOwnerNameLabel, JobName(job)}}},
            {"ownerReferences", Json::array({controller::ControllerRef(job)})}}},
          {"spec",
           {{"clusterIP", "None"},
            {"selector", selector},
            {"ports",
             Json::array({{{"name", t9k::kPortName},
                           {"port", t9k::kMasterPort},
                           {"targetPort", t9k::kMasterPort}}})}}}};
}

Json DesiredTensorBoard(const Json& job) {
  const Json& spec = FieldAt(job, {"spec", "tensorboardSpec"});
  if (!spec.is_object()) return nullptr;
  return {{"apiVersion", t9k::kTensorBoardApiVersion},
          {"kind", t9k::kTensorBoardKind},
          {"metadata",
           {{"name", JobName(job) + "-" + t9k::NameSuffix(job)},
            {"namespace", Str(Field(job, "metadata"), "namespace")},
            {"labels", {{t9k::kOwnerNameLabel, JobName(job)}}},
            {"ownerReferences", Json::array({controller::ControllerRef(job)})}}},
          {"spec", spec}};
}

}  // namespace pjemu::t9kjob
