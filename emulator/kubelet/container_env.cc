#include "emulator/kubelet/container_env.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "emulator/api/base64.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/resource_quantity.h"

namespace pjemu::kubelet {
namespace {

// metadata.labels['key'] -> key; "" when path is not of that shape.
std::string SubscriptKey(const std::string& path, const std::string& prefix) {
  if (path.rfind(prefix + "['", 0) != 0 || path.size() < prefix.size() + 4) return "";
  if (path.substr(path.size() - 2) != "']") return "";
  return path.substr(prefix.size() + 2, path.size() - prefix.size() - 4);
}

std::string JoinIPs(const Json& status, const char* plural, const char* single) {
  std::string out;
  for (const Json& ip : status.value(plural, Json::array())) {
    if (!ip.is_object()) continue;
    out += (out.empty() ? "" : ",") + ip.value("ip", "");
  }
  return out.empty() ? status.value(single, "") : out;
}

}  // namespace

Result<std::string> FieldRefValue(const Json& pod, const std::string& path) {
  const Json& meta = api::ObjectOr(api::Field(pod, "metadata"));  // read in place, not copied
  const Json& spec = api::ObjectOr(api::Field(pod, "spec"));
  const Json& status = api::ObjectOr(api::Field(pod, "status"));
  if (path == "metadata.name") return meta.value("name", "");
  if (path == "metadata.namespace") return meta.value("namespace", "");
  if (path == "metadata.uid") return meta.value("uid", "");
  if (path == "spec.nodeName") return spec.value("nodeName", "");
  if (path == "spec.serviceAccountName") return spec.value("serviceAccountName", "default");
  if (path == "status.hostIP") return status.value("hostIP", "");
  if (path == "status.podIP") return status.value("podIP", "");
  // The plural forms list every address, comma-separated (podFieldSelectorRuntimeValue).
  if (path == "status.podIPs") return JoinIPs(status, "podIPs", "podIP");
  if (path == "status.hostIPs") return JoinIPs(status, "hostIPs", "hostIP");
  for (const char* map : {"metadata.labels", "metadata.annotations"}) {
    std::string key = SubscriptKey(path, map);
    if (!key.empty()) {
      const std::string field = std::string(map).substr(9);
      return api::ObjectOr(api::Field(meta, field.c_str())).value(key, "");
    }
  }
  return Status(Code::kInvalid, "fieldRef.fieldPath: Unsupported value: \"" + path + "\"");
}

namespace {

// The container's own limit, else the node's allocatable (MergeContainerResourceLimits: only
// cpu, memory and ephemeral-storage limits fall back), else none.
std::optional<Json> ResourceValue(const Json& pod, const Json& container, const std::string& kind,
                                  const std::string& name, const ObjectLookup& objects) {
  Json res = container.value("resources", Json::object()).value(kind, Json::object());
  if (res.contains(name)) return res[name];
  static const char* kFallback[] = {"cpu", "memory", "ephemeral-storage"};
  if (kind != "limits" ||
      std::find(std::begin(kFallback), std::end(kFallback), name) == std::end(kFallback)) {
    return std::nullopt;
  }
  std::string node = api::Str(api::Field(pod, "spec"), "nodeName");
  std::optional<Json> n = node.empty() || !objects ? std::nullopt : objects(api::Nodes(), node);
  if (!n) return std::nullopt;
  Json alloc = n->value("status", Json::object()).value("allocatable", Json::object());
  if (!alloc.contains(name)) return std::nullopt;
  return alloc[name];
}

}  // namespace

Result<std::string> ResourceFieldRefValue(const Json& pod, const Json& container, const Json& ref,
                                          const ObjectLookup& objects) {
  std::string resource = ref.value("resource", "");
  std::string kind = resource.substr(0, resource.find('.'));
  std::string name = resource.substr(resource.find('.') + 1);
  if ((kind != "limits" && kind != "requests") || name == resource) {
    return Status(Code::kInvalid,
                  "resourceFieldRef.resource: Unsupported value: \"" + resource + "\"");
  }
  std::optional<Json> raw = ResourceValue(pod, container, kind, name, objects);
  if (!raw) return std::string("0");
  ASSIGN_OR_RETURN(api::Quantity v, api::Quantity::FromJson(*raw));
  __int128 divisor = 1'000'000'000;  // nano units of "1"
  if (ref.contains("divisor")) {
    ASSIGN_OR_RETURN(api::Quantity d, api::Quantity::FromJson(ref["divisor"]));
    if (d.NanoValue() > 0) divisor = d.NanoValue();
  }
  // ceil(value / divisor), as the kubelet's ExtractContainerResourceValue rounds up.
  __int128 q = (v.NanoValue() + divisor - 1) / divisor;
  return std::to_string(static_cast<long long>(q));
}

namespace {

// One ConfigMap or Secret as the env sources see it.
struct SourceKind {
  const api::ResourceType& (*type)();
  const char* lower;  // the kubelet's managers' resource name: `configmap "x" not found`
  const char* title;  // `couldn't find key k in ConfigMap ns/x`
  const char* event;  // `Keys [..] from the EnvFrom configMap ns/x were skipped ...`
  bool base64;        // Secret data
};
const SourceKind kConfigMap{&api::ConfigMaps, "configmap", "ConfigMap", "configMap", false};
const SourceKind kSecret{&api::Secrets, "secret", "Secret", "secret", true};

// The object's data as strings; nullopt (not an error) when absent and optional.
Result<std::optional<std::map<std::string, std::string>>> SourceData(const SourceKind& kind,
                                                                     const std::string& name,
                                                                     bool optional,
                                                                     const ObjectLookup& objects) {
  std::optional<Json> obj = objects ? objects(kind.type(), name) : std::nullopt;
  if (!obj) {
    if (optional) return std::optional<std::map<std::string, std::string>>();
    return Status(Code::kNotFound, std::string(kind.lower) + " \"" + name + "\" not found");
  }
  std::map<std::string, std::string> data;
  const Json raw = obj->value("data", Json::object());
  for (const auto& [k, v] : raw.items()) {
    std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    if (!kind.base64) {
      data[k] = text;
      continue;
    }
    std::size_t bad = 0;
    std::optional<std::string> decoded = api::DecodeBase64(text, &bad);
    if (!decoded) {
      return Status(Code::kInvalid, std::string(kind.lower) + " \"" + name + "\": data[" + k +
                                        "]: illegal base64 data at input byte " +
                                        std::to_string(bad));
    }
    data[k] = *decoded;
  }
  return std::optional(std::move(data));
}

// configMapKeyRef / secretKeyRef: the value, nullopt when optional and missing.
Result<std::optional<std::string>> KeyRef(const SourceKind& kind, const Json& ref,
                                          const std::string& ns, const ObjectLookup& objects) {
  std::string name = ref.value("name", "");
  std::string key = ref.value("key", "");
  bool optional = ref.value("optional", false);
  ASSIGN_OR_RETURN(auto data, SourceData(kind, name, optional, objects));
  if (!data) return std::optional<std::string>();
  auto it = data->find(key);
  if (it != data->end()) return std::optional(it->second);
  if (optional) return std::optional<std::string>();
  return Status(Code::kNotFound,
                "couldn't find key " + key + " in " + kind.title + " " + ns + "/" + name);
}

// apimachinery's IsEnvVarName: [-._a-zA-Z][-._a-zA-Z0-9]*.
bool IsEnvVarName(const std::string& s) {
  auto ok = [](char c, bool first) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
           (!first && std::isdigit(static_cast<unsigned char>(c)));
  };
  if (s.empty() || !ok(s[0], true)) return false;
  return std::all_of(s.begin() + 1, s.end(), [&](char c) { return ok(c, false); });
}

// Visits each envFrom source: fn(kind, source name, prefix, data or nullopt when optional and
// absent).
using EnvFromVisitor = std::function<void(const SourceKind&, const std::string&, const std::string&,
                                          const std::map<std::string, std::string>&)>;
Status ForEachEnvFrom(const Json& container, const std::string& field, const ObjectLookup& objects,
                      const EnvFromVisitor& fn) {
  const Json& list = api::ArrayOr(api::Field(container, "envFrom"));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Json& e = list[i];
    const SourceKind* kind = e.contains("configMapRef") ? &kConfigMap
                             : e.contains("secretRef")  ? &kSecret
                                                        : nullptr;
    if (!kind) {
      return Status(Code::kInvalid, field + ".envFrom[" + std::to_string(i) +
                                        "]: Invalid value: must specify one of: `configMapRef` "
                                        "or `secretRef`");
    }
    const Json& ref = e[kind == &kConfigMap ? "configMapRef" : "secretRef"];
    std::string name = ref.value("name", "");
    ASSIGN_OR_RETURN(auto data, SourceData(*kind, name, ref.value("optional", false), objects));
    if (data) fn(*kind, name, e.value("prefix", ""), *data);
  }
  return Status::Ok();
}

