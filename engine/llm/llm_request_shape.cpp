// The LLM client's profiles and request shapes: what each profile sends first, and the shapes learned per
// endpoint and model (RequestShapeMemory).

#include "engine/llm/llm_client.h"
#include "engine/llm/llm_text.h"

#include "core/error.h"

#include <mutex>
#include <utility>

namespace kerncast {

using llm_text::lowercase;
using nlohmann::json;

const char* to_string(LlmProfile profile) {
    switch (profile) {
    case LlmProfile::Auto:
        return "auto";
    case LlmProfile::OpenAI:
        return "openai";
    case LlmProfile::Vllm:
        return "vllm";
    case LlmProfile::Ollama:
        return "ollama";
    case LlmProfile::LlamaCpp:
        return "llamacpp";
    }
    return "auto";
}

LlmProfile llm_profile_from_string(const std::string& text) {
    for (LlmProfile p :
         {LlmProfile::Auto, LlmProfile::OpenAI, LlmProfile::Vllm, LlmProfile::Ollama, LlmProfile::LlamaCpp})
        if (text == to_string(p))
            return p;
    throw Error("unknown LLM profile '" + text + "': expected auto, openai, vllm, ollama or llamacpp");
}

namespace {

const char* toolsName(RequestShape::Tools t) {
    switch (t) {
    case RequestShape::Tools::Named:
        return "named";
    case RequestShape::Tools::Required:
        return "required";
    case RequestShape::Tools::Auto:
        return "auto";
    case RequestShape::Tools::None:
        return "none";
    }
    return "named";
}

// OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...) accept only their default temperature.
bool isOpenAiReasoningModel(const std::string& model) {
    const std::string m = lowercase(model);
    for (const char* prefix : {"o1", "o3", "o4", "gpt-5"})
        if (m.rfind(prefix, 0) == 0)
            return true;
    return false;
}

}  // namespace

std::string RequestShape::describe() const {
    std::string out;
    if (tools == Tools::None)
        out = response_format ? "JSON content (response_format json_schema)" : "JSON content (fenced block)";
    else
        out = std::string("tools, tool_choice ") + toolsName(tools);
    out += max_completion_tokens ? ", max_completion_tokens" : ", max_tokens";
    out += temperature ? ", temperature" : ", no temperature";
    return out;
}

void to_json(json& j, const RequestShape& s) {
    j = {{"tools", toolsName(s.tools)},
         {"response_format", s.response_format},
         {"max_completion_tokens", s.max_completion_tokens},
         {"temperature", s.temperature}};
}

void from_json(const json& j, RequestShape& s) {
    const std::string tools = j.value("tools", std::string("named"));
    bool known = false;
    for (auto t : {RequestShape::Tools::Named, RequestShape::Tools::Required, RequestShape::Tools::Auto,
                   RequestShape::Tools::None})
        if (tools == toolsName(t)) {
            s.tools = t;
            known = true;
        }
    if (!known)
        throw Error("request shape: unknown tools mode '" + tools + "' (expected named, required, auto or none)");
    s.response_format = j.value("response_format", true);
    s.max_completion_tokens = j.value("max_completion_tokens", false);
    s.temperature = j.value("temperature", true);
}

RequestShape initial_request_shape(LlmProfile profile, const std::string& model) {
    RequestShape s;
    switch (profile) {
    case LlmProfile::Auto:
        break;  // named tool calling, max_tokens, temperature: what most servers accept
    case LlmProfile::OpenAI:
        s.max_completion_tokens = true;
        s.temperature = !isOpenAiReasoningModel(model);
        break;
    case LlmProfile::Vllm:
        // "required" works on every tool-call parser (guided decoding), also where a model family ignores the
        // named form; it needs no --enable-auto-tool-choice.
        s.tools = RequestShape::Tools::Required;
        break;
    case LlmProfile::Ollama:
    case LlmProfile::LlamaCpp:
        // Structured output works for every model (Ollama: also those without tool support; llama.cpp: also
        // without --jinja), while tools depend on the model's template.
        s.tools = RequestShape::Tools::None;
        break;
    }
    return s;
}

namespace {
std::string shapeKey(const std::string& endpoint, const std::string& model) { return endpoint + "\n" + model; }
}  // namespace

std::optional<RequestShape> RequestShapeMemory::find(const std::string& endpoint, const std::string& model) const {
    std::lock_guard lock(m_mutex);
    auto it = m_shapes.find(shapeKey(endpoint, model));
    if (it == m_shapes.end())
        return std::nullopt;
    return it->second;
}

void RequestShapeMemory::remember(const std::string& endpoint, const std::string& model, const RequestShape& shape) {
    std::lock_guard lock(m_mutex);
    m_shapes[shapeKey(endpoint, model)] = shape;
}

void RequestShapeMemory::learn(const std::string& endpoint, const std::string& model, const RequestShape& shape,
                               const std::string& why) {
    std::lock_guard lock(m_mutex);
    m_shapes[shapeKey(endpoint, model)] = shape;
    m_changes.push_back({endpoint, model, why, shape});
}

std::vector<RequestShapeMemory::Change> RequestShapeMemory::takeChanges() {
    std::lock_guard lock(m_mutex);
    return std::exchange(m_changes, {});
}

}  // namespace kerncast
