#include "emulator/client/workloads.h"

namespace pjemu::client {

Result<std::pair<const ResourceType*, Json>> GetJob(Client& client, std::string_view ns,
                                                    std::string_view name) {
  for (const ResourceType* type : api::WorkloadTypes()) {
    Result<Json> got = client.Get(*type, ns, name);
    if (got.ok()) return std::make_pair(type, std::move(*got));
    if (got.status().code() != Code::kNotFound) return got.status();
  }
  return NotFoundError("jobs", std::string(name));
}

Result<api::ObjectList> PodsOnNode(Client& client, const std::string& node) {
  api::ListOptions options;
  options.field_selector = "spec.nodeName=" + node;
  return client.ListObjects(api::Pods(), "", options);
}

}  // namespace pjemu::client
