#include "emulator/kubelet/volumes.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "emulator/api/base64.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/persistent_volumes.h"
#include "emulator/api/pod_resources.h"
#include "emulator/api/resource_quantity.h"
#include "emulator/common/strings.h"

namespace pjemu::kubelet {
namespace fs = std::filesystem;
namespace {

using Payload = std::map<std::string, AtomicFile>;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The kubelet's per-kind directory names (pkg/volume/<plugin>: kubernetes.io~<name>).
const std::map<std::string, std::string>& PluginDirs() {
  static const std::map<std::string, std::string> dirs = {
      {"emptyDir", "kubernetes.io~empty-dir"},  {"configMap", "kubernetes.io~configmap"},
      {"secret", "kubernetes.io~secret"},       {"downwardAPI", "kubernetes.io~downward-api"},
      {"projected", "kubernetes.io~projected"},
  };
  return dirs;
}

std::string KindOf(const Json& volume) {
  for (const auto& [key, value] : volume.items()) {
    if (key != "name") return key;
  }
  return "";
}

int ModeOf(const Json& source, const char* field, int fallback) {
  return source.contains(field) && source[field].is_number_integer() ? source[field].get<int>()
                                                                     : fallback;
}

// A ConfigMap's or Secret's keys -> bytes (Secret data and ConfigMap binaryData are base64).
Result<std::map<std::string, std::string>> ObjectData(const Json& object, bool secret) {
  std::map<std::string, std::string> out;
  for (const char* field : {"data", "binaryData"}) {
    bool base64 = secret || std::string(field) == "binaryData";
    const Json values = object.value(field, Json::object());
    for (const auto& [key, value] : values.items()) {
      std::string text = value.is_string() ? value.get<std::string>() : value.dump();
      if (!base64) {
        out[key] = text;
        continue;
      }
      auto decoded = api::DecodeBase64(text);
      if (!decoded)
        return Status(Code::kInvalid, std::string(field) + "[" + key + "]: illegal base64 data");
      out[key] = *decoded;
    }
  }
  return out;
}

// configMap / secret source (a volume or a projected source) -> files, the kubelet's rules:
// items pick keys onto paths (a missing key is an error unless optional), else every key.
Status AddObjectFiles(const Json& source, bool secret, int default_mode,
                      const ObjectLookup& objects, Payload& out) {
  std::string name = source.value(secret ? "secretName" : "name", source.value("name", ""));
  bool optional = source.value("optional", false);
  const char* what = secret ? "secret" : "configmap";
  auto object = objects(secret ? api::Secrets() : api::ConfigMaps(), name);
  if (!object) {
    if (optional) return Status::Ok();
    return Status(Code::kUnavailable, std::string(what) + " \"" + name + "\" not found");
  }
  ASSIGN_OR_RETURN(auto data, ObjectData(*object, secret));
  int mode = ModeOf(source, "defaultMode", default_mode);
  if (!source.contains("items") || source["items"].empty()) {
    for (const auto& [key, value] : data) out[key] = {value, mode};
    return Status::Ok();
  }
  for (const Json& item : source["items"]) {
    std::string key = item.value("key", "");
    auto it = data.find(key);
    if (it == data.end()) {
      if (optional) continue;
      return Status(Code::kUnavailable,
                    std::string(what) + " references non-existent config key: " + key);
    }
    out[item.value("path", key)] = {it->second, ModeOf(item, "mode", mode)};
  }
  return Status::Ok();
}

// Go's %q for the label/annotation lines of a downwardAPI file.
std::string GoQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else
      out += c;
  }
  return out + "\"";
}

// fieldpath.FormatMap: sorted `key="value"` lines, no trailing newline.
std::string FormatMap(const Json& map) {
  std::map<std::string, std::string> sorted;
  for (const auto& [k, v] : map.items())
    sorted[k] = v.is_string() ? v.get<std::string>() : v.dump();
  std::string out;
  for (const auto& [k, v] : sorted) out += (out.empty() ? "" : "\n") + k + "=" + GoQuote(v);
  return out;
}

// A downwardAPI file's fieldRef (fieldpath.ExtractFieldPathAsString): metadata.labels and
// metadata.annotations whole as FormatMap lines; otherwise the value env would read
// (FieldRefValue), for the paths a volume offers: metadata.name, .namespace, .uid and one
// label's or annotation's value.
Result<std::string> DownwardFieldValue(const Json& pod, const std::string& path) {
  const Json& meta = api::ObjectOr(api::Field(pod, "metadata"));
  for (const char* map : {"labels", "annotations"}) {
    if (path == std::string("metadata.") + map) return FormatMap(meta.value(map, Json::object()));
  }
  const bool subscript =
      path.rfind("metadata.labels['", 0) == 0 || path.rfind("metadata.annotations['", 0) == 0;
  if (subscript || path == "metadata.name" || path == "metadata.namespace" ||
      path == "metadata.uid") {
    return FieldRefValue(pod, path);
  }
  return Status(Code::kInvalid, "fieldRef.fieldPath: Unsupported value: \"" + path + "\"");
}

