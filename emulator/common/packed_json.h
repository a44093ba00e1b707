// PackedJson: a JSON value kept as zstd-compressed MessagePack, for what is held a long time and
// read rarely (the store's versions at rest, store/slot.h; the kubelet's parked pods). Objects
// that name an apiVersion and a kind are packed with a zstd dictionary of that kind, trained once
// from the first 256 packed (process-wide, up to 32 kinds): a Pod then packs to about a twentieth
// of its JSON text and an Event to about an eighth, where alone they pack to a third and a half. A
// packed value decodes to an equal tree (the same keys, strings and values; non-negative integers
// come back unsigned, as any parsed JSON does), whichever way it was packed.
// Thread safety: the functions are reentrant (each thread reuses zstd contexts of its own; the
// dictionaries are trained under a mutex and read without one once published).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu {

// The MessagePack of `value`, byte for byte what Json::to_msgpack writes, written in a third of
// its instructions (the packing's first step).
std::vector<std::uint8_t> ToMsgpack(const Json& value);

// The packed bytes of `value`; "" when zstd fails (the caller keeps the tree).
std::string PackJson(const Json& value);
// The same with the dictionary of `kind` (learned from the values packed under that name), for
// values that name no apiVersion and kind of their own but repeat their shape (the store's
// managedFields kept apart from their object, store/slot.h).
std::string PackJson(const Json& value, const std::string& kind);

// The tree of bytes PackJson made. Bytes it did not make abort the process with a message naming
// `what`: they are the program's own memory, so a failure is a bug, not bad input.
Json UnpackJson(std::string_view packed, const char* what);

// UnpackJson as a shared tree: the tree these same bytes were last decoded to while anyone still
// holds it, else a new one. Two holders of one version packed apart (the store's version at rest
// and the kubelet's parked pod) pack it to the same bytes, so the second to read it shares the
// first one's tree instead of decoding again. The table behind it is process-wide and bounded
// (the last 4,096 decoded, by a hash of their bytes, compared byte for byte on a hit).
std::shared_ptr<const Json> UnpackShared(std::string_view packed, const char* what);

}  // namespace pjemu
