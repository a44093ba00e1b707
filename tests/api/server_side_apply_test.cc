// Server-side apply and managedFields (emulator/api/field_schema.h, structured_merge.h,
// managed_fields.h), each row with what kube-apiserver answers and where that is stated:
//  [docs]  kubernetes.io/docs/reference/using-api/server-side-apply (its managedFields examples,
//          conflicts, "Using Server-Side Apply in a controller", removal of fields);
//  [smd]   sigs.k8s.io/structured-merge-diff: fieldpath's fieldsV1 form and path printing,
//          typed.ToFieldSet / Compare, merge.Updater (Apply, Update, prune);
//  [fm]    k8s.io/apimachinery managedfields: conflict messages (conflict.go), stripped fields
//          (stripmeta.go), entry order (managedfields.go), lastAppliedManager/Updater;
//  [types] k8s.io/api core/v1 markers (listType, listMapKey, patchMergeKey, mapType).
#include <catch2/catch.hpp>
#include <random>

#include "emulator/api/field_schema.h"
#include "emulator/api/managed_fields.h"
#include "emulator/api/structured_merge.h"

namespace pjemu::api {
namespace {

// A literal in the project's Json: the library's _json makes nlohmann::json, another type, and
// clang finds comparing the two ambiguous.
Json operator""_pj(const char* text, std::size_t n) { return Json::parse(text, text + n); }

const char* kT0 = "2026-11-27T03:00:00Z";
const char* kT1 = "2026-11-27T03:01:00Z";

Json ConfigMap(Json data) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", "cm"}, {"namespace", "default"}}},
          {"data", std::move(data)}};
}

// A vector, not a Json: under clang a one-element braced Json is that element (CWG 2137).
Json Pod(const std::vector<Json>& containers) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "p"}, {"namespace", "default"}}},
          {"spec", {{"containers", Json(containers)}}}};
}

Json Managed(const Json& object) { return object["metadata"].value("managedFields", Json()); }

Result<Json> Apply(const ResourceType& type, const Json* live, const Json& config,
                   const std::string& manager, bool force = false, const char* now = kT1) {
  return ApplyObject(type, live, config, {manager, Subresource::kNone, now}, force);
}

TEST_CASE("every served type's field rules compile", "[api][ssa]") {
  for (const auto& r : AllResources()) {
    if (!r.field_rules) continue;
    INFO(r.kind);
    CHECK(CompileFieldRules(r.field_rules()).ok());
  }
  CHECK_FALSE(CompileFieldRules({{"spec.x bogus"}}).ok());
  CHECK_FALSE(CompileFieldRules({{"spec.x keys"}}).ok());
}

TEST_CASE("the schema knows each type's associative lists", "[api][ssa]") {
  // [types] Container.ports: listMapKey containerPort + protocol (protocol defaults to TCP);
  // PodSpec.containers, Container.env: patchMergeKey name; volumeMounts: mountPath.
  const FieldSchema& pod = SchemaOf(Pods()).root;
  const FieldSchema& containers = pod.Child("spec").Child("containers");
  CHECK(containers.list == FieldSchema::ListType::kKeyed);
  CHECK(containers.keys == std::vector<std::string>{"name"});
  const FieldSchema& ports = containers.Item().Child("ports");
  CHECK(ports.keys == std::vector<std::string>{"containerPort", "protocol"});
  CHECK(*ItemElement({{"containerPort", 80}}, ports) ==
        R"(k:{"containerPort":80,"protocol":"TCP"})");
  CHECK(containers.Item().Child("volumeMounts").keys == std::vector<std::string>{"mountPath"});
  CHECK(pod.Child("spec").Child("tolerations").list == FieldSchema::ListType::kAtomic);
  CHECK(pod.Child("metadata").Child("finalizers").list == FieldSchema::ListType::kSet);
  // Service.spec.ports: listMapKey port + protocol.
  CHECK(SchemaOf(Services()).root.Child("spec").Child("ports").keys ==
        std::vector<std::string>{"port", "protocol"});
  // The PyTorchJob's replica specs are a map whose templates are pod specs (the CRD's schema).
  const FieldSchema& job = SchemaOf(PyTorchJobs()).root;
  const FieldSchema& specs = job.Child("spec").Child("pytorchReplicaSpecs");
  CHECK(specs.shape == FieldSchema::Shape::kMap);
  CHECK(specs.Child("Worker").Child("template").Child("spec").Child("containers").Item()
            .Child("env").keys == std::vector<std::string>{"name"});
  // Whatever the key's value, the element is the compact dump of the key fields' object.
  for (const Json& value : {Json("c"), Json("caf\u00e9"), Json("q\"\\"), Json("\x7f\t"), Json(-3),
                            Json(std::uint64_t{18446744073709551615u}), Json(true), Json(1.5),
                            Json::object({{"x", 1}})}) {
    INFO(value.dump());
    Json key = {{"name", value}};
    CHECK(*ItemElement({{"name", value}, {"image", "i"}}, containers) == "k:" + key.dump());
    CHECK(*ItemElement(value, pod.Child("metadata").Child("finalizers")) == "v:" + value.dump());
  }
  // A keyed item without its key is refused with structured-merge-diff's words.
  auto missing = ItemElement(Json{{"image", "x"}}, containers);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() ==
        "associative list with keys has an element that omits key field \"name\" (and doesn't "
        "have default value)");
}

// A random field set over a few elements, escapes included, with childless non-member nodes
// too (written {} like members).
FieldSet RandomSet(std::mt19937& rng, int depth) {
  static const char* kElements[] = {"f:a",         "f:b", "f:status", R"(k:{"type":"Ready"})",
                                    R"(v:"x\\y")", "i:0", R"(f:"q")", "f:~"};
  FieldSet set;
  set.member = rng() % 3 == 0;
  if (depth == 0) return set;
  for (const char* e : kElements) {
    if (rng() % 4 == 0) set.children[e] = RandomSet(rng, depth - 1);
  }
  return set;
}

