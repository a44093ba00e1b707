// Given an empty store over a FakeClock, creating, reading and listing objects should follow
// kube-apiserver: metadata filled in, names validated, 404/409/422 with the real messages.
#include "emulator/store/object_meta.h"
#include "tests/store/store_fixture.h"

namespace pjemu::store::testing {
namespace {

TEST_CASE("create fills uid, resourceVersion, creationTimestamp, generation and namespace",
          "[store]") {
  StoreFixture f;
  std::uint64_t before = f.store.ResourceVersion();
  Json pod = Must(f.store.Create(api::Pods(), "default", PodJson("p1")));
  const Json& m = pod["metadata"];
  CHECK(m["namespace"] == "default");
  CHECK(m["uid"].get<std::string>().size() == 36);
  CHECK(m["uid"].get<std::string>()[14] == '4');
  CHECK(m["resourceVersion"] == std::to_string(before + 1));
  CHECK(m["creationTimestamp"] == "2024-01-01T00:00:00Z");
  CHECK(m["generation"] == 1);
  CHECK(pod["apiVersion"] == "v1");
  CHECK(pod["kind"] == "Pod");
  CHECK(f.store.ResourceVersion() == before + 1);
  CHECK(Must(f.store.Get(api::Pods(), "default", "p1")) == pod);
}

TEST_CASE("uids are deterministic for a seed and differ between objects", "[store]") {
  FakeClock clock;
  Store a(clock), b(clock);
  Json x = Must(a.Create(api::Pods(), "default", PodJson("p")));
  Json y = Must(b.Create(api::Pods(), "default", PodJson("p")));
  Json z = Must(a.Create(api::Pods(), "default", PodJson("q")));
  CHECK(x["metadata"]["uid"] == y["metadata"]["uid"]);
  CHECK(x["metadata"]["uid"] != z["metadata"]["uid"]);
}

TEST_CASE("the four default namespaces exist from the start and are Active", "[store]") {
  StoreFixture f;
  Json list = Must(f.store.List(api::Namespaces(), ""));
  std::vector<std::string> names;
  for (const auto& ns : list["items"]) {
    names.push_back(ns["metadata"]["name"]);
    CHECK(ns["status"]["phase"] == "Active");
  }
  CHECK(names == std::vector<std::string>{"default", "kube-public", "kube-system", "kubeflow"});
}

TEST_CASE("generateName appends a 5-character suffix", "[store]") {
  StoreFixture f;
  Json obj = PodJson("");
  obj["metadata"].erase("name");
  obj["metadata"]["generateName"] = "mnist-worker-";
  Json a = Must(f.store.Create(api::Pods(), "default", obj));
  Json b = Must(f.store.Create(api::Pods(), "default", obj));
  std::string name = a["metadata"]["name"];
  CHECK(name.rfind("mnist-worker-", 0) == 0);
  CHECK(name.size() == std::string("mnist-worker-").size() + 5);
  CHECK(a["metadata"]["name"] != b["metadata"]["name"]);
}

TEST_CASE("create errors carry the real server's codes and messages", "[store]") {
  StoreFixture f;
  Must(f.store.Create(api::Pods(), "default", PodJson("taken")));
  Json no_name = PodJson("x");
  no_name["metadata"].erase("name");
  Json other_ns = PodJson("y");
  other_ns["metadata"]["namespace"] = "kubeflow";
  Json wrong_kind = PodJson("z");
  wrong_kind["kind"] = "Service";
  Json bad_label = PodJson("w", {{"app", "has space"}});
  const std::string kSubdomain =
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
      "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
      "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

  auto [ns, object, code, message] = GENERATE_COPY(table<std::string, Json, Code, std::string>({
      {"default", PodJson("taken"), Code::kAlreadyExists, "pods \"taken\" already exists"},
      {"default", no_name, Code::kInvalid,
       "Pod \"\" is invalid: metadata.name: Required value: name or generateName is required"},
      {"default", PodJson("Bad_Name"), Code::kInvalid,
       "Pod \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": " + kSubdomain},
      {"default", other_ns, Code::kBadRequest,
       "the namespace of the provided object does not match the namespace sent on the request"},
      {"nosuch", PodJson("a"), Code::kNotFound, "namespaces \"nosuch\" not found"},
      {"default", wrong_kind, Code::kBadRequest,
       "the kind in the data (Service) does not match the expected kind (Pod)"},
      {"default", bad_label, Code::kInvalid,
       "Pod \"w\" is invalid: metadata.labels: Invalid value: \"has space\": a valid label must "
       "be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
       "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
       "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
  }));
  CAPTURE(ns, object.dump());
  auto r = f.store.Create(api::Pods(), ns, object);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == code);
  CHECK(r.status().message() == message);
}

TEST_CASE("wrongly typed metadata is Invalid, never a crash", "[store]") {
  StoreFixture f;
  auto bad = GENERATE(as<Json>{}, Json{{"ownerReferences", "x"}}, Json{{"ownerReferences", {1}}},
                      Json{{"ownerReferences",
                            {{{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", "a"}, {"uid", 7}}}}},
                      Json{{"ownerReferences",
                            {{{"apiVersion", "v1"},
                              {"kind", "Pod"},
                              {"name", "a"},
                              {"uid", "u"},
                              {"controller", "yes"}},
                             5}}},
                      Json{{"finalizers", "x"}}, Json{{"labels", {{"a", 1}}}},
                      Json{{"labels", "a=b"}}, Json{{"annotations", {{"a", Json::object()}}}});
  CAPTURE(bad.dump());
  Json pod = PodJson("p");
  pod["metadata"].update(bad);
  auto r = f.store.Create(api::Pods(), "default", pod);
  CHECK(r.status().code() == Code::kInvalid);
  Json ok = Must(f.store.Create(api::Pods(), "default", PodJson("q")));
  ok["metadata"].update(bad);
  CHECK(f.store.Update(api::Pods(), "default", ok).status().code() == Code::kInvalid);
  CHECK(f.store.Patch(api::Pods(), "default", "q", api::PatchType::kMerge, {{"metadata", bad}})
            .status()
            .code() == Code::kInvalid);
}

TEST_CASE("an Invalid status names the kind with its group and lists field causes", "[store]") {
  StoreFixture f;
  auto r = f.store.Create(api::PyTorchJobs(), "default", JobJson("Bad"));
  REQUIRE(r.status().code() == Code::kInvalid);
  CHECK(r.status().message().rfind("PyTorchJob.kubeflow.org \"Bad\" is invalid: metadata.name:",
                                   0) == 0);
  const Json& d = r.status().details();
  CHECK(d["kind"] == "PyTorchJob");
  CHECK(d["group"] == "kubeflow.org");
  CHECK(d["causes"][0]["field"] == "metadata.name");
  CHECK(d["causes"][0]["reason"] == "FieldValueInvalid");
}

TEST_CASE("services need DNS-1035 names and namespaces DNS-1123 labels", "[store]") {
  StoreFixture f;
  Json svc = {{"metadata", {{"name", "1abc"}}}, {"spec", Json::object()}};
  auto r = f.store.Create(api::Services(), "default", svc);
  CHECK(r.status().code() == Code::kInvalid);
  CHECK(r.status().message().find("a DNS-1035 label must consist") != std::string::npos);
  auto n = f.store.Create(api::Namespaces(), "", {{"metadata", {{"name", "a.b"}}}});
  CHECK(n.status().code() == Code::kInvalid);
  CHECK(n.status().message().find("RFC 1123 label") != std::string::npos);
}

TEST_CASE("create drops the client's status for types with a status subresource", "[store]") {
  StoreFixture f;
  Json job = JobJson("j");
  job["status"] = {{"conditions", Json::array({{{"type", "Succeeded"}, {"status", "True"}}})}};
  CHECK_FALSE(Must(f.store.Create(api::PyTorchJobs(), "default", job)).contains("status"));

  Json pod = PodJson("p");
  pod["status"] = {{"phase", "Running"}};
  CHECK(Must(f.store.Create(api::Pods(), "default", pod))["status"] == Json{{"phase", "Pending"}});

  Json node = {{"metadata", {{"name", "node-1"}}}, {"status", {{"capacity", {{"cpu", "8"}}}}}};
  CHECK(Must(f.store.Create(api::Nodes(), "", node))["status"]["capacity"]["cpu"] == "8");

  Json event = EventAbout("e1", Must(f.store.Get(api::Pods(), "default", "p")), "Created");
  event["count"] = 1;
  CHECK(Must(f.store.Create(api::Events(), "default", event))["count"] == 1);
}

TEST_CASE("cluster-scoped objects ignore the request namespace", "[store]") {
  StoreFixture f;
  Json node = Must(f.store.Create(api::Nodes(), "default",
                                  {{"metadata", {{"name", "node-1"}, {"namespace", "x"}}}}));
  CHECK_FALSE(node["metadata"].contains("namespace"));
  CHECK(Must(f.store.Get(api::Nodes(), "whatever", "node-1")) == node);
  CHECK(Must(f.store.List(api::Nodes(), "default"))["items"].size() == 1);
  node["spec"] = {{"unschedulable", true}};
  CHECK(Must(f.store.Update(api::Nodes(), "", node))["spec"]["unschedulable"] == true);
  api::ListOptions opts;
  opts.field_selector = "spec.unschedulable=true";
  CHECK(Must(f.store.List(api::Nodes(), "", opts))["items"].size() == 1);
  Must(f.store.Delete(api::Nodes(), "", "node-1"));
  CHECK(f.store.Get(api::Nodes(), "", "node-1").status().message() == "nodes \"node-1\" not found");
}

TEST_CASE("dry-run update and patch answer without storing", "[store]") {
  StoreFixture f;
  Json job = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("j")));
  api::WriteOptions dry;
  dry.dry_run = true;
  std::uint64_t rv = f.store.ResourceVersion();
  Json changed = job;
  changed["spec"]["x"] = 1;
  CHECK(Must(f.store.Update(api::PyTorchJobs(), "default", changed, api::Subresource::kNone,
                            dry))["spec"]["x"] == 1);
  CHECK(Must(f.store.Patch(api::PyTorchJobs(), "default", "j", api::PatchType::kMerge,
                           {{"spec", {{"y", 2}}}}, api::Subresource::kNone, dry))["spec"]["y"] ==
        2);
  CHECK(f.store.ResourceVersion() == rv);
  CHECK(Must(f.store.Get(api::PyTorchJobs(), "default", "j")) == job);
}

TEST_CASE("dry-run create validates and answers without storing", "[store]") {
  StoreFixture f;
  std::uint64_t rv = f.store.ResourceVersion();
  api::WriteOptions dry;
  dry.dry_run = true;
  Json pod = Must(f.store.Create(api::Pods(), "default", PodJson("p"), dry));
  CHECK(pod["metadata"].contains("uid"));
  CHECK(f.store.ResourceVersion() == rv);
  CHECK(f.store.Get(api::Pods(), "default", "p").status().code() == Code::kNotFound);
  CHECK(f.store.Create(api::Pods(), "default", PodJson("BAD"), dry).status().code() ==
        Code::kInvalid);
}

TEST_CASE("get of a missing object is NotFound with the group in the message", "[store]") {
  StoreFixture f;
  auto r = f.store.Get(api::PyTorchJobs(), "default", "nosuch");
  CHECK(r.status().code() == Code::kNotFound);
  CHECK(r.status().message() == "pytorchjobs.kubeflow.org \"nosuch\" not found");
  CHECK(r.status().details()["group"] == "kubeflow.org");
}

TEST_CASE("list returns a sorted <Kind>List at the current resourceVersion", "[store]") {
  StoreFixture f;
  Json empty = Must(f.store.List(api::PyTorchJobs(), "default"));
  CHECK(empty["items"].is_array());
  CHECK(empty["items"].empty());
  CHECK(empty["kind"] == "PyTorchJobList");
  CHECK(empty["apiVersion"] == "kubeflow.org/v1");

  Must(f.store.Create(api::Pods(), "kubeflow", PodJson("b", {{"app", "x"}})));
  Must(f.store.Create(api::Pods(), "default", PodJson("c", {{"app", "y"}})));
  Must(f.store.Create(api::Pods(), "default", PodJson("a", {{"app", "x"}})));
  Json all = Must(f.store.List(api::Pods(), ""));
  CHECK(all["metadata"]["resourceVersion"] == std::to_string(f.store.ResourceVersion()));
  std::vector<std::string> order;
  for (const auto& p : all["items"]) {
    order.push_back(p["metadata"]["namespace"].get<std::string>() + "/" +
                    p["metadata"]["name"].get<std::string>());
  }
  CHECK(order == std::vector<std::string>{"default/a", "default/c", "kubeflow/b"});

  api::ListOptions opts;
  opts.label_selector = "app=x";
  CHECK(Must(f.store.List(api::Pods(), "default", opts))["items"].size() == 1);
  CHECK(Must(f.store.List(api::Pods(), "", opts))["items"].size() == 2);
  opts.label_selector = "app in (x,";
  CHECK(f.store.List(api::Pods(), "", opts).status().code() == Code::kBadRequest);
  opts.label_selector = "";
  opts.field_selector = "metadata.name=c";
  CHECK(Must(f.store.List(api::Pods(), "", opts))["items"][0]["metadata"]["name"] == "c");
  opts.field_selector = "spec.bogus=1";
  auto bad = f.store.List(api::Pods(), "", opts);
  CHECK(bad.status().code() == Code::kBadRequest);
  CHECK(bad.status().message() == "field label not supported: spec.bogus");
}

TEST_CASE("a selector of several equality terms lists the objects every term names", "[store]") {
  StoreFixture f;
  // job-name names 3 pods, replica-type 4, index 4: the index's smallest set is only where the
  // list starts.
  for (const char* job : {"j1", "j2"}) {
    for (const char* type : {"master", "worker"}) {
      for (const char* index : {"0", "1"}) {
        if (std::string(job) == "j2" && std::string(type) == "master" && index[0] == '1') continue;
        std::string name = std::string(job) + "-" + type + "-" + index;
        Must(f.store.Create(
            api::Pods(), "default",
            PodJson(name, {{"job-name", job}, {"replica-type", type}, {"replica-index", index}})));
      }
    }
  }
  auto names = [&](const std::string& selector) {
    api::ListOptions opts;
    opts.label_selector = selector;
    std::vector<std::string> out;
    Json list = Must(f.store.List(api::Pods(), "default", opts));
    for (const Json& p : list["items"]) out.push_back(p["metadata"]["name"]);
    return out;
  };
  using Names = std::vector<std::string>;
  CHECK(names("job-name=j2,replica-type=master,replica-index=0") == Names{"j2-master-0"});
  CHECK(names("replica-index==1,job-name=j2") == Names{"j2-worker-1"});
  CHECK(names("replica-type in (worker),replica-index=0") == Names{"j1-worker-0", "j2-worker-0"});
  CHECK(names("job-name=j1,replica-type notin (master)") == Names{"j1-worker-0", "j1-worker-1"});
  CHECK(names("job-name=j1,replica-type=chief").empty());  // a term no object has
  CHECK(names("job-name=j1,replica-type=master,replica-index!=0") == Names{"j1-master-1"});
}

TEST_CASE("field selectors on events match involvedObject fields", "[store]") {
  StoreFixture f;
  Json a = Must(f.store.Create(api::Pods(), "default", PodJson("a")));
  Json b = Must(f.store.Create(api::Pods(), "default", PodJson("b")));
  Must(f.store.Create(api::Events(), "default", EventAbout("a.1", a, "Scheduled")));
  Must(f.store.Create(api::Events(), "default", EventAbout("a.2", a, "Started")));
  Must(f.store.Create(api::Events(), "default", EventAbout("b.1", b, "Scheduled")));
  auto [selector, count] = GENERATE(table<std::string, std::size_t>({
      {"involvedObject.name=a", 2},
      {"involvedObject.name=a,involvedObject.namespace=default,involvedObject.kind=Pod", 2},
      {"involvedObject.name=a,reason!=Started", 1},
      {"reason=Scheduled", 2},
      {"source=pytorchjob-controller,type=Normal", 3},
      {"involvedObject.uid=nope", 0},
  }));
  CAPTURE(selector);
  api::ListOptions opts;
  opts.field_selector = selector;
  CHECK(Must(f.store.List(api::Events(), "default", opts))["items"].size() == count);
}

}  // namespace
}  // namespace pjemu::store::testing
