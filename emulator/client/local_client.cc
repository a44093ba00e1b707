#include "emulator/client/local_client.h"

#include "emulator/api/disruption.h"

namespace pjemu::client {

Result<Json> LocalClient::Create(const ResourceType& type, std::string_view ns, Json object,
                                 const WriteOptions& options) {
  return store_.Create(type, ns, std::move(object), options);
}

Result<Json> LocalClient::Get(const ResourceType& type, std::string_view ns,
                              std::string_view name) {
  return store_.Get(type, ns, name, form_);
}

Result<api::ObjectList::Ptr> LocalClient::GetShared(const ResourceType& type, std::string_view ns,
                                                    std::string_view name) {
  return store_.GetShared(type, ns, name, form_);
}

Result<Json> LocalClient::List(const ResourceType& type, std::string_view ns,
                               const ListOptions& options) {
  return store_.List(type, ns, options, form_);
}

Result<api::ObjectList> LocalClient::ListObjects(const ResourceType& type, std::string_view ns,
                                                 const ListOptions& options) {
  ASSIGN_OR_RETURN(store::SharedList list, store_.ListShared(type, ns, options, form_));
  return api::ObjectList(std::move(list.items));
}

Result<api::ObjectList::Ptr> LocalClient::CreateShared(const ResourceType& type,
                                                       std::string_view ns, Json object,
                                                       const WriteOptions& options) {
  return store_.CreateShared(type, ns, std::move(object), options);
}

Result<api::ObjectList::Ptr> LocalClient::UpdateShared(const ResourceType& type,
                                                       std::string_view ns, Json object,
                                                       Subresource sub,
                                                       const WriteOptions& options) {
  return store_.UpdateShared(type, ns, std::move(object), sub, options, form_);
}

Result<api::ObjectList::Ptr> LocalClient::PatchShared(const ResourceType& type, std::string_view ns,
                                                      std::string_view name, PatchType patch_type,
                                                      const Json& patch, Subresource sub,
                                                      const WriteOptions& options) {
  return store_.PatchShared(type, ns, name, patch_type, patch, sub, options, form_);
}

Result<Json> LocalClient::Update(const ResourceType& type, std::string_view ns, Json object,
                                 Subresource sub, const WriteOptions& options) {
  return store_.Update(type, ns, std::move(object), sub, options, form_);
}

Result<Json> LocalClient::Patch(const ResourceType& type, std::string_view ns,
                                std::string_view name, PatchType patch_type, const Json& patch,
                                Subresource sub, const WriteOptions& options) {
  return store_.Patch(type, ns, name, patch_type, patch, sub, options, form_);
}

Result<Json> LocalClient::Delete(const ResourceType& type, std::string_view ns,
                                 std::string_view name, const DeleteOptions& options) {
  return store_.Delete(type, ns, name, options);
}

Result<std::shared_ptr<api::Watch>> LocalClient::Watch(const ResourceType& type,
                                                       std::string_view ns,
                                                       const WatchOptions& options) {
  return store_.Watch(type, ns, options, form_);
}

std::unique_ptr<Client> MakeLocalClient(store::Store& store, store::Form form) {
  return std::make_unique<LocalClient>(store, form);
}

Status LocalClient::Bind(std::string_view ns, std::string_view name,
                         const api::PodBinding& binding) {
  return store_.BindPod(ns, name, binding).status();
}

Status LocalClient::Evict(std::string_view ns, std::string_view name,
                          const DeleteOptions& options) {
  std::lock_guard<std::mutex> lock(evictions_);
  api::AccessOver<store::Store> access(store_);
  return api::EvictPod(access, ns, name, options);
}

}  // namespace pjemu::client
