#pragma once
// The LLM options that forecast, evaluate and search share. Each overrides the settings file
// (~/.config/kerncast/llm.json) only when given; what neither sets keeps LlmConfig's default.

#include "engine/cli/cli.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace kerncast::cli {

struct LlmOptionArgs {
    std::string endpoint;
    std::string model;
    std::string profile;
    std::optional<double> temperature;
    std::optional<int> max_tokens;
    std::optional<double> timeout_s;
    std::optional<int> concurrency;
    std::optional<double> price_in;
    std::optional<double> price_out;
    std::optional<int> max_prompt_tokens;
};

// --endpoint, --model, --llm-profile, --temperature, --max-tokens, --timeout, --concurrency, --price-in, --price-out,
// --max-prompt-tokens.
void add_llm_options(CLI::App* cmd, LlmOptionArgs& args);

// The given options as LlmConfig fields (for LlmConfig::loadSettings(overrides)).
nlohmann::json llm_overrides(const LlmOptionArgs& args);

}  // namespace kerncast::cli
