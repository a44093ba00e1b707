// The seed manifests (fixtures/seeds, copied from the seed documents) load into the objects
// the documents describe.
#include <catch2/catch.hpp>

#include "emulator/manifest/manifest.h"

namespace pjemu::manifest {
namespace {

Manifest LoadSeed(const std::string& name) {
  auto r = LoadManifestFile(std::string(PJEMU_SOURCE_DIR) + "/fixtures/seeds/" + name);
  INFO(r.status().message());
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  return r->at(0);
}

TEST_CASE("the mnist nccl seeds load as a 1 Master + 1 Worker PyTorchJob", "[manifest]") {
  auto [file, image] = GENERATE(table<std::string, std::string>({
      {"pytorch_job_mnist_nccl.yaml", "<training image>"},
      {"pytorch_job_mnist_nccl.zh.yaml", "<训练镜像>"},
  }));
  CAPTURE(file);
  Manifest m = LoadSeed(file);
  const Json& o = m.object;
  CHECK(o["apiVersion"] == "kubeflow.org/v1");
  CHECK(o["kind"] == "PyTorchJob");
  CHECK(o["metadata"]["name"] == "pytorch-dist-mnist-nccl");
  CHECK_FALSE(o["metadata"].contains("namespace"));
  for (const char* type : {"Master", "Worker"}) {
    CAPTURE(type);
    const Json& spec = o["spec"]["pytorchReplicaSpecs"][type];
    CHECK(spec["replicas"] == 1);
    CHECK(spec["restartPolicy"] == "OnFailure");
    CHECK(spec["template"]["metadata"]["annotations"]["sidecar.istio.io/inject"] == "false");
    const Json& c = spec["template"]["spec"]["containers"][0];
    CHECK(c["name"] == "pytorch");
    CHECK(c["image"] == image);
    CHECK(c["args"] == Json{"--backend", "nccl"});
    CHECK(c["resources"]["limits"]["nvidia.com/gpu"] == 1);
  }
  CHECK(m.LineOf("spec.pytorchReplicaSpecs.Worker.replicas") == 23);
}

TEST_CASE("the pytorch-simple seed loads into namespace kubeflow", "[manifest]") {
  Manifest m = LoadSeed("pytorch-simple.yaml");
  const Json& o = m.object;
  CHECK(o["kind"] == "PyTorchJob");
  CHECK(o["metadata"]["name"] == "pytorch-simple");
  CHECK(o["metadata"]["namespace"] == "kubeflow");
  for (const char* type : {"Master", "Worker"}) {
    const Json& spec = o["spec"]["pytorchReplicaSpecs"][type];
    CHECK(spec["replicas"] == 1);
    const Json& c = spec["template"]["spec"]["containers"][0];
    CHECK(c["image"] == "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727");
    CHECK(c["imagePullPolicy"] == "Always");
    CHECK(c["command"] == Json{"python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1"});
  }
}

TEST_CASE("the exported pytorch-simple keeps strings that look like other types", "[manifest]") {
  Manifest m = LoadSeed("pytorch-simple.exported.yaml");
  const Json& o = m.object;
  CHECK(o["metadata"]["resourceVersion"] == "53223");
  CHECK(o["metadata"]["generation"] == 1);
  CHECK(o["metadata"]["creationTimestamp"] == "2024-06-21T04:41:27Z");
  const Json& conditions = o["status"]["conditions"];
  REQUIRE(conditions.size() == 3);
  CHECK(conditions[2]["type"] == "Succeeded");
  CHECK(conditions[2]["status"] == "True");
  CHECK(o["status"]["replicaStatuses"]["Worker"]["succeeded"] == 1);
  CHECK(m.LineOf("status.conditions[2].type") == 58);
}

}  // namespace
}  // namespace pjemu::manifest
