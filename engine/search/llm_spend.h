#pragma once
// What an LLM-driven search will spend, estimated before it starts from its settings (docs/llm.md "What a search
// costs and how to bound it"): the paced LLM mutations (SearchConfig::llm_pacing) and the LLM forecasts a gated
// batch asks for per measurement, each at a typical size. The search warns when the estimate passes its budgets.

#include "engine/search/search_runner.h"

#include <cstdint>
#include <string>

namespace kerncast {

// A forecast prompt's typical size (problem, reference and candidate with their compiler reports, the hardware and
// bin tables: about 15,000 characters for softmax) and a reply's (explanation and program, or the estimate, with
// some reasoning), in tokens.
inline constexpr int64_t kTypicalForecastPromptTokens = 4000;
inline constexpr int64_t kTypicalReplyTokens = 2000;

struct LlmSpendEstimate {
    int64_t mutation_calls = 0;  // at most: what the measurement budget earns
    int64_t forecast_calls = 0;  // about: children forecast per measurement, times the measurements, times samples
    int64_t tokens = 0;
    double cost_usd = 0;  // 0 without prices
};

// The estimate for a config whose budgets are resolved (default_llm_budgets); zero when it uses no LLM.
LlmSpendEstimate estimate_llm_spend(const SearchConfig& config);

// "this search may spend about ... : more than its token budget of ... (--token-budget), which ends it early", or ""
// when the estimate fits the budgets.
std::string llm_spend_warning(const SearchConfig& config, const LlmSpendEstimate& estimate);

}  // namespace kerncast
