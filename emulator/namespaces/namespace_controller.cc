#include "emulator/namespaces/namespace_controller.h"

#include "emulator/api/service_account.h"

namespace pjemu::namespaces {
namespace {

using api::WatchEvent;

std::string NameOf(const Json& o) { return o["metadata"].value("name", ""); }
std::string NamespaceOf(const Json& o) { return o["metadata"].value("namespace", ""); }

bool Terminating(const Json& ns) {
  return ns["metadata"].contains("deletionTimestamp") ||
         ns.value("status", Json::object()).value("phase", "") == "Terminating";
}

}  // namespace

NamespaceController::NamespaceController(client::Client& client, EventLoop& loop,
                                         NamespaceControllerOptions options)
    : client_(client), loop_(loop), options_(std::move(options)),
      alive_(std::make_shared<bool>(true)) {}

NamespaceController::~NamespaceController() {
  Stop();
  *alive_ = false;
}

Status NamespaceController::Start() {
  client::InformerOptions no;
  no.name = "namespace controller namespaces";
  namespace_informer_ = std::make_unique<client::Informer>(
      client_, loop_, api::Namespaces(), no, [this](const WatchEvent& e) {
        const std::string name = NameOf(e.object());
        if (e.type == WatchEvent::Type::kDeleted) {
          namespaces_.erase(name);
          with_default_sa_.erase(name);
          root_ca_.erase(name);
          return;
        }
        namespaces_[name] = e.object();
        Dirty(name);
      });
  client::InformerOptions so;
  so.name = "namespace controller serviceaccounts";
  so.field_selector = std::string("metadata.name=") + api::kDefaultServiceAccount;
  sa_informer_ = std::make_unique<client::Informer>(
      client_, loop_, api::ServiceAccounts(), so, [this](const WatchEvent& e) {
        const std::string ns = NamespaceOf(e.object());
        if (e.type == WatchEvent::Type::kDeleted) {
          with_default_sa_.erase(ns);
          Dirty(ns);  // made again, as the serviceaccounts controller does
        } else {
          with_default_sa_.insert(ns);
        }
      });
  RETURN_IF_ERROR(sa_informer_->Start());
  if (!options_.root_ca_pem.empty()) {
    client::InformerOptions co;
    co.name = "namespace controller root CA";
    co.field_selector = std::string("metadata.name=") + kRootCaConfigMap;
    ca_informer_ = std::make_unique<client::Informer>(
        client_, loop_, api::ConfigMaps(), co, [this](const WatchEvent& e) {
          const std::string ns = NamespaceOf(e.object());
          if (e.type == WatchEvent::Type::kDeleted) {
            root_ca_.erase(ns);
          } else {
            root_ca_[ns] = e.object().value("data", Json::object()).value("ca.crt", "");
          }
          Dirty(ns);
        });
    RETURN_IF_ERROR(ca_informer_->Start());
    ca_informer_->Drain();
  }
  sa_informer_->Drain();  // know the existing ones before the namespaces ask
  return namespace_informer_->Start();
}

void NamespaceController::Stop() {
  for (auto* informer : {&namespace_informer_, &sa_informer_, &ca_informer_}) {
    if (*informer) (*informer)->Stop();
  }
  if (retry_) loop_.Cancel(retry_);
  retry_ = 0;
}

void NamespaceController::Dirty(const std::string& ns) {
  dirty_.insert(ns);
  if (sync_posted_) return;
  sync_posted_ = true;
  std::weak_ptr<bool> alive = alive_;
  loop_.Post([this, alive] {
    if (auto a = alive.lock(); a && *a) SyncDirty();
  });
}

void NamespaceController::SyncDirty() {
  sync_posted_ = false;
  std::set<std::string> work;
  work.swap(dirty_);
  std::set<std::string> again;
  for (const std::string& ns : work) {
    if (!Sync(ns)) again.insert(ns);
  }
  if (again.empty() || retry_) return;
  std::weak_ptr<bool> alive = alive_;
  retry_ = loop_.PostAfter(options_.retry_interval, [this, alive, again] {
    if (auto a = alive.lock(); !a || !*a) return;
    retry_ = 0;
    for (const std::string& ns : again) Dirty(ns);
  });
}

bool NamespaceController::Sync(const std::string& ns) {
  auto it = namespaces_.find(ns);
  if (it == namespaces_.end()) return true;
  if (Terminating(it->second)) return !options_.lifecycle || Finish(it->second);
  bool ok = EnsureServiceAccount(ns);
  return EnsureRootCa(ns) && ok;
}

bool NamespaceController::EnsureServiceAccount(const std::string& ns) {
  if (with_default_sa_.count(ns)) return true;
  Json sa = {{"apiVersion", "v1"},
             {"kind", "ServiceAccount"},
             {"metadata", {{"name", api::kDefaultServiceAccount}, {"namespace", ns}}}};
  auto created = client_.Create(api::ServiceAccounts(), ns, sa);
  if (created.ok() || created.status().code() == Code::kAlreadyExists) {
    with_default_sa_.insert(ns);
    return true;
  }
  return created.status().code() == Code::kNotFound ||  // the namespace went meanwhile
         created.status().code() == Code::kForbidden;   // it is being terminated
}

bool NamespaceController::EnsureRootCa(const std::string& ns) {
  if (options_.root_ca_pem.empty()) return true;
  auto it = root_ca_.find(ns);
  if (it != root_ca_.end() && it->second == options_.root_ca_pem) return true;
  Json cm = {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", {{"name", kRootCaConfigMap}, {"namespace", ns}}},
             {"data", {{"ca.crt", options_.root_ca_pem}}}};
  Result<Json> written = it == root_ca_.end() ? client_.Create(api::ConfigMaps(), ns, cm)
                                              : client_.Update(api::ConfigMaps(), ns, cm);
  if (written.ok()) {
    root_ca_[ns] = options_.root_ca_pem;
    return true;
  }
  const Code code = written.status().code();
  return code == Code::kNotFound || code == Code::kForbidden;
}

}  // namespace pjemu::namespaces
