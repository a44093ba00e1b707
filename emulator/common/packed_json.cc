#include "emulator/common/packed_json.h"

#include <zdict.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace pjemu {
namespace {

// MessagePack (nlohmann's encoder: twice as fast to write and a quarter faster to read as JSON
// text, no UTF-8 check to fail), then zstd at its first fast level: a value is packed in about
// 3 us (an Event) to 9 us (a Pod).
constexpr int kLevel = -1;

// Dictionaries. Each value is small, so on its own zstd finds little to reuse: an Event packs to
// about half its JSON text, a Pod to a third. Values of one kind share most of their keys and
// many values, so once kSamples values of a kind (apiVersion and kind) were packed, a zstd
// dictionary is trained from them (zstd's ZDICT_trainFromBuffer, tens of milliseconds) and every
// later value of that kind is packed with it. Measured on 1,000 jobs' objects: an Event 638 B ->
// 142 B, a Pod 1,860 B -> 228 B, a Service 735 B -> 142 B. A frame names its dictionary's id, so
// a value decodes whichever way it was packed.
constexpr std::size_t kSamples = 256;
constexpr std::size_t kSampleBytesMax = 1 << 20;  // per kind: trains early past this
constexpr std::size_t kSampleMax = 64 << 10;      // a larger value is not a sample
constexpr std::size_t kSamplesMin = 32;           // fewer, when the bytes ran out: no dictionary
constexpr std::size_t kDictionaryBytes = 16 << 10;
constexpr std::size_t kDictionariesMax = 32;  // kinds with a dictionary; later kinds get none

constexpr std::size_t kBufferKept = 64 << 10;  // a thread's buffer for decompressed values

struct Contexts {
  ZSTD_CCtx* compress = ZSTD_createCCtx();
  ZSTD_DCtx* decompress = ZSTD_createDCtx();
  // Room for the MessagePack of a value being decoded: the thread's own buffer, reused, so that a
  // decode neither allocates nor zero-fills it; a value past kBufferKept gets `large`.
  char* Room(std::size_t size, std::unique_ptr<char[]>& large) {
    if (size > kBufferKept) {
      large.reset(new char[size]);
      return large.get();
    }
    if (!buffer) buffer.reset(new char[kBufferKept]);
    return buffer.get();
  }
  std::unique_ptr<char[]> buffer;
  ~Contexts() {
    ZSTD_freeCCtx(compress);
    ZSTD_freeDCtx(decompress);
  }
};

// One pair per thread: reused contexts save zstd's setup on every small value.
Contexts& ThreadContexts() {
  thread_local Contexts contexts;
  return contexts;
}

[[noreturn]] void Corrupt(const char* what, const char* why) {
  std::fprintf(stderr, "pjemu: %s cannot be decoded (%s)\n", what, why);
  std::abort();
}

// A trained dictionary, prepared for both directions. Never freed: packed bytes anywhere in the
// process may name it.
struct Dictionary {
  unsigned id = 0;
  ZSTD_CDict* compress = nullptr;
  ZSTD_DDict* decompress = nullptr;
};

// The process's dictionaries, one per kind, and the samples of the kinds still learning.
// Thread safety: Learn takes the mutex; Find reads published dictionaries without it.
class Dictionaries {
 public:
  static Dictionaries& Get() {
    static Dictionaries* const all = new Dictionaries;  // outlives every thread that packs
    return *all;
  }

  // The dictionary of `kind` ("" packs without one), or null while it is learning; `bytes`
  // (the value's MessagePack) becomes one of its samples then.
  const Dictionary* Learn(const std::string& kind, const std::vector<std::uint8_t>& bytes) {
    if (kind.empty()) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = kinds_.find(kind);
    if (it == kinds_.end()) {
      if (kinds_.size() >= kDictionariesMax) return nullptr;
      it = kinds_.emplace(kind, Kind{}).first;
    }
    Kind& k = it->second;
    if (k.done) return k.dictionary;
    if (bytes.size() <= kSampleMax) {
      k.samples.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      k.sizes.push_back(bytes.size());
    }
    if (k.sizes.size() >= kSamples || k.samples.size() >= kSampleBytesMax) Train(k);
    return k.dictionary;
  }

