#include "emulator/apiserver/spdy_frames.h"

#include <array>

namespace pjemu::apiserver::spdy {
namespace {

constexpr std::uint16_t kVersion = 3;
constexpr std::size_t kFrameHeaderBytes = 8;
constexpr std::uint32_t kMaxLength = (1u << 24) - 1;

std::uint32_t Read32(std::string_view s, std::size_t at) {
  auto b = [&](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + i]));
  };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

void Put32(std::string* out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out->push_back(static_cast<char>((v >> shift) & 0xff));
}

// The eight bytes every control frame starts with: control bit, version, type, flags, length.
std::string ControlHeader(FrameType type, std::uint8_t flags, std::size_t length) {
  std::string out;
  Put32(&out, 0x80000000u | kVersion << 16 | static_cast<std::uint16_t>(type));
  Put32(&out, static_cast<std::uint32_t>(flags) << 24 | static_cast<std::uint32_t>(length));
  return out;
}

// The uncompressed header block: a count, then each name and value with its length.
std::string EncodeHeaders(const Headers& headers) {
  std::string out;
  Put32(&out, static_cast<std::uint32_t>(headers.size()));
  for (const auto& [name, value] : headers) {
    Put32(&out, static_cast<std::uint32_t>(name.size()));
    out += name;
    Put32(&out, static_cast<std::uint32_t>(value.size()));
    out += value;
  }
  return out;
}

Result<Headers> DecodeHeaders(std::string_view block) {
  auto need = [&](std::size_t at, std::size_t n) { return at + n <= block.size(); };
  if (!need(0, 4)) return BadRequestError("SPDY: header block too short");
  std::uint32_t count = Read32(block, 0);
  std::size_t at = 4;
  Headers headers;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::string field[2];
    for (std::string& f : field) {
      if (!need(at, 4)) return BadRequestError("SPDY: header block truncated");
      std::uint32_t length = Read32(block, at);
      at += 4;
      if (!need(at, length)) return BadRequestError("SPDY: header block truncated");
      f.assign(block.substr(at, length));
      at += length;
    }
    headers.emplace_back(std::move(field[0]), std::move(field[1]));
  }
  return headers;
}

// The draft's dictionary: these words, each after its length in four bytes, then the tail.
constexpr const char* kDictionaryWords[] = {"options",
                                            "head",
                                            "post",
                                            "put",
                                            "delete",
                                            "trace",
                                            "accept",
                                            "accept-charset",
                                            "accept-encoding",
                                            "accept-language",
                                            "accept-ranges",
                                            "age",
                                            "allow",
                                            "authorization",
                                            "cache-control",
                                            "connection",
                                            "content-base",
                                            "content-encoding",
                                            "content-language",
                                            "content-length",
                                            "content-location",
                                            "content-md5",
                                            "content-range",
                                            "content-type",
                                            "date",
                                            "etag",
                                            "expect",
                                            "expires",
                                            "from",
                                            "host",
                                            "if-match",
                                            "if-modified-since",
                                            "if-none-match",
                                            "if-range",
                                            "if-unmodified-since",
                                            "last-modified",
                                            "location",
                                            "max-forwards",
                                            "pragma",
                                            "proxy-authenticate",
                                            "proxy-authorization",
                                            "range",
                                            "referer",
                                            "retry-after",
                                            "server",
                                            "te",
                                            "trailer",
                                            "transfer-encoding",
                                            "upgrade",
                                            "user-agent",
                                            "vary",
                                            "via",
                                            "warning",
                                            "www-authenticate",
                                            "method",
                                            "get",
                                            "status",
                                            "200 OK",
                                            "version",
                                            "HTTP/1.1",
                                            "url",
                                            "public",
                                            "set-cookie",
                                            "keep-alive",
                                            "origin"};
constexpr const char* kDictionaryTail =
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 "
    "Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 "
    "Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, "
    "Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,application/"
    "xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age=gzip,deflate,"
    "sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.";

const Bytef* DictionaryBytes() { return reinterpret_cast<const Bytef*>(HeaderDictionary().data()); }

}  // namespace

std::string HeaderValue(const Headers& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (n == name) return v;
  }
  return "";
}

