// RegistryClient against a real registry (Debian's docker-registry, filled by skopeo from OCI
// layouts the tests write) and against fake_token_registry.py for Bearer token auth. Every
// server binds 127.0.0.1 and is stopped at the end of its test; nothing else is contacted.
#include "emulator/image/registry.h"

#include <poll.h>
#include <stdlib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "emulator/api/base64.h"
#include "emulator/api/image_reference.h"
#include "emulator/image/image_service.h"
#include "emulator/image/registry_auth.h"
#include "emulator/image/store.h"
#include "tests/image/registry_fixture.h"

namespace pjemu::image {
namespace {

using testing::BuiltImage;
using testing::BuiltLayer;
using testing::File;
using testing::LocalRegistry;
using testing::MakeLayer;
using testing::OciLayout;
using testing::TempDir;
using testing::TokenRegistry;

api::ImageReference Ref(const std::string& text) {
  auto ref = api::ParseImageReference(text);
  INFO(text);
  REQUIRE(ref.ok());
  return *ref;
}

std::shared_ptr<ImageStore> OpenStore(const TempDir& dir) {
  StoreOptions options;
  options.root = dir / "store";
  auto store = ImageStore::Open(options);
  REQUIRE(store.ok());
  return *store;
}

// No proxy may stand between the tests and their loopback servers.
void NoProxies() {
  setenv("no_proxy", "*", 1);
  setenv("NO_PROXY", "*", 1);
}

RegistryOptions Options(const std::string& arch = "amd64") {
  RegistryOptions options;
  options.platform = Platform{"linux", arch, ""};
  options.connect_timeout_ms = 5000;
  options.low_speed_seconds = 20;
  return options;
}

Keyring KeyringFor(const std::string& domain, const std::string& user, const std::string& pass) {
  Keyring keyring;
  Status s = keyring.AddDockerConfig(
      Json{{"auths", {{domain, {{"auth", api::EncodeBase64(user + ":" + pass)}}}}}}, "test");
  REQUIRE(s.ok());
  return keyring;
}

BuiltLayer BaseLayer() {
  return MakeLayer({testing::Dir("bin"), File("bin/app", "#!/bin/sh\necho base\n", 0755),
                    File("etc/os-release", "ID=pjemu\n")});
}
BuiltLayer TopLayer(const std::string& text) {
  return MakeLayer({testing::Dir("data"), File("data/message.txt", text)});
}

std::int64_t BlobBytes(const BuiltImage& image) {
  std::int64_t n = 0;
  for (const BuiltLayer& l : image.layers) n += static_cast<std::int64_t>(l.blob.size());
  return n;
}

#define REQUIRE_REGISTRY_TOOLS()                                                \
  if (!LocalRegistry::Available()) {                                            \
    WARN("docker-registry, skopeo or htpasswd missing: registry test skipped"); \
    return;                                                                     \
  }

TEST_CASE("RegistryClient: pull by tag and by digest, present layers not fetched again",
          "[registry]") {
  REQUIRE_REGISTRY_TOOLS();
  NoProxies();
  TempDir dir;
  LocalRegistry registry(dir / "registry");
  OciLayout layout(dir / "layout");
  const BuiltImage image = layout.AddImage({BaseLayer(), TopLayer("one\n")}, "amd64", "v1");
  const BuiltImage sibling = layout.AddImage({BaseLayer(), TopLayer("two\n")}, "amd64", "v2");
  REQUIRE(registry.Push(layout.dir(), "v1", "pjemu/app:v1") == "");
  REQUIRE(registry.Push(layout.dir(), "v2", "pjemu/app:v2") == "");

  auto store = OpenStore(dir);
  RegistryClient client(store, Options());
  const std::string name = registry.domain() + "/pjemu/app";
  Keyring none;

  // Given an empty store, pulling the tag fetches both layers.
  auto resolved = client.Resolve(Ref(name + ":v1"), none);
  REQUIRE(resolved.ok());
  CHECK(*resolved == image.manifest_digest);
  PullStats stats;
  auto record = client.Pull(Ref(name + ":v1"), none, &stats);
  INFO(record.status().ToString());
  REQUIRE(record.ok());
  CHECK(record->id == image.config_digest);
  CHECK(record->names == std::vector<std::string>{name + ":v1"});
  CHECK(record->repo_digests == std::vector<std::string>{name + "@" + image.manifest_digest});
  CHECK(record->manifest_digest == image.manifest_digest);
  CHECK(record->diff_ids ==
        std::vector<std::string>{image.layers[0].diff_id, image.layers[1].diff_id});
  CHECK(record->size == static_cast<std::int64_t>(image.config.size()) + BlobBytes(image));
  CHECK(record->source == "pull");
  CHECK(record->config["architecture"] == "amd64");
  CHECK(stats.layers_fetched == 2);
  CHECK(stats.bytes_fetched == BlobBytes(image));
  CHECK(store->HasBlob(image.manifest_digest));
  CHECK(store->HasBlob(image.config_digest));
  auto dirs = store->LayerDirs(*record);
  REQUIRE(dirs.ok());
  REQUIRE(dirs->size() == 2);
  CHECK(testing::ReadBytes(dirs->front() + "/data/message.txt") == "one\n");

  // Pulled again: nothing fetched.
  PullStats again;
  auto second = client.Pull(Ref(name + ":v1"), none, &again);
  REQUIRE(second.ok());
  CHECK(second->id == image.config_digest);
  CHECK(again.layers_fetched == 0);
  CHECK(again.bytes_fetched == 0);

  // By digest: the same image, nothing fetched.
  PullStats by_digest;
  auto pinned = client.Pull(Ref(name + "@" + image.manifest_digest), none, &by_digest);
  REQUIRE(pinned.ok());
  CHECK(pinned->id == image.config_digest);
  CHECK(by_digest.layers_fetched == 0);
  CHECK(store->Find(name + "@" + image.manifest_digest).has_value());

  // A sibling sharing the base layer fetches only its own top layer.
  PullStats shared;
  auto other = client.Pull(Ref(name + ":v2"), none, &shared);
  REQUIRE(other.ok());
  CHECK(other->id == sibling.config_digest);
  CHECK(shared.layers_fetched == 1);
  CHECK(shared.bytes_fetched == static_cast<std::int64_t>(sibling.layers[1].blob.size()));

  // A Docker schema 2 manifest (skopeo converts the OCI one) pulls as well.
  REQUIRE(registry.Push(layout.dir(), "v1", "pjemu/docker:v1", {"--format", "v2s2"}) == "");
  auto docker = client.Pull(Ref(registry.domain() + "/pjemu/docker:v1"), none, nullptr);
  INFO(docker.status().ToString());
  REQUIRE(docker.ok());
  CHECK(docker->diff_ids == record->diff_ids);
}

TEST_CASE("ImageService: Present, Pull and LayerDirs over the store", "[registry]") {
  REQUIRE_REGISTRY_TOOLS();
  NoProxies();
  TempDir dir;
  LocalRegistry registry(dir / "registry");
  OciLayout layout(dir / "layout");
  const BuiltImage image = layout.AddImage({BaseLayer()}, "amd64", "v1");
  REQUIRE(registry.Push(layout.dir(), "v1", "svc/app:v1") == "");
  auto store = OpenStore(dir);
  auto service = MakeImageService(store, Options());
  const std::string name = registry.domain() + "/svc/app";

  CHECK_FALSE(service->Present(Ref(name + ":v1")).has_value());
  PullStats stats;
  auto pulled = service->Pull(Ref(name + ":v1"), Keyring(), &stats);
  REQUIRE(pulled.ok());
  CHECK(stats.layers_fetched == 1);
  auto present = service->Present(Ref(name + ":v1"));
  REQUIRE(present.has_value());
  CHECK(present->id == image.config_digest);
  // The digest the tag named finds it too.
  auto by_digest = service->Present(Ref(name + "@" + image.manifest_digest));
  REQUIRE(by_digest.has_value());
  CHECK(by_digest->id == image.config_digest);
  auto dirs = service->LayerDirs(*present);
  REQUIRE(dirs.ok());
  CHECK(dirs->size() == 1);
}

TEST_CASE("RegistryClient: a manifest list resolves to the node's platform", "[registry]") {
  REQUIRE_REGISTRY_TOOLS();
  NoProxies();
  TempDir dir;
  LocalRegistry registry(dir / "registry");
  OciLayout layout(dir / "layout");
  const BuiltImage amd = layout.AddImage({BaseLayer(), TopLayer("amd64\n")}, "amd64");
  const BuiltImage arm = layout.AddImage({BaseLayer(), TopLayer("arm64\n")}, "arm64");
  const std::string index_digest = layout.AddIndex({amd, arm}, "multi");
  REQUIRE(registry.Push(layout.dir(), "multi", "pjemu/multi:1", {"--all", "--preserve-digests"}) ==
          "");
  const std::string name = registry.domain() + "/pjemu/multi";

  auto store = OpenStore(dir);
  RegistryClient amd_client(store, Options("amd64"));
  auto resolved = amd_client.Resolve(Ref(name + ":1"), Keyring());
  REQUIRE(resolved.ok());
  CHECK(*resolved == index_digest);
  auto on_amd = amd_client.Pull(Ref(name + ":1"), Keyring(), nullptr);
  INFO(on_amd.status().ToString());
  REQUIRE(on_amd.ok());
  CHECK(on_amd->id == amd.config_digest);
  CHECK(on_amd->manifest_digest == amd.manifest_digest);
  CHECK(on_amd->repo_digests == std::vector<std::string>{name + "@" + index_digest});
  CHECK(store->HasBlob(index_digest));

  TempDir other_dir;
  auto other_store = OpenStore(other_dir);
  RegistryClient arm_client(other_store, Options("arm64"));
  PullStats stats;
  auto on_arm = arm_client.Pull(Ref(name + ":1"), Keyring(), &stats);
  REQUIRE(on_arm.ok());
  CHECK(on_arm->id == arm.config_digest);
  CHECK(on_arm->config["architecture"] == "arm64");
  CHECK(stats.layers_fetched == 2);

  RegistryClient s390x(other_store, Options("s390x"));
  auto none = s390x.Pull(Ref(name + ":1"), Keyring(), nullptr);
  REQUIRE(none.status().code() == Code::kNotFound);
  CHECK_THAT(none.status().message(), Catch::Contains("no match for platform in manifest"));
}

TEST_CASE("RegistryClient: concurrent pulls of one reference share one download", "[registry]") {
  REQUIRE_REGISTRY_TOOLS();
  NoProxies();
  TempDir dir;
  LocalRegistry registry(dir / "registry");
  OciLayout layout(dir / "layout");
  // Layers big enough that the pulls overlap.
  std::string big(3 << 20, 'x');
  for (std::size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>('a' + i % 23);
  const BuiltImage image = layout.AddImage(
      {BaseLayer(), MakeLayer({File("big.bin", big)}), TopLayer("c\n")}, "amd64", "v1");
  REQUIRE(registry.Push(layout.dir(), "v1", "pjemu/concurrent:v1") == "");
  auto store = OpenStore(dir);
  RegistryClient client(store, Options());
  const api::ImageReference ref = Ref(registry.domain() + "/pjemu/concurrent:v1");

  constexpr int kThreads = 6;
  std::vector<PullStats> stats(kThreads);
  std::vector<std::string> ids(kThreads);
  std::vector<std::string> errors(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      auto r = client.Pull(ref, Keyring(), &stats[i]);
      if (r.ok()) {
        ids[i] = r->id;
      } else {
        errors[i] = r.status().ToString();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  int layers = 0;
  std::int64_t bytes = 0;
  for (int i = 0; i < kThreads; ++i) {
    INFO(errors[i]);
    CHECK(ids[i] == image.config_digest);
    layers += stats[i].layers_fetched;
    bytes += stats[i].bytes_fetched;
  }
  CHECK(layers == 3);
  CHECK(bytes == BlobBytes(image));
}

TEST_CASE("RegistryClient: an unknown repository or tag is not found", "[registry]") {
  REQUIRE_REGISTRY_TOOLS();
  NoProxies();
  TempDir dir;
  LocalRegistry registry(dir / "registry");
  auto store = OpenStore(dir);
  RegistryClient client(store, Options());
  const std::string ref = registry.domain() + "/pjemu/nope:latest";
  auto r = client.Pull(Ref(ref), Keyring(), nullptr);
  REQUIRE(r.status().code() == Code::kNotFound);
  CHECK(r.status().message() ==
        "failed to resolve reference \"" + ref + "\": " + ref + ": not found");
  auto resolved = client.Resolve(Ref(ref), Keyring());
  CHECK(resolved.status().code() == Code::kNotFound);
}

TEST_CASE("RegistryClient: htpasswd Basic auth: 401 without credentials, a pull with them",
          "[registry]") {
  REQUIRE_REGISTRY_TOOLS();
  NoProxies();
  TempDir dir;
  LocalRegistry registry(dir / "registry", "puller", "s3cret");
  OciLayout layout(dir / "layout");
  const BuiltImage image = layout.AddImage({BaseLayer(), TopLayer("secret\n")}, "amd64", "v1");
  REQUIRE(registry.Push(layout.dir(), "v1", "private/app:v1") == "");
  auto store = OpenStore(dir);
  RegistryClient client(store, Options());
  const std::string ref = registry.domain() + "/private/app:v1";

  auto anonymous = client.Pull(Ref(ref), Keyring(), nullptr);
  REQUIRE(anonymous.status().code() == Code::kUnauthorized);
  CHECK_THAT(anonymous.status().message(),
             Catch::StartsWith("failed to resolve reference \"" + ref +
                               "\": pull access denied, repository does not exist or may "
                               "require authorization: "));
  CHECK_THAT(anonymous.status().message(), Catch::EndsWith("401 Unauthorized"));

  auto wrong = client.Pull(Ref(ref), KeyringFor(registry.domain(), "puller", "nope"), nullptr);
  CHECK(wrong.status().code() == Code::kUnauthorized);

  // A keyring with a wrong entry for the host and a right one for the repository: the more
  // specific (right) one is tried first; both match.
  Keyring keyring;
  REQUIRE(keyring
              .AddDockerConfig(
                  Json{{"auths",
                        {{registry.domain(), {{"username", "puller"}, {"password", "bad"}}},
                         {registry.domain() + "/private",
                          {{"auth", api::EncodeBase64("puller:s3cret")}}}}}},
                  "test")
              .ok());
  PullStats stats;
  auto pulled = client.Pull(Ref(ref), keyring, &stats);
  INFO(pulled.status().ToString());
  REQUIRE(pulled.ok());
  CHECK(pulled->id == image.config_digest);
  CHECK(stats.layers_fetched == 2);
}

TEST_CASE("RegistryClient: PJEMU_ALLOW_REGISTRIES refuses other hosts before any connection",
          "[registry]") {
  // A listener that never accepts: a connection attempt would sit in its backlog.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(fd, 8) == 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string domain = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));

  TempDir dir;
  auto store = OpenStore(dir);
  RegistryOptions options = Options();
  options.allowed_registries = {"localhost", "registry.example.com:5000"};
  RegistryClient client(store, options);
  auto r = client.Pull(Ref(domain + "/x/y:1"), Keyring(), nullptr);
  REQUIRE(r.status().code() == Code::kForbidden);
  CHECK(r.status().message() == "registry \"" + domain +
                                    "\" is not allowed (PJEMU_ALLOW_REGISTRIES=localhost,"
                                    "registry.example.com:5000)");
  CHECK(client.Resolve(Ref("busybox"), Keyring()).status().code() == Code::kForbidden);
  pollfd p{fd, POLLIN, 0};
  CHECK(::poll(&p, 1, 100) == 0);  // nothing connected
  ::close(fd);

  // Read from the environment, host alone or host:port.
  setenv("PJEMU_ALLOW_REGISTRIES", " localhost, 127.0.0.1 ,,", 1);
  setenv("PJEMU_INSECURE_REGISTRIES", "reg.lan:5000", 1);
  RegistryOptions env = RegistryOptions::FromEnvironment();
  unsetenv("PJEMU_ALLOW_REGISTRIES");
  unsetenv("PJEMU_INSECURE_REGISTRIES");
  CHECK(env.allowed_registries == std::vector<std::string>{"localhost", "127.0.0.1"});
  CHECK(env.insecure_registries == std::vector<std::string>{"reg.lan:5000"});
  RegistryClient allowed(store, env);
  auto refused = allowed.Pull(Ref(domain + "/x/y:1"), Keyring(), nullptr);
  CHECK(refused.status().code() != Code::kForbidden);  // allowed; the closed port refuses
  CHECK(allowed.Pull(Ref("docker.io/library/busybox:1"), Keyring(), nullptr).status().code() ==
        Code::kForbidden);
}

TEST_CASE("RegistryClient: a closed port is kUnavailable in Go's words", "[registry]") {
  NoProxies();
  TempDir dir;
  auto store = OpenStore(dir);
  RegistryClient client(store, Options());
  const int port = testing::FreePort();
  const std::string domain = "127.0.0.1:" + std::to_string(port);
  auto r = client.Pull(Ref(domain + "/x:1"), Keyring(), nullptr);
  REQUIRE(r.status().code() == Code::kUnavailable);
  CHECK(r.status().message() ==
        "failed to resolve reference \"" + domain + "/x:1\": failed to do request: Head \"http://" +
            domain + "/v2/x/manifests/1\": dial tcp " + domain + ": connect: connection refused");
}

TEST_CASE("RegistryClient: Bearer token auth, cached, Authorization never follows a redirect",
          "[registry]") {
  if (!TokenRegistry::Available()) {
    WARN("/usr/bin/python3 missing: token registry test skipped");
    return;
  }
  NoProxies();
  TempDir dir;
  TokenRegistry registry(dir / "fake", "robot", "t0ken");
  OciLayout layout(dir / "layout");
  const BuiltImage image = layout.AddImage({BaseLayer(), TopLayer("token\n")}, "amd64");
  registry.AddImage(image, "1");
  auto store = OpenStore(dir);
  RegistryClient client(store, Options());
  const std::string ref = registry.domain() + "/team/app:1";

  // Anonymous: the token server refuses.
  auto anonymous = client.Pull(Ref(ref), Keyring(), nullptr);
  REQUIRE(anonymous.status().code() == Code::kUnauthorized);
  CHECK_THAT(anonymous.status().message(),
             Catch::Contains("failed to authorize: failed to fetch anonymous token: unexpected "
                             "status from GET request to http://" +
                             registry.domain() + "/token?"));
  CHECK_THAT(anonymous.status().message(),
             Catch::Contains("401 Unauthorized: unauthorized: bad credentials"));

  const Keyring keyring = KeyringFor(registry.domain(), "robot", "t0ken");
  PullStats stats;
  auto pulled = client.Pull(Ref(ref), keyring, &stats);
  INFO(pulled.status().ToString());
  REQUIRE(pulled.ok());
  CHECK(pulled->id == image.config_digest);
  CHECK(stats.layers_fetched == 2);
  Json counters = registry.Stats();
  INFO(counters.dump());
  CHECK(counters["token_requests"] == 2);  // the refused anonymous one, then one for the pull
  CHECK(counters["token_scopes"].back() ==
        "service=fake-registry&scope=repository%3Ateam%2Fapp%3Apull");
  CHECK(counters["cdn_requests"] == 3);  // config and two layers, redirected
  CHECK(counters["cdn_auth_headers"] == 0);

  // Pulled again with the cached token: no new token request.
  auto again = client.Pull(Ref(ref), keyring, nullptr);
  REQUIRE(again.ok());
  CHECK(registry.Stats()["token_requests"] == 2);

  // A registry that throttles: kUnavailable with its message.
  auto throttled = client.Pull(Ref(registry.domain() + "/toomany:1"), keyring, nullptr);
  REQUIRE(throttled.status().code() == Code::kUnavailable);
  CHECK_THAT(throttled.status().message(),
             Catch::EndsWith("429 Too Many Requests: toomanyrequests: slow down"));
}

TEST_CASE("RegistryClient: schema 1, a corrupt blob and an unknown blob are refused",
          "[registry]") {
  if (!TokenRegistry::Available()) {
    WARN("/usr/bin/python3 missing: token registry test skipped");
    return;
  }
  NoProxies();
  TempDir dir;
  TokenRegistry registry(dir / "fake", "", "");
  auto store = OpenStore(dir);
  RegistryClient client(store, Options());

  registry.AddManifest("old", R"({"schemaVersion":1,"name":"team/app","tag":"old",)"
                              R"("fsLayers":[],"history":[]})");
  auto old = client.Pull(Ref(registry.domain() + "/team/app:old"), Keyring(), nullptr);
  REQUIRE(old.status().code() == Code::kInvalid);
  CHECK(old.status().message() ==
        "not implemented: media type \"application/vnd.docker.distribution.manifest.v1+prettyjws\""
        " is no longer supported since containerd v2.1, please rebuild the image as "
        "\"application/vnd.docker.distribution.manifest.v2+json\" or "
        "\"application/vnd.oci.image.manifest.v1+json\"");

  // A manifest over max_manifest_bytes.
  OciLayout small(dir / "small");
  registry.AddImage(small.AddImage({TopLayer("big manifest\n")}, "amd64"), "big");
  RegistryOptions tight = Options();
  tight.max_manifest_bytes = 64;
  RegistryClient tight_client(store, tight);
  auto big = tight_client.Pull(Ref(registry.domain() + "/team/app:big"), Keyring(), nullptr);
  REQUIRE(big.status().code() == Code::kInvalid);
  CHECK_THAT(big.status().message(), Catch::Contains("is larger than 64 bytes"));

  // A layer whose bytes are not what its digest says (same size).
  OciLayout layout(dir / "layout");
  const BuiltImage image = layout.AddImage({BaseLayer(), TopLayer("corrupt\n")}, "amd64");
  registry.AddImage(image, "corrupt");
  std::string bad = image.layers[1].blob;
  bad[bad.size() / 2] ^= 0x5a;
  registry.AddBlob(image.layers[1].digest, bad);
  auto corrupt = client.Pull(Ref(registry.domain() + "/team/app:corrupt"), Keyring(), nullptr);
  REQUIRE(corrupt.status().code() == Code::kInvalid);
  CHECK_THAT(corrupt.status().message(),
             Catch::StartsWith("digest mismatch: expected " + image.layers[1].digest + ", got "));
  CHECK_FALSE(store->Find(registry.domain() + "/team/app:corrupt").has_value());

  // A manifest naming a blob the registry does not have.
  const BuiltImage missing = layout.AddImage({TopLayer("missing\n")}, "amd64");
  registry.AddManifest("missing", missing.manifest);
  registry.AddBlob(missing.config_digest, missing.config);
  auto absent = client.Pull(Ref(registry.domain() + "/team/app:missing"), Keyring(), nullptr);
  REQUIRE(absent.status().code() == Code::kNotFound);
  CHECK_THAT(absent.status().message(),
             Catch::Contains("/v2/team/app/blobs/" + missing.layers[0].digest + " not found"));
}

TEST_CASE("registry_auth: WWW-Authenticate challenges and registry error bodies", "[registry]") {
  auto challenges = registry_auth::ParseChallenges(
      {R"(Bearer realm="https://auth.example.com/token",service="registry.example.com",)"
       R"(scope="repository:a/b:pull,push",error="insufficient_scope")",
       R"(Basic realm="pjemu \"q\"", Bearer realm=r2)"});
  REQUIRE(challenges.size() == 3);
  CHECK(challenges[0].scheme == "bearer");
  CHECK(challenges[0].params["realm"] == "https://auth.example.com/token");
  CHECK(challenges[0].params["service"] == "registry.example.com");
  CHECK(challenges[0].params["scope"] == "repository:a/b:pull,push");
  CHECK(challenges[0].params["error"] == "insufficient_scope");
  CHECK(challenges[1].scheme == "basic");
  CHECK(challenges[1].params["realm"] == "pjemu \"q\"");
  CHECK(challenges[2].scheme == "bearer");
  CHECK(challenges[2].params["realm"] == "r2");
  CHECK(registry_auth::ParseChallenges({""}).empty());

  CHECK(registry_auth::ServerMessage(
            R"({"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown",)"
            R"("detail":{"Tag":"x"}},{"code":"DENIED","message":"no"}]})") ==
        "manifest_unknown: manifest unknown; denied: no");
  CHECK(registry_auth::ServerMessage("<html>502</html>").empty());
  CHECK(registry_auth::ServerMessage("").empty());
}

}  // namespace
}  // namespace pjemu::image
