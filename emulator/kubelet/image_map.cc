#include "emulator/kubelet/image_map.h"

#include "emulator/api/image_reference.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace pjemu::kubelet {
namespace {

constexpr char kInvalidImagePrefix[] = "Failed to apply default image tag";

Result<std::vector<std::string>> StringList(const YAML::Node& node, const std::string& where) {
  std::vector<std::string> out;
  if (!node) return out;
  if (!node.IsSequence()) return Status(Code::kInvalid, where + ": must be a list of strings");
  for (const auto& item : node) out.push_back(item.as<std::string>());
  return out;
}

// ${NAME} from vars; kInvalid naming the variable when it is not set.
Result<std::string> SubstituteVars(const std::string& text,
                                   const std::map<std::string, std::string>& vars) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t open = text.find("${", i);
    if (open == std::string::npos) break;
    std::size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    out += text.substr(i, open - i);
    std::string name = text.substr(open + 2, close - open - 2);
    auto it = vars.find(name);
    if (it == vars.end() || it->second.empty()) {
      return Status(Code::kInvalid, "${" + name + "} is not set (KubeletOptions::image_vars)");
    }
    out += it->second;
    i = close + 1;
  }
  return out + text.substr(i);
}

std::string At(const std::string& source, const YAML::Node& node) {
  return source + ":" + std::to_string(node.Mark().line + 1);
}

// kInvalid `<file>:<line>: unknown key "x" in <what> (known: a, b)` for the first key of a
// mapping that is not in known.
template <typename Keys>
Status CheckKeys(const YAML::Node& node, const Keys& known, const std::string& source,
                 const std::string& what) {
  if (!node.IsMap()) return Status::Ok();
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    if (std::find(std::begin(known), std::end(known), key) != std::end(known)) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    return Status(Code::kInvalid, At(source, kv.first) + ": unknown key \"" + key + "\" in " +
                                      what + " (known: " + list + ")");
  }
  return Status::Ok();
}

Result<ImagePairs> StringMap(const YAML::Node& node, const std::string& where) {
  ImagePairs out;
  if (!node) return out;
  if (!node.IsMap()) return Status(Code::kInvalid, where + ": must be a mapping");
  for (const auto& kv : node) {
    if (!kv.second.IsScalar()) return Status(Code::kInvalid, where + ": values must be strings");
    out.emplace_back(kv.first.as<std::string>(), kv.second.as<std::string>());
  }
  return out;
}

// files: absolute targets; sources relative to the map file's directory, which must exist.
Result<ImagePairs> Files(const YAML::Node& node, const std::string& source,
                         const std::string& where) {
  namespace fs = std::filesystem;
  ASSIGN_OR_RETURN(ImagePairs files, StringMap(node, where + ".files"));
  fs::path dir = fs::path(source).parent_path();
  std::size_t i = 0;
  for (const auto& kv : node) {
    auto& [target, from] = files[i++];
    std::string at = At(source, kv.first) + ": files[\"" + target + "\"]";
    if (target.empty() || target[0] != '/') {
      return Status(Code::kInvalid, at + ": the path inside the pod must be absolute");
    }
    fs::path host = fs::path(from).is_absolute() ? fs::path(from) : dir / from;
    std::error_code ec;
    host = fs::absolute(host, ec).lexically_normal();
    if (from.empty() || !fs::exists(host, ec)) {
      return Status(Code::kInvalid,
                    at + ": source \"" + from + "\" does not exist (" + host.string() + ")");
    }
    from = host.string();
    if (from.size() > 1 && from.back() == '/') from.pop_back();
  }
  return files;
}

Status ParseRun(const YAML::Node& node, const std::string& where, ImageEntry& e) {
  if (node["builtin"]) {
    std::string b = node["builtin"].as<std::string>();
    if (b != "wait-for-service") {
      return Status(Code::kInvalid, where + ".builtin: Unsupported value: \"" + b +
                                        "\": supported values: \"wait-for-service\"");
    }
    e.wait_for_service = true;
  }
  if (node["run"] && node["run"].as<std::string>() != "host") {
    return Status(Code::kInvalid, where + ".run: Unsupported value: \"" +
                                      node["run"].as<std::string>() +
                                      "\": supported values: \"host\"");
  }
  if (node["prefer"]) {
    if (node["prefer"].as<std::string>() != "store") {
      return Status(Code::kInvalid, where + ".prefer: Unsupported value: \"" +
                                        node["prefer"].as<std::string>() +
                                        "\": supported values: \"store\"");
    }
    e.prefer_store = true;
  }
  if (node["pull_delay"]) {
    auto d = ParseDuration(node["pull_delay"].as<std::string>());
    if (!d) return Status(Code::kInvalid, where + ".pull_delay: not a duration such as 2s");
    e.pull_delay = *d;
  }
  return Status::Ok();
}

