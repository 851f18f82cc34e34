#pragma once
// OpenAI-compatible servers on loopback that validate requests and answer the way each product documents it
// (docs/llm.md lists the sources): the error bodies are theirs word for word, so a client that adapts to them here
// adapts to the real server.
//
//   OpenAiReasoning  OpenAI's reasoning models (o4-mini, gpt-5): max_tokens refused ("use max_completion_tokens"),
//                    any temperature but 1 refused; tools, every tool_choice form and response_format work; no
//                    reasoning text, usage with completion_tokens_details.reasoning_tokens.
//   Vllm             `vllm serve` with a reasoning parser but without --enable-auto-tool-choice: named and
//                    "required" tool_choice are honoured (guided decoding), "auto" is refused; reasoning in
//                    message.reasoning_content; errors as {"object": "error", ...}.
//   VllmGptOss       vLLM serving gpt-oss: the named tool_choice is ignored (no tool call, only reasoning), "required"
//                    works; reasoning in message.reasoning.
//   Ollama           Ollama's /v1 with a model whose template has no tools: any request with tools is refused
//                    ("... does not support tools"); tool_choice is not read; response_format json_schema works;
//                    reasoning in message.reasoning.
//   LlamaCpp         llama-server without --jinja: tools answer HTTP 500 "tools param requires --jinja flag";
//                    response_format json_schema works; reasoning in message.reasoning_content.
//
// Every server counts tokens the same way (prompt: characters / 4; completion: the answer's characters / 4 plus the
// reasoning's), and cuts an answer longer than the request's limit with finish_reason "length".

#include "tests/support/loopback_http_server.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace kerncast::test {

enum class LlmProduct { OpenAiReasoning, Vllm, VllmGptOss, Ollama, LlamaCpp };

inline const char* product_name(LlmProduct p) {
    switch (p) {
    case LlmProduct::OpenAiReasoning:
        return "openai-reasoning";
    case LlmProduct::Vllm:
        return "vllm";
    case LlmProduct::VllmGptOss:
        return "vllm-gpt-oss";
    case LlmProduct::Ollama:
        return "ollama";
    case LlmProduct::LlamaCpp:
        return "llamacpp";
    }
    return "?";
}

inline const char* product_model(LlmProduct p) {
    switch (p) {
    case LlmProduct::OpenAiReasoning:
        return "o4-mini";
    case LlmProduct::Vllm:
        return "Qwen/Qwen3-32B";
    case LlmProduct::VllmGptOss:
        return "openai/gpt-oss-120b";
    case LlmProduct::Ollama:
        return "gemma3:4b";
    case LlmProduct::LlamaCpp:
        return "qwen3-8b-q4_k_m.gguf";
    }
    return "?";
}

// What a request asks for, as the emulated model understands it.
enum class LlmTask { Forecast, Rewrite, Diff };

class EmulatedLlmServer {
public:
    // The answer's text for a task: a forecast's JSON arguments (object text), a rewrite's or a diff's reply.
    using Answer = std::function<std::string(LlmTask task, const nlohmann::json& request, int n)>;

    EmulatedLlmServer(LlmProduct product, Answer answer) : m_product(product), m_answer(std::move(answer)) {
        m_server.setHandler([this](const HttpRequestSeen& r) { return handle(r); });
    }
    ~EmulatedLlmServer() { m_server.stop(); }  // before the members the handler uses go
    EmulatedLlmServer(const EmulatedLlmServer&) = delete;
    EmulatedLlmServer& operator=(const EmulatedLlmServer&) = delete;

    std::string baseUrl() const { return m_server.baseUrl(); }
    std::string model() const { return product_model(m_product); }
    LlmProduct product() const { return m_product; }
    const LoopbackHttpServer& http() const { return m_server; }
    // Requests answered with an error (HTTP 4xx/5xx).
    int refused() const { return m_refused.load(); }
    int answered() const { return m_answered.load(); }
    // Bodies of the requests that got an answer, in arrival order.
    std::vector<nlohmann::json> acceptedBodies() const {
        std::lock_guard lock(m_mutex);
        return m_accepted;
    }
    // Every answer's completion tokens (what a client must add up), and the reasoning texts sent.
    int64_t promptTokens() const { return m_promptTokens.load(); }
    int64_t completionTokens() const { return m_completionTokens.load(); }

