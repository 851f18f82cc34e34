#pragma once
// An OpenAI-compatible chat-completions client (vLLM, Ollama, llama.cpp server, OpenAI...) over libcurl's multi
// interface: many requests in flight, per-request timeouts, retries with backoff, a response cache, token and cost
// accounting. The LLM forecaster and the LLM mutators both talk to their endpoint through it.
//
// The API key goes into the Authorization header and nowhere else: results, errors, cache files and JSON dumps of
// the configuration never contain it (an error that echoes it back has it replaced by "[redacted]"; so has an
// answer, for keys of 16 characters or more: shorter ones are placeholders of local servers such as "EMPTY").

#include "core/run_store.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kerncast {

// Which server the endpoint is, as far as the shape of a request goes (docs/llm.md). `auto` starts with named tool
// calling, max_tokens and a temperature, and adapts once per endpoint and model when the server answers that one of
// them is not supported; the others send what that server is documented to accept.
enum class LlmProfile { Auto, OpenAI, Vllm, Ollama, LlamaCpp };
const char* to_string(LlmProfile profile);
// Throws kerncast::Error naming the accepted values.
LlmProfile llm_profile_from_string(const std::string& text);

// How a request is written for one endpoint and model.
struct RequestShape {
    enum class Tools {
        Named,     // tools with tool_choice naming the tool (several tools: "required")
        Required,  // tools with tool_choice "required"
        Auto,      // tools with tool_choice "auto"
        None,      // no tools: the JSON object is asked for in the content
    };
    Tools tools = Tools::Named;
    bool response_format = true;         // Tools::None: a response_format JSON schema, else a fenced-block instruction
    bool max_completion_tokens = false;  // the limit as max_completion_tokens instead of max_tokens
    bool temperature = true;             // send the temperature (reasoning models accept only their default)

    bool operator==(const RequestShape&) const = default;
    // e.g. "tools, tool_choice required, max_tokens, temperature".
    std::string describe() const;
};
void to_json(nlohmann::json& j, const RequestShape& s);
void from_json(const nlohmann::json& j, RequestShape& s);
// The first shape of a profile for a model.
RequestShape initial_request_shape(LlmProfile profile, const std::string& model);

// What the endpoints of a process have taught about request shapes, by endpoint and model: shared by the clients
// of one run (forecaster and mutators), and told to the run so that a resumed run starts from what it learned.
class RequestShapeMemory {
public:
    std::optional<RequestShape> find(const std::string& endpoint, const std::string& model) const;
    void remember(const std::string& endpoint, const std::string& model, const RequestShape& shape);
    struct Change {
        std::string endpoint, model, why;
        RequestShape shape;
    };
    // The shapes learned since the last call (once each), for the run's log.
    std::vector<Change> takeChanges();
    // Records a switch: remember() plus a change to take.
    void learn(const std::string& endpoint, const std::string& model, const RequestShape& shape,
               const std::string& why);

private:
    mutable std::mutex m_mutex;
    std::map<std::string, RequestShape> m_shapes;
    std::vector<Change> m_changes;
};

struct LlmConfig {
    std::string endpoint;     // base URL, e.g. http://localhost:8000/v1; requests go to <endpoint>/chat/completions
    std::string model;        // e.g. "Qwen/Qwen2.5-Coder-32B-Instruct"
    std::string api_key;      // empty: no Authorization header (local servers)
    std::string api_key_env;  // the environment variable that holds the key (a reference, never the key)
    LlmProfile profile = LlmProfile::Auto;
    // The defaults follow what reasoning models need (long answers, sampling at their default temperature).
    double timeout_s = 900;  // per attempt, connecting included
    int max_retries = 3;     // retries after the first attempt (429, 5xx, connection errors, timeouts)
    int concurrency = 8;     // requests in flight at once
    double temperature = 1.0;
    int max_tokens = 16384;
    // The longest prompt a mutation may send, in tokens (about 4 characters each): longer parts are cut, each cut
    // saying what it left out. 0: no limit.
    int max_prompt_tokens = 6000;
    double price_in_per_mtok = 0;   // USD per million prompt tokens
    double price_out_per_mtok = 0;  // USD per million completion tokens
    std::string cache_dir;          // where answers persist between runs; empty: memory only
    double backoff_base_s = 1.0;    // first retry waits about this long, doubling with each retry (with jitter)
    double backoff_max_s = 60;      // no wait is longer, a server's Retry-After included
    size_t max_response_bytes = size_t{16} << 20;  // a longer body is cut off and that request fails (not retried)

