#include "engine/surrogate/llm_forecaster.h"

#include "engine/unified_diff.h"

#include "core/error.h"
#include "core/text_util.h"
#include "core/untrusted_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

namespace kerncast {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr size_t kSnippetChars = 200;
const char* const kNotGiven = "(not given)";

std::string snippet(const std::string& text) {
    std::string s = text.substr(0, kSnippetChars);
    for (char& c : s)
        if (c == '\n' || c == '\r')
            c = ' ';
    if (text.size() > kSnippetChars)
        s += "...";
    return "\"" + s + "\"";
}

[[noreturn]] void notParsed(const std::string& why) { throw Error("reply did not parse: " + why); }

std::string formatNumber(double v, const char* format) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// ---- Templates --------------------------------------------------------------------------------------------------

using Values = std::map<std::string, std::string>;

struct Placeholder {
    size_t begin = 0, end = 0;  // [begin, end) covers "{{name}}"
    std::string name;
};

std::vector<Placeholder> placeholdersIn(const std::string& text) {
    std::vector<Placeholder> out;
    for (size_t at = text.find("{{"); at != std::string::npos; at = text.find("{{", at)) {
        const size_t close = text.find("}}", at + 2);
        if (close == std::string::npos)
            break;
        std::string name = text.substr(at + 2, close - at - 2);
        name.erase(0, name.find_first_not_of(' '));
        name.erase(name.find_last_not_of(' ') + 1);
        out.push_back({at, close + 2, name});
        at = close + 2;
    }
    return out;
}

// One pass: text that a value brings in (a kernel's source, say) is never scanned for placeholders itself.
std::string render(const std::string& text, const Values& values) {
    std::string out;
    size_t from = 0;
    for (const auto& p : placeholdersIn(text)) {
        out.append(text, from, p.begin - from);
        out += values.at(p.name);
        from = p.end;
    }
    out.append(text, from, std::string::npos);
    return out;
}

std::string loadTemplate(const std::string& dir, const std::string& file) {
    const std::string path = (std::filesystem::path(dir) / file).string();
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(path + ": cannot be read; expected the forecast prompt template (resources/prompts/" + file +
                    " is the default)");
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const auto known = LlmForecaster::placeholderNames();
    for (const auto& p : placeholdersIn(text)) {
        if (std::find(known.begin(), known.end(), p.name) != known.end())
            continue;
        const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + p.begin, '\n'));
        std::string list;
        for (const auto& k : known)
            list += (list.empty() ? "" : ", ") + ("{{" + k + "}}");
        throw Error({path, line}, "unknown placeholder {{" + p.name + "}}; expected one of " + list);
    }
    return text;
}

// "805306368 (805.3 M)": exact for a reader who computes, scaled for one who skims.
std::string countText(double v) {
    static const char* const prefixes[] = {"k", "M", "G", "T", "P"};
    std::string out = formatNumber(v, "%.0f");
    double scaled = v;
    int prefix = -1;
    while (scaled >= 1000 && prefix < 4) {
        scaled /= 1000;
        ++prefix;
    }
    if (prefix >= 0)
        out += " (" + formatNumber(scaled, "%.1f") + " " + prefixes[prefix] + ")";
    return out;
}

std::string orNotGiven(const std::string& s) { return s.empty() ? kNotGiven : s; }

std::string staticReportText(const std::vector<StaticReport>& reports) {
    if (reports.empty())
        return kNotGiven;
    std::string out;
    for (const auto& r : reports) {
        out += "- " + r.kernel + ": " + std::to_string(r.registers) + " registers/thread, " +
               std::to_string(r.shared_bytes) + " B static shared memory, " + std::to_string(r.stack_bytes) +
               " B stack, " + std::to_string(r.spill_store_bytes) + " B spill stores, " +
               std::to_string(r.spill_load_bytes) + " B spill loads, " + std::to_string(r.constant_bytes) +
               " B constant memory, " + std::to_string(r.barriers) + " barriers";
        if (r.max_threads_per_block > 0)
            out += ", at most " + std::to_string(r.max_threads_per_block) + " threads/block";
        out += "\n";
    }
    out.pop_back();
    return out;
}

