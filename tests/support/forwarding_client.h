// ForwardingClient: a test-side client::Client that passes every call to `inner` unchanged. Test
// decorators (a client that drops watches, fails at a rate or answers Conflict) derive from it
// and override only the calls they change.
// Thread safety: as `inner`'s; `inner` must outlive this client.
#pragma once

#include <memory>
#include <string_view>

#include "emulator/client/client.h"

namespace pjemu::testing {

class ForwardingClient : public client::Client {
 public:
  explicit ForwardingClient(client::Client& inner) : inner_(inner) {}

  Result<Json> Create(const api::ResourceType& t, std::string_view ns, Json o,
                      const api::WriteOptions& w) override {
    return inner_.Create(t, ns, std::move(o), w);
  }
  Result<Json> Get(const api::ResourceType& t, std::string_view ns, std::string_view n) override {
    return inner_.Get(t, ns, n);
  }
  Result<Json> List(const api::ResourceType& t, std::string_view ns,
                    const api::ListOptions& o) override {
    return inner_.List(t, ns, o);
  }
  Result<Json> Update(const api::ResourceType& t, std::string_view ns, Json o, api::Subresource s,
                      const api::WriteOptions& w) override {
    return inner_.Update(t, ns, std::move(o), s, w);
  }
  Result<Json> Patch(const api::ResourceType& t, std::string_view ns, std::string_view n,
                     api::PatchType pt, const Json& p, api::Subresource s,
                     const api::WriteOptions& w) override {
    return inner_.Patch(t, ns, n, pt, p, s, w);
  }
  Result<Json> Delete(const api::ResourceType& t, std::string_view ns, std::string_view n,
                      const api::DeleteOptions& o) override {
    return inner_.Delete(t, ns, n, o);
  }
  Status Evict(std::string_view ns, std::string_view n, const api::DeleteOptions& o) override {
    return inner_.Evict(ns, n, o);
  }
  Status Bind(std::string_view ns, std::string_view n, const api::PodBinding& b) override {
    return inner_.Bind(ns, n, b);
  }
  Result<std::shared_ptr<api::Watch>> Watch(const api::ResourceType& t, std::string_view ns,
                                            const api::WatchOptions& o) override {
    return inner_.Watch(t, ns, o);
  }

 protected:
  client::Client& inner_;
};

}  // namespace pjemu::testing
