// Standard base64 (RFC 4648, with padding), as Go's encoding/base64.StdEncoding: the wire form
// of a Secret's data values and of ConfigMaps' binaryData.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pjemu::api {

std::string EncodeBase64(std::string_view bytes);
// The decoded bytes, or nullopt with *bad_byte (may be null) set to the offset Go reports in
// `illegal base64 data at input byte N`.
std::optional<std::string> DecodeBase64(std::string_view text, std::size_t* bad_byte = nullptr);

}  // namespace pjemu::api
