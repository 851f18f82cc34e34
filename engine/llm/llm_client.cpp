#include "engine/llm/llm_client.h"
#include "core/text_util.h"
#include "engine/llm/llm_text.h"

#include "core/candidate.h"
#include "core/error.h"
#include "core/untrusted_json.h"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <type_traits>
#include <unistd.h>

namespace kerncast {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using llm_text::lowercase;
using nlohmann::json;

namespace {

constexpr size_t kSnippetChars = 300;
constexpr size_t kMinSecretChars = 16;
constexpr int kMaxShapeSwitches = 4;  // per request: every switch changes one thing, four cover them all

void initCurlOnce() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The start of a body for an error message, on one line.
std::string snippet(const std::string& text) {
    std::string s = text.substr(0, kSnippetChars);
    for (char& c : s)
        if (c == '\n' || c == '\r' || c == '\t')
            c = ' ';
    while (!s.empty() && s.back() == ' ')
        s.pop_back();
    if (text.size() > kSnippetChars)
        s += "...";
    return s.empty() ? "(empty body)" : s;
}

// A server may echo request headers in an error page; the key must not travel further than the header.
void redact(std::string& text, const std::string& secret) {
    if (secret.empty())
        return;
    for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at))
        text.replace(at, secret.size(), "[redacted]");
}

bool retryableStatus(long status) { return status == 408 || status == 429 || (status >= 500 && status <= 599); }

// What makes a reply's message unusable, or "": a tool call whose name is not a string (a number, an object) fails
// that request alone, never the batch it came in.
std::string malformedField(const json& message) {
    if (message.contains("content") && !message["content"].is_string() && !message["content"].is_null())
        return std::string("choices[0].message.content is ") + message["content"].type_name() + ", not a string";
    if (!message.contains("tool_calls") || !message["tool_calls"].is_array())
        return {};
    for (size_t i = 0; i < message["tool_calls"].size(); ++i) {
        const json& call = message["tool_calls"][i];
        if (!call.is_object() || !call.contains("function") || !call["function"].is_object())
            continue;
        const json& fn = call["function"];
        if (fn.contains("name") && !fn["name"].is_string())
            return "tool_calls[" + std::to_string(i) + "].function.name is " + fn["name"].type_name() +
                   ", not a string";
    }
    return {};
}

// A usage count: a non-negative integer, else 0 (a server that sends 1e300 or -5 has no usable count).
int64_t tokenCount(const json& usage, const char* key) {
    if (!usage.contains(key) || !usage[key].is_number())
        return 0;
    const double v = usage[key].get<double>();
    return v >= 0 && v < 1e15 ? static_cast<int64_t>(v) : 0;
}

bool retryableCurl(CURLcode code) {
    switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return true;
    default:
        return false;
    }
}

// Retry-After is either delta-seconds or an HTTP date.
std::optional<double> parseRetryAfter(const std::string& value) {
    const std::string v = trim(value);
    if (v.empty())
        return std::nullopt;
    char* end = nullptr;
    const double seconds = std::strtod(v.c_str(), &end);
    if (end && *end == '\0' && std::isfinite(seconds))
        return std::max(0.0, seconds);
    const time_t when = curl_getdate(v.c_str(), nullptr);
    if (when < 0)
        return std::nullopt;
    return std::max(0.0, std::difftime(when, std::time(nullptr)));
}

std::string chatUrl(const std::string& endpoint) {
    std::string base = endpoint;
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    const std::string suffix = "/chat/completions";
    if (base.size() >= suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0)
        return base;
    return base + suffix;
}

double uniform(double lo, double hi) {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    return std::uniform_real_distribution<double>(lo, hi)(rng);
}

json toolCallsJson(const std::vector<ToolCall>& calls) {
    json a = json::array();
    for (const auto& c : calls)
        a.push_back({{"name", c.name}, {"arguments", c.arguments}});
    return a;
}