Result<std::optional<std::string>> ValueFrom(const Json& pod, const Json& container,
                                             const Json& from, const ObjectLookup& objects) {
  std::string ns = api::Str(api::Field(pod, "metadata"), "namespace");
  if (from.contains("fieldRef")) {
    ASSIGN_OR_RETURN(std::string v, FieldRefValue(pod, from["fieldRef"].value("fieldPath", "")));
    return std::optional(v);
  }
  if (from.contains("resourceFieldRef")) {
    ASSIGN_OR_RETURN(std::string v,
                     ResourceFieldRefValue(pod, container, from["resourceFieldRef"], objects));
    return std::optional(v);
  }
  if (from.contains("configMapKeyRef"))
    return KeyRef(kConfigMap, from["configMapKeyRef"], ns, objects);
  if (from.contains("secretKeyRef")) return KeyRef(kSecret, from["secretKeyRef"], ns, objects);
  return Status(Code::kInvalid,
                "Invalid value: must specify one of: `fieldRef`, "
                "`resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`");
}

}  // namespace

std::string ExpandVars(const std::string& text, const VarLookup& lookup) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i++];
      continue;
    }
    char next = text[i + 1];
    if (next == '$') {
      out += '$';
      i += 2;
    } else if (next == '(') {
      std::size_t close = text.find(')', i + 2);
      if (close == std::string::npos) {
        out += text.substr(i);
        break;
      }
      std::string name = text.substr(i + 2, close - i - 2);
      auto value = lookup(name);
      out += value ? *value : "$(" + name + ")";
      i = close + 1;
    } else {
      out += '$';
      ++i;
    }
  }
  return out;
}