// A downwardAPI file's resourceFieldRef: the named container's, as env reads it
// (ResourceFieldRefValue, node allocatable fallback included).
Result<std::string> DownwardResourceValue(const Json& pod, const Json& ref,
                                          const ObjectLookup& objects) {
  std::string container = ref.value("containerName", "");
  for (const Json& c : api::ArrayOr(api::FieldAt(pod, {"spec", "containers"}))) {
    if (c.value("name", "") == container) return ResourceFieldRefValue(pod, c, ref, objects);
  }
  return Status(Code::kInvalid, "resourceFieldRef.containerName: Not found: \"" + container + "\"");
}

Status AddDownwardFiles(const Json& pod, const Json& source, int default_mode,
                        const ObjectLookup& objects, Payload& out) {
  int mode = ModeOf(source, "defaultMode", default_mode);
  for (const Json& item : source.value("items", Json::array())) {
    Result<std::string> value =
        Status(Code::kInvalid, "items: fieldRef or resourceFieldRef is required");
    if (item.contains("fieldRef")) {
      value = DownwardFieldValue(pod, item["fieldRef"].value("fieldPath", ""));
    } else if (item.contains("resourceFieldRef")) {
      value = DownwardResourceValue(pod, item["resourceFieldRef"], objects);
    }
    if (!value.ok()) return value.status();
    out[item.value("path", "")] = {*value, ModeOf(item, "mode", mode)};
  }
  return Status::Ok();
}

Result<Payload> AtomicPayload(const Json& pod, const std::string& kind, const Json& source,
                              const ObjectLookup& objects, const TokenFetcher* tokens) {
  Payload out;
  int mode = ModeOf(source, "defaultMode", 0644);
  if (kind == "configMap" || kind == "secret") {
    RETURN_IF_ERROR(AddObjectFiles(source, kind == "secret", mode, objects, out));
  } else if (kind == "downwardAPI") {
    RETURN_IF_ERROR(AddDownwardFiles(pod, source, mode, objects, out));
  } else {  // projected
    for (const Json& s : source.value("sources", Json::array())) {
      if (s.contains("configMap"))
        RETURN_IF_ERROR(AddObjectFiles(s["configMap"], false, mode, objects, out));
      if (s.contains("secret"))
        RETURN_IF_ERROR(AddObjectFiles(s["secret"], true, mode, objects, out));
      if (s.contains("downwardAPI"))
        RETURN_IF_ERROR(AddDownwardFiles(pod, s["downwardAPI"], mode, objects, out));
      if (s.contains("serviceAccountToken")) {
        const Json& t = s["serviceAccountToken"];
        std::string token = "pjemu-placeholder-token";  // no API server: nothing to talk to
        if (tokens != nullptr && *tokens) {
          auto issued = (*tokens)(t);
          if (!issued.ok()) {
            return Status(issued.status().code(),
                          "failed to fetch token: " + issued.status().message());
          }
          token = *issued;
        }
        out[t.value("path", "token")] = {token, mode};
      }
    }
  }
  return out;
}

// hostPath's type check (pkg/volume/hostpath: checkType), creating for the *OrCreate types.
Status CheckHostPath(const std::string& path, const std::string& type) {
  std::error_code ec;
  if (type == "DirectoryOrCreate" && !fs::exists(path, ec)) {
    fs::create_directories(path, ec);
    if (!ec) ::chmod(path.c_str(), 0755);
  }
  if (type == "FileOrCreate" && !fs::exists(path, ec)) {
    fs::create_directories(fs::path(path).parent_path(), ec);
    std::ofstream(path, std::ios::app).close();
    ::chmod(path.c_str(), 0644);
  }
  static const std::map<std::string, std::pair<fs::file_type, const char*>> kChecks = {
      {"Directory", {fs::file_type::directory, "a directory"}},
      {"DirectoryOrCreate", {fs::file_type::directory, "a directory"}},
      {"File", {fs::file_type::regular, "a file"}},
      {"FileOrCreate", {fs::file_type::regular, "a file"}},
      {"Socket", {fs::file_type::socket, "a socket file"}},
      {"CharDevice", {fs::file_type::character, "a character device"}},
      {"BlockDevice", {fs::file_type::block, "a block device"}},
  };
  if (type.empty()) return Status::Ok();
  auto it = kChecks.find(type);
  if (it == kChecks.end()) {
    return Status(Code::kInvalid, "hostPath.type: Unsupported value: \"" + type + "\"");
  }
  if (fs::status(path, ec).type() != it->second.first) {
    return Status(Code::kInvalid,
                  "hostPath type check failed: " + path + " is not " + it->second.second);
  }
  return Status::Ok();
}

