// Keyring: docker config and pull-secret parsing, and pkg/credentialprovider/keyring.go's
// matching rules (globs, ports, path prefixes, Docker Hub aliases, most specific first).
#include "emulator/image/credentials.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "emulator/api/base64.h"
#include "emulator/api/image_reference.h"
#include "tests/support/temp_dir.h"

namespace pjemu::image {
namespace {

api::ImageReference Ref(const std::string& text) {
  auto ref = api::ParseImageReference(text);
  REQUIRE(ref.ok());
  return *ref;
}

Json AuthEntry(const std::string& user, const std::string& pass) {
  return Json{{"auth", api::EncodeBase64(user + ":" + pass)}};
}

std::vector<std::string> Users(const Keyring& keyring, const std::string& image) {
  std::vector<std::string> out;
  for (const Credential& c : keyring.Lookup(Ref(image))) out.push_back(c.username);
  return out;
}

TEST_CASE("Keyring: a config.json auth decodes padded and unpadded base64", "[credentials]") {
  // Given "user:pa", whose base64 ends in "==" when padded, written both ways.
  Keyring keyring;
  REQUIRE(keyring.empty());
  Json config = {{"auths",
                  {{"padded.example.com", {{"auth", "dXNlcjpwYQ=="}}},
                   {"unpadded.example.com", {{"auth", "dXNlcjpwYQ"}}},
                   {"fields.example.com", {{"username", "u2"}, {"password", "p2"}}},
                   {"token.example.com", {{"identitytoken", "refresh-me"}}}}}};
  REQUIRE(keyring.AddDockerConfig(config, "/root/.docker/config.json").ok());
  REQUIRE_FALSE(keyring.empty());

  auto padded = keyring.Lookup(Ref("padded.example.com/app:1"));
  REQUIRE(padded.size() == 1);
  CHECK(padded[0].username == "user");
  CHECK(padded[0].password == "pa");
  CHECK(padded[0].source == "/root/.docker/config.json");
  auto unpadded = keyring.Lookup(Ref("unpadded.example.com/app:1"));
  REQUIRE(unpadded.size() == 1);
  CHECK(unpadded[0].username == "user");
  CHECK(unpadded[0].password == "pa");
  auto fields = keyring.Lookup(Ref("fields.example.com/app"));
  REQUIRE(fields.size() == 1);
  CHECK(fields[0].password == "p2");
  auto token = keyring.Lookup(Ref("token.example.com/app"));
  REQUIRE(token.size() == 1);
  CHECK(token[0].identity_token == "refresh-me");
  CHECK(keyring.Lookup(Ref("other.example.com/app")).empty());
}

TEST_CASE("Keyring: a password may contain colons", "[credentials]") {
  Keyring keyring;
  REQUIRE(keyring.AddDockerConfig({{"auths", {{"r.io", AuthEntry("u", "a:b:c")}}}}, "s").ok());
  auto creds = keyring.Lookup(Ref("r.io/x"));
  REQUIRE(creds.size() == 1);
  CHECK(creds[0].password == "a:b:c");
}

TEST_CASE("Keyring: an auth that is not base64(user:pass) is refused, naming source and key",
          "[credentials]") {
  Keyring keyring;
  Status s = keyring.AddDockerConfig(
      {{"auths", {{"r.example.com", {{"auth", api::EncodeBase64("nocolon")}}}}}}, "secret ns/x");
  REQUIRE(s.code() == Code::kInvalid);
  CHECK(s.message() ==
        "secret ns/x: entry \"r.example.com\": unable to parse auth field, must be formatted as "
        "base64(username:password)");
  CHECK(keyring.empty());

  Status bad = keyring.AddDockerConfig({{"auths", {{"r.io", {{"auth", "!!!!"}}}}}}, "f");
  REQUIRE(bad.code() == Code::kInvalid);
  CHECK_THAT(bad.message(), Catch::Contains("illegal base64 data at input byte 0"));
}

TEST_CASE("Keyring: host labels may be globs with an equal label count", "[credentials]") {
  Keyring keyring;
  REQUIRE(keyring
              .AddDockerConfig({{"auths",
                                 {{"*.example.com", AuthEntry("glob", "p")},
                                  {"reg-?.corp.io", AuthEntry("q", "p")}}}},
                               "s")
              .ok());
  CHECK(Users(keyring, "a.example.com/x/y:1") == std::vector<std::string>{"glob"});
  CHECK(Users(keyring, "b.example.com/z").size() == 1);
  CHECK(Users(keyring, "a.b.example.com/x").empty());  // three labels against two
  CHECK(Users(keyring, "example.com/x").empty());
  CHECK(Users(keyring, "reg-1.corp.io/x") == std::vector<std::string>{"q"});
  CHECK(Users(keyring, "reg-12.corp.io/x").empty());
}

TEST_CASE("Keyring: ports must be equal", "[credentials]") {
  Keyring keyring;
  REQUIRE(keyring
              .AddDockerConfig({{"auths",
                                 {{"127.0.0.1:5000", AuthEntry("five", "p")},
                                  {"localhost", AuthEntry("bare", "p")}}}},
                               "s")
              .ok());
  CHECK(Users(keyring, "127.0.0.1:5000/app:1") == std::vector<std::string>{"five"});
  CHECK(Users(keyring, "127.0.0.1:5001/app:1").empty());
  CHECK(Users(keyring, "localhost/app").size() == 1);
  CHECK(Users(keyring, "localhost:5000/app").empty());
}

TEST_CASE("Keyring: schemes and /v1/ /v2/ paths are dropped, a key path is a prefix",
          "[credentials]") {
  Keyring keyring;
  REQUIRE(keyring
              .AddDockerConfig({{"auths",
                                 {{"https://quay.io/v2/", AuthEntry("host", "p")},
                                  {"http://quay.io/coreos", AuthEntry("ns", "p")},
                                  {"quay.io/coreos/etcd", AuthEntry("repo", "p")}}}},
                               "s")
              .ok());
  // Most specific first, every match returned.
  CHECK(Users(keyring, "quay.io/coreos/etcd:v3") == std::vector<std::string>{"repo", "ns", "host"});
  CHECK(Users(keyring, "quay.io/coreos/flannel") == std::vector<std::string>{"ns", "host"});
  CHECK(Users(keyring, "quay.io/other/x") == std::vector<std::string>{"host"});
}

TEST_CASE("Keyring: Docker Hub's aliases serve docker.io images", "[credentials]") {
  for (const char* key :
       {"https://index.docker.io/v1/", "index.docker.io", "docker.io", "registry-1.docker.io"}) {
    INFO(key);
    Keyring keyring;
    REQUIRE(keyring.AddDockerConfig({{"auths", {{key, AuthEntry("hub", "p")}}}}, "s").ok());
    CHECK(Users(keyring, "busybox") == std::vector<std::string>{"hub"});
    CHECK(Users(keyring, "kubeflow/pytorch-dist-mnist:latest") == std::vector<std::string>{"hub"});
    CHECK(Users(keyring, "quay.io/busybox").empty());
  }
  // A Docker Hub key with a path is a prefix of the repository.
  Keyring scoped;
  REQUIRE(scoped.AddDockerConfig({{"auths", {{"docker.io/kubeflow", AuthEntry("kf", "p")}}}}, "s")
              .ok());
  CHECK(Users(scoped, "kubeflow/x") == std::vector<std::string>{"kf"});
  CHECK(Users(scoped, "busybox").empty());
}

Json Secret(const std::string& type, const std::string& key, const std::string& text) {
  return Json{{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"metadata", {{"name", "regcred"}, {"namespace", "team"}}},
              {"type", type},
              {"data", {{key, api::EncodeBase64(text)}}}};
}

TEST_CASE("Keyring: pull secrets of both types", "[credentials]") {
  Keyring keyring;
  const std::string config_json =
      Json{{"auths", {{"registry.example.com", AuthEntry("new", "p")}}}}.dump();
  REQUIRE(
      keyring
          .AddPullSecret(Secret("kubernetes.io/dockerconfigjson", ".dockerconfigjson", config_json))
          .ok());
  const std::string legacy = Json{{"legacy.example.com", AuthEntry("old", "p")}}.dump();
  REQUIRE(keyring.AddPullSecret(Secret("kubernetes.io/dockercfg", ".dockercfg", legacy)).ok());

  auto creds = keyring.Lookup(Ref("registry.example.com/a/b:1"));
  REQUIRE(creds.size() == 1);
  CHECK(creds[0].username == "new");
  CHECK(creds[0].source == "secret team/regcred");
  CHECK(Users(keyring, "legacy.example.com/a") == std::vector<std::string>{"old"});
}

TEST_CASE("Keyring: a pull secret of the wrong type or without its key is refused",
          "[credentials]") {
  Keyring keyring;
  Status opaque = keyring.AddPullSecret(Secret("Opaque", ".dockerconfigjson", "{}"));
  REQUIRE(opaque.code() == Code::kInvalid);
  CHECK_THAT(opaque.message(), Catch::Contains("secret team/regcred"));
  CHECK_THAT(opaque.message(), Catch::Contains("\"Opaque\""));

  Status missing = keyring.AddPullSecret(
      Secret("kubernetes.io/dockerconfigjson", ".dockercfg", "{\"auths\":{}}"));
  REQUIRE(missing.code() == Code::kInvalid);
  CHECK_THAT(missing.message(), Catch::Contains("missing key \".dockerconfigjson\""));

  Json bad_base64 = Secret("kubernetes.io/dockercfg", ".dockercfg", "{}");
  bad_base64["data"][".dockercfg"] = "%%%";
  Status b = keyring.AddPullSecret(bad_base64);
  REQUIRE(b.code() == Code::kInvalid);
  CHECK_THAT(b.message(), Catch::Contains("illegal base64 data"));

  Status not_json =
      keyring.AddPullSecret(Secret("kubernetes.io/dockerconfigjson", ".dockerconfigjson", "{x"));
  REQUIRE(not_json.code() == Code::kInvalid);
  CHECK(keyring.empty());
}

TEST_CASE("Keyring: AddUserConfig reads $DOCKER_CONFIG/config.json, nothing when absent",
          "[credentials]") {
  const pjemu::testing::TempDir tmp;
  const std::filesystem::path dir = tmp.path();
  const char* old = std::getenv("DOCKER_CONFIG");
  const std::string saved = old ? old : "";
  setenv("DOCKER_CONFIG", dir.c_str(), 1);

  Keyring absent;
  CHECK(absent.AddUserConfig().ok());
  CHECK(absent.empty());

  std::ofstream(dir / "config.json")
      << Json{{"auths", {{"ghcr.io", AuthEntry("me", "tok")}}}, {"credsStore", "desktop"}}.dump();
  Keyring keyring;
  REQUIRE(keyring.AddUserConfig().ok());
  auto creds = keyring.Lookup(Ref("ghcr.io/me/app:1"));
  REQUIRE(creds.size() == 1);
  CHECK(creds[0].source == (dir / "config.json").string());

  std::ofstream(dir / "config.json") << "{not json";
  Keyring broken;
  CHECK(broken.AddUserConfig().code() == Code::kInvalid);

  if (old) {
    setenv("DOCKER_CONFIG", saved.c_str(), 1);
  } else {
    unsetenv("DOCKER_CONFIG");
  }
}

}  // namespace
}  // namespace pjemu::image