TEST_CASE("fieldsV1 text merge: the set algebra over the stored text, or the long way",
          "[api][ssa]") {
  std::mt19937 rng(40);
  for (int i = 0; i < 3000; ++i) {
    FieldSet stored = RandomSet(rng, 4);
    stored.member = false;  // a root "." is never written: the object itself is in no set
    const std::string text = ToFieldsV1Text(stored);
    FieldSet remove = RandomSet(rng, 4), add = RandomSet(rng, 4);
    if (i % 5 == 0) remove = FieldSet{};
    if (i % 7 == 0) add = FieldSet{};
    INFO(text << " - " << ToFieldsV1Text(remove) << " + " << ToFieldsV1Text(add));
    auto merged = MergeFieldsV1Text(text, remove, add);
    REQUIRE(merged.has_value());
    CHECK(*merged == ToFieldsV1Text(Union(Difference(FromFieldsV1Text(text), remove), add)));
  }
  FieldSet status = FromFieldsV1(R"({"f:status":{"f:phase":{}}})"_pj);
  CHECK(*MergeFieldsV1Text(R"({"f:status":{".":{},"f:phase":{}}})", status, FieldSet{}) ==
        R"({"f:status":{}})");
  CHECK(*MergeFieldsV1Text(R"({"f:status":{"f:phase":{}}})", status, FieldSet{}) == "{}");
  CHECK(*MergeFieldsV1Text("{}", FieldSet{}, status) == R"({"f:status":{"f:phase":{}}})");
  // A removed child that `add` names, holding nothing, is kept as Union keeps it.
  FieldSet remove_a, name_a;
  remove_a.children["f:a"].member = true;
  name_a.children["f:a"];
  CHECK(*MergeFieldsV1Text(R"({"f:a":{},"f:b":{}})", remove_a, name_a) ==
        ToFieldsV1Text(
            Union(Difference(FromFieldsV1Text(R"({"f:a":{},"f:b":{}})"), remove_a), name_a)));
  // Not as ToFieldsV1Text writes it: spacing, order, repeats, other escapes, non-ASCII, a lone
  // or misplaced ".", a root ".", values that are not objects, a trailing comma, a stray key
  // before "." where the node is a member, too deep.
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "{\"f:x\":";
  deep += "{}" + std::string(100, '}');
  for (const std::string& text : std::vector<std::string>{
           R"({ "f:a":{}})", R"({"f:b":{},"f:a":{}})", R"({"f:a":{},"f:a":{}})",
           R"({"f:caf\u00e9":{}})", "{\"f:caf\xc3\xa9\":{}}", R"({"f:a":{".":{}}})",
           R"({"f:a":{"f:b":{},".":{}}})", R"({".":{},"f:a":{}})", R"({"f:a":1})", R"({"f:a":{},})",
           R"({"f:a":{}} )", R"({"f:a":{})", "", deep}) {
    INFO(text);
    CHECK_FALSE(MergeFieldsV1Text(text, FieldSet{}, status).has_value());
  }
  FieldSet stray;
  stray.children["f:a"].member = true;
  stray.children["f:a"].children["\"x"].member = true;
  CHECK_FALSE(MergeFieldsV1Text(R"({"f:a":{}})", FieldSet{}, stray).has_value());
}

TEST_CASE("fieldsV1 round-trips and set algebra", "[api][ssa]") {
  Json v1 = R"({"f:data":{".":{},"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:x":{}}}})"_pj;
  FieldSet set = FromFieldsV1(v1);
  CHECK(ToFieldsV1(set) == v1);
  FieldSet a = FromFieldsV1(R"({"f:data":{"f:a":{}}})"_pj);
  CHECK(ToFieldsV1(Difference(set, a)) ==
        R"({"f:data":{".":{},"f:b":{}},"f:metadata":{"f:labels":{"f:x":{}}}})"_pj);
  CHECK(ToFieldsV1(Intersection(set, a)) == R"({"f:data":{"f:a":{}}})"_pj);
  CHECK(Union(Difference(set, a), a) == set);
  // [smd] path printing: fields, keys (sorted, JSON values), set values.
  FieldSet paths = FromFieldsV1(
      R"({"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{"f:image":{}}},
          "f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{}}},
          "f:metadata":{"f:finalizers":{"v:\"x/y\"":{}}}})"_pj);
  CHECK(PathStrings(paths) ==
        std::vector<std::string>{".metadata.finalizers[=\"x/y\"]",
                                 ".spec.containers[name=\"c\"].image",
                                 ".spec.ports[port=80,protocol=\"TCP\"]"});
  // The stored text is the tree's compact dump, escapes and all.
  FieldSet odd = FromFieldsV1(R"({"f:data":{"f:caf\u00e9":{},"f:t\tab":{},"f:\\":{}}})"_pj);
  for (const FieldSet* s : {&set, &a, &paths, &odd})
    CHECK(ToFieldsV1Text(*s) == ToFieldsV1(*s).dump());
  CHECK(ToFieldsV1Text(FieldSet{}) == "{}");
  // "." in its sorted place, also after a stray key that sorts first (fuzz_apply's finding).
  FieldSet stray = FromFieldsV1(R"({"f:data":{".":{},"\"name\":\"c\"}":{},"!":{},"f:z":{}}})"_pj);
  CHECK(ToFieldsV1Text(stray) == ToFieldsV1(stray).dump());
  FieldSet only_stray;
  only_stray.member = true;
  only_stray.children["\"x"].member = true;
  CHECK(ToFieldsV1Text(only_stray) == ToFieldsV1(only_stray).dump());
  // Read without the tree (nlohmann's SAX events): the set the parsed tree gives, for the texts
  // ToFieldsV1Text writes and for any other, spacing, escapes, repeats and odd values included.
  for (const FieldSet* s : {&set, &a, &paths, &odd})
    CHECK(FromFieldsV1Text(ToFieldsV1Text(*s)) == *s);
  for (const char* text :
       {R"( { "f:data" : { "." : { } , "f:a" : {} } } )", R"({"f:a":{"f:b":{}},"f:c":{".":{}}})",
        R"({"f:b":{},"f:a":{}})",                    // unsorted
        R"({"f:a":{"f:x":{}},"f:a":{"f:y":{}}})",    // repeated: the last
        R"({"f:a":{"f:x":{}},"f:a":1})",             // ... even a scalar
        R"({"f:a":1,".":[{"f:z":{}}],"f:b":[{}]})",  // not objects
        R"({"f:a":{".":5,"f:q":{"f:r":{}}}})",
        R"({"f:caf\u00e9":{"f:\"q\"":{}}})",  // escapes
        "{\"f:caf\xc3\xa9\":{}}"}) {          // UTF-8
    INFO(text);
    CHECK(FromFieldsV1Text(text) == FromFieldsV1(Json::parse(text)));
  }
  for (const char* text :
       {R"({"f:a":{}} x)", R"({"f:a":{})", "{\"f:\xff\":{}}", R"([{"f:a":{}}])", "7", ""}) {
    INFO(text);  // not JSON, or not an object: nothing, as FieldsV1Of's empty object gives
    CHECK(FromFieldsV1Text(text).Empty());
  }
  std::string deep;
  for (int i = 0; i < 500; ++i) deep += "{\"f:x\":";
  deep += "{}" + std::string(500, '}');
  CHECK(FromFieldsV1Text(deep) == FromFieldsV1(Json::parse(deep)));
  // Covers: b adds nothing to a; Intersects: they share a member path.
  CHECK(Covers(set, a));
  CHECK_FALSE(Covers(a, set));
  CHECK(Covers(set, FieldSet{}));
  CHECK(Covers(set, FromFieldsV1(R"({"f:data":{".":{}}})"_pj)));
  CHECK_FALSE(Covers(a, FromFieldsV1(R"({"f:data":{".":{}}})"_pj)));  // a holds only .data.a
  CHECK(Intersects(set, a));
  CHECK_FALSE(Intersects(set, FromFieldsV1(R"({"f:data":{"f:c":{}}})"_pj)));
  CHECK_FALSE(Intersects(a, FromFieldsV1(R"({"f:data":{".":{}}})"_pj)));  // .data is not a's
  CHECK_FALSE(Intersects(set, FieldSet{}));
}

