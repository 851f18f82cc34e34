#pragma once
// An OpenAI-compatible chat-completions client (vLLM, Ollama, llama.cpp server, OpenAI...) over libcurl's multi
// interface: many requests in flight, per-request timeouts, retries with backoff, a response cache, token and cost
// accounting. The LLM forecaster and the LLM mutators both talk to their endpoint through it.
//
// The API key goes into the Authorization header and nowhere else: results, errors, cache files and JSON dumps of
// the configuration never contain it (an error that echoes it back has it replaced by "[redacted]"; so has an
// answer, for keys of 16 characters or more: shorter ones are placeholders of local servers such as "EMPTY").

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace kerncast {

struct LlmConfig {
    std::string endpoint;  // base URL, e.g. http://localhost:8000/v1; requests go to <endpoint>/chat/completions
    std::string model;  // e.g. "Qwen/Qwen2.5-Coder-32B-Instruct"
    std::string api_key;  // empty: no Authorization header (local servers)
    double timeout_s = 120;  // per attempt, connecting included
    int max_retries = 3;  // retries after the first attempt (429, 5xx, connection errors, timeouts)
    int concurrency = 8;  // requests in flight at once
    double temperature = 0.0;
    int max_tokens = 2048;
    double price_in_per_mtok = 0;  // USD per million prompt tokens
    double price_out_per_mtok = 0;  // USD per million completion tokens
    std::string cache_dir;  // where answers persist between runs; empty: memory only
    double backoff_base_s = 1.0;  // first retry waits about this long, doubling with each retry (with jitter)
    double backoff_max_s = 60;  // no wait is longer, a server's Retry-After included
    size_t max_response_bytes = size_t{16} << 20;  // a longer body is cut off and that request fails (not retried)

    // The key to use when none is configured: $KERNCAST_API_KEY, else $OPENAI_API_KEY, else "api_key" in
    // settingsPath(); "" when none is set. Throws kerncast::Error when the settings file exists but cannot be read
    // or is not a JSON object (the message never quotes the file's content).
    static std::string resolveApiKey();
    // ($XDG_CONFIG_HOME or ~/.config)/kerncast/llm.json: the fields of to_json, plus "api_key".
    static std::string settingsPath();
    // The defaults, overridden by the settings file's fields when it exists, with api_key = resolveApiKey().
    // Throws kerncast::Error (path: what is wrong) for a file that does not parse or has a field of the wrong type.
    static LlmConfig loadSettings();
};

// Every field but api_key, which is never written; reading ignores an "api_key" field and keeps the current value
// of a field that is absent. A field of the wrong type throws kerncast::Error naming it.
void to_json(nlohmann::json& j, const LlmConfig& c);
void from_json(const nlohmann::json& j, LlmConfig& c);

struct ChatMessage {
    std::string role;  // "system", "user", "assistant"
    std::string content;
};

struct ChatRequest {
    std::vector<ChatMessage> messages;
    // Ordered: a server that constrains decoding to a tool's schema generates the properties in the schema's order.
    nlohmann::ordered_json tools;  // null: none; else the OpenAI "tools" array
    nlohmann::ordered_json tool_choice;  // null: not sent; e.g. "auto" or {"type":"function","function":{...}}
    // Which of several samples of the same request this is: samples drawn at a temperature are distinct answers,
    // so the index is part of the cache key (it is not sent).
    int sample_index = 0;
};

struct ToolCall {
    std::string name;
    std::string arguments;  // JSON text as the model wrote it (it may not parse)
};

struct ChatResult {
    bool ok = false;
    std::string error;  // when !ok: the HTTP status and a snippet of the body, or curl's message
    int http_status = 0;  // of the last attempt; 0 when no HTTP answer came
    std::string content;  // the assistant message's text ("" when it only called tools)
    std::vector<ToolCall> tool_calls;
    int64_t tokens_in = 0;  // "usage" of the answer (a cached answer keeps the numbers it was made with)
    int64_t tokens_out = 0;
    double latency_ms = 0;  // from the first attempt's start to the result, retries and waits included
    double cost_usd = 0;  // what this call spent: 0 for a cached answer
    int attempts = 0;  // HTTP attempts made (0 for a cached answer)
    bool from_cache = false;
    std::string warning;  // a problem that did not fail the request (e.g. the cache could not be written)
};

class LlmClient {
public:
    // Throws kerncast::Error when the endpoint or the model is empty, or a number is out of range.
    explicit LlmClient(LlmConfig config);
    ~LlmClient();
    LlmClient(const LlmClient&) = delete;
    LlmClient& operator=(const LlmClient&) = delete;

    // One result per request, in order. Failures are results with ok = false, never exceptions. May be called
    // from several threads at once (they share the cache).
    std::vector<ChatResult> complete(const std::vector<ChatRequest>& requests);
    ChatResult completeOne(const ChatRequest& request);

    const LlmConfig& config() const { return m_config; }
    // The JSON body POSTed for a request (model, messages, temperature, max_tokens, tools, tool_choice).
    nlohmann::ordered_json requestBody(const ChatRequest& request) const;
    // The cache key: a hash of the model, the full request body and the sample index.
    std::string cacheKey(const ChatRequest& request) const;

private:
    struct Transfer;
    bool lookupCache(const std::string& key, ChatResult& out);
    void storeCache(const std::string& key, ChatResult& result);

    LlmConfig m_config;
    std::mutex m_cacheMutex;
    std::unordered_map<std::string, ChatResult> m_memoryCache;
};

// A stable 128-bit hash of a text in hex (request bodies, prompts).
std::string text_hash(const std::string& text);

}  // namespace kerncast
