// Loading manifests: multi-document YAML, JSON, List expansion, lines and field errors.
#include "emulator/manifest/manifest.h"

#include <catch2/catch.hpp>

namespace pjemu::manifest {
namespace {

std::vector<Manifest> MustLoad(std::string_view text, std::string_view name = "job.yaml") {
  Result<std::vector<Manifest>> r = LoadManifestText(text, name);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return std::move(r).value();
}

constexpr std::string_view kJob = R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: mnist
  annotations:
    sidecar.istio.io/inject: "false"
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - name: pytorch
              image: trainer
    Worker:
      replicas: two
)";

TEST_CASE("multi-document YAML yields one manifest per non-empty document", "[manifest]") {
  auto ms = MustLoad(
      "---\n# only a comment\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n"
      "---\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n...\n");
  REQUIRE(ms.size() == 2);
  CHECK(ms[0].object["kind"] == "Pod");
  CHECK(ms[0].line == 4);
  CHECK(ms[1].object["metadata"]["name"] == "b");
  CHECK(ms[1].line == 10);
  CHECK(ms[1].source == "job.yaml");
}

TEST_CASE("field lines follow the YAML marks", "[manifest]") {
  auto ms = MustLoad(kJob);
  REQUIRE(ms.size() == 1);
  const Manifest& m = ms[0];
  CHECK(m.line == 1);
  CHECK(m.LineOf("spec.pytorchReplicaSpecs.Master.replicas") == 10);
  CHECK(m.LineOf("spec.pytorchReplicaSpecs[Master].replicas") == 10);
  CHECK(m.LineOf("spec.pytorchReplicaSpecs.Master.template.spec.containers[0].image") == 15);
  CHECK(m.LineOf("spec.pytorchReplicaSpecs.Master.template.spec.containers[0]") == 14);
  CHECK(m.LineOf("metadata.annotations[sidecar.istio.io/inject]") == 6);
  CHECK(m.LineOfPointer("/metadata/annotations/sidecar.istio.io~1inject") == 6);
  SECTION("an unknown field falls back to its nearest known parent") {
    CHECK(m.LineOf("spec.pytorchReplicaSpecs.Worker.template.spec") == 16);
    CHECK(m.LineOf("status.conditions") == 1);
  }
}

TEST_CASE("TypeError names file, line and field", "[manifest]") {
  auto ms = MustLoad(kJob);
  Status s = TypeError(ms[0], "spec.pytorchReplicaSpecs.Worker.replicas", "an integer");
  CHECK(s.code() == Code::kInvalid);
  CHECK(s.message() ==
        "job.yaml:17: spec.pytorchReplicaSpecs.Worker.replicas: expected an integer");
  Status p = TypeError(ms[0], Json::json_pointer("/spec/pytorchReplicaSpecs/Worker/replicas"),
                       "an integer");
  CHECK(p.message() == s.message());
  Status f = FieldError(ms[0], "metadata.name", "must be lower case");
  CHECK(f.message() == "job.yaml:4: metadata.name: must be lower case");
}

TEST_CASE("field paths convert to JSON pointers", "[manifest]") {
  CHECK(FieldPathToPointer("spec.replicas") == "/spec/replicas");
  CHECK(FieldPathToPointer("a.b[0].c") == "/a/b/0/c");
  CHECK(FieldPathToPointer("spec.pytorchReplicaSpecs[Master]") ==
        "/spec/pytorchReplicaSpecs/Master");
  CHECK(FieldPathToPointer("metadata.labels[a.b/c~d]") == "/metadata/labels/a.b~1c~0d");
  CHECK(FieldPathToPointer("") == "");
  for (const char* path : {"spec.replicas", "a.b[0].c", "metadata.labels[a.b/c~d]", "x[0][1]"}) {
    CAPTURE(path);
    CHECK(PointerToFieldPath(FieldPathToPointer(path)) == path);
  }
}

TEST_CASE("a JSON manifest loads with lines", "[manifest]") {
  auto ms = MustLoad(
      "\n{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n  \"metadata\": "
      "{\"name\": \"p\"},\n  \"spec\": {\"x\": 1.0, \"y\": 1.5, \"on\": \"yes\"}\n}\n",
      "pod.json");
  REQUIRE(ms.size() == 1);
  CHECK(ms[0].line == 2);
  CHECK(ms[0].LineOf("spec.y") == 6);
  CHECK(ms[0].object["spec"]["x"].is_number_integer());  // 1.0 leaves kubectl as 1
  CHECK(ms[0].object["spec"]["y"] == 1.5);
  CHECK(ms[0].object["spec"]["on"] == "yes");  // JSON has no YAML 1.1 booleans
}

TEST_CASE("kind List expands into its items with re-rooted lines", "[manifest]") {
  auto ms = MustLoad(R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata:
    name: s
- apiVersion: kubeflow.org/v1
  kind: PyTorchJob
  metadata:
    name: j
  spec:
    replicas: x
)");
  REQUIRE(ms.size() == 2);
  CHECK(ms[0].object["kind"] == "Service");
  CHECK(ms[0].line == 4);
  CHECK(ms[1].object["metadata"]["name"] == "j");
  CHECK(ms[1].line == 8);
  CHECK(ms[1].LineOf("spec.replicas") == 13);
  CHECK(ms[1].LineOf("metadata") == 10);
  SECTION("a JSON PodList expands too") {
    auto js = MustLoad(R"({"apiVersion": "v1", "kind": "PodList", "items": [
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}}]})",
                       "pods.json");
    REQUIRE(js.size() == 2);
    CHECK(js[1].object["metadata"]["name"] == "b");
    CHECK(js[1].line == 3);
  }
  SECTION("an empty list has no objects") {
    Result<std::vector<Manifest>> r =
        LoadManifestText("apiVersion: v1\nkind: List\nitems: []\n", "l.yaml");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == "l.yaml: no objects found");
  }
}