const std::string& HeaderDictionary() {
  static const std::string dictionary = [] {
    std::string out;
    for (const char* word : kDictionaryWords) {
      Put32(&out, static_cast<std::uint32_t>(std::char_traits<char>::length(word)));
      out += word;
    }
    return out + kDictionaryTail;
  }();
  return dictionary;
}

FrameReader::FrameReader(std::size_t max_frame_bytes, std::size_t max_header_bytes)
    : max_frame_bytes_(max_frame_bytes), max_header_bytes_(max_header_bytes) {
  zs_ready_ = inflateInit(&zs_) == Z_OK;
}

FrameReader::~FrameReader() {
  if (zs_ready_) inflateEnd(&zs_);
}

void FrameReader::Feed(std::string_view bytes) {
  if (offset_ > 0 && offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  }
  buffer_.append(bytes);
}

Result<std::optional<Frame>> FrameReader::Next() {
  std::string_view rest(buffer_);
  rest.remove_prefix(offset_);
  if (rest.size() < kFrameHeaderBytes) return std::optional<Frame>();
  std::uint32_t first = Read32(rest, 0);
  std::uint32_t second = Read32(rest, 4);
  std::size_t length = second & kMaxLength;
  if (length > max_frame_bytes_) {
    return BadRequestError("SPDY: a frame of " + std::to_string(length) +
                           " bytes is over the limit of " + std::to_string(max_frame_bytes_));
  }
  if (rest.size() < kFrameHeaderBytes + length) return std::optional<Frame>();
  std::string_view body = rest.substr(kFrameHeaderBytes, length);
  offset_ += kFrameHeaderBytes + length;
  Frame frame;
  frame.flags = static_cast<std::uint8_t>(second >> 24);
  if ((first & 0x80000000u) == 0) {
    frame.stream_id = first & 0x7fffffffu;
    frame.data.assign(body);
  } else {
    std::uint16_t version = (first >> 16) & 0x7fff;
    if (version != kVersion) {
      return BadRequestError("SPDY: version " + std::to_string(version) + " is not served (3 is)");
    }
    RETURN_IF_ERROR(ParseControl(static_cast<std::uint16_t>(first & 0xffff), body, &frame));
  }
  if (offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  }
  return std::optional<Frame>(std::move(frame));
}

Status FrameReader::ParseControl(std::uint16_t type, std::string_view body, Frame* frame) {
  frame->type = static_cast<FrameType>(type);
  auto at_least = [&](std::size_t n) {
    return body.size() >= n ? Status::Ok()
                            : BadRequestError("SPDY: control frame of type " +
                                              std::to_string(type) + " too short");
  };
  switch (frame->type) {
    case FrameType::kSynStream: {
      RETURN_IF_ERROR(at_least(10));
      frame->stream_id = Read32(body, 0) & 0x7fffffffu;
      ASSIGN_OR_RETURN(frame->headers, Inflate(body.substr(10)));
      return Status::Ok();
    }
    case FrameType::kSynReply:
    case FrameType::kHeaders: {
      RETURN_IF_ERROR(at_least(4));
      frame->stream_id = Read32(body, 0) & 0x7fffffffu;
      ASSIGN_OR_RETURN(frame->headers, Inflate(body.substr(4)));
      return Status::Ok();
    }
    case FrameType::kRstStream:
    case FrameType::kGoAway:
    case FrameType::kWindowUpdate:
      RETURN_IF_ERROR(at_least(8));
      frame->stream_id = Read32(body, 0) & 0x7fffffffu;
      frame->status = Read32(body, 4);
      return Status::Ok();
    case FrameType::kPing:
      RETURN_IF_ERROR(at_least(4));
      frame->stream_id = Read32(body, 0);
      return Status::Ok();
    case FrameType::kSettings:
      return Status::Ok();
    default:
      return BadRequestError("SPDY: unknown control frame type " + std::to_string(type));
  }
}

