// Given PodDisruptionBudgets and pods as wire-form objects, the vocabulary should admit budgets
// as kube-apiserver's validation does, compute the status the disruption controller writes, and
// decide evictions as the eviction subresource does (429 with the budget's cause when no
// disruption is allowed), with the real messages.
#include "emulator/api/disruption.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "emulator/api/selector.h"

namespace pjemu::api {
namespace {

const Time kNow = Time{} + std::chrono::hours(24 * 365 * 50);

Json Budget(Json spec, const std::string& name = "pdb") {
  return {{"apiVersion", "policy/v1"},
          {"kind", "PodDisruptionBudget"},
          {"metadata", {{"name", name}, {"namespace", "ns"}, {"generation", 3}}},
          {"spec", std::move(spec)}};
}

Json Selector() { return {{"matchLabels", {{"app", "train"}}}}; }

// A pod of job `owner` (a PyTorchJob controller; "" = no controller), Ready or not.
Json Pod(const std::string& name, bool ready, const std::string& owner = "job",
         const std::string& phase = "Running") {
  Json meta = {{"name", name}, {"namespace", "ns"}, {"labels", {{"app", "train"}}}};
  if (!owner.empty()) {
    meta["ownerReferences"] = {{{"apiVersion", "kubeflow.org/v1"},
                                {"kind", "PyTorchJob"},
                                {"name", owner},
                                {"uid", "uid-" + owner},
                                {"controller", true}}};
  }
  return {{"metadata", meta},
          {"status",
           {{"phase", phase},
            {"conditions", {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}};
}

// Each PyTorchJob's scale is 2 (its Worker replicas).
std::optional<std::int64_t> ScaleOfTwo(const Json&, const Json& ref) {
  if (ref.value("kind", "") == "PyTorchJob") return 2;
  return std::nullopt;
}

std::string Message(const Status& s) { return s.message(); }

TEST_CASE("a budget's minAvailable, maxUnavailable and selector are validated by field",
          "[api][disruption]") {
  CHECK(ValidatePodDisruptionBudget(Budget({{"minAvailable", 1}, {"selector", Selector()}}),
                                    nullptr, nullptr)
            .ok());
  CHECK(ValidatePodDisruptionBudget(Budget({{"maxUnavailable", "50%"}}), nullptr, nullptr).ok());
  Status both = ValidatePodDisruptionBudget(Budget({{"minAvailable", 1}, {"maxUnavailable", 1}}),
                                            nullptr, nullptr);
  CHECK(both.code() == Code::kInvalid);
  CHECK_THAT(Message(both),
             Catch::Contains("PodDisruptionBudget.policy \"pdb\" is invalid: spec: "
                             "Invalid value: ") &&
                 Catch::Contains("minAvailable and maxUnavailable cannot be both set"));
  Status negative = ValidatePodDisruptionBudget(Budget({{"minAvailable", -1}}), nullptr, nullptr);
  CHECK_THAT(Message(negative),
             Catch::EndsWith("spec.minAvailable: Invalid value: -1: must be greater than or "
                             "equal to 0"));
  CHECK(negative.details()["causes"][0]["field"] == "spec.minAvailable");
  Status percent =
      ValidatePodDisruptionBudget(Budget({{"maxUnavailable", "x%"}}), nullptr, nullptr);
  CHECK_THAT(Message(percent),
             Catch::Contains("spec.maxUnavailable: Invalid value: \"x%\": a valid "
                             "percent string must be a numeric string"));
  Status over = ValidatePodDisruptionBudget(Budget({{"minAvailable", "101%"}}), nullptr, nullptr);
  CHECK_THAT(Message(over), Catch::EndsWith("must not be greater than 100%"));
  Json bad_op = {{"matchExpressions", {{{"key", "a"}, {"operator", "Maybe"}}}}};
  Status op = ValidatePodDisruptionBudget(Budget({{"selector", bad_op}}), nullptr, nullptr);
  CHECK_THAT(Message(op), Catch::Contains("spec.selector.matchExpressions[0].operator: "
                                          "Unsupported value: \"Maybe\""));
  Status policy = ValidatePodDisruptionBudget(
      Budget({{"minAvailable", 1}, {"unhealthyPodEvictionPolicy", "Never"}}), nullptr, nullptr);
  CHECK_THAT(Message(policy), Catch::Contains("spec.unhealthyPodEvictionPolicy: Unsupported value: "
                                              "\"Never\""));
}

TEST_CASE("a label selector object becomes the selector the query syntax parses",
          "[api][disruption]") {
  Json object = {{"matchLabels", {{"app", "train"}}},
                 {"matchExpressions",
                  {{{"key", "role"}, {"operator", "In"}, {"values", {"master", "worker"}}},
                   {{"key", "gone"}, {"operator", "DoesNotExist"}}}}};
  auto selector = LabelSelector::FromObject(object, "spec.selector");
  REQUIRE(selector.ok());
  CHECK(selector->MatchesLabels({{"app", "train"}, {"role", "worker"}}));
  CHECK_FALSE(selector->MatchesLabels({{"app", "train"}, {"role", "worker"}, {"gone", "x"}}));
  CHECK_FALSE(selector->MatchesLabels({{"app", "train"}}));
  CHECK(LabelSelector::FromObject(Json::object(), "s")->Empty());
  auto empty_in = LabelSelector::FromObject(
      {{"matchExpressions", {{{"key", "a"}, {"operator", "In"}, {"values", Json::array()}}}}}, "s");
  CHECK_THAT(empty_in.status().message(),
             Catch::StartsWith("s.matchExpressions[0].operator: Required value"));
}

TEST_CASE("minAvailable as a number: healthy pods are the Ready ones not being deleted",
          "[api][disruption]") {
  std::vector<Json> pods = {Pod("a", true), Pod("b", true), Pod("c", false), Pod("d", true)};
  pods[3]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  Json other = Pod("e", true);
  other["metadata"]["labels"]["app"] = "serve";
  pods.push_back(other);
  Json status = DisruptionStatus(Budget({{"minAvailable", 1}, {"selector", Selector()}}), pods,
                                 nullptr, kNow);
  CHECK(status["currentHealthy"] == 2);
  CHECK(status["desiredHealthy"] == 1);
  CHECK(status["expectedPods"] == 4);
  CHECK(status["disruptionsAllowed"] == 1);
  CHECK(status["observedGeneration"] == 3);
  CHECK(status["conditions"][0]["type"] == "DisruptionAllowed");
  CHECK(status["conditions"][0]["status"] == "True");
  CHECK(status["conditions"][0]["reason"] == "SufficientPods");

  Json tight = DisruptionStatus(Budget({{"minAvailable", 2}, {"selector", Selector()}}), pods,
                                nullptr, kNow);
  CHECK(tight["disruptionsAllowed"] == 0);
  CHECK(tight["conditions"][0]["reason"] == "InsufficientPods");
}

TEST_CASE("maxUnavailable and percentages count each controller's scale once",
          "[api][disruption]") {
  std::vector<Json> pods = {Pod("a", true), Pod("b", true), Pod("c", true, "other")};
  Json status = DisruptionStatus(Budget({{"maxUnavailable", 1}, {"selector", Selector()}}), pods,
                                 ScaleOfTwo, kNow);
  CHECK(status["expectedPods"] == 4);  // two controllers of scale 2
  CHECK(status["desiredHealthy"] == 3);
  CHECK(status["currentHealthy"] == 3);
  CHECK(status["disruptionsAllowed"] == 0);
  Json half = DisruptionStatus(Budget({{"minAvailable", "50%"}, {"selector", Selector()}}), pods,
                               ScaleOfTwo, kNow);
  CHECK(half["desiredHealthy"] == 2);
  CHECK(half["disruptionsAllowed"] == 1);

  pods.push_back(Pod("bare", true, ""));
  Json failed = DisruptionStatus(Budget({{"maxUnavailable", 1}, {"selector", Selector()}}), pods,
                                 ScaleOfTwo, kNow);
  CHECK(failed["disruptionsAllowed"] == 0);
  CHECK(failed["conditions"][0]["reason"] == "SyncFailed");
  CHECK(failed["conditions"][0]["message"] == "found no controller ref for pod \"bare\"");
}

TEST_CASE("an eviction is refused with 429 when the budget allows no disruption",
          "[api][disruption]") {
  std::vector<Json> pods = {Pod("a", true), Pod("b", true)};
  Json pdb = Budget({{"minAvailable", 2}, {"selector", Selector()}});
  pdb["status"] = DisruptionStatus(pdb, pods, nullptr, kNow);
  Status refused = CheckEviction(pods[0], {pdb});
  CHECK(refused.code() == Code::kTooManyRequests);
  CHECK(refused.message() == "Cannot evict pod as it would violate the pod's disruption budget.");
  CHECK(refused.details()["causes"][0]["reason"] == "DisruptionBudget");
  CHECK(refused.details()["causes"][0]["message"] ==
        "The disruption budget pdb needs 2 healthy pods and has 2 currently");

  pdb = Budget({{"minAvailable", 1}, {"selector", Selector()}});
  pdb["status"] = DisruptionStatus(pdb, pods, nullptr, kNow);
  CHECK(CheckEviction(pods[0], {pdb}).ok());
}

TEST_CASE("evictions skip the budget for pods it cannot protect", "[api][disruption]") {
  std::vector<Json> pods = {Pod("a", true), Pod("b", false)};
  Json pdb = Budget({{"minAvailable", 1}, {"selector", Selector()}});
  pdb["status"] = DisruptionStatus(pdb, pods, nullptr, kNow);
  REQUIRE(pdb["status"]["disruptionsAllowed"] == 0);
  CHECK(CheckEviction(pods[0], {pdb}).code() == Code::kTooManyRequests);
  CHECK(CheckEviction(pods[1], {pdb}).ok());  // unready, and the budget is met (IfHealthyBudget)
  CHECK(CheckEviction(Pod("p", false, "job", "Pending"), {pdb}).ok());
  CHECK(CheckEviction(Pod("s", false, "job", "Succeeded"), {pdb}).ok());
  Json empty = Budget({{"minAvailable", 5}, {"selector", Json::object()}});
  empty["status"] = {{"disruptionsAllowed", 0}};
  CHECK(CheckEviction(pods[0], {empty}).ok());  // an empty selector protects nothing here
  Json twin = pdb;
  twin["metadata"]["name"] = "twin";
  Status two = CheckEviction(pods[0], {pdb, twin});
  CHECK(two.code() == Code::kInternal);
  CHECK_THAT(two.message(), Catch::Contains("more than one PodDisruptionBudget"));
}

}  // namespace
}  // namespace pjemu::api
