#include "emulator/trainjob/build.h"

#include <algorithm>
#include <cctype>

#include "emulator/api/jobset.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/resource_quantity.h"
#include "emulator/api/structured_merge.h"
#include "emulator/api/trainjob.h"
#include "emulator/controller/children.h"
#include "emulator/trainjob/coscheduling.h"

namespace pjemu::trainjob {

namespace atj = api::trainjob;
using api::ArrayOr, api::Field, api::FieldAt, api::ObjectOr, api::OptInt, api::Str;

namespace {

const Json& Trainer(const Json& tj) { return FieldAt(tj, {"spec", "trainer"}); }

// apply.UpsertEnvVars: an entry of the same name is replaced in place, else appended.
void UpsertEnv(Json& container, const Json& var) {
  Json& env = container["env"];
  if (!env.is_array()) env = Json::array();
  for (Json& e : env) {
    if (Str(e, "name") == Str(var, "name")) {
      e = var;
      return;
    }
  }
  env.push_back(var);
}

void UpsertPort(Json& container, int port) {
  Json& ports = container["ports"];
  if (!ports.is_array()) ports = Json::array();
  for (const Json& p : ports) {
    if (OptInt(p, "containerPort") == port) return;
  }
  ports.push_back({{"containerPort", port}, {"protocol", "TCP"}});
}

// The trainer's own fields over the runtime's container.
void ApplyTrainer(Json& container, const Json& trainer) {
  for (const char* key : {"image", "command", "args"}) {
    if (trainer.contains(key) && !trainer[key].is_null()) container[key] = trainer[key];
  }
  for (const Json& e : ArrayOr(Field(trainer, "env"))) UpsertEnv(container, e);
  if (Field(trainer, "resourcesPerNode").is_object()) {
    container["resources"] = trainer["resourcesPerNode"];
  }
}

void ApplyTorch(Json& container, const Json& tj, const Json& runtime) {
  const std::string name = Str(Field(tj, "metadata"), "name");
  auto value = [](const char* n, const std::string& v) { return Json{{"name", n}, {"value", v}}; };
  UpsertEnv(container, value(atj::kEnvNumNodes, std::to_string(NumNodes(tj, runtime))));
  UpsertEnv(container, value(atj::kEnvNumProcPerNode, NumProcPerNode(tj, runtime)));
  UpsertEnv(container,
            {{"name", atj::kEnvNodeRank},
             {"valueFrom", {{"fieldRef", {{"fieldPath",
                 "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}}}});
  UpsertEnv(container, value(atj::kEnvMasterAddr,
                             name + "-" + atj::kNode + "-0-0." + name));
  UpsertEnv(container, value(atj::kEnvMasterPort, std::to_string(atj::kTrainerPort)));
  UpsertPort(container, atj::kTrainerPort);
}

// Step 2 on one replicatedJob: only the trainer step's.
void EnforceTrainer(Json& rjob, const Json& tj, const Json& runtime) {
  if (Str(FieldAt(rjob, {"template", "metadata", "labels"}), atj::kAncestorLabel) !=
      atj::kAncestorTrainer) {
    return;
  }
  Json& job_spec = rjob["template"]["spec"];
  job_spec["parallelism"] = NumNodes(tj, runtime);
  job_spec["completions"] = NumNodes(tj, runtime);
  Json& containers = job_spec["template"]["spec"]["containers"];
  if (!containers.is_array()) return;
  const bool torch = FieldAt(runtime, {"spec", "mlPolicy", "torch"}).is_object();
  for (Json& c : containers) {
    if (Str(c, "name") != atj::kNode) continue;
    if (Trainer(tj).is_object()) ApplyTrainer(c, Trainer(tj));
    if (torch && Field(Trainer(tj), "command") != Json::array({"tune", "run"})) {
      ApplyTorch(c, tj, runtime);
    }
  }
}

void Merge(Json& into, const Json& from) {
  if (!into.is_object()) into = Json::object();
  if (from.is_object()) into.update(from);
}

}  // namespace

std::int64_t NumNodes(const Json& tj, const Json& runtime) {
  if (auto n = OptInt(Trainer(tj), "numNodes")) return *n;
  return OptInt(FieldAt(runtime, {"spec", "mlPolicy"}), "numNodes").value_or(1);
}

std::string NumProcPerNode(const Json& tj, const Json& runtime) {
  const Json& own = Field(Trainer(tj), "numProcPerNode");
  const Json& rt = FieldAt(runtime, {"spec", "mlPolicy", "torch", "numProcPerNode"});
  const Json& chosen = own.is_null() ? rt : own;
  std::string npp = chosen.is_number_integer() ? std::to_string(chosen.get<std::int64_t>())
                    : chosen.is_string()       ? chosen.get<std::string>()
                                               : "auto";
  const Json& res = Field(Trainer(tj), "resourcesPerNode");
  if (npp != "auto" || !res.is_object()) return npp;
  for (const char* which : {"limits", "requests"}) {
    const Json& list = Field(res, which);
    if (!list.is_object()) continue;
    for (const auto& [k, v] : list.items()) {
      std::string lower = k;
      std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
      if (lower.find("gpu") != std::string::npos) return npp;
    }
    if (!list.contains("cpu")) continue;
    auto q = api::Quantity::Parse(list["cpu"].is_string() ? list["cpu"].get<std::string>()
                                                          : list["cpu"].dump());
    return std::to_string(std::max<std::int64_t>(1, q.ok() ? q->Value() : 1));
  }
  return "1";
}

Json PatchedRuntime(const Json& tj, const Json& runtime) {
  const Json& patches = FieldAt(tj, {"spec", "runtimePatches"});
  if (!patches.is_array() || patches.empty()) return runtime;
  Json out = runtime;
  Json spec = ObjectOr(Field(runtime, "spec"));
  for (const Json& patch : patches) {
    const Json& over = Field(patch, "trainingRuntimeSpec");
    if (over.is_object()) spec = api::Merge(spec, over, atj::RuntimeSpecSchema());
  }
  out["spec"] = std::move(spec);
  return out;
}

Json DesiredJobSet(const Json& tj, const Json& runtime_as_stored) {
  const Json runtime = PatchedRuntime(tj, runtime_as_stored);
  const Json& meta = Field(tj, "metadata");
  const Json& tmpl = FieldAt(runtime, {"spec", "template"});
  Json js = {{"apiVersion", api::jobset::kApiVersion},
             {"kind", api::jobset::kKind},
             {"metadata", {{"name", Str(meta, "name")},
                           {"namespace", Str(meta, "namespace")},
                           {"labels", ObjectOr(FieldAt(tmpl, {"metadata", "labels"}))},
                           {"annotations", ObjectOr(FieldAt(tmpl, {"metadata", "annotations"}))},
                           {"ownerReferences", Json::array({controller::ControllerRef(tj)})}}},
             {"spec", ObjectOr(Field(tmpl, "spec"))}};
  Merge(js["metadata"]["labels"], FieldAt(tj, {"spec", "labels"}));
  Merge(js["metadata"]["annotations"], FieldAt(tj, {"spec", "annotations"}));
  if (js["spec"]["replicatedJobs"].is_array()) {
    for (Json& rjob : js["spec"]["replicatedJobs"]) EnforceTrainer(rjob, tj, runtime);
  }
  if (Coscheduled(runtime)) LabelPodTemplates(js, Str(meta, "name"));
  js["spec"]["suspend"] = FieldAt(tj, {"spec", "suspend"}) == Json(true);
  return js;
}

}  // namespace pjemu::trainjob