Status ParseRewrites(const YAML::Node& rw, const std::string& source, const std::string& where,
                     ImageEntry& e) {
  static const char* kRewriteKeys[] = {"from", "to"};
  if (rw && !rw.IsSequence()) return Status(Code::kInvalid, where + ".rewrite: must be a list");
  for (std::size_t i = 0; rw && i < rw.size(); ++i) {
    std::string w = where + ".rewrite[" + std::to_string(i) + "]";
    RETURN_IF_ERROR(CheckKeys(rw[i], kRewriteKeys, source, "rewrite"));
    ImageRewrite r;
    ASSIGN_OR_RETURN(r.from, StringList(rw[i]["from"], w + ".from"));
    ASSIGN_OR_RETURN(r.to, StringList(rw[i]["to"], w + ".to"));
    if (r.from.empty()) return Status(Code::kInvalid, w + ".from: Required value");
    e.rewrites.push_back(std::move(r));
  }
  return Status::Ok();
}

Result<ImageEntry> ParseEntry(const YAML::Node& node, const std::string& source,
                              const std::string& where) {
  ImageEntry e;
  e.source = source;
  e.line = node.Mark().line + 1;
  if (!node.IsMap() || !node["image"])
    return Status(Code::kInvalid, where + ": an entry needs `image:`");
  RETURN_IF_ERROR(CheckKeys(node, kKnownEntryKeys, source, "image entry"));
  e.pattern = node["image"].as<std::string>();
  ASSIGN_OR_RETURN(e.entrypoint, StringList(node["entrypoint"], where + ".entrypoint"));
  ASSIGN_OR_RETURN(e.cmd, StringList(node["cmd"], where + ".cmd"));
  ASSIGN_OR_RETURN(e.env, StringMap(node["env"], where + ".env"));
  ASSIGN_OR_RETURN(e.files, Files(node["files"], source, where));
  if (node["workingDir"]) {
    e.working_dir = node["workingDir"].as<std::string>();
    if (e.working_dir.empty() || e.working_dir[0] != '/') {
      return Status(Code::kInvalid, where + ".workingDir: must be an absolute path");
    }
  }
  RETURN_IF_ERROR(ParseRun(node, where, e));
  RETURN_IF_ERROR(ParseRewrites(node["rewrite"], source, where, e));
  return e;
}

}  // namespace

Result<std::string> NormalizeImage(const std::string& image) {
  auto ref = api::ParseImageReference(image);
  if (!ref.ok()) {
    return Status(Code::kInvalid, api::InvalidImageNameMessage(image, ref.status().message()));
  }
  return ref->String();
}