struct SetRow {
  const char* what;
  const ResourceType* type;
  Json object;
  Json apply_set;   // ToFieldSet of the object as an applied configuration
  Json create_set;  // the Update entry of a create of the object
  const char* source;
};

TEST_CASE("field sets of applied and created objects", "[api][ssa]") {
  Json container = {{"name", "c"}, {"image", "busybox"}, {"ports", Json::array({Json{{"containerPort", 80}}})},
                    {"env", Json::array({Json{{"name", "A"}, {"value", "1"}}})}};
  std::vector<SetRow> rows = {
      {"ConfigMap data: leaves; a create adds the map itself ('.')", &ConfigMaps(),
       ConfigMap({{"a", "1"}, {"b", "2"}}), R"({"f:data":{"f:a":{},"f:b":{}}})"_pj,
       R"({"f:data":{".":{},"f:a":{},"f:b":{}}})"_pj,
       "[docs] managedFields examples; [smd] ToFieldSet vs Compare's added map"},
      {"labels: granular map", &ConfigMaps(),
       Json{{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", "cm"}, {"labels", {{"app", "x"}}}}}},
       R"({"f:metadata":{"f:labels":{"f:app":{}}}})"_pj,
       R"({"f:metadata":{"f:labels":{".":{},"f:app":{}}}})"_pj,
       "[fm] stripmeta keeps labels, drops name/namespace/uid/..."},
      {"Pod containers keyed by name, ports by containerPort+protocol, env by name", &Pods(),
       Pod({container}),
       R"({"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:env":{
            "k:{\"name\":\"A\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:name":{},
            "f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},
            "f:containerPort":{}}}}}}})"_pj,
       R"({"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:env":{".":{},
            "k:{\"name\":\"A\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:name":{},
            "f:ports":{".":{},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},
            "f:containerPort":{}}}}}}})"_pj,
       "[types] listMapKey markers; [smd] list items are members ('.'); the Pod's zero object "
       "has spec and containers, so a create does not add them"},
      {"a PyTorchJob's replica specs are map entries; a custom resource's create adds .spec",
       &PyTorchJobs(),
       Json{{"apiVersion", "kubeflow.org/v1"},
            {"kind", "PyTorchJob"},
            {"metadata", {{"name", "j"}}},
            {"spec", {{"pytorchReplicaSpecs", {{"Worker", {{"replicas", 2}}}}}}}},
       R"({"f:spec":{"f:pytorchReplicaSpecs":{"f:Worker":{".":{},"f:replicas":{}}}}})"_pj,
       R"({"f:spec":{".":{},"f:pytorchReplicaSpecs":{".":{},"f:Worker":{".":{},
            "f:replicas":{}}}}})"_pj,
       "[smd] map entries are members; CRD objects are unstructured (empty zero object)"},
  };
  for (const auto& row : rows) {
    INFO(row.what << " (" << row.source << ")");
    auto applied = Apply(*row.type, nullptr, row.object, "alice");
    REQUIRE(applied.ok());
    REQUIRE(Managed(*applied).size() == 1);
    CHECK(Managed(*applied)[0]["fieldsV1"] == row.apply_set);
    CHECK(Managed(*applied)[0]["operation"] == "Apply");
    Json created = row.object;
    UpdateManagedFields(*row.type, nullptr, created, {"kubectl-create", Subresource::kNone, kT0});
    REQUIRE(Managed(created).size() == 1);
    CHECK(Managed(created)[0]["fieldsV1"] == row.create_set);
    CHECK(Managed(created)[0]["operation"] == "Update");
    CHECK(Managed(created)[0]["manager"] == "kubectl-create");
    CHECK(Managed(created)[0]["time"] == kT0);
    CHECK(Managed(created)[0]["apiVersion"] == row.type->ApiVersion());
    CHECK(Managed(created)[0]["fieldsType"] == "FieldsV1");
  }
}

