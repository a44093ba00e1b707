// The pods/binding subresource (a core/v1 Binding, what kube-scheduler posts to bind a pod): what
// kube-apiserver's BindingREST does to the pod, as one write below the pod strategy. It sets
// spec.nodeName, adds the Binding's annotations and sets the PodScheduled condition True
// (podutil.UpdatePodCondition), and writes no managedFields entry: the write is the storage's,
// not a field manager's. The store applies it (store::Store::BindPod), the API server serves it
// (POST pods/{name}/binding), and client::Client::Bind sends it.
// Thread safety: pure functions of their arguments.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "emulator/common/status.h"

namespace pjemu::api {

struct PodBinding {
  std::string node;              // target.name
  std::string uid;               // metadata.uid: the pod must have it (a precondition) when set
  std::string resource_version;  // metadata.resourceVersion: likewise
  std::map<std::string, std::string> annotations;  // added to the pod's
};

// The Binding a client posts for pod `name` in `ns`.
Json BindingBody(std::string_view ns, std::string_view name, const PodBinding& binding);

// Reads a Binding posted to pod `name` in `ns`: 400 for a body that is no v1 Binding or names
// another pod or namespace; 422 `Binding "<name>" is invalid: ...` for a missing target.name or
// a target.kind other than Node (ValidatePodBinding).
Result<PodBinding> ParseBinding(const Json& body, std::string_view ns, std::string_view name);

// Binds `pod` in place at `now` (RFC 3339), or 409 `Operation cannot be fulfilled on
// pods/binding "<name>": ...` when it is being deleted, is already assigned to a node, or still
// has scheduling gates. The preconditions (uid, resourceVersion) are the caller's to check.
Status BindPod(Json& pod, const PodBinding& binding, const std::string& now);

}  // namespace pjemu::api
