#include "core/forecasters_datasets.h"

#include "core/error.h"
#include "core/metrics.h"
#include "core/untrusted_json.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <istream>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace kerncast {

namespace {

enum class FieldKind { String, Number, Bin, Choice };

struct FieldSpec {
    const char* name;
    FieldKind kind;
    std::vector<std::string> choices = {};  // FieldKind::Choice
};

// A row's fields and how they map onto a pair.
struct RowSpec {
    std::vector<FieldSpec> fields;
    const char* id;         // -> comparison_id
    const char* pack;       // -> pack
    const char* anchor;     // -> anchor_code
    const char* candidate;  // -> candidate_code
    const char* speedup;    // -> speedup
    const char* bin;        // -> source_true_bin
};

const RowSpec& eval_set_spec() {
    static const RowSpec spec{{{"comparison_id", FieldKind::String},
                               {"pack", FieldKind::String},
                               {"anchor_code", FieldKind::String},
                               {"candidate_code", FieldKind::String},
                               {"hardware", FieldKind::String},
                               {"aggregated_speedup", FieldKind::Number},
                               {"true_bin", FieldKind::Bin},
                               {"source_id", FieldKind::String},
                               {"source_search", FieldKind::String},
                               {"internal_experiment", FieldKind::String}},
                              "comparison_id",
                              "pack",
                              "anchor_code",
                              "candidate_code",
                              "aggregated_speedup",
                              "true_bin"};
    return spec;
}

const RowSpec& rl_pool_spec() {
    static const RowSpec spec{{{"row_id", FieldKind::String},
                               {"pack", FieldKind::String},
                               {"anchor_code", FieldKind::String},
                               {"candidate_code", FieldKind::String},
                               {"aggregated_speedup", FieldKind::Number},
                               {"relative_bin", FieldKind::Bin},
                               {"pair_type", FieldKind::Choice, {"seed", "parent_edit", "pair"}},
                               {"hardware", FieldKind::String},
                               {"source_id", FieldKind::String},
                               {"source_search", FieldKind::String},
                               {"internal_experiment", FieldKind::String}},
                              "row_id",
                              "pack",
                              "anchor_code",
                              "candidate_code",
                              "aggregated_speedup",
                              "relative_bin"};
    return spec;
}

const RowSpec& discovery_spec() {
    static const RowSpec spec{{{"pair_id", FieldKind::String},
                               {"problem_id", FieldKind::String},
                               {"benchmark_family", FieldKind::Choice, {"gpu_mode", "kernelbench_l3"}},
                               {"parent_code", FieldKind::String},
                               {"child_code", FieldKind::String},
                               {"g_speedup", FieldKind::Number},
                               {"true_bin", FieldKind::Bin},
                               {"hardware", FieldKind::String},
                               {"parent_node_id", FieldKind::String},
                               {"child_node_id", FieldKind::String},
                               {"source_id", FieldKind::String},
                               {"source_search", FieldKind::String},
                               {"internal_experiment", FieldKind::String}},
                              "pair_id",
                              "problem_id",
                              "parent_code",
                              "child_code",
                              "g_speedup",
                              "true_bin"};
    return spec;
}

std::vector<std::string> row_problems(const nlohmann::json& row, const RowSpec& spec) {
    std::vector<std::string> problems;
    if (!row.is_object())
        return {"expected a JSON object, found " + json_type_name(row)};
    for (const auto& f : spec.fields) {
        const auto it = row.find(f.name);
        const std::string field = std::string("\"") + f.name + "\"";
        if (it == row.end()) {
            problems.push_back("missing field " + field);
            continue;
        }
        switch (f.kind) {
        case FieldKind::String:
            if (!it->is_string())
                problems.push_back("field " + field + " must be a string, found " + json_type_name(*it));
            break;
        case FieldKind::Number:
            if (!it->is_number())
                problems.push_back("field " + field + " must be a number, found " + json_type_name(*it) +
                                   (it->is_null() ? " (a failed candidate is not a row of this dataset)" : ""));
            else if (!(std::isfinite(it->get<double>()) && it->get<double>() > 0))
                problems.push_back("field " + field + " must be a positive finite speedup, found " + it->dump());
            break;
        case FieldKind::Bin:
            if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > kBinCount)
                problems.push_back("field " + field + " must be an integer from 1 to 8, found " + it->dump());
            break;
        case FieldKind::Choice:
            if (!it->is_string() ||
                std::find(f.choices.begin(), f.choices.end(), it->get<std::string>()) == f.choices.end()) {
                std::string allowed;
                for (const auto& c : f.choices)
                    allowed += (allowed.empty() ? "" : ", ") + c;
                problems.push_back("field " + field + " must be one of " + allowed + ", found " + it->dump());
            }
            break;
        }
    }
    return problems;
}

