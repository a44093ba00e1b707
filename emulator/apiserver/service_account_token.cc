#include "emulator/apiserver/service_account_token.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>

#include "emulator/api/base64.h"
#include "emulator/api/json_fields.h"
#include "emulator/apiserver/pem_files.h"

namespace pjemu::apiserver {
namespace {

using api::Str;

using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, OpenSslFree<EVP_MD_CTX, EVP_MD_CTX_free>>;
using SigPtr = std::unique_ptr<ECDSA_SIG, OpenSslFree<ECDSA_SIG, ECDSA_SIG_free>>;

constexpr std::int64_t kLeewaySeconds = 60;  // go-jose's DefaultLeeway, as kube-apiserver uses
constexpr int kCoordinateBytes = 32;         // P-256

Result<KeyPtr> ParsePrivateKey(const std::string& pem, const std::string& what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key || EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_EC || EVP_PKEY_get_bits(key.get()) != 256) {
    return Status(Code::kInvalid, what + ": not a PEM EC P-256 private key");
  }
  return key;
}

std::string PrivatePem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  return BioText(bio.get());
}

std::string PublicPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PUBKEY(bio.get(), key);
  return BioText(bio.get());
}

// kube-apiserver's keyIDFromPublicKey: base64url(SHA-256(PKIX DER of the public key)).
std::string KeyId(EVP_PKEY* key) {
  unsigned char* der = nullptr;
  int n = i2d_PUBKEY(key, &der);
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(der, static_cast<std::size_t>(n), digest.data());
  OPENSSL_free(der);
  return Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

std::string RandomId() {  // a version 4 UUID, as jti
  unsigned char b[16];
  RAND_bytes(b, sizeof b);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 15];
  }
  return out;
}

