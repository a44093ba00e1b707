// Given PyTorchJobs as submitted, ValidatePyTorchJob should answer as the v1.9.4 webhook does
// (upstream TestValidateV1PyTorchJob: T1-T12), compared by error type and field.
#include <catch2/catch.hpp>

#include "emulator/api/pytorchjob_validation.h"
#include "tests/controller/job_builder.h"

namespace pjemu::pytorchjob {
namespace {

using api::FieldError, api::ValidatePyTorchJob, api::WebhookFieldErrors;
using testing::JobBuilder;
using Type = FieldError::Type;

std::vector<std::pair<Type, std::string>> TypesAndFields(const std::vector<FieldError>& errs) {
  std::vector<std::pair<Type, std::string>> out;
  for (const auto& e : errs) out.emplace_back(e.type, e.field);
  return out;
}

JobBuilder Valid(const std::string& name = "test") {
  return std::move(JobBuilder(name).Master(1).Worker(1));
}

TEST_CASE("T1: a valid Master+Worker job with managedBy and elasticPolicy passes", "[controller]") {
  Json job = Valid()
                 .Set("/spec/runPolicy/managedBy", "kubeflow.org/training-operator")
                 .Set("/spec/elasticPolicy/rdzvBackend", "c10d")
                 .Build();
  std::vector<std::string> warnings;
  CHECK(WebhookFieldErrors(job, nullptr, &warnings).empty());
  CHECK(warnings.empty());
  CHECK(ValidatePyTorchJob(job, nullptr, &warnings).ok());
}

TEST_CASE("T2: name 0-test is Invalid on metadata.name", "[controller]") {
  Json job = Valid("0-test").Build();
  auto errs = WebhookFieldErrors(job, nullptr, nullptr);
  REQUIRE(TypesAndFields(errs) ==
          decltype(TypesAndFields(errs)){{Type::kInvalid, "metadata.name"}});
  CHECK(errs[0].ToString() ==
        "metadata.name: Invalid value: \"0-test\": should match: a DNS-1035 label must consist of "
        "lower case alphanumeric characters or '-', start with an alphabetic character, and end "
        "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
        "is '[a-z]([-a-z0-9]*[a-z0-9])?')");
}

TEST_CASE("T3: a Worker with no containers gives two Required errors", "[controller]") {
  Json job = Valid()
                 .Set("/spec/pytorchReplicaSpecs/Worker/template/spec/containers", Json::array())
                 .Build();
  auto errs = WebhookFieldErrors(job, nullptr, nullptr);
  const std::string f = "spec.pytorchReplicaSpecs[Worker].template.spec.containers";
  CHECK(TypesAndFields(errs) ==
        decltype(TypesAndFields(errs)){{Type::kRequired, f}, {Type::kRequired, f}});
}

TEST_CASE("T4: an empty image is Required on the first container image", "[controller]") {
  Json job =
      Valid().Set("/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/image", "").Build();
  auto errs = WebhookFieldErrors(job, nullptr, nullptr);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].ToString() ==
        "spec.pytorchReplicaSpecs[Worker].template.spec.containers[0].image: Required value: "
        "must be required");
}

TEST_CASE("T5: no container named pytorch is Required on containers", "[controller]") {
  Json job =
      Valid().Set("/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/name", "").Build();
  auto errs = WebhookFieldErrors(job, nullptr, nullptr);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].ToString() ==
        "spec.pytorchReplicaSpecs[Worker].template.spec.containers: Required value: must have "
        "at least one container with name pytorch");
}

TEST_CASE("T6: Master replicas 2 is Forbidden", "[controller]") {
  Json job = Valid().Set("/spec/pytorchReplicaSpecs/Master/replicas", 2).Build();
  auto errs = WebhookFieldErrors(job, nullptr, nullptr);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].ToString() == "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1");
}

TEST_CASE("T7: elasticPolicy.nProcPerNode passes with the deprecation warning", "[controller]") {
  Json job = Valid().Set("/spec/elasticPolicy/nProcPerNode", 1).Build();
  std::vector<std::string> warnings;
  CHECK(ValidatePyTorchJob(job, nullptr, &warnings).ok());
  CHECK(warnings == std::vector<std::string>{
                        "spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode "
                        "instead"});
}

TEST_CASE("T8: nprocPerNode with elasticPolicy.nProcPerNode is Forbidden and warned",
          "[controller]") {
  Json job =
      Valid().Set("/spec/elasticPolicy/nProcPerNode", 1).Set("/spec/nprocPerNode", "1").Build();
  std::vector<std::string> warnings;
  auto errs = WebhookFieldErrors(job, nullptr, &warnings);
  CHECK(TypesAndFields(errs) ==
        decltype(TypesAndFields(errs)){{Type::kForbidden, "spec.elasticPolicy.nProcPerNode"}});
  CHECK(warnings.size() == 1);
}

TEST_CASE("T9: an unknown managedBy is NotSupported", "[controller]") {
  Json job = Valid().Set("/spec/runPolicy/managedBy", "other-job-controller").Build();
  auto errs = WebhookFieldErrors(job, nullptr, nullptr);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].ToString() ==
        "spec.runPolicy.managedBy: Unsupported value: \"other-job-controller\": supported "
        "values: \"kubeflow.org/training-operator\", \"kueue.x-k8s.io/multikueue\"");
}

