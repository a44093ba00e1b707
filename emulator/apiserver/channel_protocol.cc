#include "emulator/apiserver/channel_protocol.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "emulator/api/base64.h"
#include "emulator/common/strings.h"

namespace pjemu::apiserver {
namespace {

struct Served {
  const char* name;
  ChannelProtocol protocol;
};
constexpr Served kExecProtocols[] = {
    {"v5.channel.k8s.io", ChannelProtocol::kV5},
    {"v4.channel.k8s.io", ChannelProtocol::kV4},
    {"v4.base64.channel.k8s.io", ChannelProtocol::kV4Base64},
    {"channel.k8s.io", ChannelProtocol::kV1},
    {"base64.channel.k8s.io", ChannelProtocol::kV1Base64},
};
constexpr Served kPortForwardProtocols[] = {
    {"v4.channel.k8s.io", ChannelProtocol::kV4},
    {"v4.base64.channel.k8s.io", ChannelProtocol::kV4Base64},
    {"portforward.k8s.io", ChannelProtocol::kPortForward},
};

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// The items of a comma-separated header value, trimmed, empty ones left out.
std::vector<std::string> SplitList(std::string_view value) {
  std::vector<std::string> out;
  while (!value.empty()) {
    std::size_t comma = value.find(',');
    std::string item = Trim(value.substr(0, comma));
    if (!item.empty()) out.push_back(std::move(item));
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
  }
  return out;
}

constexpr std::string_view kSpdyExecVersion = "v4.channel.k8s.io";
constexpr std::string_view kSpdyPortForwardVersion = "portforward.k8s.io";

}  // namespace

std::optional<NegotiatedProtocol> NegotiateProtocol(std::string_view offered, bool port_forward) {
  if (Trim(offered).empty()) {
    return NegotiatedProtocol{port_forward ? ChannelProtocol::kPortForward : ChannelProtocol::kV1,
                              ""};
  }
  for (const std::string& name : SplitList(offered)) {
    auto check = [&](const auto& table) -> std::optional<NegotiatedProtocol> {
      for (const Served& s : table) {
        if (name == s.name) return NegotiatedProtocol{s.protocol, name};
      }
      return std::nullopt;
    };
    auto found = port_forward ? check(kPortForwardProtocols) : check(kExecProtocols);
    if (found) return found;
  }
  return std::nullopt;
}

std::string ServedProtocols(bool port_forward) {
  std::vector<std::string> names;
  if (port_forward) {
    for (const Served& s : kPortForwardProtocols) names.emplace_back(s.name);
  } else {
    for (const Served& s : kExecProtocols) names.emplace_back(s.name);
  }
  return Join(names, ", ");
}

bool IsBase64(ChannelProtocol protocol) {
  return protocol == ChannelProtocol::kV1Base64 || protocol == ChannelProtocol::kV4Base64;
}

std::string EncodeChannel(ChannelProtocol protocol, std::uint8_t channel, std::string_view data,
                          bool* text) {
  *text = IsBase64(protocol);
  if (*text) return std::string(1, static_cast<char>('0' + channel)) + api::EncodeBase64(data);
  std::string out(1, static_cast<char>(channel));
  out.append(data);
  return out;
}

std::optional<ChannelMessage> DecodeChannel(ChannelProtocol protocol, std::string_view message) {
  if (message.empty()) return std::nullopt;
  ChannelMessage out;
  if (IsBase64(protocol)) {
    char c = message[0];
    if (c < '0' || c > '9') return std::nullopt;
    out.channel = static_cast<std::uint8_t>(c - '0');
    auto data = api::DecodeBase64(message.substr(1));
    if (!data) return std::nullopt;
    out.data = std::move(*data);
    return out;
  }
  out.channel = static_cast<std::uint8_t>(message[0]);
  out.data = std::string(message.substr(1));
  return out;
}

Result<ExecOptions> ParseExecOptions(const Query& query, bool attach) {
  ExecOptions o;
  if (!attach) o.command = query.GetAll("command");
  o.container = query.Get("container");
  ASSIGN_OR_RETURN(o.with_stdin, query.GetBool("stdin"));
  ASSIGN_OR_RETURN(o.with_stdout, query.GetBool("stdout"));
  ASSIGN_OR_RETURN(o.with_stderr, query.GetBool("stderr"));
  ASSIGN_OR_RETURN(o.tty, query.GetBool("tty"));
  if (!attach && o.command.empty()) {
    return BadRequestError("command: you must specify at least one command for the container");
  }
  if (!o.with_stdin && !o.with_stdout && !o.with_stderr) {
    return BadRequestError("you must specify at least 1 of stdin, stdout, stderr");
  }
  return o;
}

std::optional<std::uint16_t> ParsePort(std::string_view text) {
  bool digits = !text.empty() && text.size() <= 5 &&
                std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  int port = digits ? std::stoi(std::string(text)) : 0;
  if (port < 1 || port > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(port);
}

Result<std::vector<std::uint16_t>> ParsePorts(const Query& query) {
  std::vector<std::uint16_t> ports;
  for (const std::string& value : query.GetAll("ports")) {
    std::string_view rest = value;
    while (true) {
      std::size_t comma = rest.find(',');
      std::string text = Trim(rest.substr(0, comma));
      std::optional<std::uint16_t> port = ParsePort(text);
      if (!port) return BadRequestError("ports: invalid port \"" + text + "\": must be 1-65535");
      ports.push_back(*port);
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
  }
  if (ports.empty()) return BadRequestError("ports: at least one port must be given");
  return ports;
}

std::string PortPrefix(std::uint16_t port) {
  std::string out(2, '\0');
  out[0] = static_cast<char>(port & 0xff);
  out[1] = static_cast<char>(port >> 8);
  return out;
}

std::string ExitStatusJson(int exit_code, const std::vector<std::string>& command) {
  if (exit_code == 0) return Json({{"metadata", Json::object()}, {"status", "Success"}}).dump();
  std::string code = std::to_string(exit_code);
  Json status = {
      {"metadata", Json::object()},
      {"status", "Failure"},
      {"message", "command terminated with non-zero exit code: error executing command [" +
                      Join(command, " ") + "], exit code " + code},
      {"reason", "NonZeroExitCode"},
      {"details", {{"causes", Json::array({Json{{"reason", "ExitCode"}, {"message", code}}})}}},
  };
  return status.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string ErrorStatusJson(const std::string& message) {
  std::string text = "error executing command in container: " + message;
  Json status = {
      {"metadata", Json::object()},
      {"status", "Failure"},
      {"message", "Internal error occurred: " + text},
      {"reason", "InternalError"},
      {"details", {{"causes", Json::array({Json{{"message", text}}})}}},
      {"code", 500},
  };
  return status.dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool IsWebSocketUpgrade(const HttpRequest& request) {
  return AsciiLower(request.Header("upgrade")) == "websocket" &&
         AsciiLower(request.Header("connection")).find("upgrade") != std::string::npos;
}

bool IsSpdyUpgrade(const HttpRequest& request) {
  return AsciiLower(request.Header("upgrade")) == "spdy/3.1" &&
         AsciiLower(request.Header("connection")).find("upgrade") != std::string::npos;
}

std::optional<std::string> NegotiateSpdy(std::string_view offered, bool port_forward) {
  std::string_view served = port_forward ? kSpdyPortForwardVersion : kSpdyExecVersion;
  for (const std::string& name : SplitList(offered)) {
    if (name == served) return name;
  }
  return std::nullopt;
}

HttpResponse SpdyRefusal(std::string_view offered, bool port_forward) {
  HttpResponse response;
  response.status = 403;
  response.content_type = "text/plain; charset=utf-8";
  std::string_view served = port_forward ? kSpdyPortForwardVersion : kSpdyExecVersion;
  response.body = "unable to upgrade: unable to negotiate protocol: client supports [" +
                  Join(SplitList(offered), " ") + "], server accepts [" + std::string(served) +
                  "]\n";
  return response;
}

std::vector<std::pair<std::string, std::string>> SpdyUpgradeHeaders(const std::string& version) {
  return {
      {"Connection", "Upgrade"}, {"Upgrade", "SPDY/3.1"}, {"X-Stream-Protocol-Version", version}};
}

bool OffersSpdyTunnel(std::string_view offered) {
  for (const std::string& name : SplitList(offered)) {
    if (name == kSpdyTunnelProtocol) return true;
  }
  return false;
}

HttpResponse UpgradeRefusal(const HttpRequest& request, bool port_forward) {
  std::string upgrade = request.Header("upgrade");
  std::string what = port_forward ? "port-forward" : "exec and attach";
  std::string served = "WebSocket (" + ServedProtocols(port_forward) + ") and SPDY/3.1 (" +
                       std::string(port_forward ? kSpdyPortForwardVersion : kSpdyExecVersion) + ")";
  std::string message;
  if (IsWebSocketUpgrade(request)) {
    message = "pjemu serves " + what + " over " + served + "; this client offered \"" +
              request.Header("sec-websocket-protocol") + "\"";
  } else if (!upgrade.empty()) {
    message = "pjemu serves " + what + " over " + served + "; this client asked for " + upgrade;
  } else {
    message = "Upgrade request required";
  }
  HttpResponse response;
  response.status = 400;
  response.body = Status(Code::kBadRequest, message)
                      .ToStatusJson()
                      .dump(-1, ' ', false, Json::error_handler_t::replace);
  return response;
}

}  // namespace pjemu::apiserver
