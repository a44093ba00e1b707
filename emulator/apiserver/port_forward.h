// PortForwardChannel: the server side of pods/portforward over WebSocket (the kubelet's
// websocket port forwarding, what the Python client's kubernetes.stream.portforward speaks).
// For each requested port i, channel 2i carries data and 2i+1 errors; the first message on
// each is the port (PortPrefix). Pods share the host's network namespace (kubelet/README.md),
// so the port is connected on `host` (127.0.0.1, as the kubelet dials localhost inside the
// pod's namespace). A connection that fails sends `error forwarding port P to pod NAME, uid
// UID: ...` on the error channel; when every port's connection has ended, the WebSocket is
// closed. Stop (the client left) closes the connections. Over SPDY (spdy_connection.h) a
// channel serves one port, without the port prefixes, and the close signal {255, 2i} (the
// client's data stream ended) shuts the connection's writing half.
// Thread safety: Start, OnMessage and Stop on the session's strand; one reading thread per
// port holds a reference to the channel.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "emulator/apiserver/channel_protocol.h"
#include "emulator/apiserver/fd_writer.h"
#include "emulator/apiserver/http_types.h"

namespace pjemu::apiserver {

class PortForwardChannel final : public ChannelHandler,
                                 public std::enable_shared_from_this<PortForwardChannel> {
 public:
  PortForwardChannel(std::string pod, std::string uid, std::string host,
                     std::vector<std::uint16_t> ports, ChannelProtocol protocol,
                     bool port_prefix = true);
  ~PortForwardChannel() override;
  void Start(std::shared_ptr<ChannelSink> sink) override;
  void OnMessage(std::string message, bool binary) override;
  void Stop() override;
  // Dial the pod's ports inside this network namespace (a path; "" = the host's network),
  // where a pod with a network of its own listens. Call before Start.
  void SetNetworkNamespace(std::string path) { netns_ = std::move(path); }

 private:
  struct Port {
    std::uint16_t number = 0;
    int fd = -1;
    std::unique_ptr<FdWriter> writer;
  };
  void Send(std::uint8_t channel, std::string_view data);
  void Copy(std::size_t i);  // a port's thread: from the pod to the client
  void PortDone();

  std::string pod_;
  std::string uid_;
  std::string host_;
  std::string netns_;
  ChannelProtocol protocol_;
  bool port_prefix_;
  std::shared_ptr<ChannelSink> sink_;
  std::vector<Port> ports_;  // fixed after Start
  std::atomic<std::size_t> open_{0};
  std::atomic<bool> stopped_{false};
};

}  // namespace pjemu::apiserver
