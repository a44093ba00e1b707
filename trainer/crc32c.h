// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of TFRecord framing, and
// the TFRecord mask over it. Hand-written (a 256-entry table, about 20 lines) because the
// trainer builds against LibTorch alone: zlib has only the IEEE CRC-32, Debian ships no C/C++
// CRC-32C library (only python3-crc32c, which the differential test uses to check this one),
// and the records are small (tens of bytes). Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace pjemu::trainer {

// CRC-32C of data, continuing from crc (0 to start): Crc32c("123456789") == 0xE3069283.
uint32_t Crc32c(std::string_view data, uint32_t crc = 0);

// TFRecord's masked CRC: rotate right by 15 bits, add 0xA282EAD8 (mod 2^32).
uint32_t MaskCrc32c(uint32_t crc);

// MaskCrc32c(Crc32c(data)).
inline uint32_t MaskedCrc32c(std::string_view data) { return MaskCrc32c(Crc32c(data)); }

}  // namespace pjemu::trainer
