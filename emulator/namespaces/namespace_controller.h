// NamespaceController: kube-controller-manager's per-namespace controllers in one actor.
//  - serviceaccounts: every Active namespace has a ServiceAccount `default` (made when the
//    namespace appears, made again when it is deleted);
//  - root-ca-cert-publisher: with a CA (options.root_ca_pem, `serve`'s), every Active namespace
//    has the ConfigMap kube-root-ca.crt whose ca.crt is that CA (made, restored when deleted or
//    changed), which the kube-api-access volumes project as ca.crt;
//  - namespace (lifecycle, options.lifecycle): a namespace being deleted (Terminating, the
//    store's part) has its content deleted, its status conditions kept as the namespace
//    controller writes them, then the `kubernetes` finalizer removed and the namespace deleted.
// Reads namespaces, ServiceAccounts and kube-root-ca.crt ConfigMaps through client::Informers;
// each change asks for one coalesced pass over the namespaces it touched. A pass that met an
// error, or a namespace whose content is still going, is tried again after retry_interval.
// Thread safety: constructor, Start and Stop on the EventLoop thread (or before it runs);
// everything else runs on the EventLoop thread.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "emulator/client/client.h"
#include "emulator/client/informer.h"
#include "emulator/common/event_loop.h"

namespace pjemu::namespaces {

inline constexpr char kRootCaConfigMap[] = "kube-root-ca.crt";

struct NamespaceControllerOptions {
  std::string root_ca_pem;  // "" = publish no kube-root-ca.crt
  bool lifecycle = false;   // finish Terminating namespaces (the store must mark them)
  Duration retry_interval = 1s;
};

class NamespaceController {
 public:
  NamespaceController(client::Client& client, EventLoop& loop, NamespaceControllerOptions options);
  ~NamespaceController();  // Stop()
  NamespaceController(const NamespaceController&) = delete;
  NamespaceController& operator=(const NamespaceController&) = delete;

  // Starts the informers: the Client's errors.
  Status Start();
  void Stop();

 private:
  void Dirty(const std::string& ns);
  void SyncDirty();
  // One namespace: its ServiceAccount and ConfigMap, or (Terminating) its deletion. False when
  // it must be tried again.
  bool Sync(const std::string& ns);
  bool EnsureServiceAccount(const std::string& ns);
  bool EnsureRootCa(const std::string& ns);
  bool Finish(const Json& ns);  // namespace_lifecycle.cc

  client::Client& client_;
  EventLoop& loop_;
  NamespaceControllerOptions options_;
  std::map<std::string, Json> namespaces_;          // by name
  std::set<std::string> with_default_sa_;           // namespaces that have `default`
  std::map<std::string, std::string> root_ca_;      // namespace -> its kube-root-ca.crt ca.crt
  std::set<std::string> dirty_;
  bool sync_posted_ = false;
  EventLoop::TimerId retry_ = 0;
  std::shared_ptr<bool> alive_;
  std::unique_ptr<client::Informer> namespace_informer_;
  std::unique_ptr<client::Informer> sa_informer_;
  std::unique_ptr<client::Informer> ca_informer_;
};

}  // namespace pjemu::namespaces
