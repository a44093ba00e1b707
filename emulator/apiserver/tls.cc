#include "emulator/apiserver/tls.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "emulator/api/service_account.h"
#include "emulator/apiserver/pem_files.h"

namespace pjemu::apiserver {
namespace {

using CertPtr = std::unique_ptr<X509, OpenSslFree<X509, X509_free>>;
using NamePtr = std::unique_ptr<X509_NAME, OpenSslFree<X509_NAME, X509_NAME_free>>;

// Adds an extension in OpenSSL's config syntax; `issuer` provides the authority key id.
bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for `key` named O=`org`, CN=`cn`, valid from an hour ago for `days`, with a
// random positive serial; the issuer name, extensions and signature are the caller's.
Result<CertPtr> NewCertificate(EVP_PKEY* key, const char* cn, long days,
                               const char* org = "pjemu") {
  CertPtr cert(X509_new());
  if (!cert) return InternalError("tls: cannot allocate a certificate");
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) return InternalError("tls: no randomness");
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), days * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(org),
                             -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  return cert;
}

Result<TlsMaterial> ToPem(X509* cert, EVP_PKEY* key) {
  BioPtr cert_bio(BIO_new(BIO_s_mem()));
  BioPtr key_bio(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_X509(cert_bio.get(), cert) ||
      !PEM_write_bio_PrivateKey(key_bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr)) {
    return InternalError("tls: cannot write PEM");
  }
  return TlsMaterial{BioText(cert_bio.get()), BioText(key_bio.get())};
}

Result<CertPtr> ParseCertificate(const std::string& pem, const std::string& what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return Status(Code::kInvalid, what + ": not a PEM certificate");
  return cert;
}

Result<KeyPtr> ParseKey(const std::string& pem, const std::string& what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return Status(Code::kInvalid, what + ": not a PEM private key");
  return key;
}

}  // namespace

Result<TlsMaterial> GenerateCa() {
  KeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return InternalError("tls: cannot generate an EC P-256 key");
  ASSIGN_OR_RETURN(CertPtr cert, NewCertificate(key.get(), "pjemu-ca", 3650));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  if (!AddExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(cert.get(), cert.get(), NID_key_usage,
                    "critical,digitalSignature,keyCertSign,cRLSign") ||
      !AddExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash")) {
    return InternalError("tls: cannot add the CA's extensions");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    return InternalError("tls: cannot sign the CA certificate");
  }
  return ToPem(cert.get(), key.get());
}

Result<TlsMaterial> LoadOrCreateCa(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path cert_path = fs::path(dir) / "ca.crt";
  const fs::path key_path = fs::path(dir) / "ca.key";
  std::error_code ec;
  const bool has_cert = fs::exists(cert_path, ec);
  const bool has_key = fs::exists(key_path, ec);
  if (!has_cert && !has_key) {
    ASSIGN_OR_RETURN(TlsMaterial ca, GenerateCa());
    fs::create_directories(dir, ec);
    if (ec) return InternalError("tls: cannot create " + dir + ": " + ec.message());
    fs::permissions(dir, fs::perms::owner_all, ec);
    RETURN_IF_ERROR(
        WritePemFile(key_path, ca.private_key_pem, fs::perms::owner_read | fs::perms::owner_write));
    RETURN_IF_ERROR(WritePemFile(cert_path, ca.certificate_pem,
                              fs::perms::owner_read | fs::perms::owner_write |
                                  fs::perms::group_read | fs::perms::others_read));
    return ca;
  }
  if (!has_cert || !has_key) {
    return Status(Code::kInvalid, (has_cert ? key_path : cert_path).string() +
                                      ": missing (the CA needs both ca.crt and ca.key; remove "
                                      "the other to make a new CA)");
  }
  auto cert_pem = ReadPemFile(cert_path);
  auto key_pem = ReadPemFile(key_path);
  if (!cert_pem) return Status(Code::kInvalid, cert_path.string() + ": cannot read");
  if (!key_pem) return Status(Code::kInvalid, key_path.string() + ": cannot read");
  ASSIGN_OR_RETURN(CertPtr cert, ParseCertificate(*cert_pem, cert_path.string()));
  ASSIGN_OR_RETURN(KeyPtr key, ParseKey(*key_pem, key_path.string()));
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    return Status(Code::kInvalid,
                  key_path.string() + ": does not match the certificate " + cert_path.string());
  }
  return TlsMaterial{*cert_pem, *key_pem};
}

namespace {

// A fresh key and a certificate signed by `ca` with the given extensions (nid, value).
Result<TlsMaterial> IssueCertificate(const TlsMaterial& ca, const char* cn, const char* org,
                                     const std::vector<std::pair<int, std::string>>& extensions) {
  ASSIGN_OR_RETURN(CertPtr ca_cert, ParseCertificate(ca.certificate_pem, "tls: the CA"));
  ASSIGN_OR_RETURN(KeyPtr ca_key, ParseKey(ca.private_key_pem, "tls: the CA"));
  KeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return InternalError("tls: cannot generate an EC P-256 key");
  ASSIGN_OR_RETURN(CertPtr cert, NewCertificate(key.get(), cn, 365, org));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  for (const auto& [nid, value] : extensions) {
    if (!AddExtension(cert.get(), ca_cert.get(), nid, value)) {
      return InternalError("tls: cannot add the certificate extension " + value);
    }
  }
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) {
    return InternalError("tls: cannot sign the certificate");
  }
  return ToPem(cert.get(), key.get());
}

}  // namespace

Result<TlsMaterial> IssueServingCertificate(const TlsMaterial& ca, const std::string& host) {
  // Pods with a network of their own reach the server at the pod network's gateway.
  std::string san = std::string("IP:127.0.0.1,DNS:localhost,IP:") + api::kPodNetworkGateway;
  if (!host.empty() && host != "127.0.0.1" && host != "localhost") {
    bool is_ip = host.find_first_not_of("0123456789.:abcdefABCDEF") == std::string::npos &&
                 host.find_first_of(".:") != std::string::npos;
    san += std::string(is_ip ? ",IP:" : ",DNS:") + host;
  }
  return IssueCertificate(ca, "pjemu-apiserver", "pjemu",
                          {{NID_subject_alt_name, san},
                           {NID_basic_constraints, "critical,CA:FALSE"},
                           {NID_key_usage, "critical,digitalSignature"},
                           {NID_ext_key_usage, "serverAuth"},
                           {NID_authority_key_identifier, "keyid:always"}});
}

Result<TlsMaterial> IssueClientCertificate(const TlsMaterial& ca, const std::string& cn,
                                           const std::string& org) {
  return IssueCertificate(ca, cn.c_str(), org.c_str(),
                          {{NID_basic_constraints, "critical,CA:FALSE"},
                           {NID_key_usage, "critical,digitalSignature"},
                           {NID_ext_key_usage, "clientAuth"},
                           {NID_authority_key_identifier, "keyid:always"}});
}

}  // namespace pjemu::apiserver
