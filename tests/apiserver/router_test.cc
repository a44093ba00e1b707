// The resource verbs of the Router over a real Store: create, get, list, update, patch,
// delete, deletecollection, status and scale subresources, Table output, dryRun, field
// validation, and the real server's Status errors.
#include <catch2/catch.hpp>

#include "tests/apiserver/router_fixture.h"

namespace pjemu::apiserver {
namespace {

using testing::JobJson;
using testing::kTableAccept;
using testing::PodJson;
using testing::RouterFixture;

const std::string kJobs = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs";

TEST_CASE("create answers 201 with the stored object, get and list return it", "[apiserver]") {
  RouterFixture f;
  auto created = f.Do("POST", kJobs + "?fieldManager=kubectl-create", JobJson("mnist").dump());
  REQUIRE(created.status == 201);
  Json job = RouterFixture::Body(created);
  CHECK(job["metadata"]["name"] == "mnist");
  CHECK_FALSE(job["metadata"]["uid"].get<std::string>().empty());
  CHECK_FALSE(job["metadata"]["resourceVersion"].get<std::string>().empty());
  CHECK(job["metadata"]["generation"] == 1);

  Json got = RouterFixture::Body(f.Do("GET", kJobs + "/mnist"));
  CHECK(got["metadata"]["uid"] == job["metadata"]["uid"]);

  Json list = RouterFixture::Body(f.Do("GET", kJobs + "?limit=500"));
  CHECK(list["kind"] == "PyTorchJobList");
  CHECK(list["items"].size() == 1);
  CHECK_FALSE(list["metadata"]["resourceVersion"].get<std::string>().empty());

  Json all = RouterFixture::Body(f.Do("GET", "/apis/kubeflow.org/v1/pytorchjobs"));
  CHECK(all["items"].size() == 1);
  Json empty = RouterFixture::Body(f.Do("GET", "/api/v1/namespaces/nosuch/pods"));
  CHECK(empty["items"] == Json::array());
}

TEST_CASE("errors carry the real server's reason, code and message", "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.Do("POST", kJobs, JobJson("mnist").dump()).status == 201);

  auto dup = f.Do("POST", kJobs, JobJson("mnist").dump());
  CHECK(dup.status == 409);
  Json dup_body = RouterFixture::Body(dup);
  CHECK(dup_body["reason"] == "AlreadyExists");
  CHECK(dup_body["message"] == "pytorchjobs.kubeflow.org \"mnist\" already exists");
  CHECK(dup_body["details"]["kind"] == "pytorchjobs");

  auto missing = f.Do("GET", kJobs + "/nosuch");
  CHECK(missing.status == 404);
  Json missing_body = RouterFixture::Body(missing);
  CHECK(missing_body["message"] == "pytorchjobs.kubeflow.org \"nosuch\" not found");
  CHECK(missing_body["details"]["group"] == "kubeflow.org");

  Json job = RouterFixture::Body(f.Do("GET", kJobs + "/mnist"));
  job["metadata"]["resourceVersion"] = "1";
  job["spec"]["runPolicy"] = {{"backoffLimit", 3}};
  auto stale = f.Do("PUT", kJobs + "/mnist", job.dump());
  CHECK(stale.status == 409);
  Json stale_body = RouterFixture::Body(stale);
  CHECK(stale_body["reason"] == "Conflict");
  CHECK(stale_body["message"] ==
        "Operation cannot be fulfilled on pytorchjobs.kubeflow.org \"mnist\": the object has "
        "been modified; please apply your changes to the latest version and try again");

  Json nameless = JobJson("");
  nameless["metadata"].erase("name");
  auto invalid = f.Do("POST", kJobs, nameless.dump());
  CHECK(invalid.status == 422);
  CHECK(RouterFixture::Body(invalid)["reason"] == "Invalid");

  auto bad_json = f.Do("POST", kJobs, "{\"kind\":");
  CHECK(bad_json.status == 400);
  CHECK(RouterFixture::Body(bad_json)["reason"] == "BadRequest");

  auto bad_selector = f.Do("GET", kJobs + "?labelSelector=a+in+%28b");
  CHECK(bad_selector.status == 400);
  auto bad_field = f.Do("GET", kJobs + "?fieldSelector=spec.foo%3Dx");
  CHECK(bad_field.status == 400);

  Json other_ns = JobJson("x", "kubeflow");
  auto mismatch = f.Do("POST", kJobs, other_ns.dump());
  CHECK(mismatch.status == 400);
  CHECK(RouterFixture::Body(mismatch)["message"] ==
        "the namespace of the provided object does not match the namespace sent on the request");

  Json kindless = JobJson("y");
  kindless.erase("kind");
  CHECK(f.Do("POST", kJobs, kindless.dump()).status == 400);
  Json wrong_kind = JobJson("y");
  wrong_kind["kind"] = "Pod";
  CHECK(f.Do("POST", kJobs, wrong_kind.dump()).status == 400);
  CHECK(f.Do("POST", "/apis/kubeflow.org/v1/pytorchjobs", JobJson("z").dump()).status == 405);
  // Built-in kinds default a missing kind/apiVersion from the URL, as the real decoder does.
  Json pod = PodJson("nokind");
  pod.erase("kind");
  pod.erase("apiVersion");
  auto pod_r = f.Do("POST", "/api/v1/namespaces/default/pods", pod.dump());
  CHECK(pod_r.status == 201);
  CHECK(RouterFixture::Body(pod_r)["kind"] == "Pod");
}

TEST_CASE("update with the current resourceVersion succeeds and bumps generation", "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.Do("POST", kJobs, JobJson("mnist").dump()).status == 201);
  Json job = RouterFixture::Body(f.Do("GET", kJobs + "/mnist"));
  job["spec"]["runPolicy"] = {{"backoffLimit", 3}};
  auto updated = f.Do("PUT", kJobs + "/mnist", job.dump());
  REQUIRE(updated.status == 200);
  Json body = RouterFixture::Body(updated);
  CHECK(body["spec"]["runPolicy"]["backoffLimit"] == 3);
  CHECK(body["metadata"]["generation"] == 2);
  job["metadata"]["name"] = "other";
  CHECK(RouterFixture::Body(f.Do("PUT", kJobs + "/mnist", job.dump()))["message"] ==
        "the name of the object (other) does not match the name on the URL (mnist)");
}

TEST_CASE("merge and JSON patches apply, strategic merge on a custom resource is 415",
          "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.Do("POST", kJobs, JobJson("mnist").dump()).status == 201);
  auto merged = f.Do(
      "PATCH", kJobs + "/mnist",
      R"({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}\n"}}})",
      {{"content-type", "application/merge-patch+json"}});
  REQUIRE(merged.status == 200);
  Json merged_body = RouterFixture::Body(merged);
  CHECK(
      merged_body["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] ==
      "{}\n");
  CHECK(merged_body["metadata"]["generation"] == 1);

  auto json_patch =
      f.Do("PATCH", kJobs + "/mnist",
           R"([{"op":"replace","path":"/spec/pytorchReplicaSpecs/Worker/replicas","value":3}])",
           {{"content-type", "application/json-patch+json"}});
  REQUIRE(json_patch.status == 200);
  Json jp = RouterFixture::Body(json_patch);
  CHECK(jp["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 3);
  CHECK(jp["metadata"]["generation"] == 2);

  auto smp = f.Do("PATCH", kJobs + "/mnist", R"({"metadata":{"labels":{"a":"b"}}})",
                  {{"content-type", "application/strategic-merge-patch+json"}});
  CHECK(smp.status == 415);
  CHECK(RouterFixture::Body(smp)["reason"] == "UnsupportedMediaType");

  auto unknown_type = f.Do("PATCH", kJobs + "/mnist", "{}", {{"content-type", "text/plain"}});
  CHECK(unknown_type.status == 415);
}

TEST_CASE("server-side apply creates when absent and patches when present", "[apiserver]") {
  RouterFixture f;
  auto created = f.Do("PATCH", kJobs + "/mnist?fieldManager=kubectl&force=false",
                      JobJson("mnist").dump(), {{"content-type", "application/apply-patch+yaml"}});
  CHECK(created.status == 201);
  Json change = JobJson("mnist");
  change["metadata"]["labels"]["tier"] = "gold";
  auto patched = f.Do("PATCH", kJobs + "/mnist?fieldManager=kubectl", change.dump(),
                      {{"content-type", "application/apply-patch+yaml"}});
  CHECK(patched.status == 200);
  CHECK(RouterFixture::Body(patched)["metadata"]["labels"]["tier"] == "gold");
}

TEST_CASE("fieldValidation Strict rejects unknown and duplicate fields with the real message",
          "[apiserver]") {
  RouterFixture f;
  Json typo = JobJson("typo");
  typo["spec"]["pytorchReplicaSpec"] = Json::object();
  auto strict =
      f.Do("POST", kJobs + "?fieldManager=kubectl-create&fieldValidation=Strict", typo.dump());
  CHECK(strict.status == 400);
  CHECK(RouterFixture::Body(strict)["message"] ==
        "PyTorchJob in version \"v1\" cannot be handled as a PyTorchJob: strict decoding error: "
        "unknown field \"spec.pytorchReplicaSpec\"");

  Json deep = JobJson("deep");
  deep["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["imagee"] =
      "x";
  auto deep_r = f.Do("POST", kJobs + "?fieldValidation=Strict", deep.dump());
  CHECK(
      RouterFixture::Body(deep_r)["message"].get<std::string>().find(
          "unknown field \"spec.pytorchReplicaSpecs.Master.template.spec.containers[0].imagee\"") !=
      std::string::npos);

  std::string dup =
      R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"d","name":"e"},"spec":{}})";
  auto dup_r = f.Do("POST", kJobs + "?fieldValidation=Strict", dup);
  CHECK(dup_r.status == 400);
  CHECK(RouterFixture::Body(dup_r)["message"].get<std::string>().find(
            "duplicate field \"metadata.name\"") != std::string::npos);

  // Warn (and no parameter): stored without the field, one Warning header per field.
  auto warn = f.Do("POST", kJobs + "?fieldValidation=Warn", typo.dump());
  REQUIRE(warn.status == 201);
  CHECK_FALSE(RouterFixture::Body(warn)["spec"].contains("pytorchReplicaSpec"));
  REQUIRE(warn.headers.size() == 1);
  CHECK(warn.headers[0].first == "Warning");
  CHECK(warn.headers[0].second == "299 - \"unknown field \\\"spec.pytorchReplicaSpec\\\"\"");

  Json ignored = JobJson("ignored");
  ignored["spec"]["foo"] = 1;
  auto ignore = f.Do("POST", kJobs + "?fieldValidation=Ignore", ignored.dump());
  CHECK(ignore.status == 201);
  CHECK(ignore.headers.empty());
  CHECK(f.Do("POST", kJobs + "?fieldValidation=Loose", JobJson("l").dump()).status == 400);

  Json pod = PodJson("p");
  pod["spec"]["containers"][0]["imagePullPolicyy"] = "Always";
  auto pod_r = f.Do("POST", "/api/v1/namespaces/default/pods?fieldValidation=Strict", pod.dump());
  CHECK(RouterFixture::Body(pod_r)["message"] ==
        "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field "
        "\"spec.containers[0].imagePullPolicyy\"");
}

