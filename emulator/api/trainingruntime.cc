// The (Cluster)TrainingRuntime CRDs' podGroupPolicy: defaults and schema (trainjob.h).
#include "emulator/api/json_fields.h"
#include "emulator/api/object_validation.h"
#include "emulator/api/resources.h"
#include "emulator/api/trainjob.h"

namespace pjemu::api::trainjob {
namespace {

// The OpenAPI type a JSON value has, as a CRD's schema errors name it.
const char* OpenApiTypeOf(const Json& v) {
  switch (v.type()) {
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    case Json::value_t::null:
      return "null";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    default:
      return "number";
  }
}

// `<field> in body must be of type <want>: "<got>"` unless `v` is absent or of that type
// (an integer is a number too). False when it is not.
bool CheckSchemaType(const Json& v, const std::string& field, const std::string& want,
                     std::vector<FieldError>* errs) {
  if (v.is_null()) return true;
  const std::string got = OpenApiTypeOf(v);
  if (got == want || (want == "number" && got == "integer")) return true;
  const std::string quoted = GoQuote(got);
  errs->push_back({FieldError::Type::kInvalid, field, quoted,
                   field + " in body must be of type " + want + ": " + quoted});
  return false;
}

}  // namespace

void SetRuntimeDefaults(Json& runtime) {
  if (!FieldAt(runtime, {"spec", "podGroupPolicy"}).is_object()) return;
  Json& policy = runtime["spec"]["podGroupPolicy"];
  if (Field(policy, "coscheduling").is_object()) {
    SetIfAbsent(policy["coscheduling"], "scheduleTimeoutSeconds", kDefaultScheduleTimeoutSeconds);
  }
  if (FieldAt(policy, {"volcano", "networkTopology"}).is_object()) {
    Json& topology = policy["volcano"]["networkTopology"];
    SetIfAbsent(topology, "mode", "hard");
    SetIfAbsent(topology, "highestTierAllowed", 1);
  }
}

std::vector<FieldError> RuntimeSchemaErrors(const Json& runtime) {
  std::vector<FieldError> errs;
  const std::string at = "spec.podGroupPolicy";
  const Json& policy = FieldAt(runtime, {"spec", "podGroupPolicy"});
  if (!CheckSchemaType(policy, at, "object", &errs) || policy.is_null()) return errs;
  const Json& cosched = Field(policy, "coscheduling");
  if (CheckSchemaType(cosched, at + ".coscheduling", "object", &errs)) {
    CheckSchemaType(Field(cosched, "scheduleTimeoutSeconds"),
                    at + ".coscheduling.scheduleTimeoutSeconds", "integer", &errs);
  }
  const Json& volcano = Field(policy, "volcano");
  if (!CheckSchemaType(volcano, at + ".volcano", "object", &errs)) return errs;
  const Json& topology = Field(volcano, "networkTopology");
  const std::string nt = at + ".volcano.networkTopology";
  if (!CheckSchemaType(topology, nt, "object", &errs)) return errs;
  if (CheckSchemaType(Field(topology, "mode"), nt + ".mode", "string", &errs)) {
    CheckSupported(Field(topology, "mode"), nt + ".mode", {"hard", "soft"}, &errs);
  }
  CheckSchemaType(Field(topology, "highestTierAllowed"), nt + ".highestTierAllowed", "integer",
                  &errs);
  return errs;
}

Status ValidateRuntime(const Json& runtime, const Json* /*old*/,
                       std::vector<std::string>* /*warnings*/) {
  const ResourceType* type = FindByKind(kApiVersion, Str(runtime, "kind"));
  if (type == nullptr) type = &ClusterTrainingRuntimes();
  return InvalidObject(*type, runtime, RuntimeSchemaErrors(runtime));
}

const Json* Coscheduling(const Json& runtime) {
  const Json& c = FieldAt(runtime, {"spec", "podGroupPolicy", "coscheduling"});
  return c.is_object() ? &c : nullptr;
}

int ScheduleTimeoutSeconds(const Json& coscheduling) {
  const Json& t = Field(coscheduling, "scheduleTimeoutSeconds");
  return t.is_number_integer() ? t.get<int>() : kDefaultScheduleTimeoutSeconds;
}

}  // namespace pjemu::api::trainjob
