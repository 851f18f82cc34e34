#include "engine/base64.h"

#include "core/error.h"

#include <array>
#include <cstdint>

namespace kerncast {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::array<int8_t, 256> decode_table() {
    std::array<int8_t, 256> table{};
    table.fill(-1);
    for (int i = 0; i < 64; ++i)
        table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
    return table;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const uint32_t v = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8) |
                           uint32_t(uint8_t(bytes[i + 2]));
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
        out += kAlphabet[v & 63];
    }
    const size_t rest = bytes.size() - i;
    if (rest == 1) {
        const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += "==";
    } else if (rest == 2) {
        const uint32_t v = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8);
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
        out += '=';
    }
    return out;
}

std::string base64_encode(const std::vector<char>& bytes) {
    return base64_encode(std::string_view(bytes.data(), bytes.size()));
}

std::vector<char> base64_decode(std::string_view text) {
    static const auto table = decode_table();
    if (text.size() % 4 != 0)
        throw Error("base64: length " + std::to_string(text.size()) + " is not a multiple of 4");
    std::vector<char> out;
    out.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = text[i + k];
            const bool last_group = i + 4 == text.size();
            if (c == '=' && last_group && k >= 2 && (k == 3 || text[i + 3] == '=')) {
                v[k] = 0;
                ++pad;
                continue;
            }
            if (pad > 0 || table[static_cast<unsigned char>(c)] < 0)
                throw Error("base64: unexpected character '" + std::string(1, c) + "' at offset " +
                            std::to_string(i + k));
            v[k] = table[static_cast<unsigned char>(c)];
        }
        const uint32_t n = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | uint32_t(v[3]);
        out.push_back(static_cast<char>((n >> 16) & 0xff));
        if (pad < 2)
            out.push_back(static_cast<char>((n >> 8) & 0xff));
        if (pad < 1)
            out.push_back(static_cast<char>(n & 0xff));
    }
    return out;
}

}  // namespace kerncast
