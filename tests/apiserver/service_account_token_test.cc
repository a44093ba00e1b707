// Service-account tokens: the claims a bound token carries, and what the authenticator refuses
// (another key's signature, a changed payload, expiry, a foreign audience, a deleted pod).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "emulator/apiserver/service_account_token.h"
#include "emulator/store/store.h"

namespace pjemu::apiserver {
namespace {

Json ClaimsOf(const std::string& token) {
  auto first = token.find('.');
  auto second = token.find('.', first + 1);
  auto text = Base64UrlDecode(token.substr(first + 1, second - first - 1));
  REQUIRE(text);
  return Json::parse(*text);
}

api::TokenRequest PodRequest() {
  api::TokenRequest r;
  r.ns = "team";
  r.service_account = "default";
  r.service_account_uid = "sa-uid";
  r.pod = "trainer-0";
  r.pod_uid = "pod-uid";
  r.node = "pjemu-node";
  r.expiration_seconds = api::kKubeApiAccessExpirationSeconds;
  return r;
}

struct Tokens {
  FakeClock clock;
  std::unique_ptr<ServiceAccountTokens> tokens;
  Tokens() {
    auto t = ServiceAccountTokens::LoadOrCreate("", clock);
    REQUIRE(t.ok());
    tokens = std::move(*t);
  }
};

TEST_CASE("a kube-api-access token carries a bound token's claims, extended to a year",
          "[serviceaccount]") {
  Tokens t;
  auto token = t.tokens->Issue(PodRequest());
  REQUIRE(token.ok());
  auto header = Json::parse(*Base64UrlDecode(token->substr(0, token->find('.'))));
  CHECK(header["alg"] == "ES256");
  CHECK(header["kid"] == t.tokens->key_id());
  Json c = ClaimsOf(*token);
  const std::int64_t now = FakeClock::kEpochSeconds;
  CHECK(c["iss"] == "https://kubernetes.default.svc.cluster.local");
  CHECK(c["aud"] == Json::array({"https://kubernetes.default.svc.cluster.local"}));
  CHECK(c["sub"] == "system:serviceaccount:team:default");
  CHECK(c["iat"] == now);
  CHECK(c["nbf"] == now);
  CHECK(c["exp"] == now + 365 * 24 * 3600);
  CHECK(c["kubernetes.io"]["warnafter"] == now + 3607);
  CHECK(c["kubernetes.io"]["namespace"] == "team");
  CHECK(c["kubernetes.io"]["pod"] == Json({{"name", "trainer-0"}, {"uid", "pod-uid"}}));
  CHECK(c["kubernetes.io"]["serviceaccount"] == Json({{"name", "default"}, {"uid", "sa-uid"}}));
  CHECK(c["kubernetes.io"]["node"]["name"] == "pjemu-node");
  CHECK(c["jti"].get<std::string>().size() == 36);

  auto claims = t.tokens->Verify(*token);
  REQUIRE(claims.ok());
  CHECK(claims->Subject() == "system:serviceaccount:team:default");
  CHECK(claims->pod_uid == "pod-uid");
}

TEST_CASE("a token with its own audience and lifetime is not extended", "[serviceaccount]") {
  Tokens t;
  api::TokenRequest r = PodRequest();
  r.expiration_seconds = 7200;
  auto token = t.tokens->Issue(r);
  REQUIRE(token.ok());
  Json c = ClaimsOf(*token);
  CHECK(c["exp"] == FakeClock::kEpochSeconds + 7200);
  CHECK_FALSE(c["kubernetes.io"].contains("warnafter"));
  r.expiration_seconds = 599;
  CHECK(t.tokens->Issue(r).status().message() ==
        "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 "
        "minutes");
}

TEST_CASE("expired tokens are refused after the leeway", "[serviceaccount]") {
  Tokens t;
  api::TokenRequest r = PodRequest();
  r.expiration_seconds = 600;
  auto token = t.tokens->Issue(r);
  REQUIRE(token.ok());
  t.clock.Advance(std::chrono::seconds(600 + 60));
  CHECK(t.tokens->Verify(*token).ok());  // within go-jose's minute
  t.clock.Advance(std::chrono::seconds(1));
  auto refused = t.tokens->Verify(*token);
  CHECK(refused.status().code() == Code::kUnauthorized);
  CHECK(refused.status().message() == "service account token: expired");
}

TEST_CASE("another key's signature and a changed payload are refused", "[serviceaccount]") {
  Tokens a, b;
  auto token = b.tokens->Issue(PodRequest());
  REQUIRE(token.ok());
  CHECK(a.tokens->Verify(*token).status().message() == "service account token: invalid signature");
  // The same signature over other claims (another namespace).
  auto own = a.tokens->Issue(PodRequest());
  REQUIRE(own.ok());
  Json c = ClaimsOf(*own);
  c["kubernetes.io"]["namespace"] = "kube-system";
  c["sub"] = "system:serviceaccount:kube-system:default";
  auto first = own->find('.');
  auto second = own->find('.', first + 1);
  std::string forged = own->substr(0, first + 1) + Base64UrlEncode(c.dump()) + own->substr(second);
  CHECK(a.tokens->Verify(forged).status().message() == "service account token: invalid signature");
  // alg none and garbage.
  std::string none = Base64UrlEncode(R"({"alg":"none"})") + "." + Base64UrlEncode(c.dump()) + ".";
  CHECK(a.tokens->Verify(none).status().code() == Code::kUnauthorized);
  CHECK(a.tokens->Verify("not.a.jwt!").status().code() == Code::kUnauthorized);
  CHECK(a.tokens->Verify("").status().code() == Code::kUnauthorized);
}

TEST_CASE("a token for another audience is refused by the API server", "[serviceaccount]") {
  Tokens t;
  api::TokenRequest r = PodRequest();
  r.audiences = {"vault"};
  auto token = t.tokens->Issue(r);
  REQUIRE(token.ok());
  CHECK(ClaimsOf(*token)["aud"] == Json::array({"vault"}));
  CHECK(t.tokens->Verify(*token).status().message() ==
        "service account token: token audiences do not include the API server's");
}

TEST_CASE("the authenticator needs the bound pod and service account to exist",
          "[serviceaccount]") {
  Tokens t;
  store::Store store(t.clock);
  REQUIRE(store.Create(api::Namespaces(), "", {{"metadata", {{"name", "team"}}}}).ok());
  auto sa = store.Create(api::ServiceAccounts(), "team", {{"metadata", {{"name", "default"}}}});
  REQUIRE(sa.ok());
  auto pod = store.Create(api::Pods(), "team",
                          {{"metadata", {{"name", "trainer-0"}}},
                           {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}});
  REQUIRE(pod.ok());
  api::TokenRequest r = PodRequest();
  r.service_account_uid = (*sa)["metadata"]["uid"];
  r.pod_uid = (*pod)["metadata"]["uid"];
  auto token = t.tokens->Issue(r);
  REQUIRE(token.ok());
  auto ok = AuthenticateServiceAccount(*t.tokens, store, *token);
  REQUIRE(ok.ok());
  CHECK(ok->Subject() == "system:serviceaccount:team:default");

  // A pod of the same name made again is another pod.
  REQUIRE(store.Delete(api::Pods(), "team", "trainer-0").ok());
  CHECK(AuthenticateServiceAccount(*t.tokens, store, *token).status().message() ==
        "service account token: pod team/trainer-0 no longer exists");
  REQUIRE(store.Create(api::Pods(), "team", {{"metadata", {{"name", "trainer-0"}}},
                                             {"spec", (*pod)["spec"]}})
              .ok());
  CHECK_FALSE(AuthenticateServiceAccount(*t.tokens, store, *token).ok());
  REQUIRE(store.Delete(api::ServiceAccounts(), "team", "default").ok());
  CHECK(AuthenticateServiceAccount(*t.tokens, store, *token).status().message() ==
        "service account token: service account team/default not found");
}

TEST_CASE("the signing key is kept in the pki folder", "[serviceaccount]") {
  FakeClock clock;
  auto dir = std::filesystem::temp_directory_path() / ("pjemu-sa-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto first = ServiceAccountTokens::LoadOrCreate(dir.string(), clock);
  REQUIRE(first.ok());
  struct stat st {};
  REQUIRE(::stat((dir / "sa.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(std::filesystem::exists(dir / "sa.pub"));
  auto token = (*first)->Issue(PodRequest());
  REQUIRE(token.ok());
  auto again = ServiceAccountTokens::LoadOrCreate(dir.string(), clock);
  REQUIRE(again.ok());
  CHECK((*again)->key_id() == (*first)->key_id());
  CHECK((*again)->Verify(*token).ok());  // a restart keeps the pods' tokens valid
  std::filesystem::remove(dir / "sa.key");
  CHECK(ServiceAccountTokens::LoadOrCreate(dir.string(), clock).status().message() ==
        (dir / "sa.key").string() +
            ": missing (remove sa.pub too to make a new service-account key)");
  std::filesystem::remove_all(dir);
}

TEST_CASE("base64url has no padding and refuses the standard alphabet", "[serviceaccount]") {
  CHECK(Base64UrlEncode("\xfb\xff") == "-_8");
  CHECK(Base64UrlDecode("-_8") == std::string("\xfb\xff"));
  CHECK_FALSE(Base64UrlDecode("+/8="));
}

}  // namespace
}  // namespace pjemu::apiserver