TEST_CASE("dryRun=All answers as if written and stores nothing", "[apiserver]") {
  RouterFixture f;
  auto dry = f.Do("POST", kJobs + "?dryRun=All", JobJson("dry").dump());
  CHECK(dry.status == 201);
  CHECK(RouterFixture::Body(dry)["metadata"]["name"] == "dry");
  CHECK(f.Do("GET", kJobs + "/dry").status == 404);
  CHECK(f.Do("POST", kJobs + "?dryRun=Some", JobJson("dry").dump()).status == 400);
  REQUIRE(f.Do("POST", kJobs, JobJson("real").dump()).status == 201);
  CHECK(f.Do("DELETE", kJobs + "/real?dryRun=All").status == 200);
  CHECK(f.Do("GET", kJobs + "/real").status == 200);
}

TEST_CASE("delete takes DeleteOptions from the body or the query", "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.Do("POST", kJobs, JobJson("mnist").dump()).status == 201);
  auto bad = f.Do("DELETE", kJobs + "/mnist", R"({"propagationPolicy":"Sideways"})");
  CHECK(bad.status == 422);
  CHECK(RouterFixture::Body(bad)["details"]["causes"][0]["field"] == "propagationPolicy");
  auto deleted = f.Do("DELETE", kJobs + "/mnist", R"({"propagationPolicy":"Background"})");
  CHECK(deleted.status == 200);
  CHECK(f.Do("GET", kJobs + "/mnist").status == 404);
  CHECK(RouterFixture::Body(f.Do("DELETE", kJobs + "/mnist"))["message"] ==
        "pytorchjobs.kubeflow.org \"mnist\" not found");
  REQUIRE(f.Do("POST", kJobs, JobJson("q").dump()).status == 201);
  CHECK(f.Do("DELETE", kJobs + "/q?propagationPolicy=Foreground&gracePeriodSeconds=0").status ==
        200);
}

