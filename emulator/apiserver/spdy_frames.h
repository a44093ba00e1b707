// SPDY/3.1 framing, the part of it that Kubernetes' streaming connections use (kubectl exec and
// attach before 1.30, every kubectl's port-forward; the kubelet and kube-apiserver serve it
// through the spdystream library). A frame is either a control frame (SYN_STREAM, SYN_REPLY,
// RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE) or a data frame (a stream id,
// flags, up to 16 MiB of bytes). Header blocks are zlib-compressed with the dictionary the
// SPDY/3 draft defines, one compression context per direction for the whole connection, so
// frames must be read, and header blocks written, in connection order.
// Flow control (WINDOW_UPDATE, SETTINGS) is parsed and ignored, as spdystream does.
// Thread safety: a FrameReader and a FrameWriter are each used by one thread at a time; the
// static FrameWriter functions (frames without a header block) are safe from any thread.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::apiserver::spdy {

enum class FrameType : std::uint16_t {
  kData = 0,  // not a control frame
  kSynStream = 1,
  kSynReply = 2,
  kRstStream = 3,
  kSettings = 4,
  kPing = 6,
  kGoAway = 7,
  kHeaders = 8,
  kWindowUpdate = 9,
};

inline constexpr std::uint8_t kFlagFin = 0x01;
inline constexpr std::uint32_t kRstProtocolError = 1;
inline constexpr std::uint32_t kRstRefusedStream = 3;
inline constexpr std::uint32_t kRstCancel = 5;

// A header block: lower-case names, values as sent (several values are joined by '\0').
using Headers = std::vector<std::pair<std::string, std::string>>;
// The value of `name` ("" when absent).
std::string HeaderValue(const Headers& headers, std::string_view name);

struct Frame {
  FrameType type = FrameType::kData;
  std::uint8_t flags = 0;
  // The stream (data, SYN_STREAM, SYN_REPLY, RST_STREAM, HEADERS, WINDOW_UPDATE), the ping's
  // id (PING) or the last good stream (GOAWAY).
  std::uint32_t stream_id = 0;
  std::uint32_t status = 0;  // RST_STREAM and GOAWAY
  Headers headers;           // SYN_STREAM, SYN_REPLY, HEADERS
  std::string data;          // data frames
  bool fin() const { return (flags & kFlagFin) != 0; }
};

// The dictionary both zlib contexts start from (SPDY/3 draft, "Compression").
const std::string& HeaderDictionary();

// Reads frames from a connection's bytes, given in pieces of any size.
class FrameReader {
 public:
  // Frames whose length exceeds max_frame_bytes, and header blocks that inflate beyond
  // max_header_bytes, are protocol errors.
  FrameReader(std::size_t max_frame_bytes, std::size_t max_header_bytes);
  ~FrameReader();
  FrameReader(const FrameReader&) = delete;
  FrameReader& operator=(const FrameReader&) = delete;

  void Feed(std::string_view bytes);
  // The next whole frame, nullopt when more bytes are needed, or kBadRequest naming what is
  // wrong (a version other than 3, a frame too long or too short, a header block that does not
  // inflate or parse); after an error the connection cannot go on.
  Result<std::optional<Frame>> Next();

 private:
  Status ParseControl(std::uint16_t type, std::string_view body, Frame* frame);
  Result<Headers> Inflate(std::string_view block);

  std::size_t max_frame_bytes_;
  std::size_t max_header_bytes_;
  std::string buffer_;
  std::size_t offset_ = 0;  // the unread part of buffer_ starts here
  z_stream zs_{};
  bool zs_ready_ = false;
};

// Writes frames. Header blocks share one deflate context (SynStream, SynReply).
class FrameWriter {
 public:
  FrameWriter();
  ~FrameWriter();
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;

  std::string SynStream(std::uint32_t stream_id, const Headers& headers, bool fin);
  std::string SynReply(std::uint32_t stream_id, const Headers& headers, bool fin);

  static std::string Data(std::uint32_t stream_id, std::string_view data, bool fin);
  static std::string RstStream(std::uint32_t stream_id, std::uint32_t status);
  static std::string Ping(std::uint32_t id);
  static std::string GoAway(std::uint32_t last_good_stream_id, std::uint32_t status);

 private:
  std::string Deflate(const Headers& headers);
  z_stream zs_{};
};

}  // namespace pjemu::apiserver::spdy