std::optional<ImportedPair> pair_from_row(const nlohmann::json& row, const RowSpec& spec, const BinScheme& scheme,
                                          std::string& problem) {
    const auto problems = row_problems(row, spec);
    if (!problems.empty()) {
        problem = problems.front();
        return std::nullopt;
    }
    ImportedPair p;
    p.comparison_id = row[spec.id].get<std::string>();
    p.pack = row[spec.pack].get<std::string>();
    p.hardware = row["hardware"].get<std::string>();
    p.anchor_code = row[spec.anchor].get<std::string>();
    p.candidate_code = row[spec.candidate].get<std::string>();
    p.speedup = row[spec.speedup].get<double>();
    p.true_bin = scheme.binOf(*p.speedup);
    p.source_true_bin = row[spec.bin].get<int>();
    for (auto it = row.begin(); it != row.end(); ++it) {
        const std::string& k = it.key();
        if (k != spec.id && k != spec.pack && k != "hardware" && k != spec.anchor && k != spec.candidate &&
            k != spec.speedup && k != spec.bin)
            p.extra[k] = it.value();
    }
    return p;
}

// ---- PUCT event logs -----------------------------------------------------------------------------------------

struct EventFields {
    std::vector<const char*> v2;  // required in a v2 log
    std::vector<const char*> v3;  // required in a v3 log
};

const std::map<std::string, EventFields>& event_kinds() {
    static const std::map<std::string, EventFields> kinds{
        {"search_initialized", {{"root"}, {"root", "kernel_task", "seed_reference_code", "hardware"}}},
        {"step_started", {{"step", "parent_ulids"}, {"step", "parent_ulids", "selected_parent_scores"}}},
        {"step_completed", {{"step"}, {"step"}}},
        {"mutation_requested", {{"request_id", "parent_ulid"}, {"step", "request_id", "parent_ulid"}}},
        {"mutation_completed", {{"request_id", "code"}, {"step", "request_id", "parent_ulid", "code"}}},
        {"mutation_failed", {{"request_id", "reason"}, {"step", "request_id", "parent_ulid", "reason"}}},
        {"forecast_requested", {{}, {"step", "request_id", "parent_ulid", "code"}}},
        {"forecast_completed", {{}, {"step", "request_id", "parent_ulid", "forecast"}}},
        {"forecast_failed", {{}, {"step", "request_id", "parent_ulid", "reason"}}},
        {"candidate_selected", {{}, {"step", "request_id", "parent_ulid", "selection_score"}}},
        {"candidate_deferred", {{}, {"step", "request_id", "parent_ulid", "selection_score"}}},
        {"evaluation_requested",
         {{"request_id", "child_ulid", "parent_ulid", "code"}, {"step", "request_id", "parent_ulid", "code"}}},
        {"evaluation_completed", {{"request_id", "evaluation"}, {"step", "request_id", "parent_ulid", "evaluation"}}},
        {"evaluation_failed", {{"request_id", "reason"}, {"step", "request_id", "parent_ulid", "reason"}}},
        {"mutations_drained", {{}, {"step", "parent_ulid"}}},
        {"forecasts_drained", {{}, {"step", "parent_ulid"}}},
        {"evaluations_drained", {{}, {"step", "parent_ulid"}}},
    };
    return kinds;
}

