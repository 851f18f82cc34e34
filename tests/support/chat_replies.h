#pragma once
// What tests of the LLM client and its users need around the loopback server: a client configuration pointing at
// it, and chat-completion bodies as an OpenAI-compatible server writes them.

#include "engine/llm/llm_client.h"
#include "tests/support/loopback_http_server.h"

#include <nlohmann/json.hpp>

#include <string>

namespace kerncast::test {

// Short waits throughout, so that retries and timeouts keep the tests fast.
inline LlmConfig loopbackLlmConfig(const LoopbackHttpServer& server) {
    LlmConfig c;
    c.endpoint = server.baseUrl();
    c.model = "test-model";
    c.timeout_s = 5;
    c.max_retries = 2;
    c.concurrency = 4;
    c.backoff_base_s = 0.01;
    c.backoff_max_s = 5;
    return c;
}

// content null: a tool-only answer.
inline std::string chatCompletionBody(const nlohmann::json& content, int promptTokens = 10, int completionTokens = 5,
                                      const nlohmann::json& toolCalls = nullptr) {
    nlohmann::json message = {{"role", "assistant"}, {"content", content}};
    if (!toolCalls.is_null())
        message["tool_calls"] = toolCalls;
    return nlohmann::json{
        {"id", "chatcmpl-1"},
        {"object", "chat.completion"},
        {"choices", nlohmann::json::array({{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}})},
        {"usage", {{"prompt_tokens", promptTokens}, {"completion_tokens", completionTokens}}}}
        .dump();
}

// The parent's program as an LLM mutation's prompt shows it (empty when the prompt has none).
inline std::string parentCodeOf(const std::string& prompt) {
    const size_t parent = prompt.find("# Parent to improve");
    const size_t code = prompt.find("```cuda\n", parent);
    const size_t end = prompt.find("\n```", code + 8);
    if (parent == std::string::npos || code == std::string::npos || end == std::string::npos)
        return {};
    return prompt.substr(code + 8, end + 1 - code - 8);
}

}  // namespace kerncast::test
