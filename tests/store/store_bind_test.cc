// Given a pending pod, a pods/binding (Store::BindPod) should set its node, the binding's
// annotations and PodScheduled True in one write that leaves managedFields and generation as they
// were, as kube-apiserver's BindingREST does; and refuse a pod that is bound already, being
// deleted, gated, gone, or not the one the binding's preconditions name.
#include "tests/store/store_fixture.h"

namespace pjemu::store::testing {
namespace {

api::PodBinding To(const std::string& node) {
  api::PodBinding b;
  b.node = node;
  return b;
}

TEST_CASE("a binding sets the node and PodScheduled in one write", "[store]") {
  StoreFixture f;
  Must(f.store.Create(api::Pods(), "default", PodJson("p")));
  Json unschedulable = {{"status",
                         {{"conditions",
                           {{{"type", "PodScheduled"},
                             {"status", "False"},
                             {"reason", "Unschedulable"},
                             {"message", "0/1 nodes are available"},
                             {"lastTransitionTime", "2026-11-29T00:00:00Z"}},
                            {{"type", "Other"}, {"status", "True"}}}}}}};
  Json created =
      Must(f.store.Patch(api::Pods(), "default", "p", api::PatchType::kMerge, unschedulable,
                         api::Subresource::kStatus, {.field_manager = "scheduler"}));
  const std::string rv = created["metadata"]["resourceVersion"];
  auto w = Must(f.store.Watch(api::Pods(), "default", From(rv)));
  api::PodBinding b = To("node-a");
  b.uid = created["metadata"]["uid"];
  b.annotations = {{"scheduled-by", "test"}};
  Json bound = *Must(f.store.BindPod("default", "p", b));
  CHECK(bound["spec"]["nodeName"] == "node-a");
  CHECK(bound["metadata"]["annotations"]["scheduled-by"] == "test");
  const Json& conditions = bound["status"]["conditions"];
  REQUIRE(conditions.size() == 2);  // replaced where it was, without its reason and message
  CHECK(conditions[0] == Json{{"type", "PodScheduled"},
                              {"status", "True"},
                              {"lastProbeTime", nullptr},
                              {"lastTransitionTime", FormatTime(f.clock.Now())}});
  CHECK(conditions[1]["type"] == "Other");
  CHECK(bound["metadata"]["managedFields"] == created["metadata"]["managedFields"]);
  CHECK(bound["metadata"].value("generation", 0) == created["metadata"].value("generation", 0));
  CHECK(std::stoull(bound["metadata"]["resourceVersion"].get<std::string>()) ==
        std::stoull(rv) + 1);
  auto e = w->TryNext();
  REQUIRE(e);
  CHECK(e->object() == bound);
  CHECK_FALSE(w->TryNext());
}

TEST_CASE("a binding is refused as kube-apiserver refuses it", "[store]") {
  StoreFixture f;
  Json created = Must(f.store.Create(api::Pods(), "default", PodJson("p")));
  api::PodBinding other_uid = To("node-a");
  other_uid.uid = "not-the-uid";
  Status s = f.store.BindPod("default", "p", other_uid).status();
  CHECK(s.code() == Code::kConflict);
  CHECK_THAT(s.message(), Catch::Contains("Precondition failed: UID in precondition: not-the-uid"));
  api::PodBinding old_rv = To("node-a");
  old_rv.resource_version = "1";
  CHECK(f.store.BindPod("default", "p", old_rv).status().code() == Code::kConflict);
  CHECK(f.store.BindPod("default", "gone", To("node-a")).status().code() == Code::kNotFound);

  Must(f.store.BindPod("default", "p", To("node-a")));
  s = f.store.BindPod("default", "p", To("node-b")).status();
  CHECK(s.code() == Code::kConflict);
  CHECK(s.message() ==
        "Operation cannot be fulfilled on pods/binding \"p\": pod p is already "
        "assigned to node \"node-a\"");

  Json gated = PodJson("gated");
  gated["spec"]["schedulingGates"] = {{{"name", "wait"}}};
  Must(f.store.Create(api::Pods(), "default", gated));
  s = f.store.BindPod("default", "gated", To("node-a")).status();
  CHECK(s.message() ==
        "Operation cannot be fulfilled on pods/binding \"gated\": pod gated has "
        "non-empty .spec.schedulingGates");

  Json held = PodJson("held");
  held["metadata"]["finalizers"] = {"test/hold"};
  Must(f.store.Create(api::Pods(), "default", held));
  Must(f.store.Delete(api::Pods(), "default", "held"));
  s = f.store.BindPod("default", "held", To("node-a")).status();
  CHECK(s.message() ==
        "Operation cannot be fulfilled on pods/binding \"held\": pod held is being "
        "deleted, cannot be assigned to a host");
}

TEST_CASE("a Binding body is read as kube-apiserver reads it", "[store]") {
  api::PodBinding b = To("node-a");
  b.uid = "u";
  b.annotations = {{"k", "v"}};
  Json body = api::BindingBody("default", "p", b);
  api::PodBinding read = Must(api::ParseBinding(body, "default", "p"));
  CHECK(read.node == "node-a");
  CHECK(read.uid == "u");
  CHECK(read.annotations == b.annotations);
  CHECK(api::ParseBinding(body, "default", "q").status().message() ==
        "name in URL does not match name in Binding object");
  Json no_target = body;
  no_target.erase("target");
  Status s = api::ParseBinding(no_target, "default", "p").status();
  CHECK(s.code() == Code::kInvalid);
  CHECK_THAT(s.message(), Catch::Contains("target.name: Required value"));
  Json wrong_kind = body;
  wrong_kind["target"]["kind"] = "Pod";
  CHECK_THAT(api::ParseBinding(wrong_kind, "default", "p").status().message(),
             Catch::Contains("target.kind: Unsupported value: \"Pod\""));
  CHECK(api::ParseBinding(Json::array(), "default", "p").status().code() == Code::kBadRequest);
}

}  // namespace
}  // namespace pjemu::store::testing