// The issue's four steps on a ConfigMap, and the variations around them.
struct ApplyRow {
  const char* what;
  std::vector<std::tuple<std::string, Json, bool>> steps;  // manager, data, force
  bool last_ok;
  Json data;             // the object's data after the last step (when it succeeded)
  const char* message;   // the last step's error (when it failed)
  std::vector<std::string> causes;  // its causes' fields
  const char* source;
};

// Containers named c0..c(n-1), in order, each with image `image`.
std::vector<Json> Containers(int n, const std::string& image = "x") {
  std::vector<Json> out;
  for (int i = 0; i < n; ++i) out.push_back({{"name", "c" + std::to_string(i)}, {"image", image}});
  return out;
}

TEST_CASE("compare matches a keyed list's items by key, in any order, short or long",
          "[api][ssa]") {
  // [smd] typed.Compare: associative list items are compared by their keys, not positions; a
  // list whose keys repeat is compared whole (atomic). 3 items are matched by a scan, 40 through
  // an index: both must give the same answers.
  const FieldSchema& schema = SchemaOf(Pods()).root;
  for (int n : {3, 40}) {
    CAPTURE(n);
    std::vector<Json> items = Containers(n);
    std::vector<Json> reversed(items.rbegin(), items.rend());
    Json before = Pod(items);
    CHECK(Compare(&before, &before, schema).Empty());
    Json moved = Pod(reversed);
    CHECK(Compare(&before, &moved, schema).Empty());

    reversed[0]["image"] = "y";            // the last container, c(n-1), now first
    reversed.erase(reversed.begin() + 1);  // c(n-2) goes
    reversed.push_back({{"name", "new"}, {"image", "z"}});
    Json after = Pod(reversed);
    Comparison c = Compare(&before, &after, schema);
    const std::string last = "k:{\"name\":\"c" + std::to_string(n - 1) + "\"}";
    const std::string gone = "k:{\"name\":\"c" + std::to_string(n - 2) + "\"}";
    CHECK(ToFieldsV1(c.modified) ==
          Json({{"f:spec", {{"f:containers", {{last, {{"f:image", Json::object()}}}}}}}}));
    CHECK(ToFieldsV1(c.removed) == Json({{"f:spec",
                                          {{"f:containers",
                                            {{gone,
                                              {{".", Json::object()},
                                               {"f:image", Json::object()},
                                               {"f:name", Json::object()}}}}}}}}));
    CHECK(ToFieldsV1(c.added) == Json({{"f:spec",
                                        {{"f:containers",
                                          {{"k:{\"name\":\"new\"}",
                                            {{".", Json::object()},
                                             {"f:image", Json::object()},
                                             {"f:name", Json::object()}}}}}}}}));

    // Two items with one name: the list is a value, changed as a whole.
    std::vector<Json> repeated = items;
    repeated.push_back({{"name", "c0"}, {"image", "w"}});
    Json twice = Pod(repeated);
    Comparison whole = Compare(&before, &twice, schema);
    CHECK(ToFieldsV1(whole.modified) == Json({{"f:spec", {{"f:containers", Json::object()}}}}));
    CHECK(whole.added.Empty());
    CHECK(whole.removed.Empty());
  }
}

TEST_CASE("apply: ownership, conflicts, force and removal", "[api][ssa]") {
  using Step = std::tuple<std::string, Json, bool>;
  std::vector<ApplyRow> rows = {
      {"another manager changing a field is a conflict",
       {Step{"alice", {{"a", "1"}, {"b", "2"}}, false}, Step{"bob", {{"a", "9"}}, false}},
       false, nullptr, "Apply failed with 1 conflict: conflict with \"alice\": .data.a", {".data.a"},
       "[fm] conflict.go getConflictMessage, single form; 409 with FieldManagerConflict causes"},
      {"several conflicts: plural form, one line per path",
       {Step{"alice", {{"a", "1"}, {"b", "2"}}, false},
        Step{"bob", {{"a", "9"}, {"b", "8"}}, false}},
       false, nullptr,
       "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .data.a\n- .data.b",
       {".data.a", ".data.b"}, "[fm] conflict.go, plural form"},
      {"force takes the field",
       {Step{"alice", {{"a", "1"}, {"b", "2"}}, false}, Step{"bob", {{"a", "9"}}, true}}, true,
       {{"a", "9"}, {"b", "2"}}, "", {}, "[docs] Conflicts: overwrite with force"},
      {"the same value is no conflict (shared ownership)",
       {Step{"alice", {{"a", "1"}, {"b", "2"}}, false}, Step{"bob", {{"a", "1"}}, false}}, true,
       {{"a", "1"}, {"b", "2"}}, "", {}, "[docs] shared ownership of equal values"},
      {"a field the applier stops setting and no one else owns is removed",
       {Step{"alice", {{"a", "1"}, {"b", "2"}}, false}, Step{"alice", {{"a", "1"}}, false}}, true,
       {{"a", "1"}}, "", {}, "[docs] field removal; [smd] Updater.prune"},
      {"a field another manager also owns stays",
       {Step{"alice", {{"a", "1"}, {"b", "2"}}, false}, Step{"bob", {{"b", "2"}}, false},
        Step{"alice", {{"a", "1"}}, false}},
       true, {{"a", "1"}, {"b", "2"}}, "", {}, "[docs] field removal, shared owner keeps it"},
      {"after a forced takeover the old owner's re-apply conflicts",
       {Step{"alice", {{"a", "1"}}, false}, Step{"bob", {{"a", "9"}}, true},
        Step{"alice", {{"a", "1"}}, false}},
       false, nullptr, "Apply failed with 1 conflict: conflict with \"bob\": .data.a", {".data.a"},
       "[smd] force removes the field from the loser's set"},
  };
  for (const auto& row : rows) {
    INFO(row.what << " (" << row.source << ")");
    std::optional<Json> live;
    Result<Json> last = Status(Code::kInternal, "no step");
    for (const auto& [manager, data, force] : row.steps) {
      last = Apply(ConfigMaps(), live ? &*live : nullptr, ConfigMap(data), manager, force);
      if (last.ok()) {
        live = *last;
        (*live)["metadata"]["uid"] = "u1";  // what the store adds; never in a set
      }
    }
    REQUIRE(last.ok() == row.last_ok);
    if (row.last_ok) {
      CHECK(live->value("data", Json()) == row.data);
      continue;
    }
    CHECK(last.status().code() == Code::kConflict);
    CHECK(last.status().message() == row.message);
    std::vector<std::string> fields;
    for (const auto& c : last.status().details()["causes"]) {
      CHECK(c["reason"] == "FieldManagerConflict");
      fields.push_back(c["field"]);
    }
    CHECK(fields == row.causes);
  }
}

