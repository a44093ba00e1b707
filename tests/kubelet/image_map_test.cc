// Given the default image map, images should resolve as the issue describes; unknown and
// invalid references should fail the way the kubelet reports them.
#include "emulator/kubelet/image_map.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.h"

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
  for (std::string bad : {"<training image>", "<训练镜像>", ""}) {
    auto r = DefaultMap().Resolve(bad, {}, {}, kVars);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == "Failed to apply default image tag \"" + bad +
                                      "\": couldn't parse image reference \"" + bad +
                                      "\": invalid reference format");
  }
  // Upper case names the repository, as distribution/reference's ParseNormalizedNamed does.
  auto upper = DefaultMap().Resolve("Busybox", {}, {}, kVars);
  REQUIRE_FALSE(upper.ok());
  CHECK(upper.status().message() ==
        "Failed to apply default image tag \"Busybox\": couldn't parse image reference "
        "\"Busybox\": invalid reference format: repository name (library/Busybox) must be "
        "lowercase");
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
  auto r = DefaultMap().Resolve("registry.example.com/team/train:1", {"python"}, {}, kVars);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kNotFound);
  CHECK(r.status().message().find("has no entry matching \"registry.example.com/team/train:1\"") !=
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

// A scratch directory with a map file and a few host files beside it.
struct MapDir {
  pjemu::testing::TempDir tmp;
  std::filesystem::path dir = tmp.path();
  MapDir() {
    std::filesystem::create_directories(dir / "src");
    std::filesystem::create_directories(dir / "maps");
    std::ofstream(dir / "src" / "train.py") << "print('hi')\n";
  }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / "maps" / name) << text;
    return (dir / "maps" / name).string();
  }
};