TEST_CASE("deletecollection deletes what the selector matches", "[apiserver]") {
  RouterFixture f;
  for (const char* name : {"a", "b"}) {
    REQUIRE(f.Do("POST", kJobs, JobJson(name).dump()).status == 201);
  }
  Json other = JobJson("c");
  other["metadata"]["labels"]["app"] = "other";
  REQUIRE(f.Do("POST", kJobs, other.dump()).status == 201);
  auto r = f.Do("DELETE", kJobs + "?labelSelector=app%3Dmnist");
  CHECK(r.status == 200);
  Json left = RouterFixture::Body(f.Do("GET", kJobs));
  REQUIRE(left["items"].size() == 1);
  CHECK(left["items"][0]["metadata"]["name"] == "c");
}

TEST_CASE("the status subresource writes only status", "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.Do("POST", kJobs, JobJson("mnist").dump()).status == 201);
  auto r = f.Do(
      "PATCH", kJobs + "/mnist/status",
      R"({"status":{"conditions":[{"type":"Created","status":"True"},{"type":"Succeeded","status":"True"}]},"spec":{"runPolicy":{"backoffLimit":9}}})",
      {{"content-type", "application/merge-patch+json"}});
  REQUIRE(r.status == 200);
  Json job = RouterFixture::Body(f.Do("GET", kJobs + "/mnist"));
  CHECK(job["status"]["conditions"].size() == 2);
  CHECK_FALSE(job["spec"].contains("runPolicy"));
  CHECK(job["metadata"]["generation"] == 1);
  Json status_get = RouterFixture::Body(f.Do("GET", kJobs + "/mnist/status"));
  CHECK(status_get["status"]["conditions"].size() == 2);
}

