// HttpClient: a client::Client over the Kubernetes REST API of a running `pjemu serve` (or any
// API server), over http or https (certificate checked against the kubeconfig's CA; a client
// certificate or a bearer token authenticates). The CLI's create/get/logs/wait/delete commands
// and `scenario run --kubeconfig` use it; the
// in-process actors use LocalClient instead. Synchronous Boost.Beast, one connection per call;
// watches and log follows read a chunked stream on a thread of their own.
// Thread safety: every method is safe to call from any thread (no shared connection state).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "emulator/client/client.h"

namespace pjemu::client {

struct HttpClientOptions {
  std::string server = "http://127.0.0.1:6443";  // http:// or https://host:port[/prefix]
  std::string token;        // sent as "Authorization: Bearer <token>" when set
  std::string ca_pem;       // https: trust this CA (PEM); "" = the system's roots
  bool insecure_skip_tls_verify = false;  // https: accept any certificate (kubeconfig's flag)
  // https: the client certificate (PEM chain) and its private key (PEM) offered when the server
  // asks for one (kubeconfig client-certificate-data / client-key-data); both or neither.
  std::string client_certificate_pem;
  std::string client_key_pem;
  Duration timeout = 30s;   // per request (connect + exchange); streams have none
};

// One HTTP exchange's answer.
struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string body;
};

class HttpClient final : public Client {
 public:
  // Errors in the server string show up on the first request (kBadRequest).
  explicit HttpClient(HttpClientOptions options);

  Result<Json> Create(const ResourceType& type, std::string_view ns, Json object,
                      const WriteOptions& options = {}) override;
  Result<Json> Get(const ResourceType& type, std::string_view ns, std::string_view name) override;
  Result<Json> List(const ResourceType& type, std::string_view ns,
                    const ListOptions& options = {}) override;
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
  // POST a policy/v1 Eviction (with options as its deleteOptions) to
  // /api/v1/namespaces/NS/pods/NAME/eviction: the server's own budgets decide.
  Status Evict(std::string_view ns, std::string_view name,
               const DeleteOptions& options = {}) override;
  // POST a v1 Binding (api::BindingBody) to /api/v1/namespaces/NS/pods/NAME/binding.
  Status Bind(std::string_view ns, std::string_view name, const api::PodBinding& binding) override;

  // A raw exchange: target is the path with query ("/api/v1/pods?limit=5"). kUnavailable when
  // the server cannot be reached; any HTTP status is a successful HttpReply.
  Result<HttpReply> Request(std::string_view method, std::string_view target,
                            std::string_view body = {}, std::string_view content_type = {},
                            std::string_view accept = "application/json");
  // GET target and hand the (de-chunked) body to on_data as it arrives, until the server ends
  // the response or on_data returns false. A non-2xx answer is returned as its Status.
  Status Stream(std::string_view target, const std::function<bool(std::string_view)>& on_data,
                std::string_view accept = "application/json, */*");

  // "/apis/kubeflow.org/v1/namespaces/ns/pytorchjobs[/name]" (ns "" = all namespaces).
  static std::string PathOf(const ResourceType& type, std::string_view ns,
                            std::string_view name = {});
  // Form encoding of one query value ("a b/c" -> "a+b%2Fc").
  static std::string QueryEscape(std::string_view value);

  const HttpClientOptions& options() const { return options_; }

 private:
  // Sends and decodes a JSON answer: 2xx -> the body as JSON, otherwise its Status.
  Result<Json> Call(std::string_view method, const std::string& target, const Json* body,
                    std::string_view content_type = "application/json");

  HttpClientOptions options_;
};

// Convenience factory, as MakeLocalClient is for the Store.
std::unique_ptr<HttpClient> MakeHttpClient(HttpClientOptions options);

}  // namespace pjemu::client
