// Given the default image map, images should resolve as the issue describes; unknown and
// invalid references should fail the way the kubelet reports them.
#include "emulator/kubelet/image_map.h"

#include <catch2/catch.hpp>

namespace pjemu::kubelet {
namespace {

ImageMap DefaultMap() {
  auto map = ImageMap::Load(std::string(PJEMU_SOURCE_DIR) + "/fixtures/images.yaml");
  REQUIRE(map.ok());
  return *map;
}

const std::map<std::string, std::string> kVars = {{"PJEMU_TRAINER", "/opt/bin/pjemu-trainer"}};

TEST_CASE("image references normalize like docker's", "[kubelet]") {
  auto [input, want] = GENERATE(table<std::string, std::string>({
      {"busybox", "docker.io/library/busybox:latest"},
      {"alpine:3.10", "docker.io/library/alpine:3.10"},
      {"kubeflowkatib/pytorch-mnist:v1", "docker.io/kubeflowkatib/pytorch-mnist:v1"},
      {"localhost:5000/x/y", "localhost:5000/x/y:latest"},
      {"gcr.io/proj/img:1.0", "gcr.io/proj/img:1.0"},
  }));
  CAPTURE(input);
  auto n = NormalizeImage(input);
  REQUIRE(n.ok());
  CHECK(*n == want);
}

TEST_CASE("an invalid reference gives InvalidImageName's message", "[kubelet]") {
  for (std::string bad : {"<training image>", "<训练镜像>", "Busybox", ""}) {
    auto r = DefaultMap().Resolve(bad, {}, {}, kVars);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == "Failed to apply default image tag \"" + bad +
                                      "\": couldn't parse image reference \"" + bad +
                                      "\": invalid reference format");
  }
}

TEST_CASE("a failed Resolve names the kubelet's waiting reason", "[kubelet]") {
  ImageMap map = DefaultMap();
  CHECK(std::string(ResolveFailureReason(map.Resolve("Busybox", {}, {}, kVars).status())) ==
        "InvalidImageName");
  CHECK(std::string(ResolveFailureReason(
            map.Resolve("registry.example.com/nobody/unmapped:1", {"x"}, {}, kVars).status())) ==
        "ErrImagePull");
  // An image without an entrypoint, and a container without a command: nothing to run.
  auto bare = ImageMap::Parse("images:\n  - image: docker.io/team/bare:*\n", "bare.yaml");
  REQUIRE(bare.ok());
  auto none = bare->Resolve("team/bare:1", {}, {}, kVars);
  REQUIRE_FALSE(none.ok());
  CHECK(std::string(ResolveFailureReason(none.status())) == "CreateContainerError");
}

TEST_CASE("the reference training image is rewritten onto pjemu-trainer", "[kubelet]") {
  auto plan =
      DefaultMap().Resolve("docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727",
                           {"python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1"}, {}, kVars);
  REQUIRE(plan.ok());
  CHECK(plan->kind == ImagePlan::Kind::kExec);
  CHECK(plan->argv == std::vector<std::string>{"/opt/bin/pjemu-trainer", "--epochs=1"});
  // args only: the image's entrypoint is used, then rewritten.
  auto args_only = DefaultMap().Resolve("kubeflowkatib/pytorch-mnist:v1beta1-45c5727", {},
                                        {"--backend", "gloo"}, kVars);
  REQUIRE(args_only.ok());
  CHECK(args_only->argv == std::vector<std::string>{"/opt/bin/pjemu-trainer", "--backend", "gloo"});
  auto no_trainer = DefaultMap().Resolve("kubeflowkatib/pytorch-mnist:x", {}, {}, {});
  REQUIRE_FALSE(no_trainer.ok());
  CHECK(no_trainer.status().message().find("${PJEMU_TRAINER} is not set") != std::string::npos);
}

TEST_CASE("the operator's init container becomes the wait-for-service builtin", "[kubelet]") {
  std::vector<std::string> cmd = {
      "sh", "-c",
      "err=1;for i in $(seq 100); do if nslookup mnist-master-0; then err=0 && break; fi;echo "
      "waiting for master; sleep 2; done; exit $err"};
  auto plan = DefaultMap().Resolve("alpine:3.10", cmd, {}, kVars);
  REQUIRE(plan.ok());
  CHECK(plan->kind == ImagePlan::Kind::kWaitForService);
  CHECK(plan->service == "mnist-master-0");
  CHECK(plan->max_tries == 100);
  // Another command in the same image runs on the host.
  auto other = DefaultMap().Resolve("alpine:3.10", {"echo", "hi"}, {}, kVars);
  REQUIRE(other.ok());
  CHECK(other->kind == ImagePlan::Kind::kExec);
  CHECK(other->argv == std::vector<std::string>{"echo", "hi"});
}

TEST_CASE("base images run the command as-is, with the image's defaults", "[kubelet]") {
  auto py = DefaultMap().Resolve("python:3.11", {"python3", "train.py"}, {}, kVars);
  REQUIRE(py.ok());
  CHECK(py->argv == std::vector<std::string>{"python3", "train.py"});
  auto bb = DefaultMap().Resolve("busybox", {}, {"-c", "echo hi"}, kVars);
  REQUIRE(bb.ok());
  CHECK(bb->argv == std::vector<std::string>{"sh", "-c", "echo hi"});
}

TEST_CASE("an unmapped image is ErrImagePull with how to map it", "[kubelet]") {
  auto r = DefaultMap().Resolve("nvcr.io/nvidia/pytorch:24.01", {"python"}, {}, kVars);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kNotFound);
  CHECK(r.status().message().find("has no entry matching \"nvcr.io/nvidia/pytorch:24.01\"") !=
        std::string::npos);
  CHECK(r.status().message().find("run: host") != std::string::npos);
}

TEST_CASE("a malformed image map names the file and line", "[kubelet]") {
  auto r =
      ImageMap::Parse("images:\n  - image: a\n  - image: b\n    builtin: teleport\n", "m.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().rfind("m.yaml:3: images[1].builtin: Unsupported value", 0) == 0);
  auto bad_yaml = ImageMap::Parse("images: [\n", "m.yaml");
  REQUIRE_FALSE(bad_yaml.ok());
  CHECK(bad_yaml.status().message().rfind("m.yaml:", 0) == 0);
}

TEST_CASE("wildcards match any run and single characters", "[kubelet]") {
  CHECK(WildcardMatch("docker.io/library/python:*", "docker.io/library/python:3.11"));
  CHECK(WildcardMatch("a?c", "abc"));
  CHECK_FALSE(WildcardMatch("a?c", "abbc"));
  CHECK(WildcardMatch("*", ""));
  CHECK_FALSE(WildcardMatch("busybox", "busybox:1"));
}

}  // namespace
}  // namespace pjemu::kubelet