struct Node {
    std::string code;
    std::optional<double> reward;
    bool evaluated = false;
};

struct PendingEval {
    std::string child;  // child node id (v2: child_ulid; v3: the request id)
    std::string parent;
    std::string code;
    int line = 0;
};

std::optional<double> reward_of(const nlohmann::json& evaluation) {
    if (evaluation.is_object() && evaluation.contains("reward") && evaluation["reward"].is_number())
        return evaluation["reward"].get<double>();
    return std::nullopt;
}

ImportResult import_puct_events(std::istream& in, const std::string& file_name, const BinScheme& scheme,
                                ImportMode mode, std::string* version_out) {
    ImportResult result;
    std::vector<std::pair<int, nlohmann::json>> events;
    std::string text;
    int line = 0;
    auto fail = [&](int at, const std::string& problem) {
        if (mode == ImportMode::Strict)
            throw Error(SourceLocation{file_name, at}, problem);
        result.issues.push_back({at, problem});
    };
    bool v3 = false;
    while (std::getline(in, text)) {
        ++line;
        if (text.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        std::string invalid;
        std::optional<nlohmann::json> parsed = try_parse_untrusted_json(text, &invalid);
        if (!parsed) {
            fail(line, "not JSON (" + invalid + ")");
            continue;
        }
        const nlohmann::json j = std::move(*parsed);
        const auto kind = j.is_object() ? j.find("kind") : j.end();
        if (!j.is_object() || kind == j.end() || !kind->is_string() || !event_kinds().count(kind->get<std::string>())) {
            fail(line, "expected a search event: a JSON object with a \"kind\" such as \"search_initialized\" or "
                       "\"evaluation_completed\"");
            continue;
        }
        const std::string k = kind->get<std::string>();
        if (event_kinds().at(k).v2.empty() || (k == "search_initialized" && j.contains("kernel_task")) ||
            (k != "search_initialized" && j.contains("step") && k != "step_started" && k != "step_completed"))
            v3 = true;
        events.emplace_back(line, std::move(j));
    }
    if (in.bad())
        throw Error(SourceLocation{file_name, line}, "read error after this line");
    result.lines_read = line;
    if (version_out)
        *version_out = v3 ? "v3" : "v2";

    std::unordered_map<std::string, Node> nodes;
    std::unordered_map<std::string, PendingEval> pending;  // by request id
    std::string pack, hardware;
    bool initialized = false;
    for (const auto& [at, j] : events) {
        const std::string k = j["kind"].get<std::string>();
        const auto& required = v3 ? event_kinds().at(k).v3 : event_kinds().at(k).v2;
        std::string missing;
        for (const char* f : required)
            if (!j.contains(f))
                missing += std::string(missing.empty() ? "" : ", ") + "\"" + f + "\"";
        if (!missing.empty()) {
            fail(at, "a " + std::string(v3 ? "v3" : "v2") + " " + k + " event needs " + missing);
            continue;
        }
        auto str = [&](const char* f) { return j[f].is_string() ? j[f].get<std::string>() : j[f].dump(); };
        if (k == "search_initialized") {
            const auto& root = j["root"];
            if (!root.is_object() || !root.contains("program_code") || !root["program_code"].is_string() ||
                !root.contains("ulid")) {
                fail(at, "search_initialized: \"root\" needs \"program_code\" and \"ulid\"");
                continue;
            }
            Node n;
            n.code = root["program_code"].get<std::string>();
            n.reward = reward_of(root.value("evaluation", nlohmann::json()));
            n.evaluated = true;
            nodes[root["ulid"].is_string() ? root["ulid"].get<std::string>() : root["ulid"].dump()] = n;
            if (v3) {
                if (j["kernel_task"].is_object())
                    pack = j["kernel_task"].value("op_name", std::string());
                if (j["hardware"].is_object())
                    hardware = j["hardware"].value("device_name", std::string());
            }
            initialized = true;
        } else if (k == "evaluation_requested") {
            if (!j["code"].is_string()) {
                fail(at, "evaluation_requested: \"code\" must be a string");
                continue;
            }
            PendingEval p;
            p.child = v3 ? str("request_id") : str("child_ulid");
            p.parent = str("parent_ulid");
            p.code = j["code"].get<std::string>();
            p.line = at;
            pending[str("request_id")] = p;
        } else if (k == "evaluation_completed" || k == "evaluation_failed") {
            const auto it = pending.find(str("request_id"));
            if (it == pending.end()) {
                fail(at, k + " for request " + str("request_id") + " that no evaluation_requested line opened");
                continue;
            }
            const PendingEval p = it->second;
            pending.erase(it);
            Node child;
            child.code = p.code;
            child.evaluated = true;
            if (k == "evaluation_completed")
                child.reward = reward_of(j["evaluation"]);
            nodes[p.child] = child;
            const auto parent = nodes.find(p.parent);
            if (parent == nodes.end()) {
                fail(at, "the evaluated child's parent " + p.parent + " is not a node of this log");
                continue;
            }
            ImportedPair pair;
            pair.comparison_id = p.parent + "->" + p.child;
            pair.pack = pack.empty() ? file_name : pack;
            pair.hardware = hardware;
            pair.anchor_code = parent->second.code;
            pair.candidate_code = p.code;
            if (child.reward && parent->second.reward && *child.reward > 0 && *parent->second.reward > 0)
                pair.speedup = *child.reward / *parent->second.reward;
            pair.true_bin = pair.speedup ? scheme.binOf(*pair.speedup) : 0;
            if (pair.speedup)
                pair.source_true_bin = forecasters_bin(*pair.speedup);
            pair.line = at;
            pair.extra = {
                {"parent_node_id", p.parent}, {"child_node_id", p.child}, {"event_log_version", v3 ? "v3" : "v2"}};
            if (child.reward)
                pair.extra["child_reward"] = *child.reward;
            if (parent->second.reward)
                pair.extra["parent_reward"] = *parent->second.reward;
            if (k == "evaluation_failed")
                pair.extra["failure"] = str("reason");
            if (j.contains("step"))
                pair.extra["step"] = j["step"];
            result.pairs.push_back(std::move(pair));
        }
    }
    if (!initialized && !events.empty())
        fail(events.front().first, "the log has no search_initialized event: the root program is unknown");
    return result;
}

}  // namespace

