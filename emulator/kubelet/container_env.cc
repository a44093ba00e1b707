#include "emulator/kubelet/container_env.h"

#include <cmath>

#include "emulator/api/resource_quantity.h"

namespace pjemu::kubelet {
namespace {

// metadata.labels['key'] -> key; "" when path is not of that shape.
std::string SubscriptKey(const std::string& path, const std::string& prefix) {
  if (path.rfind(prefix + "['", 0) != 0 || path.size() < prefix.size() + 4) return "";
  if (path.substr(path.size() - 2) != "']") return "";
  return path.substr(prefix.size() + 2, path.size() - prefix.size() - 4);
}

Result<std::string> FieldRef(const Json& pod, const std::string& path) {
  const Json meta = pod.value("metadata", Json::object());
  const Json spec = pod.value("spec", Json::object());
  const Json status = pod.value("status", Json::object());
  if (path == "metadata.name") return meta.value("name", "");
  if (path == "metadata.namespace") return meta.value("namespace", "");
  if (path == "metadata.uid") return meta.value("uid", "");
  if (path == "spec.nodeName") return spec.value("nodeName", "");
  if (path == "spec.serviceAccountName") return spec.value("serviceAccountName", "default");
  if (path == "status.hostIP") return status.value("hostIP", "");
  if (path == "status.podIP" || path == "status.podIPs") return status.value("podIP", "");
  for (const char* map : {"metadata.labels", "metadata.annotations"}) {
    std::string key = SubscriptKey(path, map);
    if (!key.empty()) {
      Json m = meta.value(std::string(map).substr(9), Json::object());
      return m.value(key, "");
    }
  }
  return Status(Code::kInvalid, "fieldRef.fieldPath: Unsupported value: \"" + path + "\"");
}

Result<std::string> ResourceFieldRef(const Json& container, const Json& ref) {
  std::string resource = ref.value("resource", "");
  std::string kind = resource.substr(0, resource.find('.'));
  std::string name = resource.substr(resource.find('.') + 1);
  if ((kind != "limits" && kind != "requests") || name == resource) {
    return Status(Code::kInvalid,
                  "resourceFieldRef.resource: Unsupported value: \"" + resource + "\"");
  }
  Json res = container.value("resources", Json::object()).value(kind, Json::object());
  if (!res.contains(name)) return std::string("0");
  ASSIGN_OR_RETURN(api::Quantity v, api::Quantity::FromJson(res[name]));
  __int128 divisor = 1'000'000'000;  // nano units of "1"
  if (ref.contains("divisor")) {
    ASSIGN_OR_RETURN(api::Quantity d, api::Quantity::FromJson(ref["divisor"]));
    if (d.NanoValue() > 0) divisor = d.NanoValue();
  }
  // ceil(value / divisor), as the kubelet's ExtractContainerResourceValue rounds up.
  __int128 q = (v.NanoValue() + divisor - 1) / divisor;
  return std::to_string(static_cast<long long>(q));
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

Result<EnvList> ContainerEnv(const Json& pod, const Json& container, const std::string& field) {
  EnvList env;
  VarLookup lookup = [&env](const std::string& name) { return LookupEnv(env, name); };
  const Json list = container.value("env", Json::array());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Json& e = list[i];
    std::string path = field + ".env[" + std::to_string(i) + "]";
    std::string name = e.value("name", "");
    if (name.empty()) return Status(Code::kInvalid, path + ".name: Required value");
    std::string value;
    if (e.contains("valueFrom")) {
      const Json& from = e["valueFrom"];
      Result<std::string> v = std::string();
      if (from.contains("fieldRef")) {
        v = FieldRef(pod, from["fieldRef"].value("fieldPath", ""));
      } else if (from.contains("resourceFieldRef")) {
        v = ResourceFieldRef(container, from["resourceFieldRef"]);
      } else {
        std::string kind = from.empty() ? "valueFrom" : from.items().begin().key();
        return Status(Code::kInvalid, path + ".valueFrom: " + kind +
                                          " is not supported by pjemu (no Secrets or "
                                          "ConfigMaps are served); use env[].value");
      }
      if (!v.ok()) return v.status().WithContext(path + ".valueFrom");
      value = *v;
    } else {
      value = ExpandVars(e.value("value", ""), lookup);
    }
    SetEnv(env, name, value);
  }
  return env;
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