std::int64_t UnixSeconds(Time t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

Json NameUid(const std::string& name, const std::string& uid) {
  return {{"name", name}, {"uid", uid}};
}

Json ClaimsJson(const api::TokenClaims& c) {
  Json k8s = {{"namespace", c.ns},
              {"serviceaccount", NameUid(c.service_account, c.service_account_uid)}};
  if (!c.pod.empty()) k8s["pod"] = NameUid(c.pod, c.pod_uid);
  if (!c.node.empty()) k8s["node"] = NameUid(c.node, c.node_uid);
  if (c.warn_after != 0) k8s["warnafter"] = c.warn_after;
  return {{"aud", c.audiences},   {"exp", c.expires_at}, {"iat", c.issued_at},
          {"iss", c.issuer},      {"jti", c.id},         {"kubernetes.io", k8s},
          {"nbf", c.issued_at},   {"sub", c.Subject()}};
}

Status Unauthorized(const std::string& why) {
  return Status(Code::kUnauthorized, "service account token: " + why);
}

std::int64_t Int(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

Result<api::TokenClaims> ClaimsFrom(const Json& j) {
  if (!j.is_object()) return Unauthorized("claims are not an object");
  api::TokenClaims c;
  c.issuer = Str(j, "iss");
  if (auto aud = j.find("aud"); aud != j.end()) {
    if (aud->is_string()) c.audiences.push_back(*aud);
    if (aud->is_array()) {
      for (const Json& a : *aud) {
        if (a.is_string()) c.audiences.push_back(a);
      }
    }
  }
  c.issued_at = Int(j, "iat");
  c.expires_at = Int(j, "exp");
  c.id = Str(j, "jti");
  Json k8s = j.value("kubernetes.io", Json::object());
  if (!k8s.is_object()) return Unauthorized("kubernetes.io is not an object");
  c.ns = Str(k8s, "namespace");
  Json sa = k8s.value("serviceaccount", Json::object());
  Json pod = k8s.value("pod", Json::object());
  Json node = k8s.value("node", Json::object());
  if (!sa.is_object() || !pod.is_object() || !node.is_object()) {
    return Unauthorized("kubernetes.io has a malformed reference");
  }
  c.service_account = Str(sa, "name");
  c.service_account_uid = Str(sa, "uid");
  c.pod = Str(pod, "name");
  c.pod_uid = Str(pod, "uid");
  c.node = Str(node, "name");
  c.node_uid = Str(node, "uid");
  c.warn_after = Int(k8s, "warnafter");
  if (c.ns.empty() || c.service_account.empty()) return Unauthorized("no service account");
  if (Str(j, "sub") != c.Subject()) return Unauthorized("sub does not name the service account");
  if (Int(j, "nbf") != 0 && Int(j, "nbf") > c.issued_at) c.issued_at = Int(j, "nbf");
  return c;
}

}  // namespace

std::string Base64UrlEncode(std::string_view bytes) {
  std::string s = api::EncodeBase64(bytes);
  while (!s.empty() && s.back() == '=') s.pop_back();
  std::replace(s.begin(), s.end(), '+', '-');
  std::replace(s.begin(), s.end(), '/', '_');
  return s;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  std::string s(text);
  if (s.find_first_of("+/=") != std::string::npos) return std::nullopt;
  std::replace(s.begin(), s.end(), '-', '+');
  std::replace(s.begin(), s.end(), '_', '/');
  if (s.size() % 4 == 1) return std::nullopt;
  while (s.size() % 4 != 0) s.push_back('=');
  return api::DecodeBase64(s);
}

struct ServiceAccountTokens::Key {
  KeyPtr pkey;
};

ServiceAccountTokens::ServiceAccountTokens(std::unique_ptr<Key> key, const Clock& clock)
    : key_(std::move(key)), clock_(clock), key_id_(KeyId(key_->pkey.get())) {}

ServiceAccountTokens::~ServiceAccountTokens() = default;

Result<std::unique_ptr<ServiceAccountTokens>> ServiceAccountTokens::FromPrivateKey(
    const std::string& pem, const Clock& clock) {
  ASSIGN_OR_RETURN(KeyPtr pkey, ParsePrivateKey(pem, "service account key"));
  auto key = std::make_unique<Key>();
  key->pkey = std::move(pkey);
  return std::unique_ptr<ServiceAccountTokens>(new ServiceAccountTokens(std::move(key), clock));
}

Result<std::unique_ptr<ServiceAccountTokens>> ServiceAccountTokens::LoadOrCreate(
    const std::string& dir, const Clock& clock) {
  namespace fs = std::filesystem;
  if (dir.empty()) {
    KeyPtr pkey(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
    if (!pkey) return InternalError("cannot generate the service account key");
    return FromPrivateKey(PrivatePem(pkey.get()), clock);
  }
  const fs::path key_path = fs::path(dir) / "sa.key";
  const fs::path pub_path = fs::path(dir) / "sa.pub";
  std::error_code ec;
  const bool has_key = fs::exists(key_path, ec);
  const bool has_pub = fs::exists(pub_path, ec);
  if (!has_key && !has_pub) {
    KeyPtr pkey(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
    if (!pkey) return InternalError("cannot generate the service account key");
    fs::create_directories(dir, ec);
    if (ec) return InternalError("cannot create " + dir + ": " + ec.message());
    fs::permissions(dir, fs::perms::owner_all, ec);
    const std::string pem = PrivatePem(pkey.get());
    RETURN_IF_ERROR(WritePemFile(key_path, pem, fs::perms::owner_read | fs::perms::owner_write));
    RETURN_IF_ERROR(WritePemFile(pub_path, PublicPem(pkey.get()),
                              fs::perms::owner_read | fs::perms::owner_write |
                                  fs::perms::group_read | fs::perms::others_read));
    return FromPrivateKey(pem, clock);
  }
  if (!has_key) {
    return Status(Code::kInvalid, key_path.string() +
                                      ": missing (remove sa.pub too to make a new "
                                      "service-account key)");
  }
  auto pem = ReadPemFile(key_path);
  if (!pem) return Status(Code::kInvalid, key_path.string() + ": cannot read");
  ASSIGN_OR_RETURN(KeyPtr pkey, ParsePrivateKey(*pem, key_path.string()));
  if (!has_pub) {
    RETURN_IF_ERROR(WritePemFile(pub_path, PublicPem(pkey.get()),
                              fs::perms::owner_read | fs::perms::owner_write |
                                  fs::perms::group_read | fs::perms::others_read));
  }
  return FromPrivateKey(*pem, clock);
}

Result<std::string> ServiceAccountTokens::Issue(const api::TokenRequest& r) {
  if (r.expiration_seconds < api::kMinTokenExpirationSeconds) {
    return Status(Code::kInvalid,
                  "spec.expirationSeconds: Invalid value: " + std::to_string(r.expiration_seconds) +
                      ": may not specify a duration less than 10 minutes");
  }
  api::TokenClaims c;
  c.issuer = api::kServiceAccountIssuer;
  c.audiences = r.audiences.empty() ? std::vector<std::string>{api::kServiceAccountIssuer}
                                    : r.audiences;
  c.ns = r.ns;
  c.service_account = r.service_account;
  c.service_account_uid = r.service_account_uid;
  c.pod = r.pod;
  c.pod_uid = r.pod_uid;
  c.node = r.node;
  c.node_uid = r.node_uid;
  c.id = RandomId();
  c.issued_at = UnixSeconds(clock_.Now());
  c.expires_at = c.issued_at + r.expiration_seconds;
  const bool own_audience =
      c.audiences.size() == 1 && c.audiences[0] == api::kServiceAccountIssuer;
  if (r.expiration_seconds == api::kKubeApiAccessExpirationSeconds && own_audience) {
    c.warn_after = c.expires_at;
    c.expires_at = c.issued_at + api::kExtendedExpirationSeconds;
  }
  Json header = {{"alg", "ES256"}, {"kid", key_id_}};
  std::string input = Base64UrlEncode(header.dump()) + "." + Base64UrlEncode(ClaimsJson(c).dump());
  MdCtxPtr ctx(EVP_MD_CTX_new());
  std::size_t der_len = 0;
  if (EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_->pkey.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &der_len,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    return InternalError("cannot sign the service account token");
  }
  std::string der(der_len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(der.data()), &der_len,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    return InternalError("cannot sign the service account token");
  }
  // JWS wants R || S, each 32 bytes; OpenSSL gives a DER ECDSA-Sig-Value.
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  SigPtr sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der_len)));
  if (!sig) return InternalError("cannot encode the service account token's signature");
  std::string raw(2 * kCoordinateBytes, '\0');
  auto* out = reinterpret_cast<unsigned char*>(raw.data());
  BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), out, kCoordinateBytes);
  BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), out + kCoordinateBytes, kCoordinateBytes);
  return input + "." + Base64UrlEncode(raw);
}

