// SHA-256 through OpenSSL's EVP interface, and the digest syntax pjemu accepts.
#include "emulator/image/digest.h"

#include <openssl/evp.h>

#include <cstdio>

namespace pjemu::image {

Status CheckDigest(const std::string& text) {
  auto invalid = [&] { return Status(Code::kInvalid, "invalid digest \"" + text + "\""); };
  std::size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0) return invalid();
  std::string algorithm = text.substr(0, colon);
  if (algorithm != "sha256") {
    return Status(Code::kInvalid,
                  "invalid digest \"" + text + "\": unsupported algorithm \"" + algorithm + "\"");
  }
  std::string hex = text.substr(colon + 1);
  if (hex.size() != 64) return invalid();
  for (char c : hex) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return invalid();
  }
  return Status::Ok();
}

std::string DigestHex(const std::string& digest) {
  std::size_t colon = digest.find(':');
  return colon == std::string::npos ? digest : digest.substr(colon + 1);
}

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
  ~Impl() {
    if (ctx != nullptr) EVP_MD_CTX_free(ctx);
  }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr);
}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::Update(const void* data, std::size_t size) {
  if (size > 0) EVP_DigestUpdate(impl_->ctx, data, size);
}

std::string Sha256::Final() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(impl_->ctx, md, &length);
  static const char kHex[] = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 0xf]);
  }
  return out;
}

std::string Sha256Of(const std::string& bytes) {
  Sha256 hash;
  hash.Update(bytes.data(), bytes.size());
  return hash.Final();
}

}  // namespace pjemu::image