TEST_CASE("T10: managedBy is immutable in the inner function", "[controller]") {
  Json old = Valid().Set("/spec/runPolicy/managedBy", "kubeflow.org/training-operator").Build();
  Json now = Valid().Set("/spec/runPolicy/managedBy", "kueue.x-k8s.io/multikueue").Build();
  auto errs = WebhookFieldErrors(now, &old, nullptr);
  CHECK(TypesAndFields(errs) ==
        decltype(TypesAndFields(errs)){{Type::kInvalid, "spec.runPolicy.managedBy"}});
}

TEST_CASE("T10 quirk: ValidateUpdate passes the new job as old - so managedBy changes pass",
          "[controller]") {
  Json old = Valid().Set("/spec/runPolicy/managedBy", "kubeflow.org/training-operator").Build();
  Json now = Valid().Set("/spec/runPolicy/managedBy", "kueue.x-k8s.io/multikueue").Build();
  CHECK(ValidatePyTorchJob(now, &old, nullptr).ok());
}

TEST_CASE("T11: elasticPolicy without a Worker is Required on Worker", "[controller]") {
  Json job = JobBuilder("test").Master(1).Set("/spec/elasticPolicy", Json::object()).Build();
  auto errs = WebhookFieldErrors(job, nullptr, nullptr);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].ToString() ==
        "spec.pytorchReplicaSpecs[Worker]: Required value: must be configured if elastic policy "
        "is used");
}

TEST_CASE("T12: Worker replicas 0 is Forbidden (must be at least 1)", "[controller]") {
  Json job = JobBuilder("test").Worker(0).Set("/spec/elasticPolicy", Json::object()).Build();
  auto errs = WebhookFieldErrors(job, nullptr, nullptr);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].ToString() ==
        "spec.pytorchReplicaSpecs[Worker].replicas: Forbidden: must be at least 1");
}

TEST_CASE("a Master without replicas is rejected because the webhook runs before defaulting",
          "[controller]") {
  Json job = JobBuilder("test").Master(std::nullopt).Build();
  auto errs = WebhookFieldErrors(job, nullptr, nullptr);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].field == "spec.pytorchReplicaSpecs[Master].replicas");
}

TEST_CASE("a lower-case replica key is NotSupported", "[controller]") {
  Json job = JobBuilder("test").Build();
  job["spec"]["pytorchReplicaSpecs"]["worker"] = testing::ReplicaSpecJson(1, "OnFailure");
  auto errs = WebhookFieldErrors(job, nullptr, nullptr);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].ToString() ==
        "spec.pytorchReplicaSpecs[worker]: Unsupported value: \"worker\": supported values: "
        "\"Master\", \"Worker\"");
}

TEST_CASE("missing pytorchReplicaSpecs is Required - an empty map passes", "[controller]") {
  Json job = JobBuilder("test").Build();
  CHECK(WebhookFieldErrors(job, nullptr, nullptr).empty());
  job["spec"].erase("pytorchReplicaSpecs");
  auto errs = WebhookFieldErrors(job, nullptr, nullptr);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].ToString() == "spec.pytorchReplicaSpecs: Required value: must be required");
}

TEST_CASE("several errors are aggregated in brackets with causes naming each field",
          "[controller]") {
  Json job = JobBuilder("bad").Master(2).Worker(0).Build();
  Status s = ValidatePyTorchJob(job, nullptr, nullptr);
  REQUIRE(s.code() == Code::kForbidden);
  CHECK(s.message() ==
        "admission webhook \"validator.pytorchjob.training-operator.kubeflow.org\" denied the "
        "request: [spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1, "
        "spec.pytorchReplicaSpecs[Worker].replicas: Forbidden: must be at least 1]");
  const Json& d = s.details();
  CHECK(d["name"] == "bad");
  CHECK(d["kind"] == "PyTorchJob");
  CHECK(d["group"] == "kubeflow.org");
  REQUIRE(d["causes"].size() == 2);
  CHECK(d["causes"][0] == Json{{"reason", "FieldValueForbidden"},
                               {"message", "Forbidden: must be 1"},
                               {"field", "spec.pytorchReplicaSpecs[Master].replicas"}});
}

TEST_CASE("T25: changing schedulingPolicy.queue is refused as Invalid by the CRD rule",
          "[controller]") {
  Json old =
      Valid("test-job").Set("/spec/runPolicy/schedulingPolicy/queue", "initial-queue").Build();
  Json now = Valid("test-job").Set("/spec/runPolicy/schedulingPolicy/queue", "test").Build();
  Status s = ValidatePyTorchJob(now, &old, nullptr);
  REQUIRE(s.code() == Code::kInvalid);
  CHECK(s.message().find("spec.runPolicy.schedulingPolicy.queue is immutable") !=
        std::string::npos);
  CHECK(s.message().rfind("PyTorchJob.kubeflow.org \"test-job\" is invalid: ", 0) == 0);
  CHECK(ValidatePyTorchJob(old, &old, nullptr).ok());
}

}  // namespace
}  // namespace pjemu::pytorchjob
