#include "engine/llm_client.h"
#include "core/text_util.h"

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
using nlohmann::json;

namespace {

constexpr size_t kSnippetChars = 300;
constexpr size_t kMinSecretChars = 16;

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

bool retryableStatus(long status) {
    return status == 408 || status == 429 || (status >= 500 && status <= 599);
}

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
    thread_local std::mt19937_64 rng {std::random_device {}()};
    return std::uniform_real_distribution<double>(lo, hi)(rng);
}

json toolCallsJson(const std::vector<ToolCall>& calls) {
    json a = json::array();
    for (const auto& c : calls)
        a.push_back({{"name", c.name}, {"arguments", c.arguments}});
    return a;
}

std::optional<ChatResult> cachedResultFromJson(const json& j, const std::string& key) {
    if (!j.is_object() || j.value("key", std::string()) != key || !j.contains("content") || !j["content"].is_string()
        || !j.contains("tool_calls") || !j["tool_calls"].is_array())
        return std::nullopt;
    ChatResult r;
    r.ok = true;
    r.content = j["content"].get<std::string>();
    for (const auto& c : j["tool_calls"]) {
        if (!c.is_object() || !c.contains("name") || !c["name"].is_string() || !c.contains("arguments")
            || !c["arguments"].is_string())
            return std::nullopt;
        r.tool_calls.push_back({c["name"].get<std::string>(), c["arguments"].get<std::string>()});
    }
    r.http_status = j.value("http_status", 200);
    r.tokens_in = j.value("tokens_in", int64_t {0});
    r.tokens_out = j.value("tokens_out", int64_t {0});
    return r;
}

}  // namespace

std::string text_hash(const std::string& text) {
    return content_hash(text, {});
}

// ---------------------------------------------------------------------------------------------------------------
// Configuration

std::string LlmConfig::settingsPath() {
    fs::path base;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
        base = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = fs::path(home) / ".config";
    else
        base = ".config";
    return (base / "kerncast" / "llm.json").string();
}

