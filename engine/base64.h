#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kerncast {

// Standard base64 (RFC 4648, with padding). Cubins travel this way inside JSON strings.
std::string base64_encode(std::string_view bytes);
std::string base64_encode(const std::vector<char>& bytes);
// Throws Error naming the offending position for characters outside the alphabet or a bad length.
std::vector<char> base64_decode(std::string_view text);

}  // namespace kerncast
