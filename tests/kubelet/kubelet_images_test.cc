// The kubelet's image step over an image service (the CRI's ImageService): a container from
// the store runs in its image's own root with its config applied; the pull policies; Pulling,
// Pulled, ErrImagePull, ImagePullBackOff, ErrImageNeverPull and InvalidImageName as the kubelet
// reports them. The service is a fake here (tests/image covers the store and the registry).
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "emulator/image/image_service.h"
#include "emulator/process/sandbox.h"
#include "tests/kubelet/node_fixture.h"

namespace pjemu::kubelet {
namespace {

namespace fs = std::filesystem;

// A one-layer image of Debian's static busybox, made on disk as a store would keep it.
struct BusyboxLayer {
  BusyboxLayer() {
    dir = std::string(PJEMU_BINARY_DIR) + "/test-image-layer-" + std::to_string(getpid());
    fs::remove_all(dir);
    fs::create_directories(dir + "/bin");
    fs::create_directories(dir + "/etc");
    fs::copy_file("/bin/busybox", dir + "/bin/busybox");
    for (const char* applet : {"sh", "cat", "id", "pwd", "echo", "ls"}) {
      fs::create_symlink("busybox", dir + "/bin/" + applet);
    }
    std::ofstream(dir + "/etc/passwd") << "root:x:0:0:root:/root:/bin/sh\n"
                                          "app:x:1000:1000:app:/home/app:/bin/sh\n";
    std::ofstream(dir + "/etc/group") << "root:x:0:\napp:x:1000:\nstaff:x:50:app\n";
    std::ofstream(dir + "/etc/marker") << "from-the-image\n";
  }
  ~BusyboxLayer() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string dir;
};

image::ImageRecord Record(const std::string& name, const std::string& user = "") {
  image::ImageRecord r;
  r.id = "sha256:" + std::string(64, 'a');
  r.names = {name};
  r.repo_digests = {name.substr(0, name.rfind(':')) + "@sha256:" + std::string(64, 'b')};
  r.size = 1234567;
  r.source = "pull";
  r.config = {{"os", "linux"},
              {"architecture", "amd64"},
              {"config",
               {{"Env", {"PATH=/bin", "GREETING=hello-from-image"}},
                {"Cmd", {"sh", "-c", "echo default-cmd"}},
                {"WorkingDir", "/work"},
                {"User", user}}}};
  return r;
}

class FakeImages final : public image::ImageService {
 public:
  std::optional<image::ImageRecord> Present(const api::ImageReference& ref) override {
    std::lock_guard<std::mutex> lock(mu);
    auto it = present.find(ref.String());
    if (it == present.end()) return std::nullopt;
    return it->second;
  }
  Result<image::ImageRecord> Pull(const api::ImageReference& ref, const image::Keyring&,
                                  image::PullStats*) override {
    std::lock_guard<std::mutex> lock(mu);
    ++pulls;
    auto it = registry.find(ref.String());
    if (it == registry.end()) {
      return Status(Code::kNotFound, "failed to resolve reference \"" + ref.String() + "\": " +
                                         ref.String() + ": not found");
    }
    present[ref.String()] = it->second;
    return it->second;
  }
  Result<std::vector<std::string>> LayerDirs(const image::ImageRecord&) override {
    return std::vector<std::string>{layer};
  }
  std::mutex mu;
  std::map<std::string, image::ImageRecord> present, registry;
  std::atomic<int> pulls{0};
  std::string layer;
};

struct ImageNode {
  explicit ImageNode(FakeImages& images, bool sandbox = false) {
    opts.image_service = &images;
    if (sandbox) opts.sandbox = KubeletOptions::Sandbox::kOn;
  }
  KubeletOptions opts;
};

Json ImagePod(const std::string& name, const std::string& image, const std::string& policy = "",
              Json command = nullptr) {
  Json c = {{"name", "c"}, {"image", image}};
  if (!policy.empty()) c["imagePullPolicy"] = policy;
  if (!command.is_null()) c["command"] = command;
  return TestPod(name, {c});
}

std::string Waiting(NodeFixture& f, const std::string& pod) {
  Json s = f.Status(pod, "c");
  if (s.is_null() || !s["state"].contains("waiting")) return "";
  return s["state"]["waiting"].value("reason", "");
}

std::vector<std::string> Messages(NodeFixture& f, const std::string& pod) {
  std::vector<std::string> out;
  auto list = f.client->List(api::Events(), "");
  for (const Json& e : (*list)["items"]) {
    if (e["involvedObject"].value("name", "") == pod) {
      out.push_back(e.value("reason", "") + ": " + e.value("message", ""));
    }
  }
  return out;
}

bool Has(const std::vector<std::string>& list, const std::string& prefix) {
  return std::any_of(list.begin(), list.end(),
                     [&](const std::string& s) { return s.rfind(prefix, 0) == 0; });
}

TEST_CASE("a container from the image store runs in its image's own root, config applied",
          "[kubelet][images]") {
  Status available = process::SandboxAvailable();
  if (!available.ok()) {
    WARN("skipped: " << available.message());
    return;
  }
  BusyboxLayer layer;
  FakeImages images;
  images.layer = layer.dir;
  images.present["pjemu.test/busybox:1.36"] = Record("pjemu.test/busybox:1.36", "app:staff");
  ImageNode node(images, /*sandbox=*/true);
  NodeFixture f(node.opts, "kubelet-images");
  f.Create(ImagePod("img", "pjemu.test/busybox:1.36", "",
                    Json{"sh", "-c",
                         "cat /etc/marker; id -u; id -g; id -G; pwd; echo $HOME $GREETING; "
                         "ls /usr/bin/python3 2>&1 || true"}));
  f.Create(ImagePod("cmd", "pjemu.test/busybox:1.36"));  // the image's Cmd
  REQUIRE(f.WaitPhase("img", "Succeeded", 20s));
  REQUIRE(f.WaitPhase("cmd", "Succeeded", 20s));
  std::string out = ReadFile(f.kubelet->Find({"default", "img", "", false})->path);
  CHECK(out.find("from-the-image") != std::string::npos);
  CHECK(out.find(" 1000\n") != std::string::npos);                 // id -u: the image's User
  CHECK(out.find(" 50\n") != std::string::npos);                   // id -g: its group
  CHECK(out.find("/work\n") != std::string::npos);                 // the image's WorkingDir
  CHECK(out.find("/home/app hello-from-image") != std::string::npos);  // HOME, the image's Env
  CHECK(out.find("No such file") != std::string::npos);           // the host's files are not there
  CHECK(ReadFile(f.kubelet->Find({"default", "cmd", "", false})->path).find("default-cmd") !=
        std::string::npos);
  Json s = f.Status("img", "c");
  CHECK(s["image"] == "pjemu.test/busybox:1.36");
  CHECK(s["imageID"] == "pjemu.test/busybox@sha256:" + std::string(64, 'b'));
  CHECK(Has(Messages(f, "img"),
            "Pulled: Container image \"pjemu.test/busybox:1.36\" already present on machine"));
  CHECK(images.pulls == 0);  // IfNotPresent (a tag other than latest) and present
}

TEST_CASE("imagePullPolicy: Never, Always and IfNotPresent as the kubelet applies them",
          "[kubelet][images]") {
  FakeImages images;
  images.registry["pjemu.test/app:1"] = Record("pjemu.test/app:1");
  ImageNode node(images);
  NodeFixture f(node.opts, "kubelet-images-policy");
  f.Create(ImagePod("never", "pjemu.test/app:1", "Never"));
  REQUIRE(f.Wait([&] { return Waiting(f, "never") == "ErrImageNeverPull"; }));
  CHECK(f.Status("never", "c")["state"]["waiting"]["message"] ==
        "Container image \"pjemu.test/app:1\" is not present with pull policy of Never");
  CHECK(Has(Messages(f, "never"), "ErrImageNeverPull: Container image \"pjemu.test/app:1\""));
  CHECK(images.pulls == 0);

  f.Create(ImagePod("pull", "pjemu.test/app:1"));  // IfNotPresent by default, absent: pulled
  // Without the sandbox an image root cannot be made: pulled, then CreateContainerError.
  REQUIRE(f.Wait([&] { return Waiting(f, "pull") == "CreateContainerError"; }));
  auto events = Messages(f, "pull");
  CHECK(Has(events, "Pulling: Pulling image \"pjemu.test/app:1\""));
  CHECK(Has(events, "Pulled: Successfully pulled image \"pjemu.test/app:1\" in "));
  CHECK(Has(events, "Pulled: Successfully pulled image") );
  bool sized = std::any_of(events.begin(), events.end(), [](const std::string& e) {
    return e.find("including waiting). Image size: 1234567 bytes.") != std::string::npos;
  });
  CHECK(sized);
  CHECK(images.pulls == 1);

  f.Create(ImagePod("always", "pjemu.test/app:1", "Always"));  // present, pulled again
  REQUIRE(f.Wait([&] { return Waiting(f, "always") == "CreateContainerError"; }));
  CHECK(images.pulls == 2);
  CHECK(f.Get("always")["spec"]["containers"][0]["imagePullPolicy"] == "Always");
  // The API server's defaulting: latest (implied) is Always, another tag IfNotPresent.
  f.Create(ImagePod("latest", "pjemu.test/other"));
  CHECK(f.Get("latest")["spec"]["containers"][0]["imagePullPolicy"] == "Always");
  CHECK(f.Get("pull")["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent");
}

TEST_CASE("a failed pull is ErrImagePull, then ImagePullBackOff, then pulled again",
          "[kubelet][images]") {
  FakeImages images;
  ImageNode node(images);
  NodeFixture f(node.opts, "kubelet-images-backoff");  // backoff_scale 0.01: 100 ms, 200 ms, ...
  f.Create(ImagePod("missing", "pjemu.test/missing:1"));
  REQUIRE(f.Wait([&] { return Waiting(f, "missing") == "ErrImagePull"; }));
  CHECK(f.Status("missing", "c")["state"]["waiting"]["message"] ==
        "failed to resolve reference \"pjemu.test/missing:1\": pjemu.test/missing:1: not found");
  REQUIRE(f.Wait([&] { return Waiting(f, "missing") == "ImagePullBackOff"; }));
  REQUIRE(f.Wait([&] { return images.pulls >= 3; }));
  auto events = Messages(f, "missing");
  CHECK(Has(events, "Failed: Failed to pull image \"pjemu.test/missing:1\": failed to resolve"));
  CHECK(Has(events, "Failed: Error: ErrImagePull"));
  CHECK(Has(events, "BackOff: Back-off pulling image \"pjemu.test/missing:1\""));
  CHECK(Has(events, "Failed: Error: ImagePullBackOff"));
  CHECK(f.Phase("missing") == "Pending");
  // The image appears in the registry: the next try after the window pulls it.
  {
    std::lock_guard<std::mutex> lock(images.mu);
    images.registry["pjemu.test/missing:1"] = Record("pjemu.test/missing:1");
  }
  REQUIRE(f.Wait([&] { return Waiting(f, "missing") == "CreateContainerError"; }, 20s));
}

TEST_CASE("an image reference that does not parse is InvalidImageName with InspectFailed",
          "[kubelet][images]") {
  FakeImages images;
  ImageNode node(images);
  NodeFixture f(node.opts, "kubelet-images-invalid");
  f.Create(ImagePod("bad", "pjemu/Bad:1"));
  REQUIRE(f.Wait([&] { return Waiting(f, "bad") == "InvalidImageName"; }));
  CHECK(f.Status("bad", "c")["state"]["waiting"]["message"] ==
        "Failed to apply default image tag \"pjemu/Bad:1\": couldn't parse image reference "
        "\"pjemu/Bad:1\": invalid reference format: repository name (pjemu/Bad) must be "
        "lowercase");
  CHECK(Has(Messages(f, "bad"), "InspectFailed: Failed to apply default image tag"));
  CHECK(images.pulls == 0);
}

}  // namespace
}  // namespace pjemu::kubelet
