// Standard base64 with padding (RFC 4648 section 4): the API's form of a
// Secret's bytes and a ConfigMap's binaryData. OpenSSL's EVP_EncodeBlock and
// EVP_DecodeBlock underneath.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessera {

std::string EncodeBase64(std::string_view bytes);
// nullopt when `text` is not base64 (padding and all).
std::optional<std::string> DecodeBase64(std::string_view text);

}  // namespace tessera
