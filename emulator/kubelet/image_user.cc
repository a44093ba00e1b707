#include "emulator/kubelet/image_user.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "emulator/api/json_fields.h"

namespace pjemu::kubelet {
namespace {

// The topmost layer's copy of `path` (relative, e.g. "etc/passwd"): a whiteout (a character
// device 0/0) hides the lower ones; "" when no layer has it.
std::string ReadFromLayers(const std::vector<std::string>& layers, const std::string& path) {
  for (const std::string& layer : layers) {
    struct stat st {};
    const std::string full = layer + "/" + path;
    if (lstat(full.c_str(), &st) != 0) continue;
    if (!S_ISREG(st.st_mode)) return "";
    std::ifstream in(full);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  return "";
}

std::vector<std::vector<std::string>> Rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::size_t start = 0;
    while (true) {
      std::size_t colon = line.find(':', start);
      fields.push_back(line.substr(start, colon - start));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    rows.push_back(std::move(fields));
  }
  return rows;
}

std::optional<unsigned> Number(const std::string& s) {
  if (s.empty() || s.size() > 10 || !std::all_of(s.begin(), s.end(), ::isdigit)) return {};
  unsigned long v = std::stoul(s);
  if (v > 0xFFFFFFFFul) return {};
  return static_cast<unsigned>(v);
}

std::optional<std::int64_t> SecurityInt(const Json& pod, const Json& container, const char* key) {
  for (const Json* obj : {&container, &api::Field(pod, "spec")}) {
    const Json& sc = api::ObjectOr(api::Field(*obj, "securityContext"));
    if (sc.contains(key) && sc[key].is_number_integer()) return sc[key].get<std::int64_t>();
  }
  return {};
}

}  // namespace

Result<ImageUser> ResolveImageUser(const std::vector<std::string>& layers,
                                   const std::string& image_user, const Json& pod,
                                   const Json& container) {
  const auto passwd = Rows(ReadFromLayers(layers, "etc/passwd"));
  const auto group = Rows(ReadFromLayers(layers, "etc/group"));
  std::string user = image_user, grp;
  if (auto colon = user.find(':'); colon != std::string::npos) {
    grp = user.substr(colon + 1);
    user = user.substr(0, colon);
  }
  if (auto run_as = SecurityInt(pod, container, "runAsUser")) user = std::to_string(*run_as);
  ImageUser out;
  out.identity.set = true;
  out.home = "/";
  std::string name;
  std::optional<unsigned> uid = user.empty() ? std::optional<unsigned>(0) : Number(user);
  std::optional<unsigned> gid;
  for (const auto& row : passwd) {
    if (row.size() < 6) continue;
    bool match = uid ? Number(row[2]) == uid : row[0] == user;
    if (!match) continue;
    name = row[0];
    uid = Number(row[2]);
    gid = Number(row[3]);
    out.home = row[5].empty() ? "/" : row[5];
    break;
  }
  if (!uid) {
    return Status(Code::kInvalid,
                  "unable to find user " + user + ": no matching entries in passwd file");
  }
  if (!grp.empty()) {
    gid = Number(grp);
    for (const auto& row : group) {
      if (!gid && row.size() >= 3 && row[0] == grp) gid = Number(row[2]);
    }
    if (!gid) {
      return Status(Code::kInvalid,
                    "unable to find group " + grp + ": no matching entries in group file");
    }
  }
  if (auto run_as = SecurityInt(pod, container, "runAsGroup")) gid = static_cast<unsigned>(*run_as);
  out.identity.uid = *uid;
  out.identity.gid = gid.value_or(0);
  for (const auto& row : group) {  // the user's supplementary groups
    if (row.size() < 4 || name.empty()) continue;
    std::istringstream members(row[3]);
    std::string m;
    while (std::getline(members, m, ',')) {
      auto g = Number(row[2]);
      if (m == name && g && *g != out.identity.gid) out.identity.groups.push_back(*g);
    }
  }
  const Json& psc = api::FieldAt(pod, {"spec", "securityContext"});
  for (const Json& g : api::ArrayOr(api::Field(psc, "supplementalGroups"))) {
    if (g.is_number_integer()) out.identity.groups.push_back(g.get<unsigned>());
  }
  return out;
}

}  // namespace pjemu::kubelet