  const Dictionary* Find(unsigned id) const {
    std::size_t n = published_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < n; ++i) {
      if (table_[i]->id == id) return table_[i];
    }
    return nullptr;
  }

 private:
  struct Kind {
    std::string samples;  // concatenated, as ZDICT_trainFromBuffer takes them
    std::vector<std::size_t> sizes;
    bool done = false;
    const Dictionary* dictionary = nullptr;
  };

  // REQUIRES: mu_ held. Ends the kind's learning, with a dictionary when zstd could make one.
  void Train(Kind& k) {
    k.done = true;
    std::string samples = std::move(k.samples);
    std::vector<std::size_t> sizes = std::move(k.sizes);
    k.samples = {};
    k.sizes = {};
    if (sizes.size() < kSamplesMin) return;
    std::string buffer(kDictionaryBytes, '\0');
    std::size_t n = ZDICT_trainFromBuffer(buffer.data(), buffer.size(), samples.data(),
                                          sizes.data(), static_cast<unsigned>(sizes.size()));
    if (ZDICT_isError(n)) return;
    unsigned id = ZDICT_getDictID(buffer.data(), n);
    std::size_t published = published_.load(std::memory_order_relaxed);
    if (id == 0 || Find(id) != nullptr || published >= table_.size()) return;
    auto* d = new Dictionary;
    d->id = id;
    d->compress = ZSTD_createCDict(buffer.data(), n, kLevel);
    d->decompress = ZSTD_createDDict(buffer.data(), n);
    if (d->compress == nullptr || d->decompress == nullptr) {
      ZSTD_freeCDict(d->compress);
      ZSTD_freeDDict(d->decompress);
      delete d;
      return;
    }
    table_[published] = d;
    published_.store(published + 1, std::memory_order_release);
    k.dictionary = d;
  }

  std::mutex mu_;
  std::map<std::string, Kind> kinds_;
  std::array<const Dictionary*, kDictionariesMax> table_{};  // [0, published_) are set
  std::atomic<std::size_t> published_{0};
};

// "apiVersion/kind" of an object that names both; "" for anything else.
std::string KindOf(const Json& value) {
  if (!value.is_object()) return "";
  auto api = value.find("apiVersion");
  auto kind = value.find("kind");
  if (api == value.end() || kind == value.end() || !api->is_string() || !kind->is_string()) {
    return "";
  }
  return api->get_ref<const std::string&>() + "/" + kind->get_ref<const std::string&>();
}

// Writes the MessagePack nlohmann's encoder (Json::to_msgpack) writes, byte for byte, without its
// generic writer: three times fewer instructions for a Pod, most of the packing thread's work
// once it also computes deferred managedFields (store/slot.h). The smallest form of each integer
// (a non-negative signed one as unsigned), a float as float 32 when that keeps it exactly, else
// float 64; strings, arrays and maps in their smallest header. Binary values (never in a tree
// parsed from JSON) make it return false; the caller then uses nlohmann's.
class FastMsgpackWriter {
 public:
  explicit FastMsgpackWriter(std::vector<std::uint8_t>& out) : out_(out) {}

  bool Write(const Json& v) {
    switch (v.type()) {
      case Json::value_t::null:
        return Byte(0xc0), true;
      case Json::value_t::boolean:
        return Byte(v.get<bool>() ? 0xc3 : 0xc2), true;
      case Json::value_t::number_unsigned:
        return Unsigned(v.get<std::uint64_t>()), true;
      case Json::value_t::number_integer:
        return Signed(v.get<std::int64_t>()), true;
      case Json::value_t::number_float:
        return Float(v.get<double>()), true;
      case Json::value_t::string:
        return Text(v.get_ref<const std::string&>()), true;
      case Json::value_t::array:
        Header(v.size(), 0x90, 0xdc);
        for (const Json& element : v) {
          if (!Write(element)) return false;
        }
        return true;
      case Json::value_t::object:
        Header(v.size(), 0x80, 0xde);
        for (const auto& [key, value] : v.items()) {
          Text(key);
          if (!Write(value)) return false;
        }
        return true;
      default:  // binary, discarded
        return false;
    }
  }

