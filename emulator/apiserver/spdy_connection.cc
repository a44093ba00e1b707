#include "emulator/apiserver/spdy_connection.h"

#include <algorithm>

namespace pjemu::apiserver {
namespace {

using spdy::FrameType;
using spdy::FrameWriter;

// The channel each exec/attach stream type carries (its index).
constexpr const char* kExecStreamTypes[] = {"stdin", "stdout", "stderr", "error", "resize"};

std::optional<std::uint8_t> ExecChannelOf(const std::string& type) {
  for (std::uint8_t i = 0; i < std::size(kExecStreamTypes); ++i) {
    if (type == kExecStreamTypes[i]) return i;
  }
  return std::nullopt;
}

// A channel message as the handlers read it (they speak binary v5 channels here).
std::string OnChannel(std::uint8_t channel, std::string_view data) {
  bool text = false;
  return EncodeChannel(ChannelProtocol::kV5, channel, data, &text);
}

std::string CloseSignal(std::uint8_t channel) {
  return std::string{static_cast<char>(kCloseSignal), static_cast<char>(channel)};
}

}  // namespace

// What a channel handler sends, as data frames on the streams its channels map to; Close ends
// each of them (FIN) and, for exec/attach, the connection.
class SpdyStreamSink final : public ChannelSink {
 public:
  // `last_good` > 0: Close ends the connection too, naming that stream in its GOAWAY.
  SpdyStreamSink(std::shared_ptr<SpdyOut> out, std::vector<std::uint32_t> streams,
                 std::uint32_t last_good)
      : out_(std::move(out)), streams_(std::move(streams)), last_good_(last_good) {}

  void Send(std::string message, bool) override {
    if (closed_ || message.empty()) return;
    auto channel = static_cast<std::uint8_t>(message[0]);
    if (channel >= streams_.size() || streams_[channel] == 0) return;
    out_->Emit(FrameWriter::Data(streams_[channel], std::string_view(message).substr(1), false));
  }

  void Close() override {
    if (closed_.exchange(true)) return;
    for (std::uint32_t id : streams_) {
      if (id != 0) out_->Emit(FrameWriter::Data(id, "", true));
    }
    if (last_good_ == 0) return;
    out_->Emit(FrameWriter::GoAway(last_good_, 0));
    out_->Close();
  }

  bool closed() const { return closed_; }

