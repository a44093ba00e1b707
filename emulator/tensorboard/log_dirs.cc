#include "emulator/tensorboard/log_dirs.h"

#include <algorithm>
#include <filesystem>

#include "emulator/api/json_fields.h"
#include "emulator/api/persistent_volumes.h"

namespace pjemu::tensorboard {
namespace {

namespace fs = std::filesystem;
using api::Field;
using api::Str;

constexpr std::string_view kPvcScheme = "t9k://pvc/";
constexpr std::string_view kMinioScheme = "t9k://minio/";

Status Invalid(const std::string& field, const std::string& value, const std::string& why) {
  return Status(Code::kInvalid, field + ": Invalid value: \"" + value + "\": " + why);
}

bool HasDotDot(const fs::path& p) {
  for (const fs::path& part : p) {
    if (part == "..") return true;
  }
  return false;
}

Status CheckSubPath(const std::string& field, const std::string& sub) {
  if (fs::path(sub).is_absolute()) return Invalid(field, sub, "must be a relative path");
  if (HasDotDot(sub)) return Invalid(field, sub, "must not contain '..'");
  return Status::Ok();
}

Status FromFilesets(const Json& spec, std::vector<LogDirSource>& out) {
  const Json& sets = Field(spec, "trainingLogFilesets");
  if (sets.is_null()) return Status::Ok();
  if (!sets.is_array()) return Status(Code::kInvalid, "spec.trainingLogFilesets: must be a list");
  for (std::size_t i = 0; i < sets.size(); ++i) {
    std::string field = "spec.trainingLogFilesets[" + std::to_string(i) + "]";
    std::string text = sets[i].is_string() ? sets[i].get<std::string>() : sets[i].dump();
    if (text.rfind(kMinioScheme, 0) == 0) {
      return Invalid(field, text, "MinIO filesets are not supported by pjemu (no object storage)");
    }
    if (text.rfind(kPvcScheme, 0) != 0) {
      return Invalid(field, text, "must be t9k://pvc/<claim>/<sub-path>");
    }
    std::string rest = text.substr(kPvcScheme.size());
    std::string claim = rest.substr(0, rest.find('/'));
    std::string sub = claim.size() < rest.size() ? rest.substr(claim.size() + 1) : "";
    if (claim.empty()) return Invalid(field, text, "names no claim");
    RETURN_IF_ERROR(CheckSubPath(field, sub));
    out.push_back({field, text, claim, sub, ""});
  }
  return Status::Ok();
}

Status FromPvcs(const Json& pvcs, std::vector<LogDirSource>& out) {
  if (!pvcs.is_array()) return Status(Code::kInvalid, "spec.logDir.pvc: must be a list");
  for (std::size_t i = 0; i < pvcs.size(); ++i) {
    std::string field = "spec.logDir.pvc[" + std::to_string(i) + "]";
    std::string claim = Str(pvcs[i], "name");
    if (claim.empty()) return Status(Code::kInvalid, field + ".name: Required value");
    const Json& subs = Field(pvcs[i], "subPath");
    if (subs.is_null() || (subs.is_array() && subs.empty())) {
      out.push_back({field, "pvc/" + claim, claim, "", ""});
      continue;
    }
    if (!subs.is_array()) return Status(Code::kInvalid, field + ".subPath: must be a list");
    for (std::size_t j = 0; j < subs.size(); ++j) {
      std::string sub_field = field + ".subPath[" + std::to_string(j) + "]";
      if (!subs[j].is_string()) return Status(Code::kInvalid, sub_field + ": must be a string");
      std::string sub = subs[j].get<std::string>();
      RETURN_IF_ERROR(CheckSubPath(sub_field, sub));
      out.push_back({sub_field, "pvc/" + claim + "/" + sub, claim, sub, ""});
    }
  }
  return Status::Ok();
}

Status FromHostPaths(const Json& hosts, std::vector<LogDirSource>& out) {
  if (!hosts.is_array()) return Status(Code::kInvalid, "spec.logDir.hostPath: must be a list");
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    std::string field = "spec.logDir.hostPath[" + std::to_string(i) + "].path";
    std::string path = Str(hosts[i], "path");
    if (path.empty()) return Status(Code::kInvalid, field + ": Required value");
    if (!fs::path(path).is_absolute()) return Invalid(field, path, "must be an absolute path");
    if (HasDotDot(path)) return Invalid(field, path, "must not contain '..'");
    out.push_back({field, path, "", "", fs::path(path).lexically_normal().string()});
  }
  return Status::Ok();
}

bool Inside(const fs::path& path, const fs::path& root) {
  auto [r, p] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return r == root.end();
}

}  // namespace

Result<std::vector<LogDirSource>> ParseLogDirs(const Json& spec) {
  std::vector<LogDirSource> out;
  RETURN_IF_ERROR(FromFilesets(spec, out));
  const Json& log_dir = Field(spec, "logDir");
  for (const char* unsupported : {"s3", "http"}) {
    if (!Field(log_dir, unsupported).is_null()) {
      return Status(Code::kInvalid, std::string("spec.logDir.") + unsupported +
                                        ": not supported by pjemu (no object storage or web "
                                        "log sources); use logDir.pvc or logDir.hostPath");
    }
  }
  if (!Field(log_dir, "pvc").is_null()) RETURN_IF_ERROR(FromPvcs(Field(log_dir, "pvc"), out));
  if (!Field(log_dir, "hostPath").is_null()) {
    RETURN_IF_ERROR(FromHostPaths(Field(log_dir, "hostPath"), out));
  }
  if (out.empty()) {
    return Status(Code::kInvalid,
                  "spec.logDir: Required value: name a log dir (logDir.pvc, logDir.hostPath or "
                  "trainingLogFilesets)");
  }
  return out;
}

Result<std::vector<ResolvedLogDir>> ResolveLogDirs(const std::vector<LogDirSource>& sources,
                                                   const ObjectByName& claims,
                                                   const ObjectByName& volumes) {
  std::vector<ResolvedLogDir> out;
  for (const LogDirSource& s : sources) {
    if (s.claim.empty()) {
      out.push_back({s.source, s.host_path});
      continue;
    }
    const Json* claim = claims(s.claim);
    if (claim == nullptr) {
      return Status(Code::kUnavailable, "PersistentVolumeClaim \"" + s.claim + "\" not found");
    }
    std::string volume_name = Str(Field(*claim, "spec"), "volumeName");
    if (Str(Field(*claim, "status"), "phase") != "Bound" || volume_name.empty()) {
      return Status(Code::kUnavailable, "PersistentVolumeClaim \"" + s.claim + "\" is not bound");
    }
    const Json* volume = volumes(volume_name);
    if (volume == nullptr) {
      return Status(Code::kUnavailable, "PersistentVolume \"" + volume_name + "\" not found");
    }
    std::string root = api::VolumeHostPath(*volume);
    if (root.empty()) {
      return Status(Code::kInvalid, "PersistentVolume \"" + volume_name +
                                        "\" has no host folder (spec.hostPath or spec.local)");
    }
    std::error_code ec;
    fs::path real_root = fs::weakly_canonical(root, ec);
    fs::path joined = fs::path(root).lexically_normal();
    if (!s.sub_path.empty()) joined = (joined / s.sub_path).lexically_normal();
    fs::path real = fs::weakly_canonical(joined, ec);
    if (ec || !Inside(real, real_root)) {
      return Invalid(s.field, s.sub_path, "leaves the volume of claim \"" + s.claim + "\"");
    }
    out.push_back({s.source, joined.string()});
  }
  return out;
}

}  // namespace pjemu::tensorboard