TEST_CASE("apply merges associative lists by key and keeps others' items", "[api][ssa]") {
  // [smd] merge of associative lists: the live object's items the configuration does not
  // name stay where they were; [docs] a controller's item is not removed by another applier.
  Json a = {{"name", "a"}, {"image", "x"}};
  Json b = {{"name", "b"}, {"image", "y"}};
  auto first = Apply(Pods(), nullptr, Pod({a}), "alice");
  REQUIRE(first.ok());
  auto second = Apply(Pods(), &*first, Pod({b}), "bob");
  REQUIRE(second.ok());
  CHECK((*second)["spec"]["containers"] == Json::array({a, b}));
  // alice changes her container's image: bob's container stays, in place.
  Json a2 = {{"name", "a"}, {"image", "z"}};
  auto third = Apply(Pods(), &*second, Pod({a2}), "alice");
  REQUIRE(third.ok());
  CHECK((*third)["spec"]["containers"] == Json::array({a2, b}));
  // alice drops her container: it goes (she alone owned it); bob's stays.
  auto fourth = Apply(Pods(), &*third, Pod(Json::array({b})), "alice");
  REQUIRE(fourth.ok());
  CHECK((*fourth)["spec"]["containers"] == Json::array({b}));
  // Duplicate keys in an applied configuration are refused as kube-apiserver refuses them.
  auto dup = Apply(Pods(), nullptr, Pod({a, a}), "alice");
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.status().message() ==
        "failed to create typed patch object (v1, Kind=Pod): .spec.containers: duplicate "
        "entries for key [name=\"a\"]");
}

TEST_CASE("updates record what they changed and take it from others", "[api][ssa]") {
  // [smd] Updater.Update: the writer gains added+modified, others lose modified+removed;
  // [fm] managedFieldsUpdater: the entry's time moves only when the write changed something.
  auto applied = Apply(ConfigMaps(), nullptr, ConfigMap({{"a", "1"}, {"b", "2"}}), "alice");
  REQUIRE(applied.ok());
  Json next = *applied;
  next["data"]["a"] = "5";
  UpdateManagedFields(ConfigMaps(), &*applied, next, {"kubectl-edit", Subresource::kNone, kT1});
  Json m = Managed(next);
  REQUIRE(m.size() == 2);
  CHECK(m[0]["manager"] == "alice");  // Apply sorts before Update
  CHECK(m[0]["fieldsV1"] == R"({"f:data":{"f:b":{}}})"_pj);
  CHECK(m[1]["manager"] == "kubectl-edit");
  CHECK(m[1]["fieldsV1"] == R"({"f:data":{"f:a":{}}})"_pj);
  // A write that changes nothing keeps the managed fields as they were.
  Json same = next;
  UpdateManagedFields(ConfigMaps(), &next, same, {"other", Subresource::kNone, "later"});
  CHECK(Managed(same) == m);
  // Now alice's apply of a=1 conflicts with the Update manager, printed with its version.
  auto again = Apply(ConfigMaps(), &next, ConfigMap({{"a", "1"}, {"b", "2"}}), "alice");
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().message() ==
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using v1: .data.a");
}

TEST_CASE("updates over the stored form: untouched entries kept as text, touched ones rewritten",
          "[api][ssa]") {
  // The store keeps each fieldsV1 as text (CompactManagedFields); a write rewrites only the
  // entries that own a field it changed, whatever the text's spacing, and keeps the others
  // as they were, text and all.
  Json live = ConfigMap({{"a", "1"}, {"b", "2"}});
  live["metadata"]["labels"] = {{"team", "x"}};
  live["metadata"]["managedFields"] = {
      {{"apiVersion", "v1"},
       {"fieldsType", "FieldsV1"},
       {"manager", "labeller"},
       {"operation", "Update"},
       {"time", kT0},
       {"fieldsV1", R"({"f:metadata":{"f:labels":{".":{},"f:team":{}}}})"}},
      {{"apiVersion", "v1"},
       {"fieldsType", "FieldsV1"},
       {"manager", "writer"},
       {"operation", "Update"},
       {"time", kT0},
       {"fieldsV1", R"({"f:data" : {"." : {}, "f:a" : {}, "f:b" : {}}})"}}};
  Json next = live;
  next["data"]["a"] = "5";
  UpdateManagedFields(ConfigMaps(), &live, next, {"editor", Subresource::kNone, kT1});
  Json m = Managed(next);
  REQUIRE(m.size() == 3);                               // by operation, time, manager
  CHECK(m[0] == live["metadata"]["managedFields"][0]);  // kept as it was: still text
  CHECK(m[1]["manager"] == "writer");                   // lost .data.a, though spaced
  CHECK(m[2]["manager"] == "editor");
  CHECK(m[2]["fieldsV1"] == R"({"f:data":{"f:a":{}}})"_pj);
  CompactManagedFields(next);
  CHECK(Managed(next)[1]["fieldsV1"] == R"({"f:data":{".":{},"f:b":{}}})");
}