TEST_CASE("the scale subresource maps to the Worker replicas", "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.Do("POST", kJobs, JobJson("mnist").dump()).status == 201);
  REQUIRE(
      f.Do("PATCH", kJobs + "/mnist/status",
           R"({"status":{"replicaStatuses":{"Worker":{"active":1,"selector":"training.kubeflow.org/job-name=mnist"}}}})",
           {{"content-type", "application/merge-patch+json"}})
          .status == 200);
  Json scale = RouterFixture::Body(f.Do("GET", kJobs + "/mnist/scale"));
  CHECK(scale["kind"] == "Scale");
  CHECK(scale["apiVersion"] == "autoscaling/v1");
  CHECK(scale["spec"]["replicas"] == 1);
  CHECK(scale["status"]["replicas"] == 1);
  CHECK(scale["status"]["selector"] == "training.kubeflow.org/job-name=mnist");

  auto patched = f.Do("PATCH", kJobs + "/mnist/scale", R"({"spec":{"replicas":4}})",
                      {{"content-type", "application/merge-patch+json"}});
  REQUIRE(patched.status == 200);
  CHECK(RouterFixture::Body(patched)["spec"]["replicas"] == 4);
  Json job = RouterFixture::Body(f.Do("GET", kJobs + "/mnist"));
  CHECK(job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 4);

  scale = RouterFixture::Body(f.Do("GET", kJobs + "/mnist/scale"));
  scale["spec"]["replicas"] = 2;
  CHECK(f.Do("PUT", kJobs + "/mnist/scale", scale.dump()).status == 200);
  scale["spec"]["replicas"] = 5;
  CHECK(f.Do("PUT", kJobs + "/mnist/scale", scale.dump()).status == 409);  // stale RV
  scale["metadata"].erase("resourceVersion");
  scale["spec"]["replicas"] = -1;
  CHECK(f.Do("PUT", kJobs + "/mnist/scale", scale.dump()).status == 422);
  CHECK(f.Do("GET", "/api/v1/namespaces/default/pods/x/scale").status == 404);
}

TEST_CASE("Table output for pytorchjobs shows the last condition as State", "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.Do("POST", kJobs, JobJson("mnist").dump()).status == 201);
  REQUIRE(
      f.Do("PATCH", kJobs + "/mnist/status",
           R"({"status":{"conditions":[{"type":"Created","status":"True"},{"type":"Running","status":"True"}]}})",
           {{"content-type", "application/merge-patch+json"}})
          .status == 200);
  f.clock.Advance(7s);
  Json table =
      RouterFixture::Body(f.Do("GET", kJobs + "?limit=500", "", {{"accept", kTableAccept}}));
  CHECK(table["kind"] == "Table");
  CHECK(table["apiVersion"] == "meta.k8s.io/v1");
  CHECK_FALSE(table["metadata"]["resourceVersion"].get<std::string>().empty());
  std::vector<std::string> names;
  for (const auto& c : table["columnDefinitions"]) names.push_back(c["name"]);
  CHECK(names == std::vector<std::string>{"Name", "State", "Age"});
  REQUIRE(table["rows"].size() == 1);
  CHECK(table["rows"][0]["cells"] == Json({"mnist", "Running", "7s"}));
  const Json& object = table["rows"][0]["object"];
  CHECK(object["kind"] == "PartialObjectMetadata");
  CHECK(object["metadata"]["namespace"] == "default");
  CHECK(object["metadata"]["labels"]["app"] == "mnist");

  Json one = RouterFixture::Body(f.Do("GET", kJobs + "/mnist", "", {{"accept", kTableAccept}}));
  CHECK(one["rows"].size() == 1);
}