Result<std::string> ClaimPath(const Json& source, const ObjectLookup& objects) {
  std::string claim = source.value("claimName", "");
  auto pvc = objects(api::PersistentVolumeClaims(), claim);
  if (!pvc) return Status(Code::kUnavailable, "persistentvolumeclaim \"" + claim + "\" not found");
  std::string pv_name = (*pvc)["spec"].value("volumeName", "");
  if (pv_name.empty() || (*pvc).value("status", Json::object()).value("phase", "") != "Bound") {
    return Status(Code::kUnavailable, "PVC " + (*pvc)["metadata"].value("namespace", "") + "/" +
                                          claim + " is not bound");
  }
  auto pv = objects(api::PersistentVolumes(), pv_name);
  if (!pv) return Status(Code::kUnavailable, "persistentvolume \"" + pv_name + "\" not found");
  std::string path = api::VolumeHostPath(*pv);
  if (path.empty()) {
    return Status(Code::kInvalid, "persistentvolume \"" + pv_name +
                                      "\" has neither spec.hostPath nor spec.local: pjemu mounts "
                                      "only host directories");
  }
  std::error_code ec;
  fs::create_directories(path, ec);  // the provisioner's helper would have made it
  return path;
}

Result<PodVolume> SetUpOne(const Json& pod, const Json& volume, const PodVolumeDirs& dirs,
                           const ObjectLookup& objects, const TokenFetcher* tokens) {
  PodVolume v;
  v.name = volume.value("name", "");
  v.kind = KindOf(volume);
  const Json& source = volume[v.kind];
  std::error_code ec;
  if (v.kind == "hostPath") {
    v.host_path = source.value("path", "");
    RETURN_IF_ERROR(CheckHostPath(v.host_path, source.value("type", "")));
    return v;
  }
  if (v.kind == "persistentVolumeClaim") {
    ASSIGN_OR_RETURN(v.host_path, ClaimPath(source, objects));
    return v;
  }
  auto plugin = PluginDirs().find(v.kind);
  if (plugin == PluginDirs().end()) {
    return Status(Code::kInvalid, "volume kind " + v.kind + " is not supported by pjemu");
  }
  v.host_path = dirs.pod + "/volumes/" + plugin->second + "/" + v.name;
  if (v.kind == "emptyDir") {
    v.memory = source.value("medium", "") == "Memory";
    if (v.memory) v.host_path = dirs.shm + "/" + v.name;
    if (source.contains("sizeLimit")) {
      ASSIGN_OR_RETURN(api::Quantity q, api::Quantity::FromJson(source["sizeLimit"]));
      v.size_limit = source["sizeLimit"].is_string() ? source["sizeLimit"].get<std::string>()
                                                     : source["sizeLimit"].dump();
      v.size_limit_bytes = q.Value();
    }
    if (!fs::exists(v.host_path, ec)) {
      fs::create_directories(v.host_path, ec);
      ::chmod(v.host_path.c_str(), 0777);  // as the kubelet makes emptyDirs
    }
    if (ec) return Status(Code::kInternal, "mkdir " + v.host_path + ": " + ec.message());
    return v;
  }
  v.atomic = true;
  ASSIGN_OR_RETURN(Payload payload, AtomicPayload(pod, v.kind, source, objects, tokens));
  RETURN_IF_ERROR(WriteAtomic(v.host_path, payload).status());
  return v;
}

// The old payload under dir/..data (regular files, recursively), for the unchanged check.
Payload CurrentPayload(const fs::path& data_dir) {
  Payload out;
  std::error_code ec;
  if (!fs::is_directory(data_dir, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(data_dir, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec || !it->is_regular_file()) continue;
    auto perms = static_cast<int>(fs::status(it->path()).permissions()) & 07777;
    out[fs::relative(it->path(), data_dir).string()] = {ReadAll(it->path()), perms};
  }
  return out;
}

std::string TimestampDirName() {
  static std::atomic<unsigned> counter{0};
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "..%Y_%m_%d_%H_%M_%S.", &tm);
  return buf + std::to_string(::getpid()) + std::to_string(counter++);
}

std::string TopName(const std::string& path) { return path.substr(0, path.find('/')); }

}  // namespace