std::optional<ChatResult> cachedResultFromJson(const json& j, const std::string& key) {
    if (!j.is_object() || j.value("key", std::string()) != key || !j.contains("content") || !j["content"].is_string() ||
        !j.contains("tool_calls") || !j["tool_calls"].is_array())
        return std::nullopt;
    ChatResult r;
    r.ok = true;
    r.content = j["content"].get<std::string>();
    for (const auto& c : j["tool_calls"]) {
        if (!c.is_object() || !c.contains("name") || !c["name"].is_string() || !c.contains("arguments") ||
            !c["arguments"].is_string())
            return std::nullopt;
        r.tool_calls.push_back({c["name"].get<std::string>(), c["arguments"].get<std::string>()});
    }
    r.http_status = j.value("http_status", 200);
    r.reasoning = j.value("reasoning", std::string());
    r.tokens_in = j.value("tokens_in", int64_t{0});
    r.tokens_out = j.value("tokens_out", int64_t{0});
    return r;
}

}  // namespace

std::string text_hash(const std::string& text) { return content_hash(text, {}); }

namespace {

bool contains(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }

// The spans [open, close] of the top-level {...} in a reply's text, in order, in one pass: braces inside strings do
// not count, quotes outside any object (prose) are ignored, and an object that never closes leaves the complete ones
// inside it as the top-level ones. One pass, because a reply is untrusted and may hold a million unclosed '{'.
std::vector<std::pair<size_t, size_t>> topLevelObjects(const std::string& text) {
    std::vector<std::pair<size_t, size_t>> objects;
    std::vector<size_t> open;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = !open.empty();
        } else if (c == '{') {
            open.push_back(i);
        } else if (c == '}' && !open.empty()) {
            const size_t start = open.back();
            open.pop_back();
            while (!objects.empty() && objects.back().first > start)
                objects.pop_back();  // nested in this one
            objects.emplace_back(start, i);
        }
    }
    return objects;
}

}  // namespace

json json_object_from_text(const std::string& text) {
    std::optional<std::string> lastJsonBlock;
    for (size_t at = text.find("```"); at != std::string::npos;) {
        const size_t lineEnd = text.find('\n', at);
        if (lineEnd == std::string::npos)
            break;
        std::string tag = text.substr(at + 3, lineEnd - at - 3);
        tag.erase(tag.find_last_not_of(" \r\t") + 1);
        const size_t close = text.find("```", lineEnd);
        if (close == std::string::npos)
            break;
        if (lowercase(tag) == "json")
            lastJsonBlock = text.substr(lineEnd + 1, close - lineEnd - 1);
        at = text.find("```", close + 3);
    }
    if (lastJsonBlock) {
        std::string invalid;
        const auto j = try_parse_untrusted_json(*lastJsonBlock, &invalid);
        if (!j || !j->is_object())
            throw Error("the last ```json block is not a JSON object" + (invalid.empty() ? "" : " (" + invalid + ")") +
                        ": \"" + snippet(*lastJsonBlock) + "\"");
        return *j;
    }
    const auto objects = topLevelObjects(text);
    for (auto it = objects.rbegin(); it != objects.rend(); ++it) {
        const auto j = try_parse_untrusted_json(std::string_view(text).substr(it->first, it->second - it->first + 1));
        if (j && j->is_object())
            return *j;
    }
    return nullptr;
}

std::string truncation_message(int64_t tokens) {
    return "reply cut at " + std::to_string(tokens) + " tokens; raise --max-tokens";
}

LlmCall llm_call_from(const ChatResult& r, const std::string& kind, const std::string& model) {
    LlmCall call;
    call.kind = kind;
    call.model = model;
    call.prompt = r.prompt;
    call.reply = r.replyText();
    call.reasoning = r.reasoning;
    call.tokens_in = r.tokens_in;
    call.tokens_out = r.tokens_out;
    call.cost_usd = r.cost_usd;
    call.latency_ms = r.latency_ms;
    call.outcome = r.ok ? "ok" : r.truncated ? "truncated" : "failed";
    call.error = r.ok ? "" : r.error;
    return call;
}

std::string ChatResult::replyText() const {
    if (!content.empty() || tool_calls.empty())
        return content;
    std::string out;
    for (const auto& c : tool_calls)
        out += (out.empty() ? "" : "\n") + c.name + " " + c.arguments;
    return out;
}

// ---------------------------------------------------------------------------------------------------------------
// One request's transfer state across its attempts.

struct LlmClient::Transfer {
    size_t index = 0;
    std::string key;
    std::string body;
    RequestShape shape;
    int attempts = 0;
    int switches = 0;                     // re-sent in another shape (not retries: the server said what it wants)
    int64_t spent_in = 0, spent_out = 0;  // tokens of answers that a switch threw away
    Clock::time_point first_start{};
    Clock::time_point not_before{};
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    std::string response;
    size_t max_response_bytes = 0;
    bool response_too_large = false;
    std::optional<double> retry_after_s;
    char curl_error[CURL_ERROR_SIZE] = {};