 private:
  std::shared_ptr<SpdyOut> out_;
  std::vector<std::uint32_t> streams_;  // by channel; 0 = no stream
  std::uint32_t last_good_;
  std::atomic<bool> closed_{false};
};

void SpdyOut::Emit(std::string frame) {
  if (strand_.load() == std::this_thread::get_id()) {
    sink_->Post(std::move(frame), true);
  } else {
    sink_->Send(std::move(frame), true);
  }
}

SpdyOut::StrandGuard::StrandGuard(SpdyOut* o) : out(o) {
  if (out) out->strand_ = std::this_thread::get_id();
}

SpdyOut::StrandGuard::~StrandGuard() {
  if (out) out->strand_ = std::thread::id();
}

std::shared_ptr<SpdyConnection> SpdyConnection::ForExec(std::shared_ptr<ChannelHandler> handler,
                                                        const ExecOptions& options) {
  std::shared_ptr<SpdyConnection> c(new SpdyConnection());
  c->exec_ = std::move(handler);
  c->expected_ = {"error"};
  if (options.with_stdin) c->expected_.emplace_back("stdin");
  if (options.with_stdout) c->expected_.emplace_back("stdout");
  if (options.with_stderr && !options.tty) c->expected_.emplace_back("stderr");
  if (options.tty) c->expected_.emplace_back("resize");
  c->exec_streams_.assign(std::size(kExecStreamTypes), 0);
  return c;
}

std::shared_ptr<SpdyConnection> SpdyConnection::ForPortForward(PortHandlerFactory make) {
  std::shared_ptr<SpdyConnection> c(new SpdyConnection());
  c->make_port_ = std::move(make);
  return c;
}

void SpdyConnection::Start(std::shared_ptr<ChannelSink> sink) {
  out_ = std::make_shared<SpdyOut>(std::move(sink));
}

void SpdyConnection::OnMessage(std::string message, bool) {
  if (failed_ || stopped_ || !out_) return;
  SpdyOut::StrandGuard guard(out_.get());
  reader_.Feed(message);
  while (!failed_) {
    auto next = reader_.Next();
    if (!next.ok()) return Fail();
    if (!next->has_value()) return;
    Handle(std::move(**next));
  }
}

void SpdyConnection::Stop() {
  if (stopped_) return;
  stopped_ = true;
  SpdyOut::StrandGuard guard(out_.get());
  if (exec_ && exec_started_) exec_->Stop();
  for (auto& [id, pair] : pairs_) {
    if (pair.handler) pair.handler->Stop();
  }
}

void SpdyConnection::Handle(spdy::Frame frame) {
  switch (frame.type) {
    case FrameType::kSynStream:
      return OnSynStream(frame);
    case FrameType::kData:
      return OnData(frame);
    case FrameType::kRstStream:
      return OnReset(frame.stream_id);
    case FrameType::kPing:
      return out_->Emit(FrameWriter::Ping(frame.stream_id));
    case FrameType::kGoAway:
      return out_->Close();
    default:
      return;  // SETTINGS, WINDOW_UPDATE, HEADERS: nothing to do
  }
}

void SpdyConnection::OnSynStream(const spdy::Frame& frame) {
  std::uint32_t id = frame.stream_id;
  if (id == 0 || id % 2 == 0 || id <= last_stream_) {
    return out_->Emit(FrameWriter::RstStream(id, spdy::kRstProtocolError));
  }
  last_stream_ = id;
  if (streams_.size() >= kMaxStreams) {
    return out_->Emit(FrameWriter::RstStream(id, spdy::kRstRefusedStream));
  }
  out_->Emit(writer_.SynReply(id, {}, false));
  std::string type = spdy::HeaderValue(frame.headers, "streamtype");
  if (exec_) {
    AddExecStream(id, type);
  } else {
    AddPortStream(id, frame.headers);
  }
  if (frame.fin()) OnData(spdy::Frame{FrameType::kData, spdy::kFlagFin, id, 0, {}, ""});
}

void SpdyConnection::AddExecStream(std::uint32_t id, const std::string& type) {
  auto channel = ExecChannelOf(type);
  if (!channel) return;  // an unknown stream type gets its reply and nothing else
  streams_[id] = Stream{*channel, "", ""};
  exec_streams_[*channel] = id;
  std::erase(expected_, type);
  if (!expected_.empty() || exec_started_) return;
  exec_started_ = true;
  std::vector<std::uint32_t> by_channel = exec_streams_;
  by_channel[kStdinChannel] = 0;  // written by the client only
  by_channel[kResizeChannel] = 0;
  std::uint32_t last_good = *std::max_element(exec_streams_.begin(), exec_streams_.end());
  exec_->Start(std::make_shared<SpdyStreamSink>(out_, std::move(by_channel), last_good));
}

void SpdyConnection::AddPortStream(std::uint32_t id, const spdy::Headers& headers) {
  std::string type = spdy::HeaderValue(headers, "streamtype");
  std::string request = spdy::HeaderValue(headers, "requestid");
  if (type != "data" && type != "error") {
    return out_->Emit(FrameWriter::RstStream(id, spdy::kRstProtocolError));
  }
  // Forwarded connections that have ended are let go before a new one starts.
  for (auto it = pairs_.begin(); it != pairs_.end();) {
    Pair& p = it->second;
    if (!p.sink || !p.sink->closed()) {
      ++it;
      continue;
    }
    if (p.handler) p.handler->Stop();
    streams_.erase(p.error_stream);
    streams_.erase(p.data_stream);
    it = pairs_.erase(it);
  }
  Pair& pair = pairs_[request];
  (type == "data" ? pair.data_stream : pair.error_stream) = id;
  pair.port = spdy::HeaderValue(headers, "port");
  streams_[id] = Stream{static_cast<std::uint8_t>(type == "data" ? 0 : 1), request, ""};
  if (pair.data_stream != 0 && pair.error_stream != 0 && !pair.handler) StartPair(pair);
}

void SpdyConnection::StartPair(Pair& pair) {
  std::optional<std::uint16_t> port = ParsePort(pair.port);
  auto sink = std::make_shared<SpdyStreamSink>(
      out_, std::vector<std::uint32_t>{pair.data_stream, pair.error_stream}, 0);
  pair.sink = sink;
  if (!port) {
    sink->Send(OnChannel(1, "invalid port \"" + pair.port + "\": must be 1-65535"), true);
    sink->Close();
    return;
  }
  pair.handler = make_port_(*port);
  pair.handler->Start(sink);
}

void SpdyConnection::OnData(const spdy::Frame& frame) {
  auto it = streams_.find(frame.stream_id);
  if (it == streams_.end()) return;
  Stream& stream = it->second;
  ChannelHandler* handler = exec_.get();
  if (!exec_) {
    auto pair = pairs_.find(stream.request_id);
    if (pair == pairs_.end() || stream.channel != 0) return;  // the client's error stream: nothing
    handler = pair->second.handler.get();
  } else if (!exec_started_) {
    return;  // kubectl writes only once every stream is open
  }
  if (handler == nullptr) return;
  if (stream.channel == kResizeChannel) {
    stream.resize += frame.data;
    for (std::size_t nl; (nl = stream.resize.find('\n')) != std::string::npos;) {
      handler->OnMessage(OnChannel(kResizeChannel, stream.resize.substr(0, nl)), true);
      stream.resize.erase(0, nl + 1);
    }
    return;
  }
  if (stream.channel != kStdinChannel) return;  // data (portforward) is channel 0 too
  if (!frame.data.empty()) handler->OnMessage(OnChannel(0, frame.data), true);
  if (frame.fin()) handler->OnMessage(CloseSignal(0), true);
}

void SpdyConnection::OnReset(std::uint32_t stream_id) {
  auto it = streams_.find(stream_id);
  if (it == streams_.end()) return;
  if (exec_) {
    if (it->second.channel == kStdinChannel && exec_started_) {
      exec_->OnMessage(CloseSignal(kStdinChannel), true);
    }
    return;
  }
  auto pair = pairs_.find(it->second.request_id);
  if (pair == pairs_.end()) return;
  if (pair->second.handler) pair->second.handler->Stop();
  streams_.erase(pair->second.error_stream);
  streams_.erase(pair->second.data_stream);
  pairs_.erase(pair);
}

// A protocol error ends the connection (GOAWAY PROTOCOL_ERROR), as spdystream does.
void SpdyConnection::Fail() {
  failed_ = true;
  out_->Emit(FrameWriter::GoAway(last_stream_, 1));  // PROTOCOL_ERROR
  out_->Close();
}

}  // namespace pjemu::apiserver