std::string launchesText(const std::vector<LaunchShape>& launches) {
    if (launches.empty())
        return kNotGiven;
    auto dim3 = [](const int64_t(&d)[3]) {
        return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + ")";
    };
    std::string out;
    for (const auto& l : launches) {
        out += "- " + l.kernel + ": grid" + dim3(l.grid) + " block" + dim3(l.block) + ", " +
               std::to_string(l.dynamic_smem) + " B dynamic shared memory";
        if (l.cluster[0] * l.cluster[1] * l.cluster[2] > 1)
            out += ", clusters of " + dim3(l.cluster) + " blocks";
        if (l.tensor_maps > 0)
            out += ", " + std::to_string(l.tensor_maps) + " TMA tensor map" + (l.tensor_maps > 1 ? "s" : "");
        out += "\n";
    }
    out.pop_back();
    return out;
}

std::string hardwareTableText(const json& table) {
    if (!table.is_object() || table.empty())
        return table.is_null() || table.empty() ? "" : table.dump();
    std::string out;
    for (const auto& [key, value] : table.items())
        out += "- " + key + ": " + (value.is_string() ? value.get<std::string>() : value.dump()) + "\n";
    out.pop_back();
    return out;
}

std::string tunablesText(const std::map<std::string, int64_t>& tunables) {
    if (tunables.empty())
        return "(none)";
    std::string out;
    for (const auto& [name, value] : tunables)
        out += (out.empty() ? "" : ", ") + name + "=" + std::to_string(value);
    return out;
}

std::string problemText(const ForecastQuery& q) {
    if (q.problem_name.empty())
        return orNotGiven(q.problem_description);
    return q.problem_description.empty() ? q.problem_name : q.problem_name + ": " + q.problem_description;
}

std::string probabilityKeysText(const BinScheme& scheme) {
    const auto table = split_lines(scheme.promptTable());
    std::string out;
    for (int b = 0; b < kBinCount; ++b)
        out += "  \"" + LlmForecaster::probabilityKeys()[b] + "\": probability of " + table[b] + ",\n";
    return out.substr(0, out.size() - 1);
}

// The anchor (ARCHITECTURE §4): the program the candidate is forecast against.
std::string anchorLabel(const ForecastQuery& q) {
    if (q.anchor.is_reference)
        return "the reference";
    std::string s = q.anchor.candidate_id ? "parent #" + std::to_string(q.anchor.candidate_id) : std::string("parent");
    return q.anchor.label.empty() ? s : s + " (" + q.anchor.label + ")";
}

std::string anchorCode(const ForecastQuery& q) {
    const std::string& source = q.anchor.is_reference && q.anchor.source.empty() ? q.reference_source : q.anchor.source;
    return source.empty() ? source : program_with_defines(source, q.anchor.tunables);
}

std::string anchorTime(const ForecastQuery& q) {
    std::optional<double> t = q.anchor.time_us;
    if (!t && q.anchor.is_reference)
        t = q.reference_time_us;
    if (!t && q.reference_time_us && q.anchor.speedup > 0)
        t = *q.reference_time_us / q.anchor.speedup;
    return t ? formatNumber(*t, "%.2f") + " us" : "(not measured)";
}

// The candidate as a unified diff against its anchor, both with their tunables as #define lines.
std::string candidateDiff(const ForecastQuery& q) {
    const std::string anchor = anchorCode(q);
    if (anchor.empty())
        return "(no anchor code to compare with)";
    const std::string diff =
        unified_diff(anchor, program_with_defines(q.candidate_source, q.tunables), "anchor.cu", "candidate.cu");
    return diff.empty() ? "(the candidate is the same program as its anchor)" : diff;
}

Values placeholderValues(const ForecastQuery& q, const BinScheme& scheme) {
    return {
        {"problem", problemText(q)},
        {"problem_name", orNotGiven(q.problem_name)},
        {"problem_description", orNotGiven(q.problem_description)},
        {"reference_code", orNotGiven(q.reference_source)},
        {"candidate_code", orNotGiven(q.candidate_source)},
        {"static_report", staticReportText(q.static_report)},
        {"reference_static_report", staticReportText(q.reference_static_report)},
        {"launches", launchesText(q.launches)},
        {"tunables", tunablesText(q.tunables)},
        {"problem_bytes", q.problem_bytes > 0 ? countText(q.problem_bytes) : kNotGiven},
        {"problem_flops", q.problem_flops > 0 ? countText(q.problem_flops) : kNotGiven},
        {"reference_time", q.reference_time_us ? formatNumber(*q.reference_time_us, "%.2f") + " us" : "(not measured)"},
        {"parent_speedup", q.parent_speedup ? formatNumber(*q.parent_speedup, "%.3g") + "x" : "(not measured)"},
        {"anchor_label", anchorLabel(q)},
        {"anchor_code", orNotGiven(anchorCode(q))},
        {"anchor_time", anchorTime(q)},
        {"anchor_speedup", formatNumber(q.anchor.is_reference ? 1.0 : q.anchor.speedup, "%.3g") + "x"},
        {"anchor_static_report",
         staticReportText(q.anchor.is_reference && q.anchor.static_report.empty() ? q.reference_static_report
                                                                                  : q.anchor.static_report)},
        {"candidate_diff", candidateDiff(q)},
        {"hardware", orNotGiven(q.hardware)},
        {"hardware_table", hardwareTableText(q.hardware_table)},
        {"bin_table", scheme.promptTable()},
        {"tool_name", LlmForecaster::kToolName},
        {"probability_keys", probabilityKeysText(scheme)},
    };
}