 private:
  void Byte(std::uint8_t b) { out_.push_back(b); }
  // `b` then the low `n` bytes of `v`, big-endian.
  void Big(std::uint8_t b, std::uint64_t v, int n) {
    const std::size_t at = out_.size();
    out_.resize(at + 1 + static_cast<std::size_t>(n));
    std::uint8_t* p = out_.data() + at;
    *p++ = b;
    for (int i = n - 1; i >= 0; --i) *p++ = static_cast<std::uint8_t>(v >> (8 * i));
  }
  void Unsigned(std::uint64_t v) {
    if (v <= 0x7f) return Byte(static_cast<std::uint8_t>(v));
    if (v <= 0xff) return Big(0xcc, v, 1);
    if (v <= 0xffff) return Big(0xcd, v, 2);
    if (v <= 0xffffffff) return Big(0xce, v, 4);
    Big(0xcf, v, 8);
  }
  void Signed(std::int64_t v) {
    if (v >= 0) return Unsigned(static_cast<std::uint64_t>(v));
    const auto bits = static_cast<std::uint64_t>(v);
    if (v >= -32) return Byte(static_cast<std::uint8_t>(bits));
    if (v >= INT8_MIN) return Big(0xd0, bits, 1);
    if (v >= INT16_MIN) return Big(0xd1, bits, 2);
    if (v >= INT32_MIN) return Big(0xd2, bits, 4);
    Big(0xd3, bits, 8);
  }
  void Float(double v) {
    const bool fits = v >= static_cast<double>(std::numeric_limits<float>::lowest()) &&
                      v <= static_cast<double>(std::numeric_limits<float>::max()) &&
                      static_cast<double>(static_cast<float>(v)) == v;
    if (fits) {
      std::uint32_t bits = 0;
      const float f = static_cast<float>(v);
      std::memcpy(&bits, &f, sizeof bits);
      return Big(0xca, bits, 4);
    }
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    Big(0xcb, bits, 8);
  }
  void Text(const std::string& s) {
    const std::size_t n = s.size();
    if (n <= 31) {
      Byte(static_cast<std::uint8_t>(0xa0 | n));
    } else if (n <= 0xff) {
      Big(0xd9, n, 1);
    } else if (n <= 0xffff) {
      Big(0xda, n, 2);
    } else {
      Big(0xdb, n, 4);
    }
    const std::size_t at = out_.size();
    out_.resize(at + n);
    std::memcpy(out_.data() + at, s.data(), n);
  }
  // An array's or map's header: fix form up to 15, then 16-bit, then 32-bit counts.
  void Header(std::size_t n, std::uint8_t fix, std::uint8_t wide) {
    if (n <= 15) return Byte(static_cast<std::uint8_t>(fix | n));
    if (n <= 0xffff) return Big(wide, n, 2);
    Big(static_cast<std::uint8_t>(wide + 1), n, 4);
  }

  std::vector<std::uint8_t>& out_;
};

// Reads the MessagePack nlohmann's encoder writes into a tree, about twice as fast as nlohmann's
// own reader (a Pod in 10 us instead of 28): the encoder writes an object's keys in the tree's
// order, so each member is appended to its map (a hinted insert, one comparison), its name built
// there from the input's bytes. Numbers come back as nlohmann's reader gives them (positive fixints
// and uints unsigned, negative fixints and ints signed, floats as doubles). Whatever it does not
// expect (binary and extension types, nesting deeper than kFastDepth, bytes left over) makes it
// return false, and the caller reads the bytes with nlohmann's reader instead.
class FastMsgpackReader {
 public:
  explicit FastMsgpackReader(std::string_view bytes)
      : p_(reinterpret_cast<const std::uint8_t*>(bytes.data())), end_(p_ + bytes.size()) {}

  bool Read(Json& out) { return Value(out, 0) && p_ == end_; }

 private:
  static constexpr int kFastDepth = 128;