Result<api::TokenClaims> ServiceAccountTokens::Verify(std::string_view token) const {
  const std::size_t a = token.find('.');
  const std::size_t b = a == std::string_view::npos ? a : token.find('.', a + 1);
  if (b == std::string_view::npos || token.find('.', b + 1) != std::string_view::npos) {
    return Unauthorized("not a compact JWS");
  }
  auto header_text = Base64UrlDecode(token.substr(0, a));
  auto claims_text = Base64UrlDecode(token.substr(a + 1, b - a - 1));
  auto raw = Base64UrlDecode(token.substr(b + 1));
  if (!header_text || !claims_text || !raw) return Unauthorized("bad base64url");
  Json header = Json::parse(*header_text, nullptr, false);
  if (!header.is_object() || Str(header, "alg") != "ES256") return Unauthorized("not ES256");
  if (raw->size() != 2 * kCoordinateBytes) return Unauthorized("bad signature length");
  SigPtr sig(ECDSA_SIG_new());
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw->data());
  ECDSA_SIG_set0(sig.get(), BN_bin2bn(bytes, kCoordinateBytes, nullptr),
                 BN_bin2bn(bytes + kCoordinateBytes, kCoordinateBytes, nullptr));
  unsigned char* der = nullptr;
  int der_len = i2d_ECDSA_SIG(sig.get(), &der);
  std::string_view input = token.substr(0, b);
  MdCtxPtr ctx(EVP_MD_CTX_new());
  bool good = der_len > 0 &&
              EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_->pkey.get()) ==
                  1 &&
              EVP_DigestVerify(ctx.get(), der, static_cast<std::size_t>(der_len),
                               reinterpret_cast<const unsigned char*>(input.data()),
                               input.size()) == 1;
  OPENSSL_free(der);
  if (!good) return Unauthorized("invalid signature");
  Json claims = Json::parse(*claims_text, nullptr, false);
  ASSIGN_OR_RETURN(api::TokenClaims c, ClaimsFrom(claims));
  if (c.issuer != api::kServiceAccountIssuer) return Unauthorized("unknown issuer " + c.issuer);
  if (std::find(c.audiences.begin(), c.audiences.end(), api::kServiceAccountIssuer) ==
      c.audiences.end()) {
    return Unauthorized("token audiences do not include the API server's");
  }
  const std::int64_t now = UnixSeconds(clock_.Now());
  if (c.expires_at == 0 || now > c.expires_at + kLeewaySeconds) return Unauthorized("expired");
  if (now + kLeewaySeconds < c.issued_at) return Unauthorized("not valid yet");
  return c;
}

Result<api::TokenClaims> AuthenticateServiceAccount(const ServiceAccountTokens& tokens,
                                                    const store::Store& store,
                                                    std::string_view token) {
  ASSIGN_OR_RETURN(api::TokenClaims claims, tokens.Verify(token));
  auto uid_of = [](const Json& o) { return o["metadata"].value("uid", ""); };
  auto sa = store.GetShared(api::ServiceAccounts(), claims.ns, claims.service_account);
  if (!sa.ok()) return Unauthorized("service account " + claims.ns + "/" + claims.service_account + " not found");
  if (!claims.service_account_uid.empty() && uid_of(**sa) != claims.service_account_uid) {
    return Unauthorized("service account uid does not match");
  }
  if (claims.pod.empty()) return claims;
  auto pod = store.GetShared(api::Pods(), claims.ns, claims.pod);
  if (!pod.ok() || uid_of(**pod) != claims.pod_uid) {
    return Unauthorized("pod " + claims.ns + "/" + claims.pod + " no longer exists");
  }
  return claims;
}

}  // namespace pjemu::apiserver