// ---- Replies ----------------------------------------------------------------------------------------------------

json jsonFromText(const std::string& text) {
    json j;
    try {
        j = json_object_from_text(text);
    } catch (const Error& e) {
        notParsed(e.what());
    }
    if (j.is_null())
        notParsed("no tool call and no JSON object in the reply: " + snippet(text));
    return j;
}

double numberField(const json& args, const std::string& key) {
    if (!args.contains(key))
        notParsed("missing \"" + key + "\" in " + snippet(args.dump()));
    const json& v = args[key];
    if (v.is_number())
        return v.get<double>();
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        char* end = nullptr;
        const double d = std::strtod(s.c_str(), &end);
        if (!s.empty() && end && *end == '\0')
            return d;
    }
    notParsed("\"" + key + "\" must be a number, found " + v.dump());
}

RuntimeEstimate estimateFrom(const json& args) {
    RuntimeEstimate e;
    for (int b = 0; b < kBinCount; ++b)
        e.probabilities[b] = numberField(args, LlmForecaster::probabilityKeys()[b]);
    if (args.contains("predicted_bin")) {
        const double bin = numberField(args, "predicted_bin");
        if (bin != std::floor(bin) || bin < 1 || bin > kBinCount)
            notParsed("\"predicted_bin\" must be an integer from 1 to 8, found " + args["predicted_bin"].dump());
        e.predicted_bin = static_cast<int>(bin);
    }
    if (args.contains("reasoning"))
        e.reasoning = args["reasoning"].is_string() ? args["reasoning"].get<std::string>() : args["reasoning"].dump();
    return e;
}

}  // namespace

// ---- LlmForecaster ----------------------------------------------------------------------------------------------

std::string ForecastPrompt::text() const { return "[system]\n" + system + "\n\n[user]\n" + user; }

const std::array<std::string, kBinCount>& LlmForecaster::probabilityKeys() {
    static const std::array<std::string, kBinCount> keys = {
        "p_severe_slowdown", "p_significant_slowdown", "p_moderate_slowdown", "p_minor_slowdown",
        "p_minor_speedup",   "p_significant_speedup",  "p_high_speedup",      "p_extreme_speedup"};
    return keys;
}

std::vector<std::string> LlmForecaster::placeholderNames() {
    return {"problem",
            "problem_name",
            "problem_description",
            "reference_code",
            "candidate_code",
            "static_report",
            "reference_static_report",
            "launches",
            "tunables",
            "problem_bytes",
            "problem_flops",
            "reference_time",
            "parent_speedup",
            "hardware",
            "hardware_table",
            "bin_table",
            "tool_name",
            "probability_keys",
            "anchor_label",
            "anchor_code",
            "anchor_time",
            "anchor_speedup",
            "anchor_static_report",
            "candidate_diff"};
}

ordered_json LlmForecaster::toolDefinition(const BinScheme& scheme) {
    const auto table = split_lines(scheme.promptTable());
    // Reasoning first: a server that constrains decoding to the schema generates the properties in this order, so
    // the model explains before it commits to numbers.
    ordered_json properties = ordered_json::object();
    properties["reasoning"] = {{"type", "string"},
                               {"description", "A short explanation of what limits each kernel and why the "
                                               "candidate lands in these bins."}};
    auto required = ordered_json::array({"reasoning"});
    for (int b = 0; b < kBinCount; ++b) {
        properties[probabilityKeys()[b]] = {
            {"type", "number"}, {"minimum", 0}, {"maximum", 1}, {"description", "Probability of " + table[b]}};
        required.push_back(probabilityKeys()[b]);
    }
    properties["predicted_bin"] = {
        {"type", "integer"}, {"minimum", 1}, {"maximum", kBinCount}, {"description", "The most likely bin, 1 to 8."}};
    required.push_back("predicted_bin");
    ordered_json parameters = {
        {"type", "object"}, {"properties", properties}, {"required", required}, {"additionalProperties", false}};
    ordered_json function = {
        {"name", kToolName},
        {"description", "Submit the forecast of the candidate kernel's speedup S = t_reference / t_candidate as "
                        "probabilities over 8 bins that sum to 1. Bins (scheme " +
                            scheme.id() + "):\n" + scheme.promptTable()},
        {"parameters", parameters}};
    return {{"type", "function"}, {"function", function}};
}

