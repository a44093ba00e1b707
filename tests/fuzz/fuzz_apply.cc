// Fuzz target: server-side apply (api::ApplyObject) of an arbitrary configuration onto a
// ConfigMap, a Pod or a PyTorchJob that two managers already wrote, and arbitrary fieldsV1.
// Input: byte 0 picks the type (bits 0-1), force (bit 2) and the /status subresource (bit 3);
// the rest is JSON: the applied configuration, also read as a fieldsV1 set.
// Invariants: no crash or escaping exception; a fieldsV1 set round-trips, and merges in its text
// as the set algebra does (MergeFieldsV1Text, where it accepts the text); an accepted apply
// gives an object whose managedFields read back, and applying the same configuration again by
// the same manager changes nothing (apply is idempotent).
#include "emulator/api/managed_fields.h"
#include "emulator/api/resources.h"
#include "emulator/api/structured_merge.h"
#include "tests/fuzz/fuzz_targets.h"

namespace pjemu::fuzz {
namespace {

Json Live(const api::ResourceType& type) {
  Json container = {{"name", "pytorch"}, {"image", "img:1"}, {"env", {{{"name", "A"}, {"value", "1"}}}},
                    {"ports", {{{"containerPort", 23456}}}}};
  Json object = {{"apiVersion", type.ApiVersion()},
                 {"kind", type.kind},
                 {"metadata", {{"name", "x"}, {"namespace", "default"}, {"labels", {{"a", "b"}}}}}};
  if (type == api::ConfigMaps()) {
    object["data"] = {{"a", "1"}, {"b", "2"}};
  } else if (type == api::Pods()) {
    object["spec"] = {{"containers", {container}}};
    object["status"] = {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}}}}};
  } else {
    Json replica = {{"replicas", 1}, {"template", {{"spec", {{"containers", {container}}}}}}};
    object["spec"] = {{"pytorchReplicaSpecs", {{"Master", replica}, {"Worker", replica}}}};
  }
  Json live = object;
  api::UpdateManagedFields(type, nullptr, live, {"creator", api::Subresource::kNone, "t0"});
  auto applied = api::ApplyObject(type, &live, object, {"other", api::Subresource::kNone, "t0"},
                                  /*force=*/true);
  return applied.ok() ? *applied : live;
}

}  // namespace

int FuzzApply(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string text(AsText(data + 1, size - 1));
  Json config = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  // Read without the tree, any text gives the set its parsed tree gives (none when not JSON).
  FUZZ_CHECK(api::FromFieldsV1Text(text) ==
             (config.is_discarded() ? api::FieldSet{} : api::FromFieldsV1(config)));
  if (config.is_discarded()) return 0;
  const api::FieldSet set = api::FromFieldsV1(config);
  FUZZ_CHECK(api::FromFieldsV1(api::ToFieldsV1(set)) == set);
  FUZZ_CHECK(api::ToFieldsV1Text(set) == api::ToFieldsV1(set).dump());
  (void)api::PathStrings(set);
  // Merged in the text (any text, and the set's own), what the set algebra gives, or declined.
  const std::string canonical = api::ToFieldsV1Text(set);
  const api::FieldSet none;
  for (const std::string* t : {&text, &canonical}) {
    for (const api::FieldSet* removed : {&none, &set}) {
      auto merged = api::MergeFieldsV1Text(*t, *removed, set);
      if (!merged) continue;
      api::FieldSet kept = api::Difference(api::FromFieldsV1Text(*t), *removed);
      FUZZ_CHECK(*merged == api::ToFieldsV1Text(api::Union(kept, set)));
    }
  }
  if (!config.is_object()) return 0;
  const api::ResourceType* types[] = {&api::ConfigMaps(), &api::Pods(), &api::PyTorchJobs(),
                                      &api::Services()};
  const api::ResourceType& type = *types[data[0] & 3];
  bool force = data[0] & 4;
  api::Subresource sub = data[0] & 8 ? api::Subresource::kStatus : api::Subresource::kNone;
  config["apiVersion"] = type.ApiVersion();
  config["kind"] = type.kind;
  if (!config["metadata"].is_object()) config["metadata"] = Json::object();
  config["metadata"]["name"] = "x";
  Json live = Live(type);
  auto first = api::ApplyObject(type, &live, config, {"fuzz", sub, "t1"}, force);
  if (!first.ok()) return 0;
  FUZZ_CHECK(first->is_object());
  const Json& managed = (*first)["metadata"].value("managedFields", Json::array());
  FUZZ_CHECK(managed.is_array());
  for (const auto& entry : managed) {
    FUZZ_CHECK(api::ToFieldsV1(api::FromFieldsV1(entry["fieldsV1"])) == entry["fieldsV1"]);
  }
  auto second = api::ApplyObject(type, &*first, config, {"fuzz", sub, "t2"}, false);
  FUZZ_CHECK(second.ok());
  FUZZ_CHECK(*second == *first);
  return 0;
}

}  // namespace pjemu::fuzz