    // The key to use when none is configured: $KERNCAST_API_KEY, else the variable named by "api_key_env" in
    // settingsPath(), else $OPENAI_API_KEY, else "api_key" in settingsPath(); "" when none is set. Throws
    // kerncast::Error when the settings file exists but cannot be read or is not a JSON object (the message never
    // quotes the file's content).
    static std::string resolveApiKey();
    // ($XDG_CONFIG_HOME or ~/.config)/kerncast/llm.json: the fields of to_json, plus "api_key".
    static std::string settingsPath();
    // The defaults, overridden by the settings file's fields when it exists, with api_key = resolveApiKey().
    // Throws kerncast::Error (path: what is wrong) for a file that does not parse or has a field of the wrong type.
    static LlmConfig loadSettings();
    // loadSettings(), then the fields of `overrides` (to_json's names) on top: what a command line gives wins.
    static LlmConfig loadSettings(const nlohmann::json& overrides);
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
    // Whether the answer must be a call of one of the tools (the request shape decides how that is asked for: a
    // tool_choice, or a JSON object in the content that the client turns back into a tool call). false: tools
    // are offered with tool_choice "auto" where the shape has tools.
    bool tool_required = true;
    // Which of several samples of the same request this is: samples drawn at a temperature are distinct answers,
    // so the index is part of the cache key (it is not sent).
    int sample_index = 0;
    // A temperature for this request instead of the configured one (a question asked again after duplicate
    // answers is asked hotter); sent only where the request shape sends a temperature.
    std::optional<double> temperature;
};

struct ToolCall {
    std::string name;
    std::string arguments;      // JSON text as the model wrote it (it may not parse)
    bool from_content = false;  // read from the content (a request without tools), not a tool call
};

struct ChatResult {
    bool ok = false;
    std::string error;    // when !ok: the HTTP status and a snippet of the body, or curl's message
    int http_status = 0;  // of the last attempt; 0 when no HTTP answer came
    std::string content;  // the assistant message's text ("" when it only called tools)
    std::vector<ToolCall> tool_calls;
    int64_t tokens_in = 0;  // "usage" of the answer (a cached answer keeps the numbers it was made with)
    int64_t tokens_out = 0;
    double latency_ms = 0;  // from the first attempt's start to the result, retries and waits included
    double cost_usd = 0;    // what this call spent: 0 for a cached answer
    int attempts = 0;       // HTTP attempts made (0 for a cached answer)
    bool from_cache = false;
    std::string warning;        // a problem that did not fail the request (e.g. the cache could not be written)
    std::string reasoning;      // the message's reasoning / reasoning_content (servers with a reasoning parser)
    std::string finish_reason;  // as the server gave it ("stop", "tool_calls", "length"...)
    bool truncated = false;     // cut by the token limit: a failure whose tokens were spent
    std::string shape;          // RequestShape::describe() of the request that answered
    std::string prompt;         // the messages as sent, one "[role]" header each (what llm_calls stores)

    // The content, or else the tool calls' arguments (what llm_calls stores as the reply).
    std::string replyText() const;
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
    // The JSON body POSTed for a request in the current shape (model, messages, temperature, max_tokens or
    // max_completion_tokens, tools and tool_choice or response_format).
    nlohmann::ordered_json requestBody(const ChatRequest& request) const;
    nlohmann::ordered_json requestBody(const ChatRequest& request, const RequestShape& shape) const;
    // The shape requests are sent in now: what the memory learned for this endpoint and model, else the profile's.
    RequestShape shape() const;
    // Shares what this client learns (and starts from what it knows). Null: a memory of its own.
    void setShapeMemory(std::shared_ptr<RequestShapeMemory> memory);
    std::shared_ptr<RequestShapeMemory> shapeMemory() const { return m_shapes; }
    // The cache key: a hash of the model, the full request body and the sample index.
    std::string cacheKey(const ChatRequest& request) const;

private:
    struct Transfer;
    bool lookupCache(const std::string& key, ChatResult& out);
    void storeCache(const std::string& key, ChatResult& result);

    // A shape that the failed answer says to change (auto profile only); nullopt when it does not apply.
    std::optional<std::pair<RequestShape, std::string>> adaptedShape(const RequestShape& shape, int status,
                                                                     const std::string& body,
                                                                     const ChatRequest& request,
                                                                     const ChatResult* answered) const;

    LlmConfig m_config;
    std::shared_ptr<RequestShapeMemory> m_shapes;
    std::mutex m_cacheMutex;
    std::unordered_map<std::string, ChatResult> m_memoryCache;
};

// A stable 128-bit hash of a text in hex (request bodies, prompts).
std::string text_hash(const std::string& text);

// The last ```json fenced block of a text, or else its last top-level {...} that parses; null when there is none.
// A ```json block that is not an object is an error (kerncast::Error with a snippet).
nlohmann::json json_object_from_text(const std::string& text);

// The run store's record of one answer: kind, model, prompt, reply, reasoning, tokens, cost, latency; outcome "ok",
// or "truncated"/"failed" with the error for an answer that failed.
LlmCall llm_call_from(const ChatResult& result, const std::string& kind, const std::string& model);

// "reply cut at N tokens; raise --max-tokens": the error of a truncated answer.
std::string truncation_message(int64_t tokens);

}  // namespace kerncast