TEST_CASE("the store's writes give the same entries as text as others get as trees", "[api][ssa]") {
  // ManagedWrite::stored_form: the store's writes write fieldsV1 as its compact text (and
  // parse stored texts once per thread); the entries are those of the tree form, compacted.
  Json pod = Pod({{{"name", "c"}, {"image", "x"}}, {{"name", "d"}, {"image", "y"}}});
  auto status = [](const char* phase, std::vector<const char*> ready) {
    Json conditions = Json::array();
    for (const char* type : ready) conditions.push_back({{"type", type}, {"status", "True"}});
    return Json{{"phase", phase}, {"conditions", conditions}};
  };
  struct Write {
    Json status;
    const char* manager;
    const char* now;
  };
  const std::vector<Write> writes = {
      {status("Pending", {}), "kubelet", kT0},
      {status("Running", {"Ready"}), "kubelet", kT1},                       // new fields: rewritten
      {status("Running", {"Ready"}), "kubelet", "later"},                   // no change: time stays
      {status("Succeeded", {"Ready"}), "kubelet", "2026-11-27T03:02:00Z"},  // owned: time moves
      {status("Succeeded", {"Ready", "Initialized"}), "other", "2026-11-27T03:03:00Z"},
      {status("Failed", {}), "kubelet", "2026-11-27T03:04:00Z"},  // others' fields removed
  };
  Json trees = pod, texts = pod;
  UpdateManagedFields(Pods(), nullptr, trees, {"ctl", Subresource::kNone, kT0});
  UpdateManagedFields(Pods(), nullptr, texts, {"ctl", Subresource::kNone, kT0, true});
  for (int round = 0; round < 2; ++round) {  // the second round reads the memo's sets
    Json tree_live = trees, text_live = texts;
    for (const Write& w : writes) {
      INFO(round << " " << w.manager << " " << w.status.dump());
      Json tree_next = tree_live, text_next = text_live;
      tree_next["status"] = w.status;
      text_next["status"] = w.status;
      UpdateManagedFields(Pods(), &tree_live, tree_next, {w.manager, Subresource::kStatus, w.now});
      UpdateManagedFields(Pods(), &text_live, text_next,
                          {w.manager, Subresource::kStatus, w.now, /*stored_form=*/true});
      for (const Json& e : Managed(text_next)) CHECK(e["fieldsV1"].is_string());
      Json compacted = tree_next;
      CompactManagedFields(compacted);
      CHECK(Managed(text_next) == Managed(compacted));
      CompactManagedFields(tree_next);  // the live object as the store keeps it
      tree_live = tree_next;
      text_live = text_next;
    }
    std::map<std::string, std::string> times;
    for (const Json& e : Managed(text_live)) times[e["manager"]] = e.value("time", "");
    CHECK(times ==
          std::map<std::string, std::string>{{"ctl", kT0}, {"kubelet", "2026-11-27T03:04:00Z"}});
  }
}

TEST_CASE("managedFields after an update over versions that keep theirs apart", "[api][ssa]") {
  // ManagedFieldsAfterUpdate (the store's deferred writes): the entries UpdateManagedFields
  // sets, from the versions without theirs and the live one's entries held apart or inline.
  const ManagedWrite create{"ctl", Subresource::kNone, kT0, true};
  Json live = ConfigMap({{"a", "1"}});
  UpdateManagedFields(ConfigMaps(), nullptr, live, create);
  struct Write {
    Json data;
    const char* manager;
  };
  const std::vector<Write> writes = {
      {{{"a", "1"}, {"b", "2"}}, "editor"},  // a new field: a new entry
      {{{"a", "1"}, {"b", "2"}}, "other"},   // no change: the same entries
      {{{"a", "3"}, {"b", "2"}}, "editor"},  // taken from ctl
      {{{"b", "4"}}, "ctl"},                 // removed from editor
  };
  for (const Write& w : writes) {
    INFO(w.manager << " " << w.data.dump());
    const ManagedWrite write{w.manager, Subresource::kNone, kT1, true};
    Json expected = live;
    expected["data"] = w.data;
    UpdateManagedFields(ConfigMaps(), &live, expected, write);
    Json raw_live = CopyWithoutManagedFields(live), raw_next = CopyWithoutManagedFields(expected);
    const Json apart = Managed(live);
    CHECK(ManagedFieldsAfterUpdate(ConfigMaps(), raw_live, apart, raw_next, write) ==
          Managed(expected));
    CHECK(ManagedFieldsAfterUpdate(ConfigMaps(), live, apart, raw_next, write) ==
          Managed(expected));  // inline too
    live = expected;
  }
  // Entries kept from trees come back as text, whether the write changed them or nothing, and a
  // write that leaves no owner gives null.
  Json tree_live = ConfigMap({{"a", "1"}});
  UpdateManagedFields(ConfigMaps(), nullptr, tree_live, {"ctl", Subresource::kNone, kT0});
  REQUIRE(Managed(tree_live)[0]["fieldsV1"].is_object());
  Json next = CopyWithoutManagedFields(tree_live);
  next["metadata"]["labels"] = {{"x", "y"}};
  const Json tree_apart = Managed(tree_live);
  Json after =
      ManagedFieldsAfterUpdate(ConfigMaps(), CopyWithoutManagedFields(tree_live), tree_apart, next,
                               {"labeller", Subresource::kNone, kT1, true});
  REQUIRE(after.size() == 2);
  for (const Json& e : after) CHECK(e["fieldsV1"].is_string());
  Json unchanged = ManagedFieldsAfterUpdate(ConfigMaps(), CopyWithoutManagedFields(tree_live),
                                            tree_apart, CopyWithoutManagedFields(tree_live),
                                            {"other", Subresource::kNone, kT1, true});
  REQUIRE(unchanged.size() == 1);
  CHECK(unchanged[0]["fieldsV1"].is_string());
  CHECK(unchanged[0]["time"] == kT0);
  Json emptied = CopyWithoutManagedFields(tree_live);
  emptied.erase("data");
  CHECK(ManagedFieldsAfterUpdate(ConfigMaps(), CopyWithoutManagedFields(tree_live), tree_apart,
                                 emptied, {"ctl", Subresource::kNone, kT1, true})
            .is_null());
}

