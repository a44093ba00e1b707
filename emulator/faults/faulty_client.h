// FaultyClient: a client::Client decorator that makes chosen calls fail, like
// controller-runtime's interceptor and beast's fail_count. Sits between an actor (controller,
// scheduler, kubelet) and the real Client; calls that match no rule pass through unchanged.
// A rule picks calls by verb and resource and fails the Nth match, or each match with a seeded
// probability, so the same seed replays the same failures.
// Thread safety: rules and counters are guarded by one mutex; safe from any thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "emulator/client/client.h"
#include "emulator/common/random.h"

namespace pjemu::faults {

// "create", "get", "list", "update", "patch", "delete", "watch".
enum class Verb { kCreate, kGet, kList, kUpdate, kPatch, kDelete, kWatch };
const char* VerbName(Verb verb);

struct ClientFaultRule {
  // Verbs to match: "create", "update", ..., "write" (create/update/patch/delete), "*" (any).
  std::string verb = "write";
  std::string resource = "*";  // plural ("pods", "pytorchjobs") or "*"
  bool status_only = false;    // only writes to the status subresource
  int nth = 0;                 // > 0: fail only the nth matching call (1-based)
  double rate = 0;             // nth == 0: fail each matching call with this probability
  int max_failures = -1;       // stop after this many injected failures (-1 = no limit)
  Code code = Code::kUnavailable;
  std::string message = "injected fault";
};
// kInvalid naming the field for an unknown verb, a rate outside [0, 1], nth < 0, or kOk code.
Status ValidateRule(const ClientFaultRule& rule);

class FaultyClient final : public client::Client {
 public:
  // inner must outlive this decorator.
  explicit FaultyClient(client::Client& inner, std::uint64_t seed = 1);

  // Adds a rule (validated) and returns its id.
  Result<int> AddRule(ClientFaultRule rule);
  void RemoveRule(int id);
  // Failures injected so far, over every rule.
  std::int64_t injected() const;

  Result<Json> Create(const client::ResourceType& type, std::string_view ns, Json object,
                      const client::WriteOptions& options = {}) override;
  Result<Json> Get(const client::ResourceType& type, std::string_view ns,
                   std::string_view name) override;
  Result<Json> List(const client::ResourceType& type, std::string_view ns,
                    const client::ListOptions& options = {}) override;
  Result<Json> Update(const client::ResourceType& type, std::string_view ns, Json object,
                      client::Subresource sub = client::Subresource::kNone,
                      const client::WriteOptions& options = {}) override;
  Result<Json> Patch(const client::ResourceType& type, std::string_view ns, std::string_view name,
                     client::PatchType patch_type, const Json& patch,
                     client::Subresource sub = client::Subresource::kNone,
                     const client::WriteOptions& options = {}) override;
  Result<Json> Delete(const client::ResourceType& type, std::string_view ns, std::string_view name,
                      const client::DeleteOptions& options = {}) override;
  Result<std::shared_ptr<api::Watch>> Watch(const client::ResourceType& type, std::string_view ns,
                                            const client::WatchOptions& options = {}) override;
  // Counts as a create of pods (the pods/eviction subresource); passed on as inner's Evict.
  Status Evict(std::string_view ns, std::string_view name,
               const client::DeleteOptions& options = {}) override;
  // Counts as a create of pods (the pods/binding subresource); passed on as inner's Bind.
  Status Bind(std::string_view ns, std::string_view name, const api::PodBinding& binding) override;

 private:
  struct Entry {
    int id;
    ClientFaultRule rule;
    int matches = 0;
    int failures = 0;
  };
  // The injected error for this call, or OK to pass it through.
  Status Check(Verb verb, const client::ResourceType& type, client::Subresource sub,
               std::string_view name);

  client::Client& inner_;
  mutable std::mutex mu_;
  Random random_;              // GUARDED_BY(mu_)
  std::vector<Entry> rules_;   // GUARDED_BY(mu_)
  int next_id_ = 1;            // GUARDED_BY(mu_)
  std::int64_t injected_ = 0;  // GUARDED_BY(mu_)
};

}  // namespace pjemu::faults