ForecastersDataset forecasters_dataset_from_string(const std::string& name) {
    if (name == "eval-set")
        return ForecastersDataset::EvalSet;
    if (name == "rl-pool")
        return ForecastersDataset::RlTrainingPool;
    if (name == "discovery-pairs")
        return ForecastersDataset::DiscoveryPairs;
    if (name == "puct-events")
        return ForecastersDataset::PuctEvents;
    throw Error("unknown GPU Forecasters dataset \"" + name +
                "\"; expected eval-set, rl-pool, discovery-pairs or puct-events");
}

const char* to_string(ForecastersDataset dataset) {
    switch (dataset) {
    case ForecastersDataset::EvalSet:
        return "eval-set";
    case ForecastersDataset::RlTrainingPool:
        return "rl-pool";
    case ForecastersDataset::DiscoveryPairs:
        return "discovery-pairs";
    case ForecastersDataset::PuctEvents:
        return "puct-events";
    }
    return "eval-set";
}

std::vector<std::string> eval_set_row_problems(const nlohmann::json& row) {
    auto problems = row_problems(row, eval_set_spec());
    if (problems.empty()) {
        const int theirs = forecasters_bin(row["aggregated_speedup"].get<double>());
        if (row["true_bin"].get<int>() != theirs)
            problems.push_back("true_bin " + row["true_bin"].dump() + " is not clamp(floor(2*log2 S)+4, 1, 8) = " +
                               std::to_string(theirs) + " of aggregated_speedup " + row["aggregated_speedup"].dump());
    }
    return problems;
}