TEST_CASE("Table output for pytorchtrainingjobs: its printer columns, wide ones at priority 1",
          "[apiserver]") {
  RouterFixture f;
  const std::string jobs = "/apis/batch.tensorstack.dev/v1beta1/namespaces/default/pytorchtrainingjobs";
  Json job = Json::parse(R"({"apiVersion": "batch.tensorstack.dev/v1beta1",
      "kind": "PyTorchTrainingJob", "metadata": {"name": "t9k"},
      "spec": {"replicaSpecs": [{"type": "node", "template": {"spec": {"containers": [
        {"name": "pytorch", "image": "t9kpublic/pytorch-1.13.0:sdk-0.5.2"}]}}}]}})");
  REQUIRE(f.Do("POST", jobs, job.dump()).status == 201);
  REQUIRE(f.Do("PATCH", jobs + "/t9k/status",
               R"({"status":{"phase":"Running","backoffCount":1,"aggregate":{"running":1}}})",
               {{"content-type", "application/merge-patch+json"}})
              .status == 200);
  f.clock.Advance(3s);
  Json table = RouterFixture::Body(f.Do("GET", jobs, "", {{"accept", kTableAccept}}));
  std::vector<std::pair<std::string, int>> cols;
  for (const auto& c : table["columnDefinitions"]) cols.push_back({c["name"], c["priority"]});
  CHECK(cols == std::vector<std::pair<std::string, int>>{{"Name", 0},    {"Phase", 0},
                                                         {"Age", 0},     {"Backoff", 1},
                                                         {"Running", 1}, {"Succeeded", 1},
                                                         {"Failed", 1}});
  CHECK(table["rows"][0]["cells"] == Json({"t9k", "Running", "3s", 1, 1, nullptr, nullptr}));
  // Refused with one cause per bad field.
  job["metadata"]["name"] = "bad";
  job["spec"]["replicaSpecs"][0]["restartPolicy"] = "Sometimes";
  auto r = f.Do("POST", jobs, job.dump());
  CHECK(r.status == 422);
  CHECK(RouterFixture::Body(r)["details"]["causes"][0]["field"] ==
        "spec.replicaSpecs[0].restartPolicy");
}