    ~Transfer() { release(); }
    void release() {
        if (easy)
            curl_easy_cleanup(easy);
        if (headers)
            curl_slist_free_all(headers);
        easy = nullptr;
        headers = nullptr;
    }

    static size_t onBody(char* data, size_t size, size_t count, void* self) {
        auto* t = static_cast<Transfer*>(self);
        if (t->response.size() + size * count > t->max_response_bytes) {
            t->response_too_large = true;
            return 0;  // curl stops the transfer with CURLE_WRITE_ERROR
        }
        t->response.append(data, size * count);
        return size * count;
    }
    static size_t onHeader(char* data, size_t size, size_t count, void* self) {
        const std::string line(data, size * count);
        const auto colon = line.find(':');
        if (colon != std::string::npos) {
            std::string name = line.substr(0, colon);
            std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
            if (name == "retry-after")
                static_cast<Transfer*>(self)->retry_after_s = parseRetryAfter(line.substr(colon + 1));
        }
        return size * count;
    }
};

LlmClient::LlmClient(LlmConfig config) : m_config(std::move(config)), m_shapes(std::make_shared<RequestShapeMemory>()) {
    if (m_config.endpoint.empty())
        throw Error("LLM endpoint is not set: expected a base URL such as http://localhost:8000/v1");
    if (m_config.model.empty())
        throw Error("LLM model is not set: expected the model name the endpoint serves");
    if (!(m_config.timeout_s > 0))
        throw Error("LLM timeout must be positive, found " + std::to_string(m_config.timeout_s) + " s");
    if (m_config.concurrency < 1)
        throw Error("LLM concurrency must be at least 1, found " + std::to_string(m_config.concurrency));
    if (m_config.max_prompt_tokens < 0)
        throw Error("LLM max_prompt_tokens must not be negative (0: no limit), found " +
                    std::to_string(m_config.max_prompt_tokens));
    if (m_config.max_tokens < 1)
        throw Error("LLM max_tokens must be at least 1, found " + std::to_string(m_config.max_tokens));
    if (m_config.max_retries < 0)
        throw Error("LLM max_retries must be 0 or more, found " + std::to_string(m_config.max_retries));
    if (m_config.backoff_base_s < 0 || m_config.backoff_max_s < 0)
        throw Error("LLM backoff times must be 0 or more");
    initCurlOnce();
}

LlmClient::~LlmClient() = default;

RequestShape LlmClient::shape() const {
    if (auto learned = m_shapes->find(m_config.endpoint, m_config.model))
        return *learned;
    return initial_request_shape(m_config.profile, m_config.model);
}

void LlmClient::setShapeMemory(std::shared_ptr<RequestShapeMemory> memory) {
    m_shapes = memory ? std::move(memory) : std::make_shared<RequestShapeMemory>();
}

nlohmann::ordered_json LlmClient::requestBody(const ChatRequest& request) const {
    return requestBody(request, shape());
}

namespace {

using ojson = nlohmann::ordered_json;

// What the content must hold when the tools are not sent: a single tool's arguments, or {"tool", "arguments"}.
ojson contentSchema(const ojson& tools) {
    if (tools.size() == 1)
        return tools[0]["function"].value("parameters", ojson::object());
    ojson names = ojson::array(), options = ojson::array();
    for (const auto& t : tools) {
        names.push_back(t["function"].value("name", std::string()));
        options.push_back(t["function"].value("parameters", ojson::object()));
    }
    return {{"type", "object"},
            {"properties", {{"tool", {{"type", "string"}, {"enum", names}}}, {"arguments", {{"anyOf", options}}}}},
            {"required", ojson::array({"tool", "arguments"})}};
}

std::string contentInstruction(const ojson& tools, bool fenced) {
    std::string out = "\n\nDo not call a tool. ";
    if (tools.size() == 1) {
        const auto& f = tools[0]["function"];
        out += "Answer with one JSON object: the arguments of `" + f.value("name", std::string()) + "` (" +
               f.value("description", std::string()) + ")";
    } else {
        out += "Answer with one JSON object {\"tool\": <name>, \"arguments\": {...}} naming one of these tools and "
               "giving its arguments:";
        for (const auto& t : tools)
            out += "\n- `" + t["function"].value("name", std::string()) +
                   "`: " + t["function"].value("description", std::string());
    }
    out += "\nJSON schema of the object: " + contentSchema(tools).dump();
    if (fenced)
        out += "\nEnd your reply with the object in a ```json fenced block.";
    return out;
}

}  // namespace