    static int64_t tokensOf(const std::string& text) { return static_cast<int64_t>(text.size() / 4 + 1); }

private:
    HttpAnswer error(int status, const std::string& message, const char* type, const nlohmann::json& param,
                     const nlohmann::json& code) {
        ++m_refused;
        nlohmann::json body;
        switch (m_product) {
        case LlmProduct::Vllm:
        case LlmProduct::VllmGptOss:
            body = {{"object", "error"}, {"message", message}, {"type", type}, {"param", param}, {"code", status}};
            break;
        case LlmProduct::LlamaCpp:
            body = {{"error", {{"code", status}, {"message", message}, {"type", type}}}};
            break;
        default:
            body = {{"error", {{"message", message}, {"type", type}, {"param", param}, {"code", code}}}};
        }
        return HttpAnswer::json(body.dump(), status);
    }

    static std::string text(const nlohmann::json& body) {
        std::string all;
        for (const auto& m : body["messages"])
            if (m.contains("content") && m["content"].is_string())
                all += m["content"].get<std::string>() + "\n";
        return all;
    }

    HttpAnswer handle(const HttpRequestSeen& r) {
        if (r.method != "POST" || r.target != "/v1/chat/completions")
            return error(404, "Not Found", "invalid_request_error", nullptr, nullptr);
        const nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
        if (!body.is_object() || !body.contains("messages") || !body["messages"].is_array() || body["messages"].empty())
            return error(400, "'messages' is a required property", "invalid_request_error", "messages", nullptr);
        if (body.value("model", std::string()) != model())
            return error(404, "The model `" + body.value("model", std::string()) + "` does not exist.",
                         "invalid_request_error", "model", "model_not_found");
        const bool tools = body.contains("tools") && body["tools"].is_array() && !body["tools"].empty();
        const nlohmann::json choice = body.contains("tool_choice") ? body["tool_choice"] : nlohmann::json();
        const bool named = choice.is_object();
        const std::string choiceText = choice.is_string() ? choice.get<std::string>() : "";
        int64_t limit = 100000;

        switch (m_product) {
        case LlmProduct::OpenAiReasoning:
            if (body.contains("max_tokens"))
                return error(400,
                             "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                             "'max_completion_tokens' instead.",
                             "invalid_request_error", "max_tokens", "unsupported_parameter");
            if (body.contains("temperature") && body["temperature"].is_number() &&
                body["temperature"].get<double>() != 1.0)
                return error(400,
                             "Unsupported value: 'temperature' does not support " + body["temperature"].dump() +
                                 " with this model. Only the default (1) value is supported.",
                             "invalid_request_error", "temperature", "unsupported_value");
            limit = body.value("max_completion_tokens", int64_t{100000});
            break;
        case LlmProduct::Vllm:
        case LlmProduct::VllmGptOss:
            if (tools && (choiceText == "auto" || choice.is_null()) && m_product == LlmProduct::Vllm)
                return error(400,
                             "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be "
                             "set",
                             "BadRequestError", nullptr, 400);
            limit = body.value("max_completion_tokens", body.value("max_tokens", int64_t{100000}));
            break;
        case LlmProduct::Ollama:
            if (tools)
                return error(400, "registry.ollama.ai/library/" + model() + " does not support tools", "api_error",
                             nullptr, nullptr);
            limit = body.value("max_tokens", int64_t{100000});
            break;
        case LlmProduct::LlamaCpp:
            if (tools)
                return error(500, "tools param requires --jinja flag", "server_error", nullptr, nullptr);
            limit = body.value("max_tokens", body.value("n_predict", int64_t{-1}));
            if (limit < 0)
                limit = 100000;
            break;
        }

        const std::string prompt = text(body);
        LlmTask task = LlmTask::Rewrite;
        const bool wantsJson = tools ||
                               (body.contains("response_format") &&
                                body["response_format"].value("type", std::string()) == "json_schema") ||
                               prompt.find("Do not call a tool.") != std::string::npos;
        if (wantsJson)
            task = LlmTask::Forecast;
        else if (prompt.find("<<<<<<< SEARCH") != std::string::npos)
            task = LlmTask::Diff;
        const int n = ++m_answered;
        const std::string answer = m_answer(task, body, n);
        const std::string reasoning = "Thinking about request " + std::to_string(n) + " step by step.";

        nlohmann::json message = {{"role", "assistant"}, {"content", nullptr}};
        std::string finish = "stop";
        // gpt-oss ignores a named tool_choice: it reasons and stops without calling the tool.
        const bool callsTool = tools && !(m_product == LlmProduct::VllmGptOss && named);
        int64_t completion = tokensOf(answer);
        if (m_product != LlmProduct::OpenAiReasoning)
            completion += tokensOf(reasoning);
        if (completion > limit) {
            finish = "length";
            message["content"] = answer.substr(0, static_cast<size_t>(limit) * 4 / 2);
            completion = limit;
        } else if (callsTool && task == LlmTask::Forecast) {
            const nlohmann::json args = nlohmann::json::parse(answer);
            std::string name = body["tools"][0]["function"]["name"].get<std::string>();
            nlohmann::json arguments = args;
            if (args.contains("tool")) {  // an answer that chooses among several tools
                name = args["tool"].get<std::string>();
                arguments = args["arguments"];
            }
            message["tool_calls"] =
                nlohmann::json::array({{{"id", "call_" + std::to_string(n)},
                                        {"type", "function"},
                                        {"function", {{"name", name}, {"arguments", arguments.dump()}}}}});
            finish = "tool_calls";
        } else if (tools) {
            message["content"] = "";  // gpt-oss with a named tool_choice
        } else if (task == LlmTask::Forecast) {
            nlohmann::json args = nlohmann::json::parse(answer);
            if (args.contains("tool") &&
                body["messages"].back()["content"].get<std::string>().find("\"tool\"") == std::string::npos)
                args = args["arguments"];  // one tool offered: the object is its arguments
            message["content"] = args.dump();
        } else {
            message["content"] = answer;
        }
        switch (m_product) {
        case LlmProduct::Vllm:
        case LlmProduct::LlamaCpp:
            message["reasoning_content"] = reasoning;
            break;
        case LlmProduct::VllmGptOss:
        case LlmProduct::Ollama:
            message["reasoning"] = reasoning;
            break;
        case LlmProduct::OpenAiReasoning:
            break;
        }
        const int64_t promptTokens = tokensOf(prompt);
        m_promptTokens += promptTokens;
        m_completionTokens += completion;
        nlohmann::json usage = {{"prompt_tokens", promptTokens},
                                {"completion_tokens", completion},
                                {"total_tokens", promptTokens + completion}};
        if (m_product == LlmProduct::OpenAiReasoning)
            usage["completion_tokens_details"] = {{"reasoning_tokens", tokensOf(reasoning)}};
        {
            std::lock_guard lock(m_mutex);
            m_accepted.push_back(body);
        }
        const nlohmann::json reply = {
            {"id", "chatcmpl-" + std::to_string(n)},
            {"object", "chat.completion"},
            {"created", 1732400000},
            {"model", model()},
            {"choices", nlohmann::json::array({{{"index", 0}, {"message", message}, {"finish_reason", finish}}})},
            {"usage", usage}};
        return HttpAnswer::json(reply.dump());
    }

    LlmProduct m_product;
    Answer m_answer;
    LoopbackHttpServer m_server;
    mutable std::mutex m_mutex;
    std::vector<nlohmann::json> m_accepted;
    std::atomic<int> m_refused{0};
    std::atomic<int> m_answered{0};
    std::atomic<int64_t> m_promptTokens{0};
    std::atomic<int64_t> m_completionTokens{0};
};

// A forecast's arguments with all mass on one bin.
inline std::string estimate_arguments(int bin, const std::string& reasoning = "memory bound; same traffic") {
    static const char* keys[] = {"p_severe_slowdown", "p_significant_slowdown", "p_moderate_slowdown",
                                 "p_minor_slowdown",  "p_minor_speedup",        "p_significant_speedup",
                                 "p_high_speedup",    "p_extreme_speedup"};
    nlohmann::json args = {{"reasoning", reasoning}};
    for (int b = 1; b <= 8; ++b)
        args[keys[b - 1]] = b == bin ? 1.0 : 0.0;
    args["predicted_bin"] = bin;
    return args.dump();
}

}  // namespace kerncast::test