TEST_CASE("pods/eviction honours a PodDisruptionBudget: 429, then the pod deleted",
          "[apiserver][eviction]") {
  RouterFixture f;
  REQUIRE(f.store.Create(api::Pods(), "default", PodJson("p")).ok());
  Json ready = {
      {"status",
       {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  REQUIRE(f.store
              .Patch(api::Pods(), "default", "p", api::PatchType::kMerge, ready,
                     api::Subresource::kStatus, {})
              .ok());
  Json pdb = {{"apiVersion", "policy/v1"},
              {"kind", "PodDisruptionBudget"},
              {"metadata", {{"name", "keep"}}},
              {"spec",
               {{"minAvailable", 1},
                {"selector", {{"matchLabels", {{"training.kubeflow.org/job-name", "mnist"}}}}}}}};
  auto created =
      f.Do("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb.dump());
  REQUIRE(created.status == 201);
  Json got = RouterFixture::Body(
      f.Do("GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/keep"));
  CHECK(got["status"]["currentHealthy"] == 1);
  CHECK(got["status"]["disruptionsAllowed"] == 0);

  const std::string url = "/api/v1/namespaces/default/pods/p/eviction";
  Json eviction = {{"apiVersion", "policy/v1beta1"},  // kubectl 1.20's
                   {"kind", "Eviction"},
                   {"metadata", {{"name", "p"}, {"namespace", "default"}}}};
  auto refused = f.Do("POST", url, eviction.dump());
  CHECK(refused.status == 429);
  Json status = RouterFixture::Body(refused);
  CHECK(status["reason"] == "TooManyRequests");
  CHECK(status["message"] == "Cannot evict pod as it would violate the pod's disruption budget.");
  CHECK(status["details"]["causes"][0]["reason"] == "DisruptionBudget");
  CHECK(f.store.Get(api::Pods(), "default", "p").ok());

  Json wrong = eviction;
  wrong["metadata"]["name"] = "q";
  auto mismatch = f.Do("POST", url, wrong.dump());
  CHECK(mismatch.status == 400);
  CHECK(RouterFixture::Body(mismatch)["message"] ==
        "name in URL does not match name in Eviction object");
  CHECK(f.Do("POST", url, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}})").status ==
        400);
  CHECK(f.Do("GET", url).status == 405);
  Json bad_options = eviction;
  bad_options["deleteOptions"] = {{"propagationPolicy", 5}};
  auto undecodable = f.Do("POST", url, bad_options.dump());
  CHECK(undecodable.status == 400);
  CHECK_THAT(RouterFixture::Body(undecodable)["message"].get<std::string>(),
             Catch::Contains("DeleteOptions.propagationPolicy"));

  auto patched =
      f.Do("PATCH", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/keep",
           R"({"spec":{"minAvailable":0}})", {{"content-type", "application/merge-patch+json"}});
  REQUIRE(patched.status == 200);
  eviction["apiVersion"] = "policy/v1";
  eviction["deleteOptions"] = {{"gracePeriodSeconds", 0}};
  auto allowed = f.Do("POST", url, eviction.dump());
  CHECK(allowed.status == 201);
  CHECK(RouterFixture::Body(allowed)["status"] == "Success");
  CHECK(f.store.Get(api::Pods(), "default", "p").status().code() == Code::kNotFound);
  CHECK(f.Do("POST", url, eviction.dump()).status == 404);
}

TEST_CASE("pods/binding binds a pod once: 201, then 409 naming its node", "[apiserver]") {
  RouterFixture f;
  REQUIRE(f.store.Create(api::Pods(), "default", PodJson("p")).ok());
  const std::string url = "/api/v1/namespaces/default/pods/p/binding";
  Json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", "p"}, {"namespace", "default"}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "node-a"}}}};
  auto dry = f.Do("POST", url + "?dryRun=All", binding.dump());
  CHECK(dry.status == 201);
  CHECK_FALSE((*f.store.Get(api::Pods(), "default", "p"))["spec"].contains("nodeName"));
  CHECK(f.Do("POST", url + "?dryRun=Some", binding.dump()).status == 400);
  auto bound = f.Do("POST", url, binding.dump());
  CHECK(bound.status == 201);
  CHECK(RouterFixture::Body(bound)["status"] == "Success");
  Json pod = *f.store.Get(api::Pods(), "default", "p");
  CHECK(pod["spec"]["nodeName"] == "node-a");
  CHECK(pod["status"]["conditions"][0]["type"] == "PodScheduled");
  auto again = f.Do("POST", url, binding.dump());
  CHECK(again.status == 409);
  CHECK(RouterFixture::Body(again)["message"] ==
        "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node "
        "\"node-a\"");
  Json no_node = binding;
  no_node["target"].erase("name");
  CHECK(f.Do("POST", url, no_node.dump()).status == 422);
  CHECK(f.Do("POST", url, "{").status == 400);
  CHECK(f.Do("GET", url).status == 405);
  CHECK(f.Do("POST", "/api/v1/namespaces/default/pods/gone/binding",
             R"({"metadata":{"name":"gone"},"target":{"name":"node-a"}})")
            .status == 404);
  CHECK(f.Do("POST", "/api/v1/namespaces/default/services/p/binding", binding.dump()).status ==
        404);
}

TEST_CASE("a PodDisruptionBudget with both minAvailable and maxUnavailable is refused",
          "[apiserver][eviction]") {
  RouterFixture f;
  Json pdb = {{"apiVersion", "policy/v1"},
              {"kind", "PodDisruptionBudget"},
              {"metadata", {{"name", "both"}}},
              {"spec", {{"minAvailable", 1}, {"maxUnavailable", 1}}}};
  auto r = f.Do("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb.dump());
  CHECK(r.status == 422);
  CHECK_THAT(RouterFixture::Body(r)["message"].get<std::string>(),
             Catch::Contains("minAvailable and maxUnavailable cannot be both set"));
}

}  // namespace
}  // namespace pjemu::apiserver
