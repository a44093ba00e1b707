#include "emulator/pytorchjob/job_spec.h"

#include <algorithm>

#include "emulator/api/json_fields.h"
#include "emulator/common/strings.h"

namespace pjemu::pytorchjob {

using api::Field, api::OptInt, api::ReplicaSpec, api::Str;

std::string GenGeneralName(const std::string& job, const std::string& rtype,
                           const std::string& index) {
  std::string name = job + "-" + AsciiLower(rtype) + "-" + index;
  std::replace(name.begin(), name.end(), '/', '-');
  return name;
}

Json GenLabels(const std::string& job_name) {
  std::string name = job_name;
  std::replace(name.begin(), name.end(), '/', '-');
  return {{api::kOperatorNameLabel, api::kControllerName}, {api::kJobNameLabel, name}};
}

std::string ReplicaSelector(const std::string& job_name, const std::string& rtype) {
  // FormatLabelSelector sorts the keys; these three already sort in this order.
  return std::string(api::kJobNameLabel) + "=" + job_name + "," + api::kOperatorNameLabel + "=" +
         api::kControllerName + "," + api::kReplicaTypeLabel + "=" + AsciiLower(rtype);
}

Json OwnerReference(const Json& job) {
  const Json& meta = Field(job, "metadata");
  return {{"apiVersion", api::kPyTorchJobApiVersion},
          {"kind", api::kPyTorchJobKind},
          {"name", Str(meta, "name")},
          {"uid", Str(meta, "uid")},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

Result<std::int64_t> PortFromJob(const Json& job, const std::string& rtype) {
  const Json& containers =
      Field(Field(Field(ReplicaSpec(job, rtype), "template"), "spec"), "containers");
  if (containers.is_array()) {
    for (const Json& c : containers) {
      const Json& ports = Field(c, "ports");
      if (Str(c, "name") != api::kDefaultContainerName || !ports.is_array()) continue;
      for (const Json& p : ports) {
        if (Str(p, "name") == api::kDefaultPortName) return OptInt(p, "containerPort").value_or(0);
      }
    }
  }
  return Status(Code::kNotFound, "failed to found the port");
}

}  // namespace pjemu::pytorchjob