  bool Take(std::size_t n, std::uint64_t& v) {
    if (static_cast<std::size_t>(end_ - p_) < n) return false;
    v = 0;
    for (std::size_t i = 0; i < n; ++i) v = (v << 8) | p_[i];
    p_ += n;
    return true;
  }
  // The next `n` bytes, as a view into the input.
  bool Text(std::size_t n, std::string_view& out) {
    if (static_cast<std::size_t>(end_ - p_) < n) return false;
    out = std::string_view(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }
  // A string's length from its type byte `b`; false when `b` is no string's.
  bool TextLength(std::uint8_t b, std::size_t& n) {
    std::uint64_t v = 0;
    if ((b & 0xe0) == 0xa0) {
      n = b & 0x1f;
      return true;
    }
    if (b < 0xd9 || b > 0xdb) return false;
    if (!Take(std::size_t{1} << (b - 0xd9), v)) return false;
    n = v;
    return true;
  }
  bool Map(std::size_t n, Json& out, int depth) {
    out = Json(Json::value_t::object);  // not Json::object(): no initializer list to read
    auto& object = out.get_ref<Json::object_t&>();
    object.reserve(std::min<std::size_t>(n, static_cast<std::size_t>(end_ - p_)));
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t length = 0;
      std::string_view key;
      if (p_ == end_ || !TextLength(*p_++, length) || !Text(length, key)) return false;
      auto it = object.emplace_hint(object.end(), key, nullptr);  // the name built in place
      if (!Value(it->second, depth + 1)) return false;  // a repeated key: the last one wins
    }
    return true;
  }
  bool Array(std::size_t n, Json& out, int depth) {
    if (n > static_cast<std::size_t>(end_ - p_)) return false;  // each element takes a byte
    out = Json(Json::value_t::array);
    auto& array = out.get_ref<Json::array_t&>();
    array.resize(n);
    for (Json& element : array) {
      if (!Value(element, depth + 1)) return false;
    }
    return true;
  }
  bool Count(std::size_t width, std::size_t& n) {
    std::uint64_t v = 0;
    if (!Take(width, v)) return false;
    n = v;
    return true;
  }
  bool String(std::size_t n, Json& out) {
    std::string_view text;
    if (!Text(n, text)) return false;
    out = std::string(text);
    return true;
  }
  bool Unsigned(std::size_t width, Json& out) {
    std::uint64_t v = 0;
    if (!Take(width, v)) return false;
    out = v;
    return true;
  }
  bool Signed(std::size_t width, Json& out) {  // big-endian two's complement, sign-extended
    std::uint64_t v = 0;
    if (!Take(width, v)) return false;
    const unsigned shift = 64 - 8 * static_cast<unsigned>(width);
    out = static_cast<std::int64_t>(v << shift) >> shift;
    return true;
  }
  bool Float(std::size_t width, Json& out) {
    std::uint64_t v = 0;
    if (!Take(width, v)) return false;
    if (width == 8) {
      double d = 0;
      std::memcpy(&d, &v, sizeof d);
      out = d;
      return true;
    }
    const std::uint32_t bits = static_cast<std::uint32_t>(v);
    float f = 0;
    std::memcpy(&f, &bits, sizeof f);
    out = static_cast<double>(f);
    return true;
  }
  bool Value(Json& out, int depth);

  const std::uint8_t* p_;
  const std::uint8_t* const end_;
};

// The type byte's families, in MessagePack's order of them.
bool FastMsgpackReader::Value(Json& out, int depth) {
  if (p_ == end_ || depth > kFastDepth) return false;
  const std::uint8_t b = *p_++;
  std::size_t n = 0;
  if (b <= 0x7f) return out = std::uint64_t{b}, true;                           // positive fixint
  if (b >= 0xe0) return out = std::int64_t{static_cast<std::int8_t>(b)}, true;  // negative
  if ((b & 0xf0) == 0x80) return Map(b & 0x0f, out, depth);                     // fixmap
  if ((b & 0xf0) == 0x90) return Array(b & 0x0f, out, depth);                   // fixarray
  if (TextLength(b, n)) return String(n, out);                                  // fixstr, str 8-32
  if (b == 0xc0) return out = nullptr, true;
  if (b == 0xc2 || b == 0xc3) return out = (b == 0xc3), true;
  if (b >= 0xcc && b <= 0xcf) return Unsigned(std::size_t{1} << (b - 0xcc), out);
  if (b >= 0xd0 && b <= 0xd3) return Signed(std::size_t{1} << (b - 0xd0), out);
  if (b == 0xca || b == 0xcb) return Float(b == 0xca ? 4 : 8, out);
  if (b == 0xdc || b == 0xdd) return Count(std::size_t{2} << (b - 0xdc), n) && Array(n, out, depth);
  if (b == 0xde || b == 0xdf) return Count(std::size_t{2} << (b - 0xde), n) && Map(n, out, depth);
  return false;  // binary and extension types: never in a JSON tree
}

}  // namespace

