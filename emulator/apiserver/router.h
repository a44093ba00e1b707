// Router: the pure heart of the API server (no sockets: the session layer around it is thin).
// Route() turns one HttpRequest into one HttpResponse over the Store: authentication, path
// parsing, discovery/OpenAPI/version, and get/list/watch/create/update/patch/delete/
// deletecollection on every resource type of api::AllResources() with their status, scale, log
// and eviction subresources, exec and portforward, Table output, dryRun, fieldValidation and
// kube-apiserver's Status errors (apiserver.h lists the deviations). Watches and log follows
// come back as a response whose `stream` the session sends chunked; exec and portforward as one
// whose `upgrade` the session turns into a WebSocket.
// Thread safety: Route() is const and may run on several threads at once (the Store and
// PodLogs are thread-safe).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "emulator/api/disruption.h"
#include "emulator/api/exec.h"
#include "emulator/api/logs.h"
#include "emulator/apiserver/channel_protocol.h"
#include "emulator/apiserver/http_types.h"
#include "emulator/apiserver/object_texts.h"
#include "emulator/apiserver/paths.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/store/store.h"

namespace pjemu::apiserver {

struct RouterOptions {
  std::string token;                    // "" = no authentication
  std::string git_version = "v1.30.0";  // /version, OpenAPI info; must be full semver
  const Clock* clock = nullptr;         // Table ages and sinceSeconds; nullptr = real time
  std::vector<Mount> mounts;            // served before authentication (see Mount)
  api::PodExec* exec = nullptr;         // pods/exec (not owned); nullptr = 400
  // A watch without timeoutSeconds ends after this times a random factor in [1, 2) (0 = never).
  Duration min_request_timeout = std::chrono::seconds(1800);
  std::uint64_t seed = 0;  // of that factor; 0 = from std::random_device
  // With a token: whether another bearer token is accepted too (a service account's, checked
  // by the API server's authenticator); unset = only `token`.
  std::function<bool(const std::string&)> accept_token;
  bool metrics_api = false;  // /apis lists metrics.k8s.io (served by a mount, metrics_api.h)
};

// A v1 Status response for a failure (code and reason from the Status).
HttpResponse ErrorResponse(const Status& status);
// `Warning: 299 - "<text>"` header value.
std::string WarningHeader(const std::string& text);
// The Scale's spec.replicas of a pytorchjob (api/disruption.h: the budgets' scales read it too).
using api::ScaleSpecReplicas;
// A DELETE's options from its body (a JSON object, {} when none) and query: propagationPolicy
// (422 naming it when unknown), gracePeriodSeconds, preconditions, dryRun. Also the
// deleteOptions of an Eviction.
Result<api::DeleteOptions> DeleteOptionsFrom(const Json& body, const Query& query);
// The dryRun query parameter: false when absent, true for "All", 400 naming it otherwise.
Result<bool> DryRun(const Query& query);

class Router {
 public:
  Router(store::Store& store, api::PodLogs* logs, RouterOptions options);
  HttpResponse Route(const HttpRequest& request) const;

 private:
  Result<HttpResponse> RouteResource(const HttpRequest& request, const ApiPath& path,
                                     const Query& query) const;
  // A request to an older served version (older_version.cc).
  HttpResponse RouteOlderVersion(const HttpRequest& request, const ApiPath& path,
                                 const Query& query, const api::ServedVersion& older) const;
  Result<HttpResponse> Get(const HttpRequest& request, const ApiPath& path,
                           const Query& query) const;
  Result<HttpResponse> List(const HttpRequest& request, const ApiPath& path,
                            const Query& query) const;
  Result<HttpResponse> Watch(const HttpRequest& request, const ApiPath& path,
                             const Query& query) const;
  Result<HttpResponse> Create(const HttpRequest& request, const ApiPath& path,
                              const Query& query) const;
  Result<HttpResponse> Update(const HttpRequest& request, const ApiPath& path,
                              const Query& query) const;
  Result<HttpResponse> Patch(const HttpRequest& request, const ApiPath& path,
                             const Query& query) const;
  Result<HttpResponse> Delete(const HttpRequest& request, const ApiPath& path,
                              const Query& query) const;
  Result<HttpResponse> DeleteCollection(const HttpRequest& request, const ApiPath& path,
                                        const Query& query) const;
  Result<HttpResponse> Logs(const ApiPath& path, const Query& query) const;
  // pods/exec, pods/attach and pods/portforward (connect.cc): checks the pod, container and
  // options, then a WebSocket upgrade with a negotiated channel protocol, or the refusal of
  // SPDY (UpgradeRefusal).
  Result<HttpResponse> Connect(const HttpRequest& request, const ApiPath& path,
                               const Query& query) const;
  // pods/attach (connect.cc): follows the container's log (AttachChannel).
  Result<HttpResponse> Attach(const HttpRequest& request, const std::string& ns,
                              const std::string& pod, const std::string& container,
                              ExecOptions options) const;
  // The autoscaling/v1 Scale subresource of pytorchjobs.
  Result<HttpResponse> Scale(const HttpRequest& request, const ApiPath& path,
                             const Query& query) const;
  // POST pods/{name}/eviction: a policy/v1 (or v1beta1) Eviction, checked against the pod's
  // PodDisruptionBudgets (api::CheckEviction), then the pod deleted with its deleteOptions.
  Result<HttpResponse> Evict(const HttpRequest& request, const ApiPath& path,
                             const Query& query) const;
  // POST pods/{name}/binding: a v1 Binding (api::ParseBinding) applied by Store::BindPod (only
  // checked under dryRun=All); 201 with a Success Status, as kube-apiserver answers.
  Result<HttpResponse> Bind(const HttpRequest& request, const ApiPath& path,
                            const Query& query) const;
  // A PodDisruptionBudget as served: its status computed from the store's pods
  // (api::DisruptionStatus).
  Json BudgetWithStatus(Json pdb) const;
  bool Authorized(const HttpRequest& request, const std::string& path) const;

  store::Store& store_;
  api::PodLogs* logs_;
  RouterOptions options_;
  const Clock& clock_;
  // The stored objects' texts for GET, LIST and watch lines, shared by every watch stream
  // (they may outlive a request, not the server).
  std::shared_ptr<ObjectTexts> texts_ = std::make_shared<ObjectTexts>();
  // Evictions decide and delete one at a time, so two cannot both spend the last disruption
  // (kube-apiserver serialises them through the budget's resourceVersion).
  mutable std::mutex evictions_;
  // The lifetime of a watch without timeoutSeconds: min_request_timeout times [1, 2).
  Duration WatchLifetime() const;
  mutable std::mutex random_mu_;
  mutable std::mt19937_64 random_;  // GUARDED_BY(random_mu_)
};

}  // namespace pjemu::apiserver
