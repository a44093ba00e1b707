// pods/exec, pods/attach and pods/portforward (router.h): the checks the real API server and
// kubelet make before a connection is upgraded, then the upgrade, to a WebSocket
// (channel_protocol.h) or to SPDY/3.1 (spdy_connection.h).
#include <functional>
#include <memory>

#include "emulator/apiserver/attach_channel.h"
#include "emulator/apiserver/channel_protocol.h"
#include "emulator/apiserver/exec_channel.h"
#include "emulator/apiserver/port_forward.h"
#include "emulator/apiserver/router.h"
#include "emulator/apiserver/spdy_connection.h"
#include "emulator/common/strings.h"

namespace pjemu::apiserver {
namespace {

// The container a request names, checked against the pod's spec as kube-apiserver does ("" =
// the only container).
Result<std::string> SpecContainer(const Json& pod, const std::string& name) {
  const Json& spec = pod.value("spec", Json::object());
  std::vector<std::string> names;
  for (const char* field : {"containers", "initContainers", "ephemeralContainers"}) {
    for (const Json& c : spec.value(field, Json::array())) {
      std::string n = c.value("name", "");
      if (n == name) return name;
      if (std::string(field) == "containers") names.push_back(n);
    }
  }
  std::string pod_name = pod["metadata"].value("name", "");
  if (!name.empty()) {
    return BadRequestError("container " + name + " is not valid for pod " + pod_name);
  }
  if (names.size() == 1) return names[0];
  return BadRequestError("a container name must be specified for pod " + pod_name +
                         ", choose one of: [" + Join(names, " ") + "]");
}

// The kubelet's answer for a container that does not run is plain text (http.Error), which
// kubectl shows as `unable to upgrade connection: container not found ("c")`.
HttpResponse PlainError(int code, const std::string& text) {
  HttpResponse response;
  response.status = code;
  response.content_type = "text/plain; charset=utf-8";
  response.body = text + "\n";
  return response;
}

HttpResponse WebSocketUpgrade(std::shared_ptr<ChannelHandler> handler, std::string subprotocol) {
  HttpResponse response;
  response.upgrade = std::move(handler);
  response.subprotocol = std::move(subprotocol);
  return response;
}

HttpResponse SpdyUpgrade(std::shared_ptr<ChannelHandler> handler, const std::string& version) {
  HttpResponse response;
  response.upgrade = std::move(handler);
  response.upgrade_kind = HttpResponse::UpgradeKind::kRaw;
  response.headers = SpdyUpgradeHeaders(version);
  return response;
}

// exec and attach: `make` gives the handler for the channel protocol the client speaks.
using ChannelFactory = std::function<std::shared_ptr<ChannelHandler>(ChannelProtocol)>;
HttpResponse ExecUpgrade(const HttpRequest& request, const ExecOptions& options,
                         const ChannelFactory& make) {
  if (IsWebSocketUpgrade(request)) {
    auto negotiated = NegotiateProtocol(request.Header("sec-websocket-protocol"), false);
    if (!negotiated) return UpgradeRefusal(request, false);
    return WebSocketUpgrade(make(negotiated->protocol), negotiated->name);
  }
  if (!IsSpdyUpgrade(request)) return UpgradeRefusal(request, false);
  std::string offered = request.Header("x-stream-protocol-version");
  auto version = NegotiateSpdy(offered, false);
  if (!version) return SpdyRefusal(offered, false);
  // v5's close signal is how the SPDY connection passes on the end of stdin.
  return SpdyUpgrade(SpdyConnection::ForExec(make(ChannelProtocol::kV5), options), *version);
}

// port-forward: a WebSocket names its ports in the query; SPDY (direct, or tunnelled in a
// WebSocket) names one in each pair of streams.
// `netns`: the pod's network namespace, where its ports are dialled ("" = the host's network).
Result<HttpResponse> PortForwardUpgrade(const HttpRequest& request, const Query& query,
                                        const std::string& pod, const std::string& uid,
                                        const std::string& netns) {
  static constexpr const char* kHost = "127.0.0.1";
  auto one_port = [pod, uid, netns](std::uint16_t port) -> std::shared_ptr<ChannelHandler> {
    auto channel = std::make_shared<PortForwardChannel>(
        pod, uid, kHost, std::vector<std::uint16_t>{port}, ChannelProtocol::kPortForward, false);
    channel->SetNetworkNamespace(netns);
    return channel;
  };
  if (IsWebSocketUpgrade(request)) {
    std::string offered = request.Header("sec-websocket-protocol");
    if (OffersSpdyTunnel(offered)) {
      return WebSocketUpgrade(SpdyConnection::ForPortForward(one_port),
                              std::string(kSpdyTunnelProtocol));
    }
    auto negotiated = NegotiateProtocol(offered, true);
    if (!negotiated) return UpgradeRefusal(request, true);
    ASSIGN_OR_RETURN(std::vector<std::uint16_t> ports, ParsePorts(query));
    auto channel = std::make_shared<PortForwardChannel>(pod, uid, kHost, std::move(ports),
                                                        negotiated->protocol);
    channel->SetNetworkNamespace(netns);
    return WebSocketUpgrade(channel, negotiated->name);
  }
  if (!IsSpdyUpgrade(request)) return UpgradeRefusal(request, true);
  std::string offered = request.Header("x-stream-protocol-version");
  auto version = NegotiateSpdy(offered, true);
  if (!version) return SpdyRefusal(offered, true);
  return SpdyUpgrade(SpdyConnection::ForPortForward(one_port), *version);
}

}  // namespace

Result<HttpResponse> Router::Connect(const HttpRequest& request, const ApiPath& path,
                                     const Query& query) const {
  if (request.method != "GET" && request.method != "POST") {
    return Status(Code::kMethodNotAllowed,
                  "the server does not allow this method on the requested resource");
  }
  ASSIGN_OR_RETURN(Json pod, store_.Get(*path.type, path.ns, path.name));
  if (pod["spec"].value("nodeName", "").empty()) {
    return BadRequestError("pod " + path.name + " does not have a host assigned");
  }
  bool port_forward = path.subresource == "portforward";
  if (port_forward) {
    std::string phase = pod.value("status", Json::object()).value("phase", "Pending");
    if (phase != "Running") {
      return BadRequestError("unable to forward port because pod is not running. Current status=" +
                             phase);
    }
    std::string netns =
        options_.exec != nullptr ? options_.exec->NetworkNamespace(path.ns, path.name) : "";
    return PortForwardUpgrade(request, query, path.name, pod["metadata"].value("uid", ""), netns);
  }
  bool attach = path.subresource == "attach";
  ASSIGN_OR_RETURN(ExecOptions options, ParseExecOptions(query, attach));
  ASSIGN_OR_RETURN(std::string container, SpecContainer(pod, options.container));
  if (attach) return Attach(request, path.ns, path.name, container, std::move(options));
  if (options_.exec == nullptr) return BadRequestError("exec: this server runs no kubelet");
  api::ExecRequest exec{path.ns,         path.name,          container,
                        options.command, options.with_stdin, options.tty};
  if (Status s = options_.exec->Check(exec); !s.ok()) {
    if (s.code() == Code::kInternal) return PlainError(500, s.message());
    return s;
  }
  api::PodExec& runner = *options_.exec;
  return ExecUpgrade(request, options, [&](ChannelProtocol protocol) {
    return std::make_shared<ExecChannel>(runner, exec, options, protocol);
  });
}

Result<HttpResponse> Router::Attach(const HttpRequest& request, const std::string& ns,
                                    const std::string& pod, const std::string& container,
                                    ExecOptions options) const {
  if (logs_ == nullptr) return BadRequestError("attach: this server runs no kubelet");
  api::LogRequest log{ns, pod, container, false};
  auto file = logs_->Find(log);
  if (!file.ok()) return file.status();
  if (!file->running) return PlainError(500, "container not found (\"" + container + "\")");
  return ExecUpgrade(request, options, [&](ChannelProtocol protocol) {
    return std::make_shared<AttachChannel>(*logs_, log, options, protocol);
  });
}

}  // namespace pjemu::apiserver