TEST_CASE("creates of one shape reuse its text, and any other shape gets its own", "[api][ssa]") {
  // UpdateManagedFields keeps, per thread, the fieldsV1 text of each shape a plain create (the
  // store's) computed; every create must still get what the tree form gives it.
  auto event = [](const std::string& name, const Json& reason) {
    return Json{{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"involvedObject", {{"kind", "Pod"}, {"name", name + "-pod"}}},
                {"reason", reason},
                {"count", 1}};
  };
  auto pod = [](const Json& containers, const char* node) {
    return Json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", "p"}}},
                {"spec", {{"containers", containers}, {"nodeName", node}}}};
  };
  auto container = [](const char* name, const char* value) {
    return Json{{"name", name},
                {"image", "x"},
                {"env", Json::array({{{"name", "RANK"}, {"value", value}}})},
                {"args", Json::array({value})}};  // atomic
  };
  auto with_owner = [&](const char* uid, const std::vector<std::string>& finalizers) {
    Json p = pod(Json::array({container("a", "1")}), "n");
    p["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", "v1"},
                                                     {"kind", "Job"},
                                                     {"name", "j"},
                                                     {"uid", uid},
                                                     {"controller", true}}});
    p["metadata"]["finalizers"] = finalizers;
    return p;
  };
  Json owned_twice = with_owner("u1", {"f1"});
  owned_twice["metadata"]["ownerReferences"].push_back(
      {{"apiVersion", "v1"}, {"kind", "Job"}, {"name", "k"}, {"uid", "u6"}});
  Json labelled_u5 = with_owner("u5", {"f1"});
  labelled_u5["metadata"]["labels"] = {{"u5", "x"}};  // the uid as a label's name
  Json with_label = event("e3", "Started");
  with_label["metadata"]["labels"] = {{"a", "b"}};
  const std::vector<std::pair<const ResourceType*, Json>> creates = {
      {&Events(), event("e1", "Started")},
      {&Events(), event("e2", "Pulled")},               // same shape, other values
      {&Events(), event("e2", nullptr)},                // a null leaf
      {&Events(), with_label},                          // another key
      {&Events(), {{"metadata", {{"name", "bare"}}}}},  // nothing anyone owns
      {&Pods(), pod(nullptr, "a")},                     // .spec.containers as the zero Pod has it
      {&Pods(), pod("x", "b")},            // and not: the zero object's leaf is compared
      {&Pods(), pod(Json::array(), "c")},  // an empty list
      // Lists: their items' path elements are part of the shape, their values are not.
      {&Pods(), pod(Json::array({container("a", "1"), container("b", "2")}), "d")},
      {&Pods(), pod(Json::array({container("a", "3"), container("b", "4")}), "e")},
      {&Pods(), pod(Json::array({container("b", "1"), container("a", "2")}), "f")},  // order
      {&Pods(), pod(Json::array({container("a", "1"), container("c", "2")}), "g")},  // a key
      {&Pods(), pod(Json::array({container("a", "1"), container("a", "2")}), "h")},  // twice
      {&Pods(), pod(Json::array({{{"image", "x"}}}), "i")},  // an item without its key
      {&Pods(), with_owner("u1", {"f1"})},
      {&Pods(), with_owner("u1", {"f2"})},  // a set's items are its elements
      {&Pods(), with_owner("u2", {"f1"})},
      {&Pods(), with_owner("u2", {"f1", "f1"})},
      // A sole owner's uid is left out of the shape: its text is the first's with the uid
      // replaced, unless the uid stands elsewhere in it too, or is no plain text.
      {&Pods(), with_owner("5d1a3f0e-9c2b-4e7a-8f61-0b2c4d6e8a10", {"f1"})},
      {&Pods(), with_owner("u3", {"u3"})},  // also a finalizer: then another owner,
      {&Pods(), with_owner("u4", {"u3"})},  // the same shape, must not get "u4" twice
      {&Pods(), with_owner("u4", {"f1"})},
      {&Pods(), with_owner("a\\b\"c", {"f1"})},  // escaped in the text
      {&Pods(), owned_twice},
      {&Pods(), labelled_u5},
  };
  for (int round = 0; round < 2; ++round) {  // the second round finds every shape kept
    for (const auto& [type, object] : creates) {
      INFO(round << " " << object.dump());
      Json tree = object, text = object;
      UpdateManagedFields(*type, nullptr, tree, {"ctl", Subresource::kNone, kT0});
      UpdateManagedFields(*type, nullptr, text,
                          {"ctl", Subresource::kNone, round ? kT1 : kT0, /*stored_form=*/true});
      CompactManagedFields(tree);
      if (round == 1 && !Managed(tree).is_null())
        tree["metadata"]["managedFields"][0]["time"] = kT1;
      CHECK(Managed(text) == Managed(tree));
    }
  }
  Json pulled = event("e9", "Pulled");
  UpdateManagedFields(Events(), nullptr, pulled, {"recorder", Subresource::kNone, kT1, true});
  CHECK(Managed(pulled)[0]["manager"] == "recorder");
  CHECK(Managed(pulled)[0]["fieldsV1"].get<std::string>().find("f:reason") != std::string::npos);
}