namespace {

// The settings file's object; null when there is no file.
json readSettingsFile(const std::string& path) {
    std::error_code ec;
    if (!fs::exists(path, ec))
        return nullptr;
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(path + ": cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    // Parsed without exceptions: a parse error's message quotes the text around it, which may be the key.
    const json j = try_parse_untrusted_json(text.str()).value_or(json());
    if (!j.is_object())
        throw Error(path + ": expected a JSON object such as {\"endpoint\": \"http://localhost:8000/v1\", "
                           "\"model\": \"...\"}; the file does not parse as one");
    return j;
}

template <typename T>
void readField(const json& j, const char* key, T& out) {
    if (!j.contains(key))
        return;
    const json& v = j[key];
    const bool fits = std::is_same_v<T, std::string> ? v.is_string() : v.is_number();
    if (!fits)
        throw Error(std::string("\"") + key + "\" must be a " +
                    (std::is_same_v<T, std::string> ? "string" : "number") + ", found " + v.type_name());
    out = v.get<T>();
}

}  // namespace

std::string LlmConfig::resolveApiKey() {
    for (const char* var : {"KERNCAST_API_KEY", "OPENAI_API_KEY"})
        if (const char* v = std::getenv(var); v && *v)
            return v;
    const std::string path = settingsPath();
    const json j = readSettingsFile(path);
    std::string key;
    try {
        if (j.is_object())
            readField(j, "api_key", key);
    } catch (const Error& e) {
        throw Error(path + ": " + e.what());
    }
    return key;
}

LlmConfig LlmConfig::loadSettings() {
    LlmConfig c;
    const std::string path = settingsPath();
    const json j = readSettingsFile(path);
    try {
        if (j.is_object())
            from_json(j, c);
    } catch (const Error& e) {
        throw Error(path + ": " + e.what());
    }
    c.api_key = resolveApiKey();
    return c;
}

void to_json(json& j, const LlmConfig& c) {
    j = {{"endpoint", c.endpoint},
         {"model", c.model},
         {"timeout_s", c.timeout_s},
         {"max_retries", c.max_retries},
         {"concurrency", c.concurrency},
         {"temperature", c.temperature},
         {"max_tokens", c.max_tokens},
         {"price_in_per_mtok", c.price_in_per_mtok},
         {"price_out_per_mtok", c.price_out_per_mtok},
         {"cache_dir", c.cache_dir},
         {"backoff_base_s", c.backoff_base_s},
         {"backoff_max_s", c.backoff_max_s}};
}

void from_json(const json& j, LlmConfig& c) {
    if (!j.is_object())
        throw Error(std::string("LLM settings: expected a JSON object, found ") + j.type_name());
    readField(j, "endpoint", c.endpoint);
    readField(j, "model", c.model);
    readField(j, "timeout_s", c.timeout_s);
    readField(j, "max_retries", c.max_retries);
    readField(j, "concurrency", c.concurrency);
    readField(j, "temperature", c.temperature);
    readField(j, "max_tokens", c.max_tokens);
    readField(j, "price_in_per_mtok", c.price_in_per_mtok);
    readField(j, "price_out_per_mtok", c.price_out_per_mtok);
    readField(j, "cache_dir", c.cache_dir);
    readField(j, "backoff_base_s", c.backoff_base_s);
    readField(j, "backoff_max_s", c.backoff_max_s);
}

// ---------------------------------------------------------------------------------------------------------------
// One request's transfer state across its attempts.

struct LlmClient::Transfer {
    size_t index = 0;
    std::string key;
    std::string body;
    int attempts = 0;
    Clock::time_point first_start {};
    Clock::time_point not_before {};
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

LlmClient::LlmClient(LlmConfig config) : m_config(std::move(config)) {
    if (m_config.endpoint.empty())
        throw Error("LLM endpoint is not set: expected a base URL such as http://localhost:8000/v1");
    if (m_config.model.empty())
        throw Error("LLM model is not set: expected the model name the endpoint serves");
    if (!(m_config.timeout_s > 0))
        throw Error("LLM timeout must be positive, found " + std::to_string(m_config.timeout_s) + " s");
    if (m_config.concurrency < 1)
        throw Error("LLM concurrency must be at least 1, found " + std::to_string(m_config.concurrency));
    if (m_config.max_retries < 0)
        throw Error("LLM max_retries must be 0 or more, found " + std::to_string(m_config.max_retries));
    if (m_config.backoff_base_s < 0 || m_config.backoff_max_s < 0)
        throw Error("LLM backoff times must be 0 or more");
    initCurlOnce();
}

LlmClient::~LlmClient() = default;

nlohmann::ordered_json LlmClient::requestBody(const ChatRequest& request) const {
    auto messages = nlohmann::ordered_json::array();
    for (const auto& m : request.messages)
        messages.push_back({{"role", m.role}, {"content", m.content}});
    nlohmann::ordered_json body = {{"model", m_config.model},
                                   {"messages", messages},
                                   {"temperature", m_config.temperature},
                                   {"max_tokens", m_config.max_tokens},
                                   {"stream", false}};
    if (!request.tools.is_null())
        body["tools"] = request.tools;
    if (!request.tool_choice.is_null())
        body["tool_choice"] = request.tool_choice;
    return body;
}

std::string LlmClient::cacheKey(const ChatRequest& request) const {
    return text_hash(m_config.model + "\n" + requestBody(request).dump() + "\nsample "
                     + std::to_string(request.sample_index));
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
                        {"http_status", result.http_status},
                        {"tokens_in", result.tokens_in},
                        {"tokens_out", result.tokens_out}};
    // Written to a unique temporary name and renamed: a concurrent reader sees the old entry, the new one or none.
    static std::atomic<unsigned> counter {0};
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

ChatResult LlmClient::completeOne(const ChatRequest& request) {
    return complete(std::vector<ChatRequest> {request}).front();
}

std::vector<ChatResult> LlmClient::complete(const std::vector<ChatRequest>& requests) {
    std::vector<ChatResult> results(requests.size());
    std::vector<std::unique_ptr<Transfer>> transfers;
    std::unordered_map<std::string, size_t> firstWithKey;  // key -> index of the request that is sent
    std::vector<std::pair<size_t, size_t>> duplicates;  // (index, index of the request sent for it)
    for (size_t i = 0; i < requests.size(); ++i) {
        const auto t0 = Clock::now();
        const std::string key = cacheKey(requests[i]);
        if (lookupCache(key, results[i])) {
            auto& r = results[i];
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
        t->body = requestBody(requests[i]).dump();
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
        r.http_status = static_cast<int>(status);
        r.attempts = t.attempts;
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
            retry = retryableStatus(status);
        } else {
            std::string invalid;
            const json reply = try_parse_untrusted_json(t.response, &invalid).value_or(json());
            const json* message = nullptr;
            if (!reply.is_object())
                failure = "HTTP " + std::to_string(status) + " from " + url + " but the body is not a JSON object"
                    + (invalid.empty() ? "" : " (" + invalid + ")") + ": " + snippet(t.response);
            else if (!reply.contains("choices") || !reply["choices"].is_array() || reply["choices"].empty()
                     || !reply["choices"][0].is_object() || !reply["choices"][0].contains("message")
                     || !reply["choices"][0]["message"].is_object())
                failure = "HTTP " + std::to_string(status) + " from " + url
                    + " but the reply has no choices[0].message: " + snippet(t.response);
            else
                message = &reply["choices"][0]["message"];
            if (message)
                failure = malformedField(*message);
            if (message && !failure.empty())
                failure = "HTTP " + std::to_string(status) + " from " + url + " but " + failure + ": "
                    + snippet(t.response);
            else if (message) {
                r.ok = true;
                if (message->contains("content") && (*message)["content"].is_string())
                    r.content = (*message)["content"].get<std::string>();
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
                r.cost_usd = (static_cast<double>(r.tokens_in) * m_config.price_in_per_mtok
                              + static_cast<double>(r.tokens_out) * m_config.price_out_per_mtok)
                    / 1e6;
                // Placeholder keys of local servers ("EMPTY", "ollama") are no secret and may well be words of
                // an answer (a macro in generated code): only a key long enough to be a real one is redacted here.
                if (m_config.api_key.size() >= kMinSecretChars) {
                    redact(r.content, m_config.api_key);
                    for (auto& tc : r.tool_calls) {
                        redact(tc.name, m_config.api_key);
                        redact(tc.arguments, m_config.api_key);
                    }
                }
            }
        }
        if (!failure.empty() && retry && t.attempts <= m_config.max_retries) {
            const double wait = backoff(t);
            t.not_before
                = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait));
            waiting.push_back(&t);
            return;
        }
        r.latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - t.first_start).count();
        if (!failure.empty()) {
            r.ok = false;
            r.error = failure;
            if (t.attempts > 1)
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
