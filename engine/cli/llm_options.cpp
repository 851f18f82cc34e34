#include "engine/cli/llm_options.h"

#include <CLI/CLI.hpp>

namespace kerncast::cli {

void add_llm_options(CLI::App* cmd, LlmOptionArgs& a) {
    cmd->add_option("--endpoint", a.endpoint, "OpenAI-compatible base URL, e.g. http://localhost:8000/v1");
    cmd->add_option("--model", a.model, "Model name at the endpoint");
    cmd->add_option("--llm-profile", a.profile,
                    "Request shape: auto (adapts to what the endpoint accepts), openai, vllm, ollama or llamacpp")
        ->check(CLI::IsMember({"auto", "openai", "vllm", "ollama", "llamacpp"}));
    cmd->add_option("--temperature", a.temperature, "Sampling temperature (default 1.0)")->check(CLI::Range(0.0, 2.0));
    cmd->add_option("--max-tokens", a.max_tokens, "Longest answer in tokens, reasoning included (default 16384)")
        ->check(CLI::Range(1, 10000000));
    cmd->add_option("--timeout", a.timeout_s, "Seconds per request attempt (default 900)")
        ->check(CLI::Range(0.001, 1e6));
    cmd->add_option("--concurrency", a.concurrency, "Requests in flight (default 8)")->check(CLI::Range(1, 4096));
    cmd->add_option("--price-in", a.price_in, "USD per million prompt tokens (for cost and --cost-budget)")
        ->check(CLI::Range(0.0, 1e6));
    cmd->add_option("--price-out", a.price_out, "USD per million completion tokens")->check(CLI::Range(0.0, 1e6));
    cmd->add_option("--max-prompt-tokens", a.max_prompt_tokens,
                    "Longest mutation prompt in tokens (about 4 characters each): inspirations are left out, then the "
                    "reference cut, each saying so (default 6000; 0: no limit)")
        ->check(CLI::Range(0, 10000000));
}

nlohmann::json llm_overrides(const LlmOptionArgs& a) {
    nlohmann::json j = nlohmann::json::object();
    if (!a.endpoint.empty())
        j["endpoint"] = a.endpoint;
    if (!a.model.empty())
        j["model"] = a.model;
    if (!a.profile.empty())
        j["profile"] = a.profile;
    if (a.temperature)
        j["temperature"] = *a.temperature;
    if (a.max_tokens)
        j["max_tokens"] = *a.max_tokens;
    if (a.timeout_s)
        j["timeout_s"] = *a.timeout_s;
    if (a.concurrency)
        j["concurrency"] = *a.concurrency;
    if (a.price_in)
        j["price_in_per_mtok"] = *a.price_in;
    if (a.price_out)
        j["price_out_per_mtok"] = *a.price_out;
    if (a.max_prompt_tokens)
        j["max_prompt_tokens"] = *a.max_prompt_tokens;
    return j;
}

}  // namespace kerncast::cli
