// The channel protocols of pods/exec, pods/attach and pods/portforward over WebSocket, as
// kube-apiserver and the kubelet speak them (apimachinery wsstream, remotecommand), and the
// request options they take. Each message carries one channel: its first byte is the channel
// number (binary protocols) or the digit '0'+n followed by base64 (the base64 ones).
//   exec/attach: 0 stdin, 1 stdout, 2 stderr, 3 error (at the end: a metav1.Status JSON from
//   v4 on, plain text with channel.k8s.io), 4 resize ({"Width":w,"Height":h}); v5 adds the
//   close signal, the message {255, n}: the client has no more data for channel n (stdin's EOF).
//   portforward: two channels per requested port (data 2i, error 2i+1); the first message the
//   server sends on each is the port, two bytes little-endian.
// SPDY/3.1 (what kubectl before 1.30 uses for exec, and every kubectl for port-forward, from
// 1.31 tunnelled in a WebSocket) carries the same channels as streams (spdy_connection.h); the
// version is negotiated in X-Stream-Protocol-Version: v4.channel.k8s.io for exec and attach,
// portforward.k8s.io for port-forward, as the kubelet serves them.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/apiserver/http_types.h"
#include "emulator/apiserver/paths.h"
#include "emulator/common/status.h"

namespace pjemu::apiserver {

enum class ChannelProtocol {
  kV1,           // channel.k8s.io (or no subprotocol at all): binary, error channel as text
  kV1Base64,     // base64.channel.k8s.io
  kV4,           // v4.channel.k8s.io: binary, error channel a Status
  kV4Base64,     // v4.base64.channel.k8s.io
  kV5,           // v5.channel.k8s.io: v4 plus the close signal
  kPortForward,  // portforward.k8s.io (binary, as kV4)
};

inline constexpr std::uint8_t kStdinChannel = 0;
inline constexpr std::uint8_t kStdoutChannel = 1;
inline constexpr std::uint8_t kStderrChannel = 2;
inline constexpr std::uint8_t kErrorChannel = 3;
inline constexpr std::uint8_t kResizeChannel = 4;
inline constexpr std::uint8_t kCloseSignal = 255;  // v5

struct NegotiatedProtocol {
  ChannelProtocol protocol;
  std::string name;  // echoed as Sec-WebSocket-Protocol ("" when the client offered none)
};

// The first protocol of the client's Sec-WebSocket-Protocol list (comma-separated, in its
// order of preference) that the server speaks for exec/attach (`port_forward` false) or
// portforward; nullopt when none (an empty header picks the binary kV1 / kPortForward).
std::optional<NegotiatedProtocol> NegotiateProtocol(std::string_view offered, bool port_forward);
// The protocols served, comma-separated, for messages.
std::string ServedProtocols(bool port_forward);
bool IsBase64(ChannelProtocol protocol);

struct ChannelMessage {
  std::uint8_t channel = 0;
  std::string data;
};
// One message to the client: the frame's bytes and whether it is a text frame (base64).
std::string EncodeChannel(ChannelProtocol protocol, std::uint8_t channel, std::string_view data,
                          bool* text);
// A message from the client (binary or text frame). nullopt for an empty message or bad
// base64. On binary protocols a text frame is read the same way (the Python client sends str
// payloads as text frames).
std::optional<ChannelMessage> DecodeChannel(ChannelProtocol protocol, std::string_view message);

// pods/exec and pods/attach options (PodExecOptions / PodAttachOptions from the query).
struct ExecOptions {
  std::vector<std::string> command;  // exec only: every `command` value, in order
  std::string container;
  bool with_stdin = false;
  bool with_stdout = false;
  bool with_stderr = false;
  bool tty = false;
};
// kBadRequest naming the parameter: a malformed boolean, no command (exec), none of
// stdin/stdout/stderr.
Result<ExecOptions> ParseExecOptions(const Query& query, bool attach);

// One port number (decimal digits, 1-65535); nullopt otherwise.
std::optional<std::uint16_t> ParsePort(std::string_view text);
// pods/portforward's `ports` (repeated and/or comma-separated): 1-65535 each, at least one.
Result<std::vector<std::uint16_t>> ParsePorts(const Query& query);
// The two little-endian bytes of a port (the first message on each of its channels).
std::string PortPrefix(std::uint16_t port);

// The error channel's last message for v4/v5 (a metav1.Status): Success for 0; for another
// code, Failure NonZeroExitCode with details.causes [{reason: ExitCode, message: "N"}], as the
// kubelet writes it.
std::string ExitStatusJson(int exit_code, const std::vector<std::string>& command);
// A Failure Status on the error channel for a command that could not run (InternalError).
std::string ErrorStatusJson(const std::string& message);

// The answer to a request that asks for no upgrade, or one pjemu does not serve: a 400 Status
// naming what is served, which kubectl shows as `Error from server (BadRequest):`.
HttpResponse UpgradeRefusal(const HttpRequest& request, bool port_forward);
// True when the request asks to upgrade to a WebSocket.
bool IsWebSocketUpgrade(const HttpRequest& request);
// True when the request asks to upgrade to SPDY/3.1.
bool IsSpdyUpgrade(const HttpRequest& request);
// The SPDY protocol version served among the client's offers (X-Stream-Protocol-Version, a
// comma-separated list in order of preference), or nullopt.
std::optional<std::string> NegotiateSpdy(std::string_view offered, bool port_forward);
// The kubelet's answer when no offered version is served: 403, plain text, naming both lists.
HttpResponse SpdyRefusal(std::string_view offered, bool port_forward);
// The 101 headers of an accepted SPDY upgrade with the negotiated version.
std::vector<std::pair<std::string, std::string>> SpdyUpgradeHeaders(const std::string& version);
// The WebSocket subprotocol in which kubectl 1.31+ tunnels port-forward's SPDY connection.
inline constexpr std::string_view kSpdyTunnelProtocol = "SPDY/3.1+portforward.k8s.io";
bool OffersSpdyTunnel(std::string_view offered);

}  // namespace pjemu::apiserver
