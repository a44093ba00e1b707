// PackedJson: a JSON value kept as zstd-compressed MessagePack, for what is held a long time and
// read rarely (the store's versions at rest, store/slot.h; the kubelet's parked pods). A packed
// value is about a third of its JSON text and a fifteenth of its tree's memory; it decodes to an
// equal tree (the same keys, strings and values; non-negative integers come back unsigned, as
// any parsed JSON does).
// Thread safety: the functions are reentrant (each thread reuses zstd contexts of its own).
#pragma once

#include <string>
#include <string_view>

#include "emulator/common/status.h"

namespace pjemu {

// The packed bytes of `value`; "" when zstd fails (the caller keeps the tree).
std::string PackJson(const Json& value);

// The tree of bytes PackJson made. Bytes it did not make abort the process with a message naming
// `what`: they are the program's own memory, so a failure is a bug, not bad input.
Json UnpackJson(std::string_view packed, const char* what);

}  // namespace pjemu
