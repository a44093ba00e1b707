// Services' virtual addresses as kube-apiserver's ClusterIP allocator gives them, over the
// service CIDR 10.96.0.0/12 (kubeadm's default): allocated at create, immutable after.
//  - create: `None` (headless) and ExternalName Services get none; an address the client gave
//    must lie in the CIDR and be free; else the lowest free address from 10.96.0.11 up
//    (10.96.0.1 is the `kubernetes` Service's by convention, 10.96.0.10 cluster DNS's). The
//    server's allocator picks at random; pjemu picks in order, so runs are reproducible.
//    spec.clusterIPs follows spec.clusterIP, as the server writes both.
//  - update: a clusterIP left out keeps the stored one (as the server fills it in); a different
//    one is refused: `spec.clusterIP: Invalid value: "...": field is immutable`.
// Errors: 422 Invalid with the server's messages (store::InvalidError).
// Thread safety: pure functions (the store calls them under its lock).
#pragma once

#include <functional>
#include <set>
#include <string>

#include "emulator/common/status.h"

namespace pjemu::store {

inline constexpr char kServiceCidr[] = "10.96.0.0/12";

// The addresses stored Services hold now (called only when one must be allocated or checked).
using UsedClusterIps = std::function<std::set<std::string>()>;

// Fills or checks spec.clusterIP/clusterIPs of `service` (old: the stored object on update,
// nullptr on create).
Status AssignClusterIp(Json& service, const Json* old, const UsedClusterIps& used);

}  // namespace pjemu::store
