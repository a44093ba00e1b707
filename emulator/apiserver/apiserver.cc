#include "emulator/apiserver/apiserver.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <thread>
#include <vector>

#include "emulator/apiserver/kubeconfig.h"
#include "emulator/apiserver/listener.h"
#include "emulator/apiserver/metrics_api.h"
#include "emulator/apiserver/tls.h"

namespace pjemu::apiserver {

namespace net = boost::asio;


class ApiServer::Impl {
 public:
  Impl(store::Store& store, api::PodLogs* logs, ApiServerOptions options)
      : store_(store), logs_(logs), options_(std::move(options)) {}

  Status Start() {
    if (started_) return Status(Code::kInternal, "apiserver: already started");
    RouterOptions router_options{options_.token, options_.git_version,
                                 options_.clock, options_.mounts,
                                 options_.exec,  options_.limits.min_request_timeout};
    if (options_.usage != nullptr) {
      static const RealClock kRealClock;
      router_options.mounts.push_back(MakeMetricsMount(
          store_, *options_.usage, options_.clock ? *options_.clock : kRealClock));
      router_options.metrics_api = true;
    }
    if (options_.service_account_tokens != nullptr) {
      router_options.accept_token = [this](const std::string& token) {
        return AuthenticateServiceAccount(*options_.service_account_tokens, store_, token).ok();
      };
    }
    shared_ = std::make_shared<ServerShared>(store_, logs_, router_options, options_.limits);
    if (options_.tls || !options_.token.empty()) {
      TlsMaterial ca;
      if (options_.pki_dir.empty()) {
        ASSIGN_OR_RETURN(ca, GenerateCa());
      } else {
        ASSIGN_OR_RETURN(ca, LoadOrCreateCa(options_.pki_dir));
      }
      ASSIGN_OR_RETURN(TlsMaterial material, IssueServingCertificate(ca, options_.address));
      certificate_pem_ = ca.certificate_pem;
      ASSIGN_OR_RETURN(client_, IssueClientCertificate(ca, "kubernetes-admin", "system:masters"));
      auto ctx = std::make_shared<net::ssl::context>(net::ssl::context::tls_server);
      ctx->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                       net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                       net::ssl::context::no_tlsv1_1);
      boost::system::error_code ec;
      ctx->use_certificate_chain(net::buffer(material.certificate_pem), ec);
      if (!ec)
        ctx->use_private_key(net::buffer(material.private_key_pem), net::ssl::context::pem, ec);
      if (ec) return InternalError("apiserver: cannot load the TLS certificate: " + ec.message());
      shared_->ssl = ctx;
    }
    ioc_ = std::make_unique<net::io_context>(std::max(1, options_.threads));
    listener_ = std::make_shared<Listener>(*ioc_, shared_);
    RETURN_IF_ERROR(listener_->Open(options_.address, options_.port));
    listener_->Run();
    for (int i = 0; i < std::max(1, options_.threads); ++i) {
      threads_.emplace_back([this] { ioc_->run(); });
    }
    started_ = true;
    return Status::Ok();
  }

  void Stop() {
    if (!started_) return;
    started_ = false;
    listener_->Close();
    shared_->DisableWakers();
    ioc_->stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
    listener_.reset();
    ioc_.reset();  // destroys the sessions, which stop their watches
  }

  std::uint16_t port() const { return listener_ ? listener_->port() : last_port_; }
  bool tls() const { return options_.tls || !options_.token.empty(); }
  std::string url() const {
    return std::string(tls() ? "https://" : "http://") + options_.address + ":" +
           std::to_string(port());
  }
  const std::string& certificate_pem() const { return certificate_pem_; }
  const ApiServerOptions& options() const { return options_; }
  const TlsMaterial& client() const { return client_; }
  void RememberPort() {
    if (listener_) last_port_ = listener_->port();
  }

 private:
  store::Store& store_;
  api::PodLogs* logs_;
  ApiServerOptions options_;
  std::shared_ptr<ServerShared> shared_;
  std::unique_ptr<net::io_context> ioc_;
  std::shared_ptr<Listener> listener_;
  std::vector<std::thread> threads_;
  std::string certificate_pem_;
  TlsMaterial client_;  // the kubeconfig's admin client certificate (https)
  std::uint16_t last_port_ = 0;
  bool started_ = false;
};

ApiServer::ApiServer(store::Store& store, api::PodLogs* logs, ApiServerOptions options)
    : impl_(std::make_unique<Impl>(store, logs, std::move(options))) {}

ApiServer::~ApiServer() { Stop(); }

Status ApiServer::Start() {
  Status status = impl_->Start();
  impl_->RememberPort();
  return status;
}

void ApiServer::Stop() { impl_->Stop(); }
std::uint16_t ApiServer::port() const { return impl_->port(); }
bool ApiServer::tls() const { return impl_->tls(); }
std::string ApiServer::url() const { return impl_->url(); }
const std::string& ApiServer::certificate_pem() const { return impl_->certificate_pem(); }

std::string ApiServer::Kubeconfig(const std::string& ns, bool trust_certificate) const {
  KubeconfigOptions options;
  options.server = url();
  options.token = impl_->options().token;
  if (trust_certificate) {
    options.ca_pem = certificate_pem();
    options.client_certificate_pem = impl_->client().certificate_pem;
    options.client_key_pem = impl_->client().private_key_pem;
  }
  options.ns = ns;
  return RenderKubeconfig(options);
}

}  // namespace pjemu::apiserver
