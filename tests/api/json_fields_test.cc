// Given objects of any shape, the JSON field helpers should read a field or report it absent,
// never throw.
#include "emulator/api/json_fields.h"

#include <catch2/catch.hpp>

namespace pjemu::api {
namespace {

TEST_CASE("Field, Str and OptInt read present fields", "[api]") {
  Json obj = {{"name", "x"}, {"n", 3}, {"inner", {{"k", "v"}}}};
  CHECK(Field(obj, "inner") == Json{{"k", "v"}});
  CHECK(Str(Field(obj, "inner"), "k") == "v");
  CHECK(Str(obj, "name") == "x");
  CHECK(OptInt(obj, "n") == 3);
}

TEST_CASE("missing, null and mistyped fields read as absent", "[api]") {
  Json obj = {{"name", 7}, {"n", "3"}, {"nothing", nullptr}};
  for (const Json& j : {obj, Json(), Json::array({1}), Json("text")}) {
    CAPTURE(j);
    CHECK(Field(j, "absent").is_null());
    CHECK(Str(j, "name").empty());
    CHECK_FALSE(OptInt(j, "n").has_value());
    CHECK(Field(Field(Field(j, "a"), "b"), "c").is_null());
  }
  CHECK(Field(obj, "nothing").is_null());
}

TEST_CASE("FieldAt follows a path and stops at the first absent step", "[api]") {
  Json pod = {{"spec", {{"nodeName", "node-0"}, {"containers", Json::array()}}}};
  CHECK(FieldAt(pod, {"spec", "nodeName"}) == "node-0");
  CHECK(FieldAt(pod, {}) == pod);
  CHECK(FieldAt(pod, {"spec", "containers", "x"}).is_null());
  CHECK(FieldAt(pod, {"status", "phase"}).is_null());
}

TEST_CASE("Projection keeps the values at the paths the object has, under the same keys", "[api]") {
  Json pod = {{"apiVersion", "v1"},
              {"metadata", {{"name", "p"}, {"labels", {{"a", "1"}}}, {"uid", "u"}}},
              {"spec", {{"nodeName", "node-0"}, {"containers", Json::array({{{"name", "c"}}})}}},
              {"status", {{"phase", "Running"}}}};
  Json kept = Projection(pod, {{"apiVersion"},
                               {"metadata", "labels"},
                               {"metadata", "name"},
                               {"spec", "nodeName"},
                               {"spec", "tolerations"},
                               {"status", "phase"}});
  CHECK(kept == Json{{"apiVersion", "v1"},
                     {"metadata", {{"name", "p"}, {"labels", {{"a", "1"}}}}},
                     {"spec", {{"nodeName", "node-0"}}},
                     {"status", {{"phase", "Running"}}}});
  CHECK(Projection(pod, {{"spec", "affinity"}}) == Json::object());
  CHECK(Projection(Json("not an object"), {{"metadata"}}) == Json::object());
}

TEST_CASE("ArrayOr and ObjectOr give an empty value for anything else", "[api]") {
  CHECK(ArrayOr(Json::array({1, 2})).size() == 2);
  CHECK(ArrayOr(Json{{"a", 1}}).empty());
  CHECK(ArrayOr(Json()).is_array());
  CHECK(ObjectOr(Json{{"a", 1}}).size() == 1);
  CHECK(ObjectOr(Json::array({1})).is_object());
  CHECK(ObjectOr(Json::array({1})).empty());
}

TEST_CASE("JsonPathValue reads a printer column's path: keys, [N] and [-1:]", "[api]") {
  Json job = Json::parse(R"({"metadata": {"name": "j"}, "status": {"phase": "Running",
      "conditions": [{"type": "Created"}, {"type": "Running"}]}})");
  CHECK(JsonPathValue(job, ".status.phase") == "Running");
  CHECK(JsonPathValue(job, ".status.conditions[-1:].type") == "Running");
  CHECK(JsonPathValue(job, ".status.conditions[0].type") == "Created");
  CHECK(JsonPathValue(job, ".status.conditions[2].type").is_null());
  CHECK(JsonPathValue(job, ".status.missing.x").is_null());
  CHECK(JsonPathValue(job, ".status.phase[0]").is_null());
  CHECK(JsonPathValue(job, ".status.conditions[x]").is_null());
  CHECK(JsonPathValue(Json::object(), ".status.conditions[-1:].type").is_null());
}

TEST_CASE("JsonPathValue reads a filter step [?(@.type==\"X\")] (JobSet's Completed column)", "[api]") {
  Json js = Json::parse(R"({"status": {"conditions": [{"type": "Suspended", "status": "False"},
      {"type": "Completed", "status": "True"}]}})");
  CHECK(JsonPathValue(js, R"(.status.conditions[?(@.type=="Completed")].status)") == "True");
  CHECK(JsonPathValue(js, R"(.status.conditions[?(@.type=="Failed")].status)").is_null());
  CHECK(TrueCondition(js, "Completed") != nullptr);
  CHECK(TrueCondition(js, "Suspended") == nullptr);
}

}  // namespace
}  // namespace pjemu::api
