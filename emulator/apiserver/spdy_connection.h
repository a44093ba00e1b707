// SpdyConnection: the server side of a connection upgraded to SPDY/3.1, as the kubelet serves
// pods/exec, pods/attach and pods/portforward to kubectl (exec and attach before 1.30,
// port-forward in every version; from 1.31 port-forward tunnels the same bytes in WebSocket
// binary messages, subprotocol SPDY/3.1+portforward.k8s.io). It is a ChannelHandler over the
// connection's raw bytes: OnMessage is fed them in pieces of any size, and every frame it
// writes goes to the sink as one binary message. The client opens the streams; each gets a
// SYN_REPLY, and its `streamtype` header says which channel of a channel handler
// (channel_protocol.h) it carries:
//   exec/attach: error, stdin, stdout, stderr, resize (the v4.channel.k8s.io streams). The
//   handler (speaking kV5 channels) starts once every stream the request's options call for
//   is open; the stdin stream's FIN is v5's close signal; its Close ends every stream (FIN),
//   then the connection (GOAWAY).
//   portforward: a pair of streams (error, data) per forwarded connection, matched by their
//   `requestid` header and naming their `port`; each pair gets a handler of its own (a
//   single-port PortForwardChannel without port prefixes) on channels 0 (data) and 1 (error);
//   the data stream's FIN is a close signal for channel 0; its Close ends the pair's streams.
// PINGs are answered; RST_STREAM stops what the stream fed; a stream beyond kMaxStreams open
// at once is refused (RST_STREAM REFUSED_STREAM); a protocol error, or a frame over 1 MiB, ends
// the connection.
// Thread safety: Start, OnMessage and Stop on the session's strand (as every ChannelHandler);
// the handlers' own threads send through stream sinks that only write data frames (stateless)
// to the session's Outbox. What the strand itself sends (replies, pings, a handler's Start)
// is posted without waiting for room, so the strand never waits on the queue it drains.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "emulator/apiserver/channel_protocol.h"
#include "emulator/apiserver/http_types.h"
#include "emulator/apiserver/spdy_frames.h"

namespace pjemu::apiserver {

// Writes frames to the session: from the strand without blocking, from other threads with the
// Outbox's back-pressure. Shared by a connection and its stream sinks.
class SpdyOut {
 public:
  explicit SpdyOut(std::shared_ptr<ChannelSink> sink) : sink_(std::move(sink)) {}
  void Emit(std::string frame);
  void Close() { sink_->Close(); }
  // Marks the calling thread as the strand's while `guard` lives.
  struct StrandGuard {
    explicit StrandGuard(SpdyOut* out);
    ~StrandGuard();
    SpdyOut* out;
  };

 private:
  std::shared_ptr<ChannelSink> sink_;
  std::atomic<std::thread::id> strand_{};
};

class SpdyStreamSink;  // a handler's sink: its channels as data frames on its streams

class SpdyConnection final : public ChannelHandler,
                             public std::enable_shared_from_this<SpdyConnection> {
 public:
  using PortHandlerFactory = std::function<std::shared_ptr<ChannelHandler>(std::uint16_t port)>;

  // exec/attach: `handler` speaks kV5 channels; `options` say which streams to wait for.
  static std::shared_ptr<SpdyConnection> ForExec(std::shared_ptr<ChannelHandler> handler,
                                                 const ExecOptions& options);
  // portforward: `make(port)` gives the handler of one forwarded connection.
  static std::shared_ptr<SpdyConnection> ForPortForward(PortHandlerFactory make);

  void Start(std::shared_ptr<ChannelSink> sink) override;
  void OnMessage(std::string message, bool binary) override;
  void Stop() override;

  // The bytes a frame may have at most.
  static constexpr std::size_t kMaxFrameBytes = 1 << 20;
  // The streams open at once (a forwarded connection holds two, and a socket and a thread).
  static constexpr std::size_t kMaxStreams = 1024;

 private:
  struct Stream {
    std::uint8_t channel = 0;  // the channel it carries (exec), 0 data / 1 error (portforward)
    std::string request_id;    // portforward
    std::string resize;        // the resize stream's unparsed bytes (JSON values, one a line)
  };
  struct Pair {  // portforward: one forwarded connection
    std::uint32_t error_stream = 0;
    std::uint32_t data_stream = 0;
    std::string port;
    std::shared_ptr<ChannelHandler> handler;
    std::shared_ptr<SpdyStreamSink> sink;  // closed once the forwarded connection has ended
  };

  SpdyConnection() = default;
  void Handle(spdy::Frame frame);
  void OnSynStream(const spdy::Frame& frame);
  void OnData(const spdy::Frame& frame);
  void OnReset(std::uint32_t stream_id);
  void AddExecStream(std::uint32_t id, const std::string& type);
  void AddPortStream(std::uint32_t id, const spdy::Headers& headers);
  void StartPair(Pair& pair);
  void Fail();

  // exec/attach
  std::shared_ptr<ChannelHandler> exec_;
  std::vector<std::string> expected_;        // stream types still to come before the handler starts
  std::vector<std::uint32_t> exec_streams_;  // by channel (0 = none), stdin..resize
  bool exec_started_ = false;
  // portforward
  PortHandlerFactory make_port_;
  std::map<std::string, Pair> pairs_;  // by request id

  std::shared_ptr<SpdyOut> out_;
  spdy::FrameReader reader_{kMaxFrameBytes, 64 * 1024};
  spdy::FrameWriter writer_;
  std::map<std::uint32_t, Stream> streams_;
  std::uint32_t last_stream_ = 0;
  bool failed_ = false;
  bool stopped_ = false;
};

}  // namespace pjemu::apiserver
