#include "emulator/apiserver/pem_files.h"

#include <fstream>
#include <iterator>

namespace pjemu::apiserver {

std::string BioText(BIO* bio) {
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(size));
}

std::optional<std::string> ReadPemFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Status WritePemFile(const std::filesystem::path& path, const std::string& text,
                    std::filesystem::perms perms) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return InternalError("cannot write " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::permissions(tmp, perms, ec);
  if (ec) return InternalError("cannot set the mode of " + tmp.string() + ": " + ec.message());
  std::filesystem::rename(tmp, path, ec);
  if (ec) return InternalError("cannot rename " + tmp.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace pjemu::apiserver