ordered_json LlmForecaster::deferToolDefinition() {
    ordered_json parameters = {
        {"type", "object"},
        {"properties",
         {{"reasoning",
           {{"type", "string"},
            {"description", "Why the candidate's speedup cannot be forecast with confidence from what is given."}}}}},
        {"required", ordered_json::array({"reasoning"})},
        {"additionalProperties", false}};
    ordered_json function = {{"name", kDeferToolName},
                             {"description",
                              "Decline to forecast and ask for the candidate to be measured on the GPU instead. Use "
                              "it only when no forecast would be informative."},
                             {"parameters", parameters}};
    return {{"type", "function"}, {"function", function}};
}

RuntimeEstimate LlmForecaster::parseReply(const ChatResult& reply) {
    for (const auto& c : reply.tool_calls)
        if (c.name == kDeferToolName) {
            RuntimeEstimate e;
            e.deferred = true;
            const json args = json::parse(c.arguments, nullptr, false);
            if (args.is_object() && args.contains("reasoning"))
                e.reasoning =
                    args["reasoning"].is_string() ? args["reasoning"].get<std::string>() : args["reasoning"].dump();
            return e;
        }
    const ToolCall* call = nullptr;
    for (const auto& c : reply.tool_calls)
        if (c.name == kToolName) {
            call = &c;
            break;
        }
    if (!call && !reply.tool_calls.empty())
        call = &reply.tool_calls.front();
    if (call) {
        const auto args = try_parse_untrusted_json(call->arguments);
        if (args && args->is_object())
            return estimateFrom(*args);
        // A broken tool call may still come with the answer written out in the text.
        try {
            return estimateFrom(jsonFromText(reply.content));
        } catch (const Error&) {
            notParsed("the arguments of tool call '" + call->name +
                      "' are not a JSON object: " + snippet(call->arguments));
        }
    }
    return estimateFrom(jsonFromText(reply.content));
}

LlmForecaster::LlmForecaster(LlmConfig config, std::string templates_dir, LlmForecasterOptions options)
    : m_config(std::move(config)), m_options(std::move(options)) {
    if (m_options.samples < 1)
        throw Error("LLM forecaster: samples must be at least 1, found " + std::to_string(m_options.samples));
    m_systemTemplate = loadTemplate(templates_dir, "forecast_system.txt");
    m_userTemplate = loadTemplate(templates_dir, "forecast_user.txt");
    m_client = std::make_unique<LlmClient>(m_config);
}

LlmForecaster::~LlmForecaster() = default;

std::string LlmForecaster::id() const { return "llm:" + m_config.model; }

ForecastPrompt LlmForecaster::prompt(const ForecastQuery& query) const {
    const Values values = placeholderValues(query, m_options.scheme);
    ForecastPrompt p;
    p.system = render(m_systemTemplate, values);
    p.user = render(m_userTemplate, values);
    p.hash = text_hash(p.system + '\0' + p.user);
    return p;
}

std::string LlmForecaster::renderPrompt(const ForecastQuery& query) const { return prompt(query).text(); }

std::vector<ForecastResult> LlmForecaster::forecast(const std::vector<ForecastQuery>& queries) {
    std::vector<ForecastResult> results;
    for (auto& outcome : forecastWithDetails(queries))
        results.push_back(std::move(outcome.result));
    return results;
}

