#pragma once
// Text helpers shared by the LLM client's units (llm_client.cpp, llm_request_shape.cpp); private to engine/llm.

#include <algorithm>
#include <cctype>
#include <string>

namespace kerncast::llm_text {

inline std::string lowercase(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

}  // namespace kerncast::llm_text
