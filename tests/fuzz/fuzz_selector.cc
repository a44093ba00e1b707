// Fuzz target: label and field selector parsing (labelSelector= / fieldSelector= of list and
// watch). The first byte picks label or field selector and, for fields, the kind.
// Invariants: no crash or escaping exception; a parsed label selector prints to text that
// parses to the same selector (Kubernetes' String() round-trip); matching a sample object
// never throws.
#include "emulator/api/resources.h"
#include "emulator/api/selector.h"
#include "tests/fuzz/fuzz_targets.h"

namespace pjemu::fuzz {
namespace {

const Json& SampleObject() {
  static const Json kObject = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "p-0"},
        {"namespace", "default"},
        {"labels", {{"app", "mnist"}, {"training.kubeflow.org/replica-index", "0"}}}}},
      {"spec", {{"nodeName", "node-1"}, {"restartPolicy", "Never"}}},
      {"status", {{"phase", "Running"}}}};
  return kObject;
}

}  // namespace

int FuzzSelector(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::string_view text = AsText(data + 1, size - 1);
  if (data[0] & 1) {
    const auto& types = api::AllResources();
    const api::ResourceType& type = types[(data[0] >> 1) % types.size()];
    auto selector = api::FieldSelector::Parse(text, type);
    if (!selector.ok()) {
      FUZZ_CHECK(selector.status().code() == Code::kBadRequest);
      return 0;
    }
    (void)selector->Matches(SampleObject());
    (void)selector->Matches(Json::object());
    return 0;
  }
  auto selector = api::LabelSelector::Parse(text);
  if (!selector.ok()) {
    FUZZ_CHECK(selector.status().code() == Code::kBadRequest);
    return 0;
  }
  bool matches = selector->Matches(SampleObject());
  (void)selector->Matches(Json::object());
  (void)selector->MatchesLabels(Json());
  std::string printed = selector->ToString();
  auto again = api::LabelSelector::Parse(printed);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->ToString() == printed);
  FUZZ_CHECK(again->Matches(SampleObject()) == matches);
  return 0;
}

}  // namespace pjemu::fuzz