std::optional<std::string> LookupEnv(const EnvList& env, const std::string& name) {
  for (const auto& [k, v] : env) {
    if (k == name) return v;
  }
  return std::nullopt;
}

void SetEnv(EnvList& env, const std::string& name, const std::string& value) {
  for (auto& [k, v] : env) {
    if (k == name) {
      v = value;
      return;
    }
  }
  env.emplace_back(name, value);
}

Result<EnvList> ContainerEnv(const Json& pod, const Json& container, const std::string& field,
                             const ObjectLookup& objects) {
  EnvList env;
  RETURN_IF_ERROR(
      ForEachEnvFrom(container, field, objects,
                     [&env](const SourceKind&, const std::string&, const std::string& prefix,
                            const std::map<std::string, std::string>& data) {
                       for (const auto& [k, v] : data) {
                         if (IsEnvVarName(prefix + k)) SetEnv(env, prefix + k, v);
                       }
                     }));
  VarLookup lookup = [&env](const std::string& name) { return LookupEnv(env, name); };
  const Json& list = api::ArrayOr(api::Field(container, "env"));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Json& e = list[i];
    std::string path = field + ".env[" + std::to_string(i) + "]";
    std::string name = e.value("name", "");
    if (name.empty()) return Status(Code::kInvalid, path + ".name: Required value");
    if (!e.contains("valueFrom") || !e.value("value", "").empty()) {
      SetEnv(env, name, ExpandVars(e.value("value", ""), lookup));
      continue;
    }
    Result<std::optional<std::string>> v = ValueFrom(pod, container, e["valueFrom"], objects);
    if (!v.ok()) {
      if (v.status().code() == Code::kNotFound) return v.status();  // the kubelet's own words
      return v.status().WithContext(path + ".valueFrom");
    }
    if (*v) SetEnv(env, name, **v);
  }
  return env;
}

std::vector<std::string> EnvFromWarnings(const Json& pod, const Json& container,
                                         const ObjectLookup& objects) {
  std::string ns = api::Str(api::Field(pod, "metadata"), "namespace");
  std::vector<std::string> out;
  Status ignored = ForEachEnvFrom(
      container, "", objects,
      [&](const SourceKind& kind, const std::string& name, const std::string& prefix,
          const std::map<std::string, std::string>& data) {
        std::vector<std::string> bad;
        for (const auto& [k, v] : data) {
          if (!IsEnvVarName(prefix + k)) bad.push_back(prefix + k);
        }
        std::sort(bad.begin(), bad.end());
        if (bad.empty()) return;
        std::string keys;
        for (const auto& k : bad) keys += (keys.empty() ? "" : ", ") + k;
        out.push_back("Keys [" + keys + "] from the EnvFrom " + kind.event + " " + ns + "/" + name +
                      " were skipped since they are considered invalid environment "
                      "variable names.");
      });
  (void)ignored;  // a failing source is ContainerEnv's error, not a warning
  return out;
}

EnvList ImageEnvUnder(const EnvList& image_env, const EnvList& container_env) {
  EnvList out = image_env;
  for (const auto& [k, v] : container_env) SetEnv(out, k, v);
  return out;
}

std::vector<std::string> ExpandList(const Json& list, const EnvList& env) {
  VarLookup lookup = [&env](const std::string& name) { return LookupEnv(env, name); };
  std::vector<std::string> out;
  if (!list.is_array()) return out;
  for (const Json& s : list) {
    out.push_back(ExpandVars(s.is_string() ? s.get<std::string>() : s.dump(), lookup));
  }
  return out;
}

}  // namespace pjemu::kubelet
