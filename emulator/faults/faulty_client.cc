#include "emulator/faults/faulty_client.h"

namespace pjemu::faults {

namespace {

bool VerbMatches(const std::string& pattern, Verb verb) {
  if (pattern == "*") return true;
  if (pattern == "write") {
    return verb == Verb::kCreate || verb == Verb::kUpdate || verb == Verb::kPatch ||
           verb == Verb::kDelete;
  }
  return pattern == VerbName(verb);
}

bool KnownVerb(const std::string& pattern) {
  if (pattern == "*" || pattern == "write") return true;
  for (Verb v : {Verb::kCreate, Verb::kGet, Verb::kList, Verb::kUpdate, Verb::kPatch, Verb::kDelete,
                 Verb::kWatch}) {
    if (pattern == VerbName(v)) return true;
  }
  return false;
}

}  // namespace

const char* VerbName(Verb verb) {
  switch (verb) {
    case Verb::kCreate:
      return "create";
    case Verb::kGet:
      return "get";
    case Verb::kList:
      return "list";
    case Verb::kUpdate:
      return "update";
    case Verb::kPatch:
      return "patch";
    case Verb::kDelete:
      return "delete";
    case Verb::kWatch:
      return "watch";
  }
  return "?";
}

Status ValidateRule(const ClientFaultRule& rule) {
  if (!KnownVerb(rule.verb)) {
    return Status(Code::kInvalid, "verb: unknown verb \"" + rule.verb +
                                      "\" (create, get, list, update, patch, delete, watch, "
                                      "write, *)");
  }
  if (rule.nth < 0) return Status(Code::kInvalid, "nth: must be >= 1");
  if (rule.rate < 0 || rule.rate > 1) return Status(Code::kInvalid, "rate: must be in [0, 1]");
  if (rule.nth == 0 && rule.rate == 0) {
    return Status(Code::kInvalid, "rate: a rule needs nth or a rate above 0");
  }
  if (rule.code == Code::kOk) return Status(Code::kInvalid, "code: an injected error cannot be OK");
  return Status::Ok();
}

FaultyClient::FaultyClient(client::Client& inner, std::uint64_t seed)
    : inner_(inner), random_(seed) {}

Result<int> FaultyClient::AddRule(ClientFaultRule rule) {
  RETURN_IF_ERROR(ValidateRule(rule));
  std::lock_guard<std::mutex> lock(mu_);
  int id = next_id_++;
  rules_.push_back(Entry{id, std::move(rule)});
  return id;
}

void FaultyClient::RemoveRule(int id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(rules_, [id](const Entry& e) { return e.id == id; });
}

std::int64_t FaultyClient::injected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return injected_;
}

Status FaultyClient::Check(Verb verb, const client::ResourceType& type, client::Subresource sub,
                           std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Entry& e : rules_) {
    const ClientFaultRule& r = e.rule;
    if (!VerbMatches(r.verb, verb)) continue;
    if (r.resource != "*" && r.resource != type.plural) continue;
    if (r.status_only && sub != client::Subresource::kStatus) continue;
    if (r.max_failures >= 0 && e.failures >= r.max_failures) continue;
    ++e.matches;
    bool fail = r.nth > 0 ? e.matches == r.nth : random_.Bernoulli(r.rate);
    if (!fail) continue;
    ++e.failures;
    ++injected_;
    std::string what = std::string(VerbName(verb)) + " " + type.PluralGroup();
    if (!name.empty()) what += " \"" + std::string(name) + "\"";
    return Status(r.code, r.message + " (" + what + ")");
  }
  return Status::Ok();
}

Result<Json> FaultyClient::Create(const client::ResourceType& type, std::string_view ns,
                                  Json object, const client::WriteOptions& options) {
  RETURN_IF_ERROR(Check(Verb::kCreate, type, client::Subresource::kNone, ""));
  return inner_.Create(type, ns, std::move(object), options);
}

Result<Json> FaultyClient::Get(const client::ResourceType& type, std::string_view ns,
                               std::string_view name) {
  RETURN_IF_ERROR(Check(Verb::kGet, type, client::Subresource::kNone, name));
  return inner_.Get(type, ns, name);
}

Result<Json> FaultyClient::List(const client::ResourceType& type, std::string_view ns,
                                const client::ListOptions& options) {
  RETURN_IF_ERROR(Check(Verb::kList, type, client::Subresource::kNone, ""));
  return inner_.List(type, ns, options);
}

Result<Json> FaultyClient::Update(const client::ResourceType& type, std::string_view ns,
                                  Json object, client::Subresource sub,
                                  const client::WriteOptions& options) {
  std::string name = object.value("metadata", Json::object()).value("name", "");
  RETURN_IF_ERROR(Check(Verb::kUpdate, type, sub, name));
  return inner_.Update(type, ns, std::move(object), sub, options);
}

Result<Json> FaultyClient::Patch(const client::ResourceType& type, std::string_view ns,
                                 std::string_view name, client::PatchType patch_type,
                                 const Json& patch, client::Subresource sub,
                                 const client::WriteOptions& options) {
  RETURN_IF_ERROR(Check(Verb::kPatch, type, sub, name));
  return inner_.Patch(type, ns, name, patch_type, patch, sub, options);
}

Result<Json> FaultyClient::Delete(const client::ResourceType& type, std::string_view ns,
                                  std::string_view name, const client::DeleteOptions& options) {
  RETURN_IF_ERROR(Check(Verb::kDelete, type, client::Subresource::kNone, name));
  return inner_.Delete(type, ns, name, options);
}

Status FaultyClient::Evict(std::string_view ns, std::string_view name,
                           const client::DeleteOptions& options) {
  RETURN_IF_ERROR(Check(Verb::kCreate, api::Pods(), client::Subresource::kNone, name));
  return inner_.Evict(ns, name, options);
}

Status FaultyClient::Bind(std::string_view ns, std::string_view name,
                          const api::PodBinding& binding) {
  RETURN_IF_ERROR(Check(Verb::kCreate, api::Pods(), client::Subresource::kNone, name));
  return inner_.Bind(ns, name, binding);
}

Result<std::shared_ptr<api::Watch>> FaultyClient::Watch(const client::ResourceType& type,
                                                        std::string_view ns,
                                                        const client::WatchOptions& options) {
  RETURN_IF_ERROR(Check(Verb::kWatch, type, client::Subresource::kNone, ""));
  return inner_.Watch(type, ns, options);
}

}  // namespace pjemu::faults
