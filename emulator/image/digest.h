// Content digests as OCI descriptors write them ("sha256:<64 lowercase hex>"), and a streaming
// SHA-256 (OpenSSL's EVP) to compute them.
// Thread safety: Sha256 is a plain object, one thread at a time; the functions are pure.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "emulator/common/status.h"

namespace pjemu::image {

// kInvalid `invalid digest "x"` unless text is "sha256:" followed by 64 lowercase hex digits
// (the only algorithm pjemu stores; others are refused, naming it).
Status CheckDigest(const std::string& text);
// The 64 hex digits of a checked digest (its file name in the store).
std::string DigestHex(const std::string& digest);

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  void Update(const void* data, std::size_t size);
  // "sha256:<hex>"; the object may not be updated afterwards.
  std::string Final();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string Sha256Of(const std::string& bytes);

}  // namespace pjemu::image
