#include "emulator/api/jobset.h"

#include <algorithm>
#include <cstdio>
#include <regex>
#include <set>

#include "emulator/api/json_fields.h"
#include "emulator/common/strings.h"
#include "emulator/api/object_validation.h"
#include "emulator/api/resources.h"

namespace pjemu::api::jobset {
namespace {

using Type = FieldError::Type;
using Errors = std::vector<FieldError>;

void DefaultReplicatedJob(Json& rjob) {
  if (!rjob.is_object()) return;
  SetIfAbsent(rjob, "replicas", 1);
  SetIfAbsent(rjob, "groupName", kDefaultGroup);
  Json& job_spec = rjob["template"]["spec"];
  if (!job_spec.is_object()) return;
  SetIfAbsent(job_spec, "completionMode", "Indexed");
  Json& pod_spec = job_spec["template"]["spec"];
  if (pod_spec.is_object()) SetIfAbsent(pod_spec, "restartPolicy", "OnFailure");
}

bool IsDnsLabel(const std::string& s) {
  static const std::regex re("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  return !s.empty() && s.size() <= 63 && std::regex_match(s, re);
}

void CheckReplicatedJobs(const Json& js, Errors* errs) {
  const Json& rjobs = FieldAt(js, {"spec", "replicatedJobs"});
  if (!rjobs.is_array() || rjobs.empty()) {
    errs->push_back({Type::kRequired, "spec.replicatedJobs", "", ""});
    return;
  }
  const std::string name = Str(Field(js, "metadata"), "name");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < rjobs.size(); ++i) {
    const std::string at = "spec.replicatedJobs[" + std::to_string(i) + "]";
    const std::string rname = Str(rjobs[i], "name");
    if (!IsDnsLabel(rname)) {
      errs->push_back({Type::kInvalid, at + ".name", GoQuote(rname),
                       "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                       "characters or '-'"});
    } else if (!seen.insert(rname).second) {
      errs->push_back({Type::kDuplicate, at + ".name", GoQuote(rname), ""});
    }
    const std::int64_t replicas = OptInt(rjobs[i], "replicas").value_or(1);
    if (replicas < 0) {
      errs->push_back({Type::kInvalid, at + ".replicas", std::to_string(replicas),
                       "must be greater than or equal to 0"});
    }
    // The pods' hostnames `<job>-<index>` must stay DNS labels.
    const std::string job = JobName(name, rname, std::max<std::int64_t>(replicas - 1, 0));
    if (job.size() > 63) {
      errs->push_back({Type::kInvalid, at + ".name", GoQuote(rname),
                       "JobSet name + replicatedJob name + job index must be 63 characters or "
                       "fewer"});
    }
    if (!FieldAt(rjobs[i], {"template", "spec"}).is_object()) {
      errs->push_back({Type::kRequired, at + ".template.spec", "", ""});
    }
  }
}

std::set<std::string> ReplicatedJobNames(const Json& js) {
  std::set<std::string> out;
  for (const Json& r : ArrayOr(FieldAt(js, {"spec", "replicatedJobs"}))) out.insert(Str(r, "name"));
  return out;
}

void CheckPolicies(const Json& js, Errors* errs) {
  const Json& success = FieldAt(js, {"spec", "successPolicy"});
  const std::string op = Str(success, "operator");
  if (!op.empty() && op != "All" && op != "Any") {
    errs->push_back(NotSupportedError("spec.successPolicy.operator", op, {"All", "Any"}));
  }
  const std::set<std::string> names = ReplicatedJobNames(js);
  for (const Json& t : ArrayOr(Field(success, "targetReplicatedJobs"))) {
    if (t.is_string() && !names.count(t.get<std::string>())) {
      errs->push_back({Type::kInvalid, "spec.successPolicy.targetReplicatedJobs", GoQuote(t.get<std::string>()),
                       "must be a valid replicated job name"});
    }
  }
  const Json& failure = FieldAt(js, {"spec", "failurePolicy"});
  if (OptInt(failure, "maxRestarts").value_or(0) < 0) {
    errs->push_back({Type::kInvalid, "spec.failurePolicy.maxRestarts",
                     std::to_string(*OptInt(failure, "maxRestarts")),
                     "must be greater than or equal to 0"});
  }
  static const std::vector<std::string> kActions = {
      "FailJobSet", "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts"};
  const Json& rules = Field(failure, "rules");
  for (std::size_t i = 0; i < ArrayOr(rules).size(); ++i) {
    const std::string action = Str(rules[i], "action");
    if (std::find(kActions.begin(), kActions.end(), action) == kActions.end()) {
      errs->push_back(NotSupportedError(
          "spec.failurePolicy.rules[" + std::to_string(i) + "].action", action, kActions));
    }
  }
}

}  // namespace

void SetDefaults(Json& js) {
  if (!js.is_object() || !js["spec"].is_object()) return;
  Json& spec = js["spec"];
  if (spec.contains("replicatedJobs") && spec["replicatedJobs"].is_array()) {
    for (Json& rjob : spec["replicatedJobs"]) DefaultReplicatedJob(rjob);
  }
  SetIfAbsent(spec, "successPolicy", {{"operator", "All"}});
  SetIfAbsent(spec["successPolicy"], "operator", "All");
  SetIfAbsent(spec, "startupPolicy", {{"startupPolicyOrder", "AnyOrder"}});
  if (!spec["network"].is_object()) spec["network"] = Json::object();
  SetIfAbsent(spec["network"], "enableDNSHostnames", true);
  SetIfAbsent(spec["network"], "publishNotReadyAddresses", true);
  if (spec.contains("failurePolicy") && spec["failurePolicy"].is_object()) {
    SetIfAbsent(spec["failurePolicy"], "restartStrategy", "Recreate");
  }
}

// replicatedJobs as the update webhook compares them: while the JobSet is or becomes suspended
// the pod templates' labels, annotations, nodeSelector, tolerations and schedulingGates may
// change (what Kueue writes when it starts and stops a JobSet), so they are left out.
Json JobSetSchedulingMasked(const Json& js, bool suspended) {
  Json rjobs = FieldAt(js, {"spec", "replicatedJobs"});
  if (!suspended || !rjobs.is_array()) return rjobs;
  auto drop = [](Json& pod, const char* part, std::initializer_list<const char*> keys) {
    auto it = pod.find(part);
    if (it == pod.end() || !it->is_object()) return;
    for (const char* key : keys) it->erase(key);
    if (it->empty()) pod.erase(it);
  };
  for (Json& rjob : rjobs) {
    Json* pod = rjob.is_object() ? &rjob : nullptr;
    for (const char* step : {"template", "spec", "template"}) {
      if (pod == nullptr || !pod->is_object() || !pod->contains(step)) {
        pod = nullptr;
        break;
      }
      pod = &(*pod)[step];
    }
    if (pod == nullptr || !pod->is_object()) continue;
    drop(*pod, "metadata", {"labels", "annotations"});
    drop(*pod, "spec", {"nodeSelector", "tolerations", "schedulingGates"});
  }
  return rjobs;
}

std::vector<FieldError> FieldErrors(const Json& js, const Json* old) {
  Errors errs;
  if (!Field(js, "spec").is_object()) {
    errs.push_back({Type::kRequired, "spec", "", ""});
    return errs;
  }
  CheckReplicatedJobs(js, &errs);
  CheckPolicies(js, &errs);
  const bool suspended = old && (FieldAt(js, {"spec", "suspend"}) == Json(true) ||
                                 FieldAt(*old, {"spec", "suspend"}) == Json(true));
  if (old && JobSetSchedulingMasked(js, suspended) != JobSetSchedulingMasked(*old, suspended)) {
    errs.push_back({Type::kInvalid, "spec.replicatedJobs", "", "field is immutable"});
  }
  return errs;
}

Status Validate(const Json& js, const Json* old, std::vector<std::string>* /*warnings*/) {
  static const ResourceType& type = *FindByKind(kApiVersion, kKind);
  return WebhookDenied(type, "vjobset.kb.io", js, FieldErrors(js, old));
}

std::string JobName(const std::string& jobset, const std::string& rjob, std::int64_t index) {
  return jobset + "-" + rjob + "-" + std::to_string(index);
}

std::string Subdomain(const Json& js) {
  const std::string sub = Str(FieldAt(js, {"spec", "network"}), "subdomain");
  return sub.empty() ? Str(Field(js, "metadata"), "name") : sub;
}

bool DnsHostnames(const Json& js) {
  const Json& v = FieldAt(js, {"spec", "network", "enableDNSHostnames"});
  return !v.is_boolean() || v.get<bool>();
}

std::string JobKey(const std::string& ns, const std::string& job_name) {
  return Sha1Hex(ns + "/" + job_name);
}

std::vector<kueue::PodSet> PodSets(const Json& js) {
  std::vector<kueue::PodSet> out;
  for (const Json& rjob : ArrayOr(FieldAt(js, {"spec", "replicatedJobs"}))) {
    const Json& job_spec = FieldAt(rjob, {"template", "spec"});
    const std::int64_t parallelism = OptInt(job_spec, "parallelism").value_or(1);
    const std::int64_t per_job =
        std::min(parallelism, OptInt(job_spec, "completions").value_or(parallelism));
    out.push_back({Str(rjob, "name"), OptInt(rjob, "replicas").value_or(1) * per_job,
                   Field(job_spec, "template")});
  }
  return out;
}

std::vector<Json*> PodTemplates(Json& js) {
  std::vector<Json*> out;
  Json& rjobs = js["spec"]["replicatedJobs"];
  if (!rjobs.is_array()) return out;
  for (Json& rjob : rjobs) out.push_back(&rjob["template"]["spec"]["template"]);
  return out;
}

bool JobsReady(const Json& js) {
  std::int64_t want = 0, have = 0;
  for (const Json& rjob : ArrayOr(FieldAt(js, {"spec", "replicatedJobs"}))) {
    want += OptInt(rjob, "replicas").value_or(1);
  }
  for (const Json& r : ArrayOr(FieldAt(js, {"status", "replicatedJobsStatus"}))) {
    have += OptInt(r, "ready").value_or(0) + OptInt(r, "succeeded").value_or(0);
  }
  return want > 0 && have >= want;
}

bool IsFinished(const Json& js) {
  return api::TrueCondition(js, kCompleted) != nullptr || api::TrueCondition(js, kFailed) != nullptr;
}

}  // namespace pjemu::api::jobset