TEST_CASE("anchors, aliases and merge keys expand like go-yaml", "[manifest]") {
  auto ms = MustLoad(R"(apiVersion: v1
kind: Pod
metadata:
  labels: &common {app: mnist, tier: train}
  annotations:
    <<: *common
    tier: override
spec:
  containers:
  - &c {name: a, image: i}
  - *c
)");
  const Json& o = ms[0].object;
  CHECK(o["metadata"]["annotations"] == Json{{"app", "mnist"}, {"tier", "override"}});
  SECTION("merges apply in document order; in a sequence the earlier map wins") {
    auto m = MustLoad(R"(apiVersion: v1
kind: ConfigMap
b1: &b1 {x: 1}
b2: &b2 {x: 2, w: 3}
before: {x: 9, <<: *b1}
list: {<<: [*b1, *b2]}
twice: {<<: *b1, <<: {x: 5}}
)");
    const Json& c = m[0].object;
    CHECK(c["before"] == Json{{"x", 1}});
    CHECK(c["list"] == Json{{"x", 1}, {"w", 3}});
    CHECK(c["twice"] == Json{{"x", 5}});
  }
  CHECK(o["spec"]["containers"][1] == Json{{"name", "a"}, {"image", "i"}});
}

TEST_CASE("LoadManifestFile reads a file and names it in errors", "[manifest]") {
  std::string dir = PJEMU_SOURCE_DIR;
  auto r = LoadManifestFile(dir + "/fixtures/seeds/pytorch-simple.yaml");
  REQUIRE(r.ok());
  CHECK(r->at(0).source == dir + "/fixtures/seeds/pytorch-simple.yaml");
  auto missing = LoadManifestFile(dir + "/fixtures/no-such-file.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == Code::kNotFound);
  CHECK(missing.status().message() ==
        dir + "/fixtures/no-such-file.yaml: cannot open: No such file or directory");
  auto directory = LoadManifestFile(dir + "/fixtures");
  REQUIRE_FALSE(directory.ok());
  CHECK(directory.status().message() == dir + "/fixtures: is a directory, not a manifest file");
}

}  // namespace
}  // namespace pjemu::manifest

namespace pjemu::manifest {
namespace {

TEST_CASE("fixtures/manifests load into the objects they describe", "[manifest]") {
  std::string dir = std::string(PJEMU_SOURCE_DIR) + "/fixtures/manifests/";
  auto yaml = LoadManifestFile(dir + "job-and-service.yaml");
  INFO(yaml.status().message());
  REQUIRE(yaml.ok());
  REQUIRE(yaml->size() == 2);
  const Json& job = yaml->at(0).object;
  CHECK(yaml->at(0).line == 2);
  CHECK(job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 2);
  CHECK(job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"] ==
        job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]);
  CHECK(job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
           ["resources"]["limits"]["cpu"] == "500m");
  CHECK(yaml->at(1).object["spec"]["ports"][0]["targetPort"] == "tb");
  CHECK(yaml->at(1).line == 28);
  CHECK(yaml->at(1).LineOf("spec.ports[0].targetPort") == 37);

  auto json = LoadManifestFile(dir + "pods-list.json");
  INFO(json.status().message());
  REQUIRE(json.ok());
  REQUIRE(json->size() == 2);
  const Manifest& a = json->at(0);
  CHECK(a.object["metadata"]["labels"]["on"] == "yes");
  CHECK(a.object["spec"]["containers"][0]["ports"][0]["containerPort"] == 8080);
  CHECK(a.object["spec"]["containers"][0]["ports"][0]["containerPort"].is_number_integer());
  CHECK(a.line == 5);
  CHECK(a.LineOf("spec.containers[0].image") == 9);
  CHECK(json->at(1).LineOf("metadata.name") == 14);
}

}  // namespace
}  // namespace pjemu::manifest