std::vector<std::uint8_t> ToMsgpack(const Json& value) {
  thread_local std::size_t room = 1024;  // the last value's size: most values repeat their kind's
  std::vector<std::uint8_t> bytes;
  bytes.reserve(room);
  if (!FastMsgpackWriter(bytes).Write(value)) return Json::to_msgpack(value);
  room = bytes.size();
  return bytes;
}

std::string PackJson(const Json& value) { return PackJson(value, KindOf(value)); }

std::string PackJson(const Json& value, const std::string& kind) {
  std::vector<std::uint8_t> bytes = ToMsgpack(value);
  const Dictionary* dictionary = Dictionaries::Get().Learn(kind, bytes);
  std::string packed(ZSTD_compressBound(bytes.size()), '\0');
  ZSTD_CCtx* cctx = ThreadContexts().compress;
  std::size_t n = dictionary != nullptr
                      ? ZSTD_compress_usingCDict(cctx, packed.data(), packed.size(), bytes.data(),
                                                 bytes.size(), dictionary->compress)
                      : ZSTD_compressCCtx(cctx, packed.data(), packed.size(), bytes.data(),
                                          bytes.size(), kLevel);
  if (ZSTD_isError(n)) return "";
  packed.resize(n);
  packed.shrink_to_fit();
  return packed;
}

Json UnpackJson(std::string_view packed, const char* what) {
  unsigned long long size = ZSTD_getFrameContentSize(packed.data(), packed.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) Corrupt(what, "frame");
  const Dictionary* dictionary = nullptr;
  if (unsigned id = ZSTD_getDictID_fromFrame(packed.data(), packed.size()); id != 0) {
    dictionary = Dictionaries::Get().Find(id);
    if (dictionary == nullptr) Corrupt(what, "unknown dictionary");
  }
  Contexts& contexts = ThreadContexts();
  std::unique_ptr<char[]> large;
  char* room = contexts.Room(size, large);
  std::size_t got =
      dictionary != nullptr
          ? ZSTD_decompress_usingDDict(contexts.decompress, room, size, packed.data(),
                                       packed.size(), dictionary->decompress)
          : ZSTD_decompressDCtx(contexts.decompress, room, size, packed.data(), packed.size());
  if (ZSTD_isError(got) || got != size) Corrupt(what, ZSTD_getErrorName(got));
  const std::string_view bytes(room, size);
  Json tree;
  if (FastMsgpackReader(bytes).Read(tree)) return tree;
  tree = Json::from_msgpack(bytes.begin(), bytes.end(), true, false);
  if (tree.is_discarded()) Corrupt(what, "MessagePack");
  return tree;
}

namespace {

// What UnpackShared decoded last, one entry per hash bucket (a newer decode takes the bucket).
class DecodedTrees {
 public:
  static DecodedTrees& Get() {
    static DecodedTrees* table = new DecodedTrees;  // never destroyed: read until the end
    return *table;
  }
  std::shared_ptr<const Json> Find(std::string_view bytes, std::size_t hash) {
    std::lock_guard<std::mutex> lock(mu_);
    const Entry& e = entries_[hash % kEntries];
    if (e.bytes != bytes) return nullptr;
    return e.tree.lock();
  }
  void Put(std::string_view bytes, std::size_t hash, const std::shared_ptr<const Json>& tree) {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& e = entries_[hash % kEntries];
    e.bytes.assign(bytes);
    e.tree = tree;
  }

 private:
  static constexpr std::size_t kEntries = 4096;
  struct Entry {
    std::string bytes;
    std::weak_ptr<const Json> tree;
  };
  std::mutex mu_;
  std::array<Entry, kEntries> entries_;  // GUARDED_BY(mu_)
};

}  // namespace

std::shared_ptr<const Json> UnpackShared(std::string_view packed, const char* what) {
  const std::size_t hash = std::hash<std::string_view>{}(packed);
  if (auto tree = DecodedTrees::Get().Find(packed, hash)) return tree;
  auto tree = std::make_shared<const Json>(UnpackJson(packed, what));
  DecodedTrees::Get().Put(packed, hash, tree);
  return tree;
}

}  // namespace pjemu
