// LocalClient: the Client that in-process actors (controller, scheduler, kubelet, fault
// injector) use to reach the Store directly, without HTTP. It forwards every call unchanged, so
// its semantics are exactly the Store's (and therefore the API server's); Evict is the API
// server's own gather-decide-delete (api::EvictPod).
// Thread safety: as the Store: safe from any thread. The Store must outlive the client.
#pragma once

#include <memory>
#include <mutex>

#include "emulator/client/client.h"
#include "emulator/store/store.h"

namespace pjemu::client {

class LocalClient final : public Client {
 public:
  // `form`: how it reads and writes (store::Form): kInProcess for the actors, which never read
  // managedFields; kServed for a client that shows objects as the API server serves them.
  explicit LocalClient(store::Store& store, store::Form form = store::Form::kServed)
      : store_(store), form_(form) {}

  Result<Json> Create(const ResourceType& type, std::string_view ns, Json object,
                      const WriteOptions& options = {}) override;
  Result<Json> Get(const ResourceType& type, std::string_view ns, std::string_view name) override;
  // The store's own snapshot (Store::GetShared): no copy.
  Result<api::ObjectList::Ptr> GetShared(const ResourceType& type, std::string_view ns,
                                         std::string_view name) override;
  Result<Json> List(const ResourceType& type, std::string_view ns,
                    const ListOptions& options = {}) override;
  // The name comes from object.metadata.name.
  Result<Json> Update(const ResourceType& type, std::string_view ns, Json object,
                      Subresource sub = Subresource::kNone,
                      const WriteOptions& options = {}) override;
  Result<Json> Patch(const ResourceType& type, std::string_view ns, std::string_view name,
                     PatchType patch_type, const Json& patch, Subresource sub = Subresource::kNone,
                     const WriteOptions& options = {}) override;
  Result<Json> Delete(const ResourceType& type, std::string_view ns, std::string_view name,
                      const DeleteOptions& options = {}) override;
  Result<std::shared_ptr<api::Watch>> Watch(const ResourceType& type, std::string_view ns,
                                            const WatchOptions& options = {}) override;
  // api::EvictPod over the store, this client's evictions one at a time (not serialized with
  // the API server's own: a Router over the same store holds another mutex).
  Status Evict(std::string_view ns, std::string_view name,
               const DeleteOptions& options = {}) override;
  Status Bind(std::string_view ns, std::string_view name,
              const api::PodBinding& binding) override;  // Store::BindPod
  // The store's own snapshots (Store::ListShared): no copy.
  Result<api::ObjectList> ListObjects(const ResourceType& type, std::string_view ns,
                                      const ListOptions& options = {}) override;
  // The store's own snapshots (Store::CreateShared, UpdateShared, PatchShared): no copy.
  Result<api::ObjectList::Ptr> CreateShared(const ResourceType& type, std::string_view ns,
                                            Json object, const WriteOptions& options = {}) override;
  Result<api::ObjectList::Ptr> UpdateShared(const ResourceType& type, std::string_view ns,
                                            Json object, Subresource sub = Subresource::kNone,
                                            const WriteOptions& options = {}) override;
  Result<api::ObjectList::Ptr> PatchShared(const ResourceType& type, std::string_view ns,
                                           std::string_view name, PatchType patch_type,
                                           const Json& patch, Subresource sub = Subresource::kNone,
                                           const WriteOptions& options = {}) override;

 private:
  store::Store& store_;
  const store::Form form_;
  std::mutex evictions_;
};

// A LocalClient over `store` (which must outlive it).
std::unique_ptr<Client> MakeLocalClient(store::Store& store,
                                        store::Form form = store::Form::kServed);

}  // namespace pjemu::client
