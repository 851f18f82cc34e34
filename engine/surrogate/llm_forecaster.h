#pragma once
// The LLM surrogate (ARCHITECTURE §6): asks an OpenAI-compatible endpoint for a distribution over the 8 speedup bins
// through one tool, `submit_kernel_runtime_estimate` (the GPU Forecasters tool, so that their data and ours are
// comparable), with a fenced JSON block in the reply as the fallback for endpoints without tool calls.
//
// The prompt comes from two editable templates in a folder (usually <resources>/prompts): forecast_system.txt and
// forecast_user.txt. {{name}} placeholders are filled from the ForecastQuery; placeholderNames() lists them.

#include "engine/llm/llm_client.h"
#include "engine/surrogate/surrogate.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace kerncast {

struct LlmForecasterOptions {
    int samples = 1;                       // requests per query; the parsed ones are averaged
    BinScheme scheme = BinScheme::gfV2();  // the bins of the prompt's table and of the tool's 8 probabilities
    bool use_tools = true;                 // false: no tools in the request; the reply's JSON block is read
    // Predict or defer (the paper's abstain mode): a second tool, defer_to_measurement, lets the model decline; a
    // deferral asks for a measurement and counts as an abstention.
    bool abstain = false;
};

// The two messages sent for one query.
struct ForecastPrompt {
    std::string system;
    std::string user;
    std::string hash;  // text_hash of both, stored as the forecast's prompt_hash
    // Both messages as one readable text (what an inspector shows).
    std::string text() const;
};

// What one reply states, as written: probabilities not yet renormalised.
struct RuntimeEstimate {
    std::array<double, kBinCount> probabilities{};  // index 0 is bin 1
    int predicted_bin = 0;                          // 1..8 as stated; 0 when the reply did not state one
    std::string reasoning;
    bool deferred = false;  // the model called defer_to_measurement (probabilities are then all 0)
};

// One sample's answer as the endpoint gave it, for an inspector or a log.
struct ForecastSample {
    ChatResult reply;
    std::string parse_error;  // empty when the sample gave a distribution
};

// A forecast with what produced it.
struct LlmForecastOutcome {
    ForecastResult result;
    ForecastPrompt prompt;
    std::vector<ForecastSample> samples;
};

class LlmForecaster : public Surrogate {
public:
    // Reads the templates from templates_dir; throws kerncast::Error when one is missing or names an unknown
    // placeholder (file:line), or when the configuration cannot reach a model (LlmClient's checks).
    LlmForecaster(LlmConfig config, std::string templates_dir, LlmForecasterOptions options = {});
    ~LlmForecaster() override;

    std::string id() const override;  // "llm:<model>"
    std::vector<ForecastResult> forecast(const std::vector<ForecastQuery>& queries) override;
    // Same, with the prompt and every sample's reply of each query kept beside its result.
    std::vector<LlmForecastOutcome> forecastWithDetails(const std::vector<ForecastQuery>& queries);

    ForecastPrompt prompt(const ForecastQuery& query) const;
    // prompt(query).text()
    std::string renderPrompt(const ForecastQuery& query) const;

    const LlmForecasterOptions& options() const { return m_options; }
    LlmClient& client() { return *m_client; }

    // The tool's JSON-schema definition (flat, no $ref) for a scheme: its probability keys are the gf-v2 names in
    // bin order whatever the scheme; the descriptions carry the scheme's own ranges.
    static nlohmann::ordered_json toolDefinition(const BinScheme& scheme);
    static constexpr const char* kToolName = "submit_kernel_runtime_estimate";
    // The abstain mode's second tool: {"reasoning": why the model would rather see a measurement}.
    static nlohmann::ordered_json deferToolDefinition();
    static constexpr const char* kDeferToolName = "defer_to_measurement";
    static const std::array<std::string, kBinCount>& probabilityKeys();
    static std::vector<std::string> placeholderNames();

    // Reads one reply: the tool call's arguments, or else the last ```json block (or bare JSON object) of the
    // text; a call of defer_to_measurement is a deferral. Throws kerncast::Error "reply did not parse: ..." with a
    // snippet of what was read.
    static RuntimeEstimate parseReply(const ChatResult& reply);

private:
    LlmConfig m_config;
    LlmForecasterOptions m_options;
    std::string m_systemTemplate;
    std::string m_userTemplate;
    std::unique_ptr<LlmClient> m_client;
};

}  // namespace kerncast
