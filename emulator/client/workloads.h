// Reads more than one actor makes: a job by namespace and name without knowing its kind (the
// scenario runner, the fault injector and the CLI name jobs as "ns/name" for every job kind),
// and the pods bound to a node (the taint manager and the node faults).
// Thread safety: as the Client.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "emulator/api/resources.h"
#include "emulator/client/client.h"

namespace pjemu::client {

// The first job kind (in resource-table order) that has an object ns/name, with the object.
// Errors: kNotFound `jobs "name" not found` when no kind has it; the Client's other errors.
Result<std::pair<const ResourceType*, Json>> GetJob(Client& client, std::string_view ns,
                                                    std::string_view name);

// The pods bound to `node` in every namespace (a list by the field selector spec.nodeName), as
// shared snapshots; what kube-controller-manager reads as the pods assigned to a node. Errors:
// the Client's.
Result<api::ObjectList> PodsOnNode(Client& client, const std::string& node);

}  // namespace pjemu::client
