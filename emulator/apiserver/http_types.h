// HttpRequest / HttpResponse: the socket-free request and response the router works on. The
// session (session.cc) fills an HttpRequest from Beast and writes the HttpResponse back; a
// response with a `stream` is sent with chunked encoding (watches, log follows), one with an
// `upgrade` becomes a WebSocket or a SPDY connection (exec, attach, portforward).
// Thread safety: plain values; a StreamSource is used by one session at a time.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"  // Json

namespace pjemu::apiserver {

struct HttpRequest {
  std::string method;                          // "GET"
  std::string target;                          // "/api/v1/pods?watch=true" (raw, percent-encoded)
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// The body of a chunked streaming response, produced piece by piece.
class StreamSource {
 public:
  virtual ~StreamSource() = default;
  // Appends the output ready now to *out. Returns false once the stream has ended (what it
  // appended in that call is still sent).
  virtual bool Poll(std::string* out) = 0;
  // Called, from any thread, when Poll may have more to give. Sources without a push
  // notification return false and are polled every PollInterval().
  virtual bool SetNotify(std::function<void()> notify) = 0;
  virtual Duration PollInterval() const { return std::chrono::milliseconds(100); }
  // When the stream ends by itself (watch timeoutSeconds); nullopt = never.
  virtual std::optional<Duration> Timeout() const { return std::nullopt; }
  // Releases what the source holds (the session is gone).
  virtual void Stop() = 0;
  // True for a watch (counted against ApiServerOptions::max_watches).
  virtual bool IsWatch() const { return false; }
};

// Where an upgraded connection's handler sends (safe from any thread). Messages are queued and
// written in order; Close ends the connection once the queue is written (a normal closure).
// Send waits while the queue is full (a slow client slows the producer); Post never waits, for
// the few small messages a handler sends from the session's own strand (which drains the queue).
class ChannelSink {
 public:
  virtual ~ChannelSink() = default;
  virtual void Send(std::string message, bool binary) = 0;
  virtual void Post(std::string message, bool binary) { Send(std::move(message), binary); }
  virtual void Close() = 0;
};

// The server side of a connection upgraded to a WebSocket or to SPDY (pods/exec, attach,
// portforward); over SPDY (UpgradeKind::kRaw) each message is a piece of the raw byte stream.
// The session calls Start once after the handshake, OnMessage for each message the client
// sends (on the session's strand; it must not block), and Stop when the connection ends
// (client gone, Close written, server stopping); after Stop the sink drops what it is given.
class ChannelHandler {
 public:
  virtual ~ChannelHandler() = default;
  virtual void Start(std::shared_ptr<ChannelSink> sink) = 0;
  virtual void OnMessage(std::string message, bool binary) = 0;
  virtual void Stop() = 0;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers (Warning, ...)
  std::shared_ptr<StreamSource> stream;  // set: body is ignored, the stream is sent chunked
  // Set: the request is an upgrade the router accepted, and the session hands the connection to
  // the handler. kWebSocket: the session answers the handshake with `subprotocol` as
  // Sec-WebSocket-Protocol. kRaw (SPDY/3.1): it answers 101 with `headers` and passes the
  // connection's bytes both ways.
  enum class UpgradeKind { kWebSocket, kRaw };
  std::shared_ptr<ChannelHandler> upgrade;
  UpgradeKind upgrade_kind = UpgradeKind::kWebSocket;
  std::string subprotocol;
};

// A 200 answer holding `body` as JSON (invalid UTF-8 replaced, never a throw).
inline HttpResponse JsonAnswer(const Json& body, std::string content_type = "application/json") {
  HttpResponse response;
  response.content_type = std::move(content_type);
  response.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  return response;
}

// A handler mounted under a path prefix of the server (the web console at /ui/). It gets every
// request whose path starts with `prefix`, before authentication, and is told whether the
// request carried the server's token (always true without one): it decides what needs it. A
// GET of the prefix without its trailing '/' is redirected to it.
struct Mount {
  std::string prefix;  // "/ui/"
  std::function<HttpResponse(const HttpRequest& request, bool authorized)> handler;
};

}  // namespace pjemu::apiserver
