// Container environment and command line, computed the way the kubelet does before it asks
// the runtime to create a container (makeEnvironmentVariables): first envFrom (configMapRef,
// secretRef, with prefix), then env in order (value with $(VAR) expansion against the variables
// defined before, valueFrom fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef), env
// winning over envFrom; then command and args expanded against the final environment. The
// image's own env (image map `env:`) lies under all of it: ImageEnvUnder.
// Thread safety: pure functions (objects is called on the caller's thread).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::kubelet {

using EnvList = std::vector<std::pair<std::string, std::string>>;
using VarLookup = std::function<std::optional<std::string>(const std::string&)>;

// Kubernetes $(VAR) expansion (third_party/forked/golang/expansion): $(NAME) is replaced when
// lookup knows NAME and kept verbatim otherwise; $$ is an escaped $ (so $$(X) gives $(X)).
std::string ExpandVars(const std::string& text, const VarLookup& lookup);

// A stored object the env sources read: a ConfigMap or Secret of the pod's namespace by name
// (api::ConfigMaps(), api::Secrets()), nullopt when absent. resourceFieldRef also asks for the
// pod's Node (api::Nodes(), spec.nodeName): a limit the container does not set falls back to
// the node's status.allocatable, as the kubelet's MergeContainerResourceLimits does ("0" when
// the lookup has no node).
using ObjectLookup =
    std::function<std::optional<Json>(const api::ResourceType& type, const std::string& name)>;

// The downward API's values, which env (valueFrom) and downwardAPI volume files both resolve
// through these (a volume's files format whole label/annotation maps themselves):
//  - FieldRefValue: fieldRef.fieldPath of `pod` (podFieldSelectorRuntimeValue): metadata.name,
//    .namespace, .uid, .labels['k'], .annotations['k'] ("" when the key is absent),
//    spec.nodeName, spec.serviceAccountName ("default" when unset), status.hostIP, status.podIP,
//    status.hostIPs, status.podIPs (comma-separated); kInvalid
//    `fieldRef.fieldPath: Unsupported value: "x"` for any other path;
//  - ResourceFieldRefValue: resourceFieldRef `ref` ({resource: limits.x | requests.x, divisor})
//    of `container`, the quantity divided by the divisor (default 1) rounded up, as decimal
//    text; "0" when neither the container nor (for limits of cpu, memory, ephemeral-storage)
//    the node's allocatable gives one (see ObjectLookup); kInvalid
//    `resourceFieldRef.resource: Unsupported value: "x"` for another resource; a quantity that
//    does not parse gives its parse error.
Result<std::string> FieldRefValue(const Json& pod, const std::string& path);
Result<std::string> ResourceFieldRefValue(const Json& pod, const Json& container, const Json& ref,
                                          const ObjectLookup& objects);

// The environment of container `container` of `pod` (field: "spec.containers[0]"): envFrom
// sources in order (keys of one source sorted, as a Go map read is not ordered; keys that are
// no environment variable name skipped, see EnvFromWarnings), then env in order, each value
// expanded against the variables before it. A later duplicate name replaces the earlier value
// but keeps its position. Secret values are base64-decoded. An `optional: true` reference whose
// object or key is missing adds nothing.
// Errors, with the kubelet's CreateContainerConfigError messages:
//  - kNotFound: a referenced object or key is missing, which the kubelet retries until it
//    appears: `configmap "x" not found`, `secret "x" not found`,
//    `couldn't find key k in ConfigMap ns/x`, `couldn't find key k in Secret ns/x`;
//  - kInvalid: a spec that the API server would refuse, naming the field
//    (`spec.containers[0].env[2].valueFrom.fieldRef.fieldPath: Unsupported value: "x"`), or a
//    Secret value that is not base64.
Result<EnvList> ContainerEnv(const Json& pod, const Json& container, const std::string& field,
                             const ObjectLookup& objects);

// The kubelet's Warning events (reason kInvalidEnvNamesReason) for envFrom keys skipped because
// they are no environment variable name: `Keys [1x, a b] from the EnvFrom configMap ns/x were
// skipped since they are considered invalid environment variable names.` One per source with
// such keys; missing sources give none.
inline constexpr char kInvalidEnvNamesReason[] = "InvalidEnvironmentVariableNames";
std::vector<std::string> EnvFromWarnings(const Json& pod, const Json& container,
                                         const ObjectLookup& objects);

// The process environment of a container whose image declares `image_env` (image map `env:`,
// the image config's Env): the image's variables first, each replaced by the container's value
// of the same name, then the container's own, as a container runtime merges them. The pod's
// $(VAR) references never see the image's env (the kubelet does not know it).
EnvList ImageEnvUnder(const EnvList& image_env, const EnvList& container_env);

// Value of a name in an env list ("" = nullopt when absent).
std::optional<std::string> LookupEnv(const EnvList& env, const std::string& name);
// Sets name=value, replacing an existing entry in place or appending.
void SetEnv(EnvList& env, const std::string& name, const std::string& value);

// A command or args list with each item $(VAR)-expanded against env ([] for null).
std::vector<std::string> ExpandList(const Json& list, const EnvList& env);

}  // namespace pjemu::kubelet