bool WildcardMatch(const std::string& p, const std::string& t) {
  std::size_t pi = 0, ti = 0, star = std::string::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi, ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++, mark = ti;
    } else if (star != std::string::npos) {
      pi = star + 1, ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

Result<ImageMap> ImageMap::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(Code::kNotFound, "image map " + path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return Parse(ss.str(), path);
}

Result<ImageMap> ImageMap::Parse(const std::string& text, const std::string& source) {
  ImageMap map;
  map.source_ = source;
  try {
    YAML::Node root = YAML::Load(text);
    static const char* kTopKeys[] = {"images"};
    RETURN_IF_ERROR(CheckKeys(root, kTopKeys, source, "image map"));
    YAML::Node images = root["images"];
    if (!images || !images.IsSequence()) {
      return Status(Code::kInvalid, source + ":1: expected a top-level `images:` list");
    }
    for (std::size_t i = 0; i < images.size(); ++i) {
      std::string where = source + ":" + std::to_string(images[i].Mark().line + 1) + ": images[" +
                          std::to_string(i) + "]";
      ASSIGN_OR_RETURN(ImageEntry e, ParseEntry(images[i], source, where));
      map.entries_.push_back(std::move(e));
    }
  } catch (const YAML::Exception& e) {
    return Status(Code::kInvalid, source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return map;
}

Result<ImageMap> ImageMap::LoadLayered(const std::vector<std::string>& paths) {
  ImageMap out;
  std::set<std::string> seen;
  for (const std::string& path : paths) {
    if (path.empty()) continue;
    std::error_code ec;
    std::string key = std::filesystem::weakly_canonical(path, ec).string();
    if (!seen.insert(ec ? path : key).second) continue;
    ASSIGN_OR_RETURN(ImageMap layer, Load(path));
    out.entries_.insert(out.entries_.begin(), layer.entries_.begin(), layer.entries_.end());
    out.source_ = out.source_.empty() ? path : path + " over " + out.source_;
  }
  return out;
}

const ImageEntry* ImageMap::Match(const std::string& image) const {
  // An entry spelling the reference exactly maps it even when it does not parse, so that an
  // image map can point a manifest's placeholder ("<training image>") at a local program.
  for (const auto& e : entries_) {
    if (e.pattern == image) return &e;
  }
  auto normalized = NormalizeImage(image);
  if (!normalized.ok()) return nullptr;
  for (const auto& e : entries_) {
    if (WildcardMatch(e.pattern, image) || WildcardMatch(e.pattern, *normalized)) return &e;
  }
  return nullptr;
}

Result<ImagePlan> ImageMap::Resolve(const std::string& image,
                                    const std::vector<std::string>& command,
                                    const std::vector<std::string>& args,
                                    const std::map<std::string, std::string>& vars) const {
  const ImageEntry* entry = Match(image);
  if (!entry) {
    ASSIGN_OR_RETURN(std::string normalized, NormalizeImage(image));
    return Status(Code::kNotFound,
                  "failed to pull image \"" + image +
                      "\": pjemu runs images as local programs and " + source_ +
                      " has no entry matching \"" + normalized + "\"; add one, e.g. `- {image: \"" +
                      normalized +
                      "\", run: host}` to run the container's command with the host's programs, "
                      "or a `rewrite:` onto a local program");
  }
  return PlanFor(*entry, image, command, args, vars);
}

Result<ImagePlan> ImageMap::PlanFor(const ImageEntry& e, const std::string& image,
                                    const std::vector<std::string>& command,
                                    const std::vector<std::string>& args,
                                    const std::map<std::string, std::string>& vars) const {
  const ImageEntry* entry = &e;
  auto parsed = NormalizeImage(image);
  std::string normalized = parsed.ok() ? *parsed : image;
  ImagePlan plan;
  plan.route = "image map " + entry->source + ":" + std::to_string(entry->line);
  plan.normalized = normalized;
  plan.pull_delay = entry->pull_delay;
  plan.files = entry->files;
  plan.env = entry->env;
  plan.working_dir = entry->working_dir;
  std::vector<std::string> argv = command.empty() ? entry->entrypoint : command;
  const std::vector<std::string>& tail = !args.empty() ? args : command.empty() ? entry->cmd : args;
  argv.insert(argv.end(), tail.begin(), tail.end());
  if (entry->wait_for_service) {
    std::string joined;
    for (const auto& a : argv) joined += a + " ";
    static const std::regex lookup(R"(nslookup\s+([A-Za-z0-9._-]+))");
    static const std::regex tries(R"(seq\s+([0-9]+))");
    std::smatch m;
    if (std::regex_search(joined, m, lookup)) {
      plan.kind = ImagePlan::Kind::kWaitForService;
      plan.service = m[1].str();
      if (std::regex_search(joined, m, tries)) plan.max_tries = std::stoi(m[1].str());
      return plan;
    }
  }
  for (const auto& rw : entry->rewrites) {
    if (argv.size() < rw.from.size() || !std::equal(rw.from.begin(), rw.from.end(), argv.begin())) {
      continue;
    }
    std::vector<std::string> out;
    for (const auto& t : rw.to) {
      auto v = SubstituteVars(t, vars);
      if (!v.ok()) {
        return v.status().WithContext(entry->source + ":" + std::to_string(entry->line) +
                                      ": image \"" + entry->pattern + "\"");
      }
      out.push_back(*v);
    }
    out.insert(out.end(), argv.begin() + rw.from.size(), argv.end());
    argv = std::move(out);
    break;
  }
  if (argv.empty()) {
    return Status(Code::kInvalid, "no command specified: image \"" + image +
                                      "\" has no "
                                      "entrypoint in " +
                                      entry->source + " and the container sets no command");
  }
  plan.argv = std::move(argv);
  return plan;
}

const char* ResolveFailureReason(const Status& resolve_error) {
  if (resolve_error.message().rfind(kInvalidImagePrefix, 0) == 0) return "InvalidImageName";
  if (resolve_error.code() == Code::kNotFound) return "ErrImagePull";
  return "CreateContainerError";
}

}  // namespace pjemu::kubelet