std::vector<LlmForecastOutcome> LlmForecaster::forecastWithDetails(const std::vector<ForecastQuery>& queries) {
    const int n = m_options.samples;
    std::vector<LlmForecastOutcome> outcomes(queries.size());
    std::vector<ChatRequest> requests;
    requests.reserve(queries.size() * n);
    for (size_t q = 0; q < queries.size(); ++q) {
        outcomes[q].prompt = prompt(queries[q]);
        ChatRequest r;
        r.messages = {{"system", outcomes[q].prompt.system}, {"user", outcomes[q].prompt.user}};
        if (m_options.use_tools) {
            r.tools = ordered_json::array({toolDefinition(m_options.scheme)});
            if (m_options.abstain)
                r.tools.push_back(deferToolDefinition());
        }
        for (int s = 0; s < n; ++s) {
            r.sample_index = s;
            requests.push_back(r);
        }
    }
    std::vector<ChatResult> replies = m_client->complete(requests);

    for (size_t q = 0; q < queries.size(); ++q) {
        auto& outcome = outcomes[q];
        std::vector<Forecast> parsed;  // renormalised per sample, so a sample in percent weighs as much as any
        std::vector<int> statedBins;
        std::string firstReasoning;
        std::string deferReason;
        int deferrals = 0;
        Forecast total;
        for (int s = 0; s < n; ++s) {
            ForecastSample sample{std::move(replies[q * n + s]), {}};
            const ChatResult& reply = sample.reply;
            total.tokens_in += reply.tokens_in;
            total.tokens_out += reply.tokens_out;
            total.cost_usd += reply.cost_usd;
            total.latency_ms = std::max(total.latency_ms, reply.latency_ms);  // the samples run side by side
            LlmCall call = llm_call_from(reply, "forecast", m_config.model);
            if (call.prompt.empty())
                call.prompt = outcome.prompt.text();
            if (!reply.ok) {
                sample.parse_error = reply.error;
                outcome.result.truncated += reply.truncated ? 1 : 0;
            } else {
                try {
                    const RuntimeEstimate e = parseReply(reply);
                    if (e.deferred) {
                        ++deferrals;
                        call.outcome = "deferred";
                        if (deferReason.empty())
                            deferReason = e.reasoning.empty() ? reply.reasoning : e.reasoning;
                        sample.parse_error = "deferred to a measurement";
                    } else {
                        Forecast f;
                        try {
                            f = Forecast::fromRaw(e.probabilities);
                        } catch (const Error& bad) {
                            notParsed(bad.what());
                        }
                        if (parsed.empty())
                            firstReasoning = e.reasoning.empty() ? reply.reasoning : e.reasoning;
                        parsed.push_back(f);
                        statedBins.push_back(e.predicted_bin);
                    }
                } catch (const Error& e) {
                    sample.parse_error = e.what();
                    call.outcome = "failed";
                }
            }
            call.error = call.outcome == "ok" || call.outcome == "deferred" ? "" : sample.parse_error;
            outcome.result.calls.push_back(std::move(call));
            outcome.samples.push_back(std::move(sample));
        }
        if (parsed.empty() && deferrals > 0) {
            outcome.result.deferred = true;
            outcome.result.error =
                "deferred to a measurement: " + (deferReason.empty() ? std::string(kNotGiven) : deferReason);
            continue;
        }
        if (parsed.empty()) {
            if (n == 1) {
                outcome.result.error = outcome.samples[0].parse_error;
            } else {
                outcome.result.error = "none of the " + std::to_string(n) + " samples gave a forecast:";
                for (int s = 0; s < n; ++s)
                    outcome.result.error +=
                        (s ? "; [" : " [") + std::to_string(s + 1) + "] " + outcome.samples[s].parse_error;
            }
            continue;
        }
        std::array<double, kBinCount> mean{};
        double rawSum = 0;
        for (const auto& f : parsed) {
            for (int b = 0; b < kBinCount; ++b)
                mean[b] += f.probabilities[b] / static_cast<double>(parsed.size());
            rawSum += f.raw_sum / static_cast<double>(parsed.size());
        }
        Forecast f = Forecast::fromRaw(mean);
        f.raw_sum = rawSum;
        // The model's own predicted bin is kept (as the GPU Forecasters data keeps it) when every parsed sample
        // states the same one; otherwise the argmax of the average stands.
        if (statedBins.front() != 0 &&
            std::all_of(statedBins.begin(), statedBins.end(), [&](int b) { return b == statedBins.front(); }))
            f.predicted_bin = statedBins.front();
        f.surrogate_id = id();
        f.scheme_id = m_options.scheme.id();
        f.reasoning = firstReasoning;
        f.prompt_hash = outcome.prompt.hash;
        f.tokens_in = total.tokens_in;
        f.tokens_out = total.tokens_out;
        f.cost_usd = total.cost_usd;
        f.latency_ms = total.latency_ms;
        f.anchor_id = queries[q].anchor.is_reference ? 0 : queries[q].anchor.candidate_id;
        f.anchor_speedup = queries[q].anchor.is_reference ? 1.0 : queries[q].anchor.speedup;
        outcome.result.forecast = f;
    }
    return outcomes;
}

}  // namespace kerncast
