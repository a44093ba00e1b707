// Given manifests, CheckDocument should report what the API server's create would refuse, each
// problem with its file, line and field; LoadErrorOf should give a loader error's place back.
#include "emulator/manifest/check.h"

#include <catch2/catch.hpp>

namespace pjemu::manifest {
namespace {

Manifest Load(const std::string& text) {
  auto loaded = LoadManifestText(text, "job.yaml");
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  REQUIRE(loaded->size() == 1);
  return (*loaded)[0];
}

const char kBadMaster[] =
    "apiVersion: kubeflow.org/v1\n"
    "kind: PyTorchJob\n"
    "metadata:\n"
    "  name: bad\n"
    "spec:\n"
    "  elasticPolicy:\n"
    "    nProcPerNode: 2\n"
    "  pytorchReplicaSpecs:\n"
    "    Master:\n"
    "      replicas: 2\n"
    "      template:\n"
    "        spec:\n"
    "          containers:\n"
    "            - name: main\n"
    "              image: busybox\n";

TEST_CASE("CheckDocument: the webhook's causes at their lines, its Status and warnings",
          "[manifest]") {
  Manifest m = Load(kBadMaster);
  DocumentCheck c = CheckDocument(m);
  REQUIRE(c.type != nullptr);
  CHECK(c.type->kind == "PyTorchJob");
  CHECK(c.admission.code() == Code::kForbidden);
  CHECK(c.warnings ==
        std::vector<std::string>{
            "spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead"});
  REQUIRE(c.errors.size() == 3);
  CHECK(c.errors[0].field == "spec.pytorchReplicaSpecs[Worker]");
  CHECK(c.errors[0].line == 8);  // the nearest enclosing field that has a line
  CHECK(c.errors[1].message ==
        "spec.pytorchReplicaSpecs[Master].template.spec.containers: Required value: must have at "
        "least one container with name pytorch");
  CHECK(c.errors[1].line == 13);
  CHECK(c.errors[2].field == "spec.pytorchReplicaSpecs[Master].replicas");
  CHECK(c.errors[2].line == 10);
  CHECK(c.errors[2].file == "job.yaml");
}

TEST_CASE("CheckDocument: an unknown kind is one error at the kind's line", "[manifest]") {
  DocumentCheck c = CheckDocument(Load("apiVersion: v1\nmetadata:\n  name: x\nkind: Widget\n"));
  CHECK(c.type == nullptr);
  CHECK(c.admission.ok());
  REQUIRE(c.errors.size() == 1);
  CHECK(c.errors[0].line == 4);
  CHECK(c.errors[0].field == "kind");
  CHECK(c.errors[0].message == "no matches for kind \"Widget\" in version \"v1\"");
}

TEST_CASE("CheckDocument: kinds without admission pass", "[manifest]") {
  DocumentCheck c = CheckDocument(Load("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"));
  CHECK(c.type != nullptr);
  CHECK(c.admission.ok());
  CHECK(c.errors.empty());
}

TEST_CASE("LoadErrorOf: file and line of a syntax error, the whole text when it has none",
          "[manifest]") {
  auto bad = LoadManifestText("kind: PyTorchJob\napiVersion: [\n", "job.yaml");
  REQUIRE_FALSE(bad.ok());
  ManifestError e = LoadErrorOf(bad.status());
  CHECK(e.file == "job.yaml");
  CHECK(e.line > 0);
  CHECK(bad.status().message() == "job.yaml:" + std::to_string(e.line) + ": " + e.message);
  auto empty = LoadManifestText("", "job.yaml");
  REQUIRE_FALSE(empty.ok());
  ManifestError none = LoadErrorOf(empty.status());
  CHECK(none.line == 0);
  CHECK(none.message == empty.status().message());
}

const char kBadMount[] =
    "apiVersion: kubeflow.org/v1\n"
    "kind: PyTorchJob\n"
    "metadata:\n"
    "  name: mounts\n"
    "spec:\n"
    "  pytorchReplicaSpecs:\n"
    "    Worker:\n"
    "      replicas: 1\n"
    "      template:\n"
    "        spec:\n"
    "          containers:\n"
    "            - name: pytorch\n"
    "              image: busybox\n"
    "              volumeMounts:\n"
    "                - name: cfg\n"
    "                  mountPath: /cfg\n"
    "          volumes:\n"
    "            - name: data\n"
    "              emptyDir: {}\n";

TEST_CASE("CheckDocument: a PyTorchJob's template volumes, named by their template field",
          "[manifest]") {
  Manifest m = Load(kBadMount);
  DocumentCheck c = CheckDocument(m);
  CHECK(c.admission.code() == Code::kInvalid);
  CHECK(c.admission.message() ==
        "PyTorchJob.kubeflow.org \"mounts\" is invalid: spec.pytorchReplicaSpecs.Worker.template."
        "spec.containers[0].volumeMounts[0].name: Not found: \"cfg\"");
  REQUIRE(c.errors.size() == 1);
  CHECK(c.errors[0].line == 15);
  CHECK(c.errors[0].file == "job.yaml");
}

TEST_CASE("CheckDocument: ConfigMaps and Secrets are admitted as the API server would",
          "[manifest]") {
  Manifest ok = Load("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {a: b}\n");
  CHECK(CheckDocument(ok).admission.ok());
  Manifest bad = Load("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a/b: x\n");
  DocumentCheck c = CheckDocument(bad);
  CHECK(c.admission.code() == Code::kInvalid);
  REQUIRE(c.errors.size() == 1);
  CHECK(c.errors[0].field == "data[a/b]");
  CHECK(c.errors[0].line == 5);
}

}  // namespace
}  // namespace pjemu::manifest
