// Container environment and command line, computed the way the kubelet does before it asks
// the runtime to create a container: env from the spec (value, valueFrom.fieldRef,
// valueFrom.resourceFieldRef) in order with $(VAR) expansion against the variables defined
// before, then command and args expanded against the final environment.
// Thread safety: pure functions.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::kubelet {

using EnvList = std::vector<std::pair<std::string, std::string>>;
using VarLookup = std::function<std::optional<std::string>(const std::string&)>;

// Kubernetes $(VAR) expansion (third_party/forked/golang/expansion): $(NAME) is replaced when
// lookup knows NAME and kept verbatim otherwise; $$ is an escaped $ (so $$(X) gives $(X)).
std::string ExpandVars(const std::string& text, const VarLookup& lookup);

// The environment of container `container` of `pod`: the spec's env, in order, each value
// expanded against the earlier ones. A later duplicate name replaces the earlier value but
// keeps its position. Errors name the field: kInvalid for
// `spec.containers[0].env[2].valueFrom: secretKeyRef is not supported by pjemu` (Secrets and
// ConfigMaps are not served), or an unknown fieldRef path.
Result<EnvList> ContainerEnv(const Json& pod, const Json& container, const std::string& field);

// Value of a name in an env list ("" = nullopt when absent).
std::optional<std::string> LookupEnv(const EnvList& env, const std::string& name);
// Sets name=value, replacing an existing entry in place or appending.
void SetEnv(EnvList& env, const std::string& name, const std::string& value);

// A command or args list with each item $(VAR)-expanded against env ([] for null).
std::vector<std::string> ExpandList(const Json& list, const EnvList& env);

}  // namespace pjemu::kubelet
