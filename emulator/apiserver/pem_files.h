// What the server's two key owners (tls.cc: the cluster CA and the serving certificate;
// service_account_token.cc: the token signing key) share: OpenSSL objects owned by unique_ptrs,
// a memory BIO's text, and PEM files read whole and written atomically with their mode.
// Thread safety: the functions are safe from any thread; errors are Status (never exceptions).
#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "emulator/common/status.h"

namespace pjemu::apiserver {

// Frees an OpenSSL object with its own free function.
template <typename T, void (*F)(T*)>
struct OpenSslFree {
  void operator()(T* p) const { F(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslFree<EVP_PKEY, EVP_PKEY_free>>;
using BioPtr = std::unique_ptr<BIO, OpenSslFree<BIO, BIO_free_all>>;

// The bytes written to a memory BIO.
std::string BioText(BIO* bio);

// The whole file; nullopt when it cannot be read.
std::optional<std::string> ReadPemFile(const std::filesystem::path& path);

// Written beside (`<path>.tmp`), given `perms`, then renamed into place: a start killed midway
// leaves no half-written key. kInternal naming the file when a step fails.
Status WritePemFile(const std::filesystem::path& path, const std::string& text,
                    std::filesystem::perms perms);

}  // namespace pjemu::apiserver
