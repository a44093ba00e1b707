// Given field selector strings, parsing should accept =, == and != on the fields the real server
// indexes for each kind, refuse other fields with "field label not supported", and match objects.
#include <catch2/catch.hpp>

#include "emulator/api/selector.h"

namespace pjemu::api {
namespace {

TEST_CASE("field selectors accept only the supported fields of each kind", "[selector]") {
  auto [type, text, ok] = GENERATE(table<const ResourceType*, std::string, bool>({
      {&PyTorchJobs(), "metadata.name=mnist", true},
      {&PyTorchJobs(), "metadata.namespace==default", true},
      {&PyTorchJobs(), "spec.runPolicy=x", false},
      {&PyTorchJobs(), "status.phase=x", false},
      {&Pods(), "spec.nodeName=node-1,status.phase!=Running", true},
      {&Pods(), "status.podIP=10.0.0.1", true},
      {&Pods(), "spec.containers=x", false},
      {&Events(), "involvedObject.kind=PyTorchJob,involvedObject.name=mnist", true},
      {&Events(), "involvedObject.uid=u,involvedObject.namespace=ns,reason=Created,type=Normal",
       true},
      {&Events(), "source=kubelet,reportingComponent=x,involvedObject.fieldPath=y", true},
      {&Events(), "message=x", false},
      {&Services(), "metadata.name=a", true},
      {&Services(), "spec.clusterIP=a", false},
      {&Namespaces(), "status.phase=Active", true},
      {&Nodes(), "spec.unschedulable=false", true},
  }));
  CAPTURE(type->plural, text);
  auto sel = FieldSelector::Parse(text, *type);
  CHECK(sel.ok() == ok);
  if (!ok) {
    CHECK(sel.status().code() == Code::kBadRequest);
    CHECK(sel.status().message().rfind("field label not supported: ", 0) == 0);
  }
}

TEST_CASE("field selector syntax errors name the term", "[selector]") {
  auto sel = FieldSelector::Parse("metadata.name=a,bogus", Pods());
  REQUIRE_FALSE(sel.ok());
  CHECK(sel.status().code() == Code::kBadRequest);
  CHECK(sel.status().message() ==
        "invalid selector: 'metadata.name=a,bogus'; can't understand 'bogus'");
}

TEST_CASE("field selectors match object fields", "[selector]") {
  const Json pod = {{"metadata", {{"name", "p"}, {"namespace", "default"}}},
                    {"spec", {{"nodeName", "node-1"}}},
                    {"status", {{"phase", "Running"}}}};
  const Json event = {{"metadata", {{"name", "e"}, {"namespace", "default"}}},
                      {"involvedObject", {{"kind", "PyTorchJob"}, {"name", "mnist"}}},
                      {"source", {{"component", "kubelet"}}},
                      {"reason", "Started"}};
  auto [type, object, text, want] =
      GENERATE_COPY(table<const ResourceType*, Json, std::string, bool>({
          {&Pods(), pod, "", true},
          {&Pods(), pod, "metadata.name=p", true},
          {&Pods(), pod, "metadata.name==q", false},
          {&Pods(), pod, "metadata.name!=q", true},
          {&Pods(), pod, "spec.nodeName=node-1,status.phase=Running", true},
          {&Pods(), pod, "spec.nodeName=", false},
          {&Pods(), pod, "status.podIP=", true},  // absent fields are ""
          {&Events(), event, "involvedObject.kind=PyTorchJob,involvedObject.name=mnist", true},
          {&Events(), event, "source=kubelet", true},
          {&Events(), event, "reason!=Started", false},
      }));
  CAPTURE(text);
  auto sel = FieldSelector::Parse(text, *type);
  REQUIRE(sel.ok());
  CHECK(sel->Matches(object) == want);
}

TEST_CASE("field selector values may escape commas and equals signs", "[selector]") {
  auto sel = FieldSelector::Parse("metadata.name=a\\,b\\=c", Pods());
  REQUIRE(sel.ok());
  CHECK(sel->requirements()[0].value == "a,b=c");
  CHECK(FieldSelector::Parse("metadata.name=a\\x", Pods()).status().code() == Code::kBadRequest);
}

}  // namespace
}  // namespace pjemu::api
