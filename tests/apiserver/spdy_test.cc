// Given SPDY/3.1 as kubectl's spdystream writes it, the server should read its frames from bytes
// in any pieces (header blocks inflated with one zlib context and the draft's dictionary),
// answer each stream, start an exec only once the streams its options call for are open, carry
// the channels as data frames, pass stdin's end as v5's close signal, end the streams and the
// connection when the exec ends, and give each forwarded connection (a pair of streams) a
// handler of its own for the port it names.
#include <zlib.h>

#include <catch2/catch.hpp>

#include "emulator/apiserver/spdy_connection.h"
#include "emulator/apiserver/spdy_frames.h"
#include "router_fixture.h"

namespace pjemu::apiserver {
namespace {

using spdy::Frame;
using spdy::FrameReader;
using spdy::FrameType;
using spdy::FrameWriter;
using testing::RecordingSink;

std::vector<Frame> ReadAll(FrameReader& reader, std::string_view bytes, std::size_t piece) {
  std::vector<Frame> frames;
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    reader.Feed(bytes.substr(at, piece));
    while (true) {
      auto next = reader.Next();
      INFO(next.status().message());
      REQUIRE(next.ok());
      if (!next->has_value()) break;
      frames.push_back(std::move(**next));
    }
  }
  return frames;
}

TEST_CASE("the header dictionary is the SPDY/3 draft's", "[spdy]") {
  const std::string& d = spdy::HeaderDictionary();
  CHECK(d.size() == 1423);
  CHECK(adler32(1, reinterpret_cast<const Bytef*>(d.data()), static_cast<uInt>(d.size())) ==
        0xe3c6a7c2);
}

TEST_CASE("frames round-trip from bytes in any pieces, header blocks in one zlib context",
          "[spdy]") {
  FrameWriter writer;
  // One statement a header block: they must be compressed in the order they are sent.
  std::string bytes = writer.SynStream(1, {{"streamtype", "error"}, {"port", "8080"}}, false);
  bytes += writer.SynStream(3, {{"streamtype", "data"}, {"port", "8080"}}, true);
  bytes += FrameWriter::Data(3, "hello", true) + FrameWriter::Ping(7) +
           FrameWriter::RstStream(1, spdy::kRstCancel) + FrameWriter::GoAway(3, 0);
  std::size_t piece = GENERATE(1, 5, 4096);
  FrameReader reader(1 << 20, 64 * 1024);
  std::vector<Frame> frames = ReadAll(reader, bytes, piece);
  REQUIRE(frames.size() == 6);
  CHECK(frames[0].type == FrameType::kSynStream);
  CHECK(frames[0].stream_id == 1);
  CHECK(spdy::HeaderValue(frames[0].headers, "streamtype") == "error");
  CHECK(spdy::HeaderValue(frames[1].headers, "streamtype") == "data");
  CHECK(spdy::HeaderValue(frames[1].headers, "port") == "8080");
  CHECK(frames[1].fin());
  CHECK(frames[2].type == FrameType::kData);
  CHECK(frames[2].data == "hello");
  CHECK(frames[2].fin());
  CHECK(frames[3].type == FrameType::kPing);
  CHECK(frames[3].stream_id == 7);
  CHECK(frames[4].type == FrameType::kRstStream);
  CHECK(frames[4].status == spdy::kRstCancel);
  CHECK(frames[5].type == FrameType::kGoAway);
  CHECK(frames[5].stream_id == 3);
}

TEST_CASE("a frame over the limit, another version or a broken header block is an error",
          "[spdy]") {
  FrameReader reader(16, 1024);
  SECTION("too long") {
    reader.Feed(FrameWriter::Data(1, std::string(17, 'x'), false));
    auto next = reader.Next();
    REQUIRE_FALSE(next.ok());
    CHECK(next.status().message() == "SPDY: a frame of 17 bytes is over the limit of 16");
  }
  SECTION("SPDY/2") {
    std::string ping = FrameWriter::Ping(1);
    ping[1] = 2;
    reader.Feed(ping);
    CHECK(reader.Next().status().message() == "SPDY: version 2 is not served (3 is)");
  }
  SECTION("a header block that is not zlib") {
    std::string syn = FrameWriter().SynReply(1, {}, false);
    syn.replace(12, std::string::npos, "garbage");
    syn[7] = static_cast<char>(syn.size() - 8);
    reader.Feed(syn);
    auto next = reader.Next();
    REQUIRE_FALSE(next.ok());
    CHECK(next.status().message().rfind("SPDY: a header block does not inflate", 0) == 0);
  }
}

class FakeHandler : public ChannelHandler {
 public:
  void Start(std::shared_ptr<ChannelSink> s) override { sink = std::move(s); }
  void OnMessage(std::string message, bool) override { got.push_back(std::move(message)); }
  void Stop() override { stopped = true; }
  std::shared_ptr<ChannelSink> sink;
  std::vector<std::string> got;
  bool stopped = false;
};

// The client's side of a connection: what it sends, and the frames the server wrote.
struct Client {
  explicit Client(std::shared_ptr<SpdyConnection> c) : connection(std::move(c)) {
    connection->Start(sink);
  }
  void Open(std::uint32_t id, spdy::Headers headers) {
    connection->OnMessage(writer.SynStream(id, headers, false), true);
  }
  void Send(std::string frame) { connection->OnMessage(std::move(frame), true); }
  std::vector<Frame> Received() {  // the frames written since the last call
    std::string bytes;
    for (; seen < sink->messages.size(); ++seen) bytes += sink->messages[seen].first;
    return ReadAll(reader, bytes, bytes.size() + 1);
  }
  std::shared_ptr<SpdyConnection> connection;
  std::shared_ptr<RecordingSink> sink = std::make_shared<RecordingSink>();
  FrameWriter writer;
  FrameReader reader{1 << 20, 64 * 1024};
  std::size_t seen = 0;
};

TEST_CASE("an exec starts once its streams are open and ends them all when it ends", "[spdy]") {
  auto handler = std::make_shared<FakeHandler>();
  ExecOptions options;
  options.with_stdin = options.with_stdout = options.with_stderr = true;
  Client client(SpdyConnection::ForExec(handler, options));
  client.Open(1, {{"streamtype", "error"}});
  client.Open(3, {{"streamtype", "stdin"}});
  client.Open(5, {{"streamtype", "stdout"}});
  CHECK_FALSE(handler->sink);  // stderr is still to come
  client.Open(7, {{"streamtype", "stderr"}});
  REQUIRE(handler->sink);
  std::vector<Frame> replies = client.Received();
  REQUIRE(replies.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(replies[i].type == FrameType::kSynReply);
    CHECK(replies[i].stream_id == 2 * i + 1);
  }

  client.Send(FrameWriter::Data(3, "abc", false));
  client.Send(FrameWriter::Data(3, "", true));
  client.Send(FrameWriter::Ping(9));
  CHECK(handler->got == std::vector<std::string>{std::string("\x00"
                                                             "abc",
                                                             4),
                                                 std::string("\xff\x00", 2)});
  std::vector<Frame> pong = client.Received();
  REQUIRE(pong.size() == 1);
  CHECK(pong[0].type == FrameType::kPing);
  CHECK(pong[0].stream_id == 9);

  handler->sink->Send("\x01out", true);
  handler->sink->Send(
      "\x02"
      "err",
      true);
  handler->sink->Send("\x03{\"status\":\"Success\"}", true);
  handler->sink->Close();
  CHECK(client.sink->closed);
  std::vector<Frame> end = client.Received();
  REQUIRE(end.size() == 7);
  CHECK((end[0].stream_id == 5 && end[0].data == "out"));
  CHECK((end[1].stream_id == 7 && end[1].data == "err"));
  CHECK((end[2].stream_id == 1 && end[2].data == "{\"status\":\"Success\"}"));
  for (int i = 3; i < 6; ++i) CHECK((end[i].type == FrameType::kData && end[i].fin()));
  CHECK(end[6].type == FrameType::kGoAway);
  CHECK(end[6].stream_id == 7);
  client.connection->Stop();
  CHECK(handler->stopped);
}

TEST_CASE("a tty exec waits for the resize stream, not stderr, and passes each size", "[spdy]") {
  auto handler = std::make_shared<FakeHandler>();
  ExecOptions options;
  options.with_stdout = options.with_stderr = options.tty = true;
  Client client(SpdyConnection::ForExec(handler, options));
  client.Open(1, {{"streamtype", "error"}});
  client.Open(3, {{"streamtype", "stdout"}});
  CHECK_FALSE(handler->sink);
  client.Open(5, {{"streamtype", "resize"}});
  REQUIRE(handler->sink);
  client.Send(FrameWriter::Data(5, "{\"Width\":80,\"Height\":24}\n{\"Wid", false));
  client.Send(FrameWriter::Data(5, "th\":100,\"Height\":30}\n", false));
  CHECK(handler->got == std::vector<std::string>{"\x04{\"Width\":80,\"Height\":24}",
                                                 "\x04{\"Width\":100,\"Height\":30}"});
}

TEST_CASE("each forwarded connection is a pair of streams with a handler for its port", "[spdy]") {
  std::vector<std::uint16_t> ports;
  std::vector<std::shared_ptr<FakeHandler>> handlers;
  Client client(SpdyConnection::ForPortForward([&](std::uint16_t port) {
    ports.push_back(port);
    handlers.push_back(std::make_shared<FakeHandler>());
    return handlers.back();
  }));
  client.Open(1, {{"streamtype", "error"}, {"port", "8080"}, {"requestid", "0"}});
  CHECK(ports.empty());
  client.Open(3, {{"streamtype", "data"}, {"port", "8080"}, {"requestid", "0"}});
  REQUIRE(ports == std::vector<std::uint16_t>{8080});
  client.Received();

  client.Send(FrameWriter::Data(3, "GET /", false));
  client.Send(FrameWriter::Data(3, "", true));
  CHECK(handlers[0]->got ==
        std::vector<std::string>{std::string("\x00GET /", 6), std::string("\xff\x00", 2)});
  handlers[0]->sink->Send(std::string("\x00", 1) + "HTTP/1.0 200", true);
  handlers[0]->sink->Close();
  std::vector<Frame> out = client.Received();
  REQUIRE(out.size() == 3);
  CHECK((out[0].stream_id == 3 && out[0].data == "HTTP/1.0 200"));
  CHECK((out[1].stream_id == 3 && out[1].fin()));
  CHECK((out[2].stream_id == 1 && out[2].fin()));
  CHECK_FALSE(client.sink->closed);  // the connection serves the next forwarded connection

  SECTION("a bad port is answered on the pair's error stream") {
    client.Open(5, {{"streamtype", "error"}, {"port", "x"}, {"requestid", "1"}});
    client.Open(7, {{"streamtype", "data"}, {"port", "x"}, {"requestid", "1"}});
    CHECK(ports.size() == 1);
    std::vector<Frame> bad = client.Received();
    REQUIRE(bad.size() == 5);  // two replies, the message, two FINs
    CHECK((bad[2].stream_id == 5 && bad[2].data == "invalid port \"x\": must be 1-65535"));
  }
  SECTION("the client's reset stops the pair's handler") {
    client.Open(5, {{"streamtype", "error"}, {"port", "9090"}, {"requestid", "1"}});
    client.Open(7, {{"streamtype", "data"}, {"port", "9090"}, {"requestid", "1"}});
    REQUIRE(handlers.size() == 2);
    client.Send(FrameWriter::RstStream(7, spdy::kRstCancel));
    CHECK(handlers[1]->stopped);
  }
  SECTION("streams beyond the limit are refused") {
    // The ended pair above is let go when the next stream opens: the limit is all new streams.
    std::uint32_t id = 5;
    for (std::size_t i = 0; i <= SpdyConnection::kMaxStreams; ++i, id += 2) {
      client.Open(id,
                  {{"streamtype", "error"}, {"port", "1"}, {"requestid", std::to_string(i + 1)}});
    }
    std::vector<Frame> answers = client.Received();
    REQUIRE(answers.size() == SpdyConnection::kMaxStreams + 1);
    CHECK(answers[answers.size() - 2].type == FrameType::kSynReply);
    CHECK(answers.back().type == FrameType::kRstStream);
    CHECK(answers.back().status == spdy::kRstRefusedStream);
  }
  SECTION("a protocol error ends the connection with GOAWAY") {
    std::string ping = FrameWriter::Ping(1);
    ping[1] = 2;
    client.Send(ping);
    std::vector<Frame> goaway = client.Received();
    REQUIRE(goaway.size() == 1);
    CHECK(goaway[0].type == FrameType::kGoAway);
    CHECK(goaway[0].status == 1);
    CHECK(client.sink->closed);
  }
}

}  // namespace
}  // namespace pjemu::apiserver