nlohmann::ordered_json LlmClient::requestBody(const ChatRequest& request, const RequestShape& shape) const {
    const bool hasTools = request.tools.is_array() && !request.tools.empty();
    const bool inContent = hasTools && shape.tools == RequestShape::Tools::None;
    auto messages = ojson::array();
    for (size_t i = 0; i < request.messages.size(); ++i) {
        const auto& m = request.messages[i];
        std::string content = m.content;
        if (inContent && i + 1 == request.messages.size())
            content += contentInstruction(request.tools, !shape.response_format);
        messages.push_back({{"role", m.role}, {"content", content}});
    }
    ojson body = {{"model", m_config.model}, {"messages", messages}};
    if (shape.temperature)
        body["temperature"] = request.temperature.value_or(m_config.temperature);
    body[shape.max_completion_tokens ? "max_completion_tokens" : "max_tokens"] = m_config.max_tokens;
    body["stream"] = false;
    if (hasTools && !inContent) {
        body["tools"] = request.tools;
        ojson choice = "auto";
        if (request.tool_required) {
            if (shape.tools == RequestShape::Tools::Named && request.tools.size() == 1)
                choice = {{"type", "function"},
                          {"function", {{"name", request.tools[0]["function"].value("name", std::string())}}}};
            else if (shape.tools != RequestShape::Tools::Auto)
                choice = "required";
        }
        body["tool_choice"] = choice;
    } else if (inContent && shape.response_format) {
        const std::string name =
            request.tools.size() == 1 ? request.tools[0]["function"].value("name", std::string("answer")) : "answer";
        body["response_format"] = {{"type", "json_schema"},
                                   {"json_schema", {{"name", name}, {"schema", contentSchema(request.tools)}}}};
    }
    return body;
}

// Reads what a failed (or tool-less) answer says about the request's shape. Only the auto profile adapts: a named
// profile sends what its server documents, and an error then is the user's to see.
std::optional<std::pair<RequestShape, std::string>> LlmClient::adaptedShape(const RequestShape& shape, int status,
                                                                            const std::string& body,
                                                                            const ChatRequest& request,
                                                                            const ChatResult* answered) const {
    if (m_config.profile != LlmProfile::Auto)
        return std::nullopt;
    const bool hasTools = request.tools.is_array() && !request.tools.empty();
    RequestShape next = shape;
    if (answered) {
        // A 200 without the tool call that was asked for and with an empty content: some model families ignore a
        // named tool_choice (gpt-oss on vLLM answers with reasoning only); "required" is enforced by the server
        // instead. A reply with text is the model's answer, right or wrong, and is the caller's to judge.
        if (!hasTools || !request.tool_required || !answered->tool_calls.empty() || answered->truncated ||
            !trim(answered->content).empty())
            return std::nullopt;
        if (shape.tools == RequestShape::Tools::Named || shape.tools == RequestShape::Tools::Auto)
            next.tools = RequestShape::Tools::Required;
        else if (shape.tools == RequestShape::Tools::Required)
            next.tools = RequestShape::Tools::None;
        else
            return std::nullopt;
        return std::pair{next, "the endpoint answered without calling the tool; now: " + next.describe()};
    }
    if (status < 400 || status == 401 || status == 403 || status == 404 || status == 429)
        return std::nullopt;
    const std::string text = lowercase(body);
    const bool refuses = contains(text, "unsupported") || contains(text, "not support") ||
                         contains(text, "not supported") || contains(text, "only the default") ||
                         contains(text, "unrecognized") || contains(text, "extra inputs") ||
                         contains(text, "invalid") || contains(text, "requires");
    std::string why;
    if (shape.temperature && contains(text, "temperature") && refuses) {
        next.temperature = false;
        why = "the endpoint refuses a temperature";
    } else if (!shape.max_completion_tokens && contains(text, "max_tokens") &&
               (contains(text, "max_completion_tokens") || refuses)) {
        next.max_completion_tokens = true;
        why = "the endpoint refuses max_tokens";
    } else if (shape.max_completion_tokens && contains(text, "max_completion_tokens") && refuses) {
        next.max_completion_tokens = false;
        why = "the endpoint refuses max_completion_tokens";
    } else if (hasTools && shape.tools != RequestShape::Tools::None &&
               (contains(text, "tool_choice") || contains(text, "tool choice")) &&
               !contains(text, "does not support tools")) {
        // "required" unknown to an older server, or "auto" without --enable-auto-tool-choice: the named form is
        // what every tool-calling server understands; a named form refused leaves the content.
        next.tools = shape.tools == RequestShape::Tools::Named ? RequestShape::Tools::None : RequestShape::Tools::Named;
        why = "the endpoint refuses this tool_choice";
    } else if (hasTools && shape.tools != RequestShape::Tools::None &&
               (contains(text, "does not support tools") || contains(text, "--jinja") ||
                (contains(text, "tool") && refuses))) {
        next.tools = RequestShape::Tools::None;
        why = "the endpoint does not take tools";
    } else if (hasTools && shape.tools == RequestShape::Tools::None && shape.response_format &&
               contains(text, "response_format")) {
        next.response_format = false;
        why = "the endpoint refuses response_format";
    } else {
        return std::nullopt;
    }
    return std::pair{next, why + " (HTTP " + std::to_string(status) + "); now: " + next.describe()};
}

