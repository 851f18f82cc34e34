#include "engine/search/llm_spend.h"

#include "engine/llm/llm_client.h"

#include <algorithm>
#include <cstdio>

namespace kerncast {

LlmSpendEstimate estimate_llm_spend(const SearchConfig& c) {
    LlmSpendEstimate e;
    if (!search_uses_llm(c))
        return e;
    LlmConfig llm;
    if (c.llm.is_object())
        from_json(c.llm, llm);
    const int64_t measurements = c.budgets.measurements;
    const int64_t reply = std::min<int64_t>(llm.max_tokens, kTypicalReplyTokens);
    const bool mutates =
        std::any_of(c.mutators.begin(), c.mutators.end(), [](const std::string& m) { return m.rfind("llm-", 0) == 0; });
    if (mutates) {
        const LlmPacing& p = c.llm_pacing;
        // per_measurement 0 ties them to no measurement: every child of a batch may be an LLM call.
        const double per_measurement = p.per_measurement > 0 ? p.per_measurement : std::max(c.batch, 24);
        e.mutation_calls = p.initial + static_cast<int64_t>(per_measurement * static_cast<double>(measurements));
        const int64_t prompt = llm.max_prompt_tokens > 0 ? llm.max_prompt_tokens : 10000;
        e.tokens += e.mutation_calls * (prompt + reply);
        e.cost_usd += static_cast<double>(e.mutation_calls) *
                      (static_cast<double>(prompt) * llm.price_in_per_mtok +
                       static_cast<double>(reply) * llm.price_out_per_mtok) /
                      1e6;
    }
    if (c.surrogate == "llm") {
        // A gated batch forecasts its children and measures a few of them.
        const bool all = c.gating.kind == GatingKind::MeasureAll;
        const int batch = c.batch > 0 ? c.batch : (all ? 8 : 24);
        const int measured = all                                 ? batch
                             : c.gating.kind == GatingKind::TopK ? std::max(c.gating.top_k, 1)
                             : c.measure_per_parent > 0          ? c.measure_per_parent
                                                                 : kMeasurePerParent;
        const double per_measurement = static_cast<double>(batch) / static_cast<double>(std::min(measured, batch));
        e.forecast_calls =
            static_cast<int64_t>(per_measurement * static_cast<double>(measurements)) * std::max(c.samples, 1);
        e.tokens += e.forecast_calls * (kTypicalForecastPromptTokens + reply);
        e.cost_usd += static_cast<double>(e.forecast_calls) *
                      (static_cast<double>(kTypicalForecastPromptTokens) * llm.price_in_per_mtok +
                       static_cast<double>(reply) * llm.price_out_per_mtok) /
                      1e6;
    }
    return e;
}

std::string llm_spend_warning(const SearchConfig& c, const LlmSpendEstimate& e) {
    char head[240];
    std::snprintf(head, sizeof head,
                  "this search may spend about %.2f M LLM tokens (%lld mutations, %lld forecasts at typical sizes)",
                  static_cast<double>(e.tokens) / 1e6, static_cast<long long>(e.mutation_calls),
                  static_cast<long long>(e.forecast_calls));
    char tail[240];
    if (c.budgets.tokens > 0 && e.tokens > c.budgets.tokens) {
        std::snprintf(tail, sizeof tail,
                      ": more than its token budget of %.2f M (--token-budget), which ends it early; lower "
                      "--llm-per-measurement or --max-prompt-tokens, or raise the budget",
                      static_cast<double>(c.budgets.tokens) / 1e6);
        return head + std::string(tail);
    }
    if (c.budgets.cost_usd > 0 && e.cost_usd > c.budgets.cost_usd) {
        std::snprintf(tail, sizeof tail,
                      " ($%.2f): more than its cost budget of $%.2f (--cost-budget), which ends it early; lower "
                      "--llm-per-measurement or --max-prompt-tokens, or raise the budget",
                      e.cost_usd, c.budgets.cost_usd);
        return head + std::string(tail);
    }
    return "";
}

}  // namespace kerncast
