// Client: how every actor (controller, scheduler, kubelet, fault injector, CLI) reads and
// writes cluster objects. LocalClient reaches the in-process Store; HttpClient reaches a
// running `pjemu serve`; faults::FaultyClient decorates either. Same semantics as the
// Kubernetes REST API: objects are JSON in wire form, errors are Status codes mirroring the
// API reasons (kNotFound, kAlreadyExists, kConflict, kInvalid, kBadRequest, kExpired, ...).
// Thread safety: implementations are safe to call from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "emulator/api/object_list.h"
#include "emulator/api/pod_binding.h"
#include "emulator/api/requests.h"
#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::client {

using api::DeleteOptions;
using api::ListOptions;
using api::PatchType;
using api::ResourceType;
using api::Subresource;
using api::WatchOptions;
using api::WriteOptions;

class Client {
 public:
  virtual ~Client() = default;
  // ns: the namespace for namespaced types ("" only for cluster-scoped types, where it is ignored).
  virtual Result<Json> Create(const ResourceType& type, std::string_view ns, Json object,
                              const WriteOptions& options = {}) = 0;
  virtual Result<Json> Get(const ResourceType& type, std::string_view ns,
                           std::string_view name) = 0;
  // Get's object as a shared immutable snapshot, for readers that only read it: a LocalClient
  // hands out the store's own (no copy); by default Get's answer moved into one (through Get,
  // so a decorator's Get still applies). Same errors as Get.
  virtual Result<api::ObjectList::Ptr> GetShared(const ResourceType& type, std::string_view ns,
                                                 std::string_view name);
  // A <Kind>List object: {apiVersion, kind, metadata: {resourceVersion}, items: [...]}.
  // ns "" lists every namespace.
  virtual Result<Json> List(const ResourceType& type, std::string_view ns,
                            const ListOptions& options = {}) = 0;
  // Replaces the object (sub == kStatus: only .status is taken). A non-empty
  // metadata.resourceVersion that is not the stored one gives kConflict.
  virtual Result<Json> Update(const ResourceType& type, std::string_view ns, Json object,
                              Subresource sub = Subresource::kNone,
                              const WriteOptions& options = {}) = 0;
  virtual Result<Json> Patch(const ResourceType& type, std::string_view ns, std::string_view name,
                             PatchType patch_type, const Json& patch,
                             Subresource sub = Subresource::kNone,
                             const WriteOptions& options = {}) = 0;
  // The deleted object's last state (or, with finalizers or graceful pod deletion, the object
  // now carrying deletionTimestamp).
  virtual Result<Json> Delete(const ResourceType& type, std::string_view ns, std::string_view name,
                              const DeleteOptions& options = {}) = 0;
  virtual Result<std::shared_ptr<api::Watch>> Watch(const ResourceType& type, std::string_view ns,
                                                    const WatchOptions& options = {}) = 0;
  // The pods/eviction subresource (a policy/v1 Eviction of pod ns/name): the pod is deleted with
  // options unless its PodDisruptionBudgets forbid it: kTooManyRequests (429) "Cannot evict pod
  // as it would violate the pod's disruption budget." (api::kEvictionRefusedMessage), kNotFound
  // for a missing pod, or the API server's other answers. The in-process store decides with
  // api::EvictPod (as the served subresource does); a real API server decides for itself.
  virtual Status Evict(std::string_view ns, std::string_view name,
                       const DeleteOptions& options = {}) = 0;
  // The pods/binding subresource (a core/v1 Binding of pod ns/name, api/pod_binding.h): the pod
  // gets the binding's node and PodScheduled True in one write, as kube-scheduler binds. The
  // API server's answers: kNotFound, kConflict for a failed precondition or a pod that is bound
  // already, being deleted or gated.
  virtual Status Bind(std::string_view ns, std::string_view name,
                      const api::PodBinding& binding) = 0;
  // List's items as shared immutable snapshots, for readers that only read them (a
  // controller's children): a LocalClient hands out the store's own (no copy); by default each
  // listed item is moved into one, through List (so a decorator's List still applies). Same
  // errors as List.
  virtual Result<api::ObjectList> ListObjects(const ResourceType& type, std::string_view ns,
                                              const ListOptions& options = {});
  // Create, Update and Patch answering with a shared immutable snapshot, for writers that only
  // read the answer (a status write, an Event): a LocalClient hands out the store's own (no
  // copy); by default the answer is moved into one, through the call itself (so a decorator's
  // Create, Update or Patch still applies). Same errors.
  virtual Result<api::ObjectList::Ptr> CreateShared(const ResourceType& type, std::string_view ns,
                                                    Json object, const WriteOptions& options = {});
  virtual Result<api::ObjectList::Ptr> UpdateShared(const ResourceType& type, std::string_view ns,
                                                    Json object,
                                                    Subresource sub = Subresource::kNone,
                                                    const WriteOptions& options = {});
  virtual Result<api::ObjectList::Ptr> PatchShared(const ResourceType& type, std::string_view ns,
                                                   std::string_view name, PatchType patch_type,
                                                   const Json& patch,
                                                   Subresource sub = Subresource::kNone,
                                                   const WriteOptions& options = {});
};

inline Result<api::ObjectList> Client::ListObjects(const ResourceType& type, std::string_view ns,
                                                   const ListOptions& options) {
  ASSIGN_OR_RETURN(Json list, List(type, ns, options));
  api::ObjectList out;
  if (auto items = list.find("items"); items != list.end() && items->is_array()) {
    for (Json& item : *items) out.push_back(std::move(item));
  }
  return out;
}

inline Result<api::ObjectList::Ptr> Client::GetShared(const ResourceType& type, std::string_view ns,
                                                      std::string_view name) {
  ASSIGN_OR_RETURN(Json got, Get(type, ns, name));
  return std::make_shared<const Json>(std::move(got));
}

inline Result<api::ObjectList::Ptr> Client::CreateShared(const ResourceType& type,
                                                         std::string_view ns, Json object,
                                                         const WriteOptions& options) {
  ASSIGN_OR_RETURN(Json created, Create(type, ns, std::move(object), options));
  return std::make_shared<const Json>(std::move(created));
}

inline Result<api::ObjectList::Ptr> Client::UpdateShared(const ResourceType& type,
                                                         std::string_view ns, Json object,
                                                         Subresource sub,
                                                         const WriteOptions& options) {
  ASSIGN_OR_RETURN(Json updated, Update(type, ns, std::move(object), sub, options));
  return std::make_shared<const Json>(std::move(updated));
}

inline Result<api::ObjectList::Ptr> Client::PatchShared(const ResourceType& type,
                                                        std::string_view ns, std::string_view name,
                                                        PatchType patch_type, const Json& patch,
                                                        Subresource sub,
                                                        const WriteOptions& options) {
  ASSIGN_OR_RETURN(Json patched, Patch(type, ns, name, patch_type, patch, sub, options));
  return std::make_shared<const Json>(std::move(patched));
}

}  // namespace pjemu::client
