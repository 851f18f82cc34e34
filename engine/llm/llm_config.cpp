// The LLM client's configuration: the settings file, the API key and their JSON.

#include "engine/llm/llm_client.h"

#include "core/error.h"
#include "core/text_util.h"
#include "core/untrusted_json.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <type_traits>

namespace kerncast {

namespace fs = std::filesystem;
using nlohmann::json;

std::string LlmConfig::settingsPath() {
    fs::path base = xdg_base_dir("XDG_CONFIG_HOME", ".config");
    if (base.empty())
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

template<typename T>
void readField(const json& j, const char* key, T& out) {
    if (!j.contains(key))
        return;
    const json& v = j[key];
    const bool fits = std::is_same_v<T, std::string> ? v.is_string() : v.is_number();
    if (!fits)
        throw Error(std::string("\"") + key + "\" must be a " + (std::is_same_v<T, std::string> ? "string" : "number") +
                    ", found " + v.type_name());
    out = v.get<T>();
}

}  // namespace

std::string LlmConfig::resolveApiKey() {
    if (const char* v = std::getenv("KERNCAST_API_KEY"); v && *v)
        return v;
    const std::string path = settingsPath();
    const json j = readSettingsFile(path);
    std::string key, variable;
    try {
        if (j.is_object()) {
            readField(j, "api_key_env", variable);
            readField(j, "api_key", key);
        }
    } catch (const Error& e) {
        throw Error(path + ": " + e.what());
    }
    if (!variable.empty())
        if (const char* v = std::getenv(variable.c_str()); v && *v)
            return v;
    if (const char* v = std::getenv("OPENAI_API_KEY"); v && *v)
        return v;
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

LlmConfig LlmConfig::loadSettings(const json& overrides) {
    LlmConfig c = loadSettings();
    from_json(overrides, c);
    return c;
}

void to_json(json& j, const LlmConfig& c) {
    j = {{"endpoint", c.endpoint},
         {"model", c.model},
         {"profile", to_string(c.profile)},
         {"api_key_env", c.api_key_env},
         {"timeout_s", c.timeout_s},
         {"max_retries", c.max_retries},
         {"concurrency", c.concurrency},
         {"temperature", c.temperature},
         {"max_tokens", c.max_tokens},
         {"max_prompt_tokens", c.max_prompt_tokens},
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
    if (j.contains("profile")) {
        std::string profile;
        readField(j, "profile", profile);
        c.profile = llm_profile_from_string(profile);
    }
    readField(j, "api_key_env", c.api_key_env);
    readField(j, "timeout_s", c.timeout_s);
    readField(j, "max_retries", c.max_retries);
    readField(j, "concurrency", c.concurrency);
    readField(j, "temperature", c.temperature);
    readField(j, "max_tokens", c.max_tokens);
    readField(j, "max_prompt_tokens", c.max_prompt_tokens);
    readField(j, "price_in_per_mtok", c.price_in_per_mtok);
    readField(j, "price_out_per_mtok", c.price_out_per_mtok);
    readField(j, "cache_dir", c.cache_dir);
    readField(j, "backoff_base_s", c.backoff_base_s);
    readField(j, "backoff_max_s", c.backoff_max_s);
}

}  // namespace kerncast