std::string LlmClient::cacheKey(const ChatRequest& request) const {
    return text_hash(m_config.model + "\n" + requestBody(request).dump() + "\nsample " +
                     std::to_string(request.sample_index));
}

bool LlmClient::lookupCache(const std::string& key, ChatResult& out) {
    {
        std::lock_guard lock(m_cacheMutex);
        if (auto it = m_memoryCache.find(key); it != m_memoryCache.end()) {
            out = it->second;
            return true;
        }
    }
    if (m_config.cache_dir.empty())
        return false;
    std::ifstream in(fs::path(m_config.cache_dir) / (key + ".json"), std::ios::binary);
    if (!in)
        return false;
    std::ostringstream text;
    text << in.rdbuf();
    // An unreadable entry is a miss; the answer that replaces it is written over it.
    auto cached = cachedResultFromJson(try_parse_untrusted_json(text.str()).value_or(json()), key);
    if (!cached)
        return false;
    std::lock_guard lock(m_cacheMutex);
    m_memoryCache[key] = *cached;
    out = *cached;
    return true;
}

void LlmClient::storeCache(const std::string& key, ChatResult& result) {
    {
        std::lock_guard lock(m_cacheMutex);
        m_memoryCache[key] = result;
    }
    if (m_config.cache_dir.empty())
        return;
    const json entry = {{"key", key},
                        {"model", m_config.model},
                        {"content", result.content},
                        {"tool_calls", toolCallsJson(result.tool_calls)},
                        {"reasoning", result.reasoning},
                        {"http_status", result.http_status},
                        {"tokens_in", result.tokens_in},
                        {"tokens_out", result.tokens_out}};
    // Written to a unique temporary name and renamed: a concurrent reader sees the old entry, the new one or none.
    static std::atomic<unsigned> counter{0};
    const fs::path dir(m_config.cache_dir);
    const fs::path path = dir / (key + ".json");
    const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    std::error_code ec;
    fs::create_directories(dir, ec);
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << entry.dump();
        out.close();
        if (!out)
            ec = std::make_error_code(std::errc::io_error);
    }
    if (!ec)
        fs::rename(tmp, path, ec);
    if (ec) {
        fs::remove(tmp, ec);
        result.warning = "could not write the response cache " + path.string() + ": " + ec.message();
    }
}

namespace {

std::string promptText(const ChatRequest& request) {
    std::string out;
    for (const auto& m : request.messages)
        out += (out.empty() ? "[" : "\n\n[") + m.role + "]\n" + m.content;
    return out;
}

// A request sent without its tools asked for the tool's arguments in the content: read them back as a tool call,
// so that callers read one kind of answer whatever the shape.
void contentToolCall(const ChatRequest& request, ChatResult& r) {
    json object;
    try {
        object = json_object_from_text(r.content);
    } catch (const Error&) {
        return;  // the caller reports what the content holds
    }
    if (!object.is_object())
        return;
    ToolCall call;
    call.from_content = true;
    if (request.tools.size() == 1) {
        call.name = request.tools[0]["function"].value("name", std::string());
        call.arguments = object.dump();
    } else if (object.contains("tool") && object["tool"].is_string() && object.contains("arguments")) {
        call.name = object["tool"].get<std::string>();
        call.arguments =
            object["arguments"].is_string() ? object["arguments"].get<std::string>() : object["arguments"].dump();
    } else {
        return;
    }
    r.tool_calls.push_back(std::move(call));
}

}  // namespace