TEST_CASE("a copy without managed fields keeps every other member, the key \"\" too",
          "[api][ssa]") {
  // fuzz_apply found that the empty `skip` meant the key "" (tests/fuzz/regressions/apply).
  const Json object = {
      {"", "a|"},
      {"data", {{"a", "1"}}},
      {"status", {{"x", 1}}},
      {"metadata", {{"name", "x"}, {"managedFields", Json::array({{{"manager", "m"}}})}}}};
  const Json copy = CopyWithoutManagedFields(object);
  CHECK(copy == Json{{"", "a|"},
                     {"data", {{"a", "1"}}},
                     {"status", {{"x", 1}}},
                     {"metadata", {{"name", "x"}}}});
  const Json without_status = CopyWithoutManagedFields(object, "status");
  CHECK_FALSE(without_status.contains("status"));
  CHECK(without_status[""] == "a|");
  // So applying a configuration with that key again changes nothing, its time included.
  Json config = ConfigMap({{"a", "1"}});
  config[""] = "a|";
  auto first = Apply(ConfigMaps(), nullptr, config, "fuzz", false, kT0);
  REQUIRE(first.ok());
  auto second = Apply(ConfigMaps(), &*first, config, "fuzz", false, kT1);
  REQUIRE(second.ok());
  CHECK(*second == *first);
}

TEST_CASE("status writes have their own entry and see only .status", "[api][ssa]") {
  // [fm] subresource entries; the pod strategy's reset fields (main writes never own status).
  Json pod = Pod({{{"name", "c"}, {"image", "x"}}});
  pod["status"] = {{"phase", "Pending"}};
  UpdateManagedFields(Pods(), nullptr, pod, {"kubectl-create", Subresource::kNone, kT0});
  REQUIRE(Managed(pod).size() == 1);
  CHECK_FALSE(Managed(pod)[0]["fieldsV1"].contains("f:status"));
  Json running = pod;
  running["status"] = {{"phase", "Running"}, {"conditions", Json::array({Json{{"type", "Ready"}, {"status", "True"}}})}};
  UpdateManagedFields(Pods(), &pod, running, {"kubelet", Subresource::kStatus, kT1});
  Json m = Managed(running);
  REQUIRE(m.size() == 2);
  CHECK(m[1]["manager"] == "kubelet");
  CHECK(m[1]["subresource"] == "status");
  CHECK(m[1]["fieldsV1"] ==
        R"({"f:status":{"f:conditions":{".":{},"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},
            "f:type":{}}},"f:phase":{}}})"_pj);
}

TEST_CASE("kubectl's client-side to server-side apply migration", "[api][ssa]") {
  // kubectl 1.26+ rewrites the kubectl-client-side-apply entry to a kubectl Apply entry (a JSON
  // patch of managedFields): the server keeps managed fields a client sends that differ.
  Json cm = ConfigMap({{"a", "1"}, {"b", "2"}});
  cm["metadata"]["annotations"][kLastAppliedAnnotation] =
      R"({"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"name":"cm"}})";
  UpdateManagedFields(ConfigMaps(), nullptr, cm,
                      {"kubectl-client-side-apply", Subresource::kNone, kT0});
  REQUIRE(Managed(cm).size() == 1);
  // Without the migration (kubectl 1.20-1.25): [fm] lastAppliedManager lets manager "kubectl"
  // take the fields the annotation names from client-side apply, and removes b.
  auto taken = Apply(ConfigMaps(), &cm, ConfigMap({{"a", "1"}}), "kubectl");
  REQUIRE(taken.ok());
  CHECK((*taken)["data"] == Json{{"a", "1"}, {"b", "2"}});  // b is still CSA's
  // [fm] lastAppliedUpdater keeps the annotation in step with kubectl's applied configuration.
  CHECK(Json::parse((*taken)["metadata"]["annotations"][kLastAppliedAnnotation].get<std::string>())
            ["data"] == Json{{"a", "1"}});
  // Another manager gets the conflict.
  auto other = Apply(ConfigMaps(), &cm, ConfigMap({{"a", "9"}}), "bob");
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().message() ==
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using v1: "
        ".data.a");
  // With the migration: the rewritten entries are taken as they are sent.
  Json migrated = cm;
  migrated["metadata"]["managedFields"] = Json::array(
      {{{"apiVersion", "v1"}, {"fieldsType", "FieldsV1"}, {"manager", "kubectl"},
        {"operation", "Apply"}, {"time", kT0},
        {"fieldsV1", Managed(cm)[0]["fieldsV1"]}}});
  Json patched = migrated;
  UpdateManagedFields(ConfigMaps(), &cm, patched, {"kubectl", Subresource::kNone, kT1});
  REQUIRE(Managed(patched).size() == 1);
  CHECK(Managed(patched)[0]["operation"] == "Apply");
  auto applied = Apply(ConfigMaps(), &patched, ConfigMap({{"a", "1"}}), "kubectl");
  REQUIRE(applied.ok());
  CHECK((*applied)["data"] == Json{{"a", "1"}});  // b removed: kubectl owned it alone
}

TEST_CASE("managers from the user agent, and entries sorted as the server sorts", "[api][ssa]") {
  CHECK(ManagerFromUserAgent("kubectl/v1.33.1 (linux/amd64) kubernetes/8adc0f0") == "kubectl");
  CHECK(ManagerFromUserAgent("OpenAPI-Generator/22.6.0/python") == "OpenAPI-Generator");
  CHECK(ManagerFromUserAgent("") == "");
  auto a = Apply(ConfigMaps(), nullptr, ConfigMap({{"a", "1"}}), "zed");
  REQUIRE(a.ok());
  Json next = *a;
  next["data"]["b"] = "2";
  UpdateManagedFields(ConfigMaps(), &*a, next, {"alpha", Subresource::kNone, kT0});
  auto b = Apply(ConfigMaps(), &next, ConfigMap({{"c", "3"}}), "bee", false, kT0);
  REQUIRE(b.ok());
  std::vector<std::string> order;
  for (const auto& e : Managed(*b)) order.push_back(e["manager"]);
  // Apply before Update, then by time, then by manager.
  CHECK(order == std::vector<std::string>{"bee", "zed", "alpha"});
}

}  // namespace
}  // namespace pjemu::api
