// Fuzz target: a SPDY/3.1 connection (emulator/apiserver/spdy_connection.h), once as an exec
// (stdin, stdout, stderr) and once as a port-forward, fed the input as the client's bytes in
// two pieces; its handlers answer on their channels and end as soon as they start.
// Invariants: no crash or escaping exception; every byte the server writes reads back as whole,
// well-formed frames.
#include "emulator/apiserver/spdy_connection.h"
#include "tests/fuzz/fuzz_targets.h"

namespace pjemu::fuzz {
namespace {

using apiserver::ChannelHandler;
using apiserver::ChannelSink;

class BytesSink : public ChannelSink {
 public:
  void Send(std::string message, bool) override { bytes += message; }
  void Close() override {}
  std::string bytes;
};

// Answers on stdout and the error channel (exec) or data and error (port-forward), then ends.
class AnsweringHandler : public ChannelHandler {
 public:
  void Start(std::shared_ptr<ChannelSink> sink) override {
    sink->Send(std::string("\x01out", 4), true);
    sink->Send(std::string("\x03{}", 3), true);
    sink->Send(std::string("\x00", 1) + "data", true);
    sink->Close();
  }
  void OnMessage(std::string, bool) override {}
  void Stop() override {}
};

void CheckFrames(const std::string& bytes) {
  apiserver::spdy::FrameReader reader(1 << 24, 1 << 20);
  reader.Feed(bytes);
  while (true) {
    auto next = reader.Next();
    FUZZ_CHECK(next.ok());
    if (!next->has_value()) break;
  }
}

}  // namespace

int FuzzSpdy(const std::uint8_t* data, std::size_t size) {
  std::string_view input = AsText(data, size);
  for (bool exec : {true, false}) {
    std::shared_ptr<apiserver::SpdyConnection> connection;
    if (exec) {
      apiserver::ExecOptions options;
      options.with_stdin = options.with_stdout = options.with_stderr = true;
      connection =
          apiserver::SpdyConnection::ForExec(std::make_shared<AnsweringHandler>(), options);
    } else {
      connection = apiserver::SpdyConnection::ForPortForward(
          [](std::uint16_t) { return std::make_shared<AnsweringHandler>(); });
    }
    auto sink = std::make_shared<BytesSink>();
    connection->Start(sink);
    connection->OnMessage(std::string(input.substr(0, size / 2)), true);
    connection->OnMessage(std::string(input.substr(size / 2)), true);
    connection->Stop();
    CheckFrames(sink->bytes);
  }
  return 0;
}

}  // namespace pjemu::fuzz