ChatResult LlmClient::completeOne(const ChatRequest& request) {
    return complete(std::vector<ChatRequest>{request}).front();
}

std::vector<ChatResult> LlmClient::complete(const std::vector<ChatRequest>& requests) {
    std::vector<ChatResult> results(requests.size());
    std::vector<std::unique_ptr<Transfer>> transfers;
    std::unordered_map<std::string, size_t> firstWithKey;  // key -> index of the request that is sent
    std::vector<std::pair<size_t, size_t>> duplicates;     // (index, index of the request sent for it)
    for (size_t i = 0; i < requests.size(); ++i) {
        const auto t0 = Clock::now();
        const std::string key = cacheKey(requests[i]);
        if (lookupCache(key, results[i])) {
            auto& r = results[i];
            r.prompt = promptText(requests[i]);
            r.shape = shape().describe();
            r.from_cache = true;
            r.attempts = 0;
            r.cost_usd = 0;
            r.latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
            continue;
        }
        if (auto [it, fresh] = firstWithKey.emplace(key, i); !fresh) {
            duplicates.emplace_back(i, it->second);
            continue;
        }
        auto t = std::make_unique<Transfer>();
        t->index = i;
        t->key = key;
        t->shape = shape();
        t->body = requestBody(requests[i], t->shape).dump();
        transfers.push_back(std::move(t));
    }

    const std::string url = chatUrl(m_config.endpoint);
    const long timeoutMs = static_cast<long>(std::ceil(m_config.timeout_s * 1000));
    std::vector<Transfer*> waiting;  // in request order; each may have a not_before (backoff)
    for (auto& t : transfers)
        waiting.push_back(t.get());

    CURLM* multi = curl_multi_init();
    int active = 0;

    auto start = [&](Transfer& t) {
        t.response.clear();
        t.max_response_bytes = m_config.max_response_bytes;
        t.response_too_large = false;
        t.retry_after_s.reset();
        t.curl_error[0] = '\0';
        if (t.attempts == 0)
            t.first_start = Clock::now();
        ++t.attempts;
        t.release();
        t.easy = curl_easy_init();
        t.headers = curl_slist_append(t.headers, "Content-Type: application/json");
        t.headers = curl_slist_append(t.headers, "Accept: application/json");
        t.headers = curl_slist_append(t.headers, "Expect:");
        if (!m_config.api_key.empty())
            t.headers = curl_slist_append(t.headers, ("Authorization: Bearer " + m_config.api_key).c_str());
        curl_easy_setopt(t.easy, CURLOPT_URL, url.c_str());
        curl_easy_setopt(t.easy, CURLOPT_HTTPHEADER, t.headers);
        curl_easy_setopt(t.easy, CURLOPT_POST, 1L);
        curl_easy_setopt(t.easy, CURLOPT_POSTFIELDS, t.body.c_str());
        curl_easy_setopt(t.easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t.body.size()));
        curl_easy_setopt(t.easy, CURLOPT_WRITEFUNCTION, &Transfer::onBody);
        curl_easy_setopt(t.easy, CURLOPT_WRITEDATA, &t);
        curl_easy_setopt(t.easy, CURLOPT_HEADERFUNCTION, &Transfer::onHeader);
        curl_easy_setopt(t.easy, CURLOPT_HEADERDATA, &t);
        curl_easy_setopt(t.easy, CURLOPT_TIMEOUT_MS, timeoutMs);
        curl_easy_setopt(t.easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(t.easy, CURLOPT_ERRORBUFFER, t.curl_error);
        curl_easy_setopt(t.easy, CURLOPT_PRIVATE, &t);
        curl_easy_setopt(t.easy, CURLOPT_ACCEPT_ENCODING, "");
        curl_multi_add_handle(multi, t.easy);
        ++active;
    };

    auto backoff = [&](const Transfer& t) {
        if (t.retry_after_s)
            return std::min(*t.retry_after_s, m_config.backoff_max_s);
        const double exponential = m_config.backoff_base_s * std::pow(2.0, t.attempts - 1);
        return std::min(m_config.backoff_max_s, exponential * uniform(0.5, 1.0));
    };

    auto finish = [&](Transfer& t, CURLcode code) {
        long status = 0;
        curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
        ChatResult& r = results[t.index];
        const ChatRequest& request = requests[t.index];
        r = ChatResult{};
        r.http_status = static_cast<int>(status);
        r.attempts = t.attempts;
        r.shape = t.shape.describe();
        r.prompt = promptText(request);
        std::string failure;
        bool retry = false;
        if (code == CURLE_WRITE_ERROR && t.response_too_large) {
            failure = "the reply from " + url + " is longer than " + std::to_string(m_config.max_response_bytes) +
                      " bytes (max_response_bytes); it was cut off and not used";
        } else if (code != CURLE_OK) {
            failure = url + ": " + curl_easy_strerror(code);
            if (t.curl_error[0])
                failure += std::string(" (") + t.curl_error + ")";
            retry = retryableCurl(code);
        } else if (status < 200 || status > 299) {
            failure = "HTTP " + std::to_string(status) + " from " + url + ": " + snippet(t.response);
            // A server that needs another start-up flag (llama.cpp's --jinja) answers 500 every time.
            retry = retryableStatus(status) && !contains(lowercase(t.response), "--jinja");
        } else {
            std::string invalid;
            const json reply = try_parse_untrusted_json(t.response, &invalid).value_or(json());
            const json* message = nullptr;
            if (!reply.is_object())
                failure = "HTTP " + std::to_string(status) + " from " + url + " but the body is not a JSON object" +
                          (invalid.empty() ? "" : " (" + invalid + ")") + ": " + snippet(t.response);
            else if (!reply.contains("choices") || !reply["choices"].is_array() || reply["choices"].empty() ||
                     !reply["choices"][0].is_object() || !reply["choices"][0].contains("message") ||
                     !reply["choices"][0]["message"].is_object())
                failure = "HTTP " + std::to_string(status) + " from " + url +
                          " but the reply has no choices[0].message: " + snippet(t.response);
            else
                message = &reply["choices"][0]["message"];
            if (message)
                failure = malformedField(*message);
            if (message && !failure.empty())
                failure =
                    "HTTP " + std::to_string(status) + " from " + url + " but " + failure + ": " + snippet(t.response);
            else if (message) {
                r.ok = true;
                if (message->contains("content") && (*message)["content"].is_string())
                    r.content = (*message)["content"].get<std::string>();
                // vLLM's reasoning parsers and llama.cpp write reasoning_content; newer vLLM and Ollama reasoning.
                for (const char* field : {"reasoning_content", "reasoning"})
                    if (message->contains(field) && (*message)[field].is_string() && r.reasoning.empty())
                        r.reasoning = (*message)[field].get<std::string>();
                if (reply["choices"][0].contains("finish_reason") && reply["choices"][0]["finish_reason"].is_string())
                    r.finish_reason = reply["choices"][0]["finish_reason"].get<std::string>();
                if (message->contains("tool_calls") && (*message)["tool_calls"].is_array())
                    for (const auto& call : (*message)["tool_calls"]) {
                        if (!call.is_object() || !call.contains("function") || !call["function"].is_object())
                            continue;
                        const json& fn = call["function"];
                        ToolCall tc;
                        if (fn.contains("name"))
                            tc.name = fn["name"].get<std::string>();  // a string: malformedField checked it
                        if (fn.contains("arguments"))
                            tc.arguments = fn["arguments"].is_string() ? fn["arguments"].get<std::string>()
                                                                       : fn["arguments"].dump();
                        r.tool_calls.push_back(std::move(tc));
                    }
                if (reply.contains("usage") && reply["usage"].is_object()) {
                    const json& u = reply["usage"];
                    r.tokens_in = tokenCount(u, "prompt_tokens");
                    r.tokens_out = tokenCount(u, "completion_tokens");
                }
                if (r.finish_reason == "length") {
                    r.truncated = true;
                    failure = truncation_message(r.tokens_out > 0 ? r.tokens_out : m_config.max_tokens);
                } else if (r.tool_calls.empty() && t.shape.tools == RequestShape::Tools::None &&
                           request.tools.is_array() && !request.tools.empty()) {
                    contentToolCall(request, r);
                }
                // Placeholder keys of local servers ("EMPTY", "ollama") are no secret and may well be words of
                // an answer (a macro in generated code): only a key long enough to be a real one is redacted here.
                if (m_config.api_key.size() >= kMinSecretChars) {
                    redact(r.content, m_config.api_key);
                    redact(r.reasoning, m_config.api_key);
                    for (auto& tc : r.tool_calls) {
                        redact(tc.name, m_config.api_key);
                        redact(tc.arguments, m_config.api_key);
                    }
                }
            }
        }
        // Tokens of answers thrown away by a shape switch were spent all the same.
        r.tokens_in += t.spent_in;
        r.tokens_out += t.spent_out;
        r.cost_usd = (static_cast<double>(r.tokens_in) * m_config.price_in_per_mtok +
                      static_cast<double>(r.tokens_out) * m_config.price_out_per_mtok) /
                     1e6;
        // The server said what it wants: the same request again at once, in the shape it accepts.
        if (t.switches < kMaxShapeSwitches && !r.truncated) {
            std::optional<std::pair<RequestShape, std::string>> adapted;
            if (!failure.empty() && code == CURLE_OK)
                adapted = adaptedShape(t.shape, static_cast<int>(status), t.response, request, nullptr);
            else if (failure.empty())
                adapted = adaptedShape(t.shape, static_cast<int>(status), t.response, request, &r);
            // Another request of the batch, sent in the same shape, may have learned the change already.
            if (const RequestShape now = shape(); adapted && now != t.shape)
                adapted = std::pair{now, std::string()};
            if (adapted) {
                if (!adapted->second.empty())
                    m_shapes->learn(m_config.endpoint, m_config.model, adapted->first, adapted->second);
                if (failure.empty()) {
                    t.spent_in = r.tokens_in;
                    t.spent_out = r.tokens_out;
                }
                ++t.switches;
                t.shape = adapted->first;
                t.body = requestBody(request, t.shape).dump();
                t.key = cacheKey(request);
                t.not_before = Clock::now();
                waiting.push_back(&t);
                return;
            }
        }
        if (!failure.empty() && retry && t.attempts - t.switches <= m_config.max_retries) {
            const double wait = backoff(t);
            t.not_before =
                Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait));
            waiting.push_back(&t);
            return;
        }
        r.latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - t.first_start).count();
        if (!failure.empty()) {
            r.ok = false;
            r.error = failure;
            if (t.attempts - t.switches > 1)
                r.error += " (gave up after " + std::to_string(t.attempts) + " attempts)";
            redact(r.error, m_config.api_key);
            return;
        }
        storeCache(t.key, r);
    };

    while (!waiting.empty() || active > 0) {
        const auto now = Clock::now();
        auto nextWake = Clock::time_point::max();
        for (auto it = waiting.begin(); it != waiting.end() && active < m_config.concurrency;) {
            if ((*it)->not_before <= now) {
                start(**it);
                it = waiting.erase(it);
            } else {
                nextWake = std::min(nextWake, (*it)->not_before);
                ++it;
            }
        }
        int running = 0;
        curl_multi_perform(multi, &running);
        int left = 0;
        while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            Transfer* t = nullptr;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
            const CURLcode code = msg->data.result;
            curl_multi_remove_handle(multi, msg->easy_handle);
            --active;
            finish(*t, code);
            t->release();
        }
        if (waiting.empty() && active == 0)
            break;
        int waitMs = 100;
        if (nextWake != Clock::time_point::max()) {
            const auto untilWake = std::chrono::duration_cast<std::chrono::milliseconds>(nextWake - Clock::now());
            waitMs = static_cast<int>(std::clamp<int64_t>(untilWake.count() + 1, 0, 100));
        } else if (!waiting.empty() && active < m_config.concurrency) {
            waitMs = 0;  // a finished transfer freed a slot for a waiting request
        }
        curl_multi_poll(multi, nullptr, 0, waitMs, nullptr);
    }
    curl_multi_cleanup(multi);

    for (const auto& [i, sent] : duplicates) {
        results[i] = results[sent];
        if (results[i].ok) {
            results[i].from_cache = true;
            results[i].attempts = 0;
            results[i].cost_usd = 0;
        }
    }
    return results;
}

}  // namespace kerncast