ImportResult import_forecasters_dataset(std::istream& in, const std::string& file_name, ForecastersDataset dataset,
                                        const BinScheme& scheme, ImportMode mode, std::string* version) {
    if (dataset == ForecastersDataset::PuctEvents)
        return import_puct_events(in, file_name, scheme, mode, version);
    if (dataset == ForecastersDataset::EvalSet)
        return import_forecasters_jsonl(in, file_name, scheme, mode);
    const RowSpec& spec = dataset == ForecastersDataset::RlTrainingPool ? rl_pool_spec() : discovery_spec();
    ImportResult result;
    std::unordered_map<std::string, int> first_line;
    std::string text;
    int line = 0;
    while (std::getline(in, text)) {
        ++line;
        if (text.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        std::string problem;
        std::optional<ImportedPair> pair;
        std::string invalid;
        if (const auto row = try_parse_untrusted_json(text, &invalid))
            pair = pair_from_row(*row, spec, scheme, problem);
        else
            problem = "not JSON (" + invalid + ")";
        if (pair) {
            const auto [it, inserted] = first_line.emplace(pair->comparison_id, line);
            if (!inserted) {
                problem = std::string("duplicate ") + spec.id + " \"" + pair->comparison_id + "\" (first on line " +
                          std::to_string(it->second) + ")";
                pair.reset();
            }
        }
        if (!pair) {
            if (mode == ImportMode::Strict)
                throw Error(SourceLocation{file_name, line}, problem);
            result.issues.push_back({line, problem});
            continue;
        }
        pair->line = line;
        result.pairs.push_back(std::move(*pair));
    }
    if (in.bad())
        throw Error(SourceLocation{file_name, line}, "read error after this line");
    result.lines_read = line;
    return result;
}

ImportResult import_forecasters_dataset_file(const std::string& path, ForecastersDataset dataset,
                                             const BinScheme& scheme, ImportMode mode, std::string* version) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(SourceLocation{path, 0}, "cannot open the file for reading");
    return import_forecasters_dataset(in, path, dataset, scheme, mode, version);
}

nlohmann::ordered_json predictions_row(const std::string& comparison_id, const std::string& pack,
                                       const Forecast& forecast, int repeat) {
    nlohmann::ordered_json j;
    j["comparison_id"] = comparison_id;
    j["pack"] = pack;
    j["surrogate_label"] = forecast.surrogate_id;
    j["repeat"] = repeat;
    j["predicted_bin"] = forecast.predicted_bin >= 1 ? nlohmann::ordered_json(forecast.predicted_bin) : nullptr;
    nlohmann::ordered_json probs = nlohmann::ordered_json::array();
    for (int b = 1; b <= kBinCount; ++b)
        probs.push_back({{"bin", b}, {"p", forecast.probabilities[b - 1]}});
    j["bin_probabilities"] = probs;
    j["reasoning"] = forecast.reasoning;
    j["raw_probability_sum"] = forecast.raw_sum;
    j["parse_failed"] = false;
    j["parse_error"] = nullptr;
    j["input_tokens"] = forecast.tokens_in;
    j["output_tokens"] = forecast.tokens_out;
    j["elapsed_s"] = forecast.latency_ms / 1000.0;
    return j;
}

ForecastReward forecast_reward(const std::array<double, kBinCount>& p, int predicted_bin, int true_bin) {
    if (true_bin < 1 || true_bin > kBinCount)
        throw Error("reward: the true bin must be 1..8 (a failed candidate has no forecast reward), found " +
                    std::to_string(true_bin));
    ForecastReward r;
    r.correctness = predicted_bin == true_bin ? 1.0 : 0.0;
    // Their Brier is half the sum of squares (range 0..1); their CRPS is our ranked probability score.
    r.brier = 0.5 * brier_score(p, true_bin);
    r.crps = ranked_probability_score(p, true_bin);
    r.correctness_brier = r.correctness + 1.0 - r.brier;
    r.correctness_crps = r.correctness + 1.0 - r.crps;
    r.distance = predicted_bin >= 1 ? 1.0 - std::abs(predicted_bin - true_bin) / 8.0 : 0.0;
    return r;
}

}  // namespace kerncast