TEST_CASE("an unknown key names the file and line", "[kubelet]") {
  auto r = ImageMap::Parse(
      "images:\n  - image: a\n    entrypoint: [sh]\n    file:\n      /x: /tmp\n", "images.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kInvalid);
  CHECK(r.status().message() ==
        "images.yaml:4: unknown key \"file\" in image entry (known: image, entrypoint, cmd, env, "
        "files, workingDir, rewrite, builtin, pull_delay, run, prefer)");
  auto top = ImageMap::Parse("image:\n  - image: a\n", "m.yaml");
  REQUIRE_FALSE(top.ok());
  CHECK(top.status().message() == "m.yaml:1: unknown key \"image\" in image map (known: images)");
  auto rw = ImageMap::Parse("images:\n  - image: a\n    rewrite:\n      - {from: [x], too: [y]}\n",
                            "m.yaml");
  REQUIRE_FALSE(rw.ok());
  CHECK(rw.status().message() == "m.yaml:4: unknown key \"too\" in rewrite (known: from, to)");
}

TEST_CASE("files, env and workingDir describe the image and reach the plan", "[kubelet]") {
  MapDir d;
  std::string path = d.Write("user.yaml",
                             "images:\n"
                             "  - image: registry.example.com/team/train:*\n"
                             "    files:\n"
                             "      /workspace: ../src\n"
                             "      /opt/train.py: " +
                                 (d.dir / "src" / "train.py").string() +
                                 "\n"
                                 "    env: {PYTHONPATH: /workspace, A: \"1\"}\n"
                                 "    workingDir: /workspace\n"
                                 "    entrypoint: [python3]\n");
  auto map = ImageMap::Load(path);
  REQUIRE(map.ok());
  auto plan = map->Resolve("registry.example.com/team/train:v2", {}, {"train.py"}, kVars);
  REQUIRE(plan.ok());
  CHECK(plan->argv == std::vector<std::string>{"python3", "train.py"});
  CHECK(plan->files == ImagePairs{{"/workspace", (d.dir / "src").string()},
                                  {"/opt/train.py", (d.dir / "src" / "train.py").string()}});
  CHECK(plan->env == ImagePairs{{"PYTHONPATH", "/workspace"}, {"A", "1"}});
  CHECK(plan->working_dir == "/workspace");
}

TEST_CASE("a files source that does not exist or a relative target is an error", "[kubelet]") {
  MapDir d;
  auto missing = ImageMap::Load(
      d.Write("m.yaml", "images:\n  - image: a\n    files:\n      /workspace: ../nope\n"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == (d.dir / "maps" / "m.yaml").string() +
                                          ":4: files[\"/workspace\"]: source \"../nope\" "
                                          "does not exist (" +
                                          (d.dir / "nope").string() + ")");
  auto relative = ImageMap::Load(
      d.Write("r.yaml", "images:\n  - image: a\n    files:\n      workspace: ../src\n"));
  REQUIRE_FALSE(relative.ok());
  CHECK(relative.status().message().find(":4: files[\"workspace\"]: the path inside the pod "
                                         "must be absolute") != std::string::npos);
  auto env = ImageMap::Parse("images:\n  - image: a\n    env: [A]\n", "e.yaml");
  REQUIRE_FALSE(env.ok());
  CHECK(env.status().message() == "e.yaml:2: images[0].env: must be a mapping");
}

TEST_CASE("a user's map is layered over the built-in one", "[kubelet]") {
  MapDir d;
  std::string builtin = std::string(PJEMU_SOURCE_DIR) + "/fixtures/images.yaml";
  std::string user = d.Write("user.yaml",
                             "images:\n"
                             "  - image: docker.io/library/python:*\n"
                             "    entrypoint: [/usr/bin/python3, -u]\n");
  auto map = ImageMap::LoadLayered({builtin, "", user, builtin});
  REQUIRE(map.ok());
  CHECK(map->source() == user + " over " + builtin);
  // The user's entry wins on the first-match rule...
  CHECK(map->Resolve("python:3.11", {}, {}, kVars)->argv ==
        std::vector<std::string>{"/usr/bin/python3", "-u"});
  // ...and the built-in entries still map the operator's init image.
  auto init =
      map->Resolve("alpine:3.10", {"sh", "-c", "until nslookup x-master-0; do :; done"}, {}, kVars);
  REQUIRE(init.ok());
  CHECK(init->kind == ImagePlan::Kind::kWaitForService);
  CHECK(ImageMap::LoadLayered({builtin, d.Write("bad.yaml", "images: [{image: a, x: 1}]\n")})
            .status()
            .code() == Code::kInvalid);
  CHECK(ImageMap::LoadLayered({builtin, "no/such.yaml"}).status().code() == Code::kNotFound);
}

TEST_CASE("host-python images run Debian's python3 and torchrun", "[kubelet]") {
  ImageMap map = DefaultMap();
  for (std::string image : {"python:3.11", "pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime",
                            "nvcr.io/nvidia/pytorch:24.01-py3"}) {
    CAPTURE(image);
    auto plan = map.Resolve(image, {"torchrun"}, {"train.py"}, kVars);
    REQUIRE(plan.ok());
    CHECK(plan->argv == std::vector<std::string>{"torchrun", "train.py"});
    CHECK(plan->env ==
          ImagePairs{{"PATH", "/usr/local/pjemu-python/bin:/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin"},
                     {"PET_REDIRECTS", "1"},
                     {"PET_TEE", "1"}});
    // Every Python image has `python`: a folder with python -> /usr/bin/python3 on PATH, and
    // a command starting `python` rewritten for pods without the sandbox.
    REQUIRE(plan->files.size() == 1);
    CHECK(plan->files[0].first == "/usr/local/pjemu-python/bin");
    auto python = map.Resolve(image, {"python", "-c", "pass"}, {}, kVars);
    REQUIRE(python.ok());
    CHECK(python->argv == std::vector<std::string>{"/usr/bin/python3", "-c", "pass"});
  }
}

TEST_CASE("the shipped image maps load", "[kubelet]") {
  std::string dir = std::string(PJEMU_SOURCE_DIR) + "/fixtures/image-maps";
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    CAPTURE(f.path().string());
    CHECK(ImageMap::Load(f.path().string()).ok());
  }
}

TEST_CASE("the seed-python map runs the seed's own mnist.py", "[kubelet]") {
  std::string src = std::string(PJEMU_SOURCE_DIR) + "/fixtures";
  auto map = ImageMap::LoadLayered({src + "/images.yaml", src + "/image-maps/seed-python.yaml"});
  REQUIRE(map.ok());
  auto plan = map->Resolve("docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727",
                           {"python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1"}, {}, kVars);
  REQUIRE(plan.ok());
  CHECK(plan->argv == std::vector<std::string>{"/opt/pjemu/bin/with-fashion-mnist", "python3",
                                               "/opt/pytorch-mnist/mnist.py", "--epochs=1"});
  CHECK(plan->working_dir == "/opt/pytorch-mnist");
  REQUIRE(plan->files.size() == 4);
  CHECK(plan->files[0].first == "/opt/pytorch-mnist");
  CHECK(std::filesystem::exists(plan->files[0].second + "/mnist.py"));
  CHECK(plan->files[1] == std::pair<std::string, std::string>{"/opt/data/FashionMNIST/raw",
                                                              "/usr/share/datasets/fashion-mnist"});
}

TEST_CASE("the GPU seed maps: nccl kept for a GPU each, gloo on a shared GPU", "[kubelet][gpu]") {
  std::string src = std::string(PJEMU_SOURCE_DIR) + "/fixtures";
  const std::vector<std::string> seed_args = {"--backend", "nccl"};
  for (const char* placeholder : {"<training image>", "<训练镜像>"}) {
    CAPTURE(placeholder);
    auto own =
        ImageMap::LoadLayered({src + "/images.yaml", src + "/image-maps/seed-nccl-on-gpu.yaml"});
    REQUIRE(own.ok());
    auto plan = own->Resolve(placeholder, {}, seed_args, kVars);
    REQUIRE(plan.ok());
    CHECK(plan->argv == std::vector<std::string>{kVars.at("PJEMU_TRAINER"), "--backend", "nccl"});
    auto shared = ImageMap::LoadLayered(
        {src + "/images.yaml", src + "/image-maps/seed-nccl-shared-gpu.yaml"});
    REQUIRE(shared.ok());
    plan = shared->Resolve(placeholder, {}, seed_args, kVars);
    REQUIRE(plan.ok());
    CHECK(plan->argv == std::vector<std::string>{kVars.at("PJEMU_TRAINER"), "--backend", "gloo"});
  }
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