// Inflates one header block; the zlib stream goes on from the previous block.
Result<Headers> FrameReader::Inflate(std::string_view block) {
  if (!zs_ready_) return BadRequestError("SPDY: no zlib context");
  zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(block.data()));
  zs_.avail_in = static_cast<uInt>(block.size());
  std::string out;
  std::array<char, 4096> chunk{};
  do {
    zs_.next_out = reinterpret_cast<Bytef*>(chunk.data());
    zs_.avail_out = static_cast<uInt>(chunk.size());
    int rc = inflate(&zs_, Z_SYNC_FLUSH);
    if (rc == Z_NEED_DICT) {
      const std::string& dict = HeaderDictionary();
      rc = inflateSetDictionary(&zs_, DictionaryBytes(), static_cast<uInt>(dict.size()));
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return BadRequestError("SPDY: a header block does not inflate (zlib " + std::to_string(rc) +
                             ")");
    }
    out.append(chunk.data(), chunk.size() - zs_.avail_out);
    if (out.size() > max_header_bytes_) {
      return BadRequestError("SPDY: a header block inflates beyond " +
                             std::to_string(max_header_bytes_) + " bytes");
    }
    if (rc == Z_BUF_ERROR) break;  // no progress possible: all input used, all output out
  } while (zs_.avail_in > 0 || zs_.avail_out == 0);
  return DecodeHeaders(out);
}

FrameWriter::FrameWriter() {
  deflateInit(&zs_, Z_BEST_COMPRESSION);
  const std::string& dict = HeaderDictionary();
  deflateSetDictionary(&zs_, DictionaryBytes(), static_cast<uInt>(dict.size()));
}

FrameWriter::~FrameWriter() { deflateEnd(&zs_); }

std::string FrameWriter::Deflate(const Headers& headers) {
  std::string in = EncodeHeaders(headers);
  zs_.next_in = reinterpret_cast<Bytef*>(in.data());
  zs_.avail_in = static_cast<uInt>(in.size());
  std::string out;
  std::array<char, 4096> chunk{};
  do {
    zs_.next_out = reinterpret_cast<Bytef*>(chunk.data());
    zs_.avail_out = static_cast<uInt>(chunk.size());
    deflate(&zs_, Z_SYNC_FLUSH);
    out.append(chunk.data(), chunk.size() - zs_.avail_out);
  } while (zs_.avail_out == 0);
  return out;
}

std::string FrameWriter::SynStream(std::uint32_t stream_id, const Headers& headers, bool fin) {
  std::string block = Deflate(headers);
  std::string out = ControlHeader(FrameType::kSynStream, fin ? kFlagFin : 0, 10 + block.size());
  Put32(&out, stream_id & 0x7fffffffu);
  Put32(&out, 0);    // associated stream
  out.push_back(0);  // priority
  out.push_back(0);  // slot
  return out + block;
}

std::string FrameWriter::SynReply(std::uint32_t stream_id, const Headers& headers, bool fin) {
  std::string block = Deflate(headers);
  std::string out = ControlHeader(FrameType::kSynReply, fin ? kFlagFin : 0, 4 + block.size());
  Put32(&out, stream_id & 0x7fffffffu);
  return out + block;
}

std::string FrameWriter::Data(std::uint32_t stream_id, std::string_view data, bool fin) {
  std::string out;
  out.reserve(kFrameHeaderBytes + data.size());
  Put32(&out, stream_id & 0x7fffffffu);
  Put32(&out, static_cast<std::uint32_t>(fin ? kFlagFin : 0) << 24 |
                  static_cast<std::uint32_t>(data.size()));
  out.append(data);
  return out;
}

std::string FrameWriter::RstStream(std::uint32_t stream_id, std::uint32_t status) {
  std::string out = ControlHeader(FrameType::kRstStream, 0, 8);
  Put32(&out, stream_id & 0x7fffffffu);
  Put32(&out, status);
  return out;
}

std::string FrameWriter::Ping(std::uint32_t id) {
  std::string out = ControlHeader(FrameType::kPing, 0, 4);
  Put32(&out, id);
  return out;
}

std::string FrameWriter::GoAway(std::uint32_t last_good_stream_id, std::uint32_t status) {
  std::string out = ControlHeader(FrameType::kGoAway, 0, 8);
  Put32(&out, last_good_stream_id & 0x7fffffffu);
  Put32(&out, status);
  return out;
}

}  // namespace pjemu::apiserver::spdy