PodVolumeDirs VolumeDirsOf(const std::string& root_dir, const Json& pod) {
  const Json& meta = pod["metadata"];
  std::string uid = meta.value("uid", "");
  // UIDs repeat between emulators started with the same seed: the node's root folder, which no
  // two running kubelets share, tells their tmpfs folders apart.
  return {root_dir + "/pods/" + meta.value("namespace", "default") + "_" + meta.value("name", "") +
              "_" + uid,
          fmt::format("/dev/shm/pjemu-{:08x}-{}", Fnv1a32(root_dir), uid)};
}

Result<PodVolume> SetUpVolume(const Json& pod, const Json& volume, const PodVolumeDirs& dirs,
                              const ObjectLookup& objects, const TokenFetcher* tokens) {
  auto v = SetUpOne(pod, volume, dirs, objects, tokens);
  if (v.ok()) return v;
  return Status(v.status().code(), "MountVolume.SetUp failed for volume \"" +
                                       volume.value("name", "") + "\" : " + v.status().message());
}

bool VolumeReferences(const Json& volume, const std::string& plural, const std::string& name) {
  bool secret = plural == "secrets";
  auto names = [&](const Json& source) {
    return source.value(secret ? "secretName" : "name", source.value("name", "")) == name;
  };
  if (volume.contains(secret ? "secret" : "configMap"))
    return names(volume[secret ? "secret" : "configMap"]);
  if (!volume.contains("projected")) return false;
  for (const Json& s : volume["projected"].value("sources", Json::array())) {
    if (s.contains(secret ? "secret" : "configMap") && names(s[secret ? "secret" : "configMap"])) {
      return true;
    }
  }
  return false;
}

void TearDownVolumes(const PodVolumeDirs& dirs) {
  std::error_code ec;
  fs::remove_all(dirs.pod + "/volumes", ec);
  fs::remove_all(dirs.shm, ec);
}

std::int64_t DirectoryUsage(const std::string& dir) {
  std::int64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      total += static_cast<std::int64_t>(st.st_blocks) * 512;  // what du counts
    }
  }
  return total;
}

Result<bool> WriteAtomic(const std::string& dir, const std::map<std::string, AtomicFile>& files) {
  for (const auto& [path, f] : files) {
    fs::path p(path);
    bool dotdot = false;
    for (const auto& part : p) dotdot |= part == ".." || part.string().rfind("..", 0) == 0;
    if (path.empty() || p.is_absolute() || dotdot) {
      return Status(Code::kInvalid, "invalid path \"" + path +
                                        "\": must be relative and may not "
                                        "contain '..'");
    }
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::path data = fs::path(dir) / "..data";
  Payload old = CurrentPayload(data);
  if (fs::is_symlink(data, ec) && old.size() == files.size()) {
    bool same = true;
    for (const auto& [path, f] : files) {
      auto it = old.find(path);
      same &= it != old.end() && it->second.data == f.data && it->second.mode == (f.mode & 07777);
    }
    if (same) return false;
  }
  std::string old_ts = fs::is_symlink(data, ec) ? fs::read_symlink(data, ec).string() : "";
  std::string ts = TimestampDirName();
  for (const auto& [path, f] : files) {
    fs::path target = fs::path(dir) / ts / path;
    fs::create_directories(target.parent_path(), ec);
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    out << f.data;
    out.close();
    if (!out) return Status(Code::kInternal, "write " + target.string() + " failed");
    ::chmod(target.c_str(), static_cast<mode_t>(f.mode & 07777));
  }
  fs::create_directories(fs::path(dir) / ts, ec);
  fs::path tmp = fs::path(dir) / "..data_tmp";
  fs::remove(tmp, ec);
  fs::create_symlink(ts, tmp, ec);
  if (ec) return Status(Code::kInternal, "symlink " + tmp.string() + ": " + ec.message());
  fs::rename(tmp, data, ec);  // the atomic swap
  if (ec) return Status(Code::kInternal, "rename " + tmp.string() + ": " + ec.message());
  std::set<std::string> names;
  for (const auto& [path, f] : files) names.insert(TopName(path));
  for (const auto& name : names) {
    fs::path link = fs::path(dir) / name;
    if (!fs::is_symlink(link, ec)) fs::create_symlink("..data/" + name, link, ec);
  }
  for (const auto& [path, f] : old) {
    if (!names.count(TopName(path))) fs::remove(fs::path(dir) / TopName(path), ec);
  }
  if (!old_ts.empty() && old_ts != ts) fs::remove_all(fs::path(dir) / old_ts, ec);
  return true;
}

}  // namespace pjemu::kubelet
