#include "core/forecasters_import.h"
#include "core/text_util.h"

#include "core/error.h"
#include "core/untrusted_json.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <istream>
#include <ostream>
#include <unordered_map>

namespace kerncast {

namespace {

constexpr std::array<const char*, 5> kRequiredStrings{"comparison_id", "pack", "anchor_code", "candidate_code",
                                                      "hardware"};
constexpr const char* kSpeedup = "aggregated_speedup";
constexpr const char* kTrueBin = "true_bin";

// Parses one non-blank line; returns the pair or the reason the line is malformed.
std::optional<ImportedPair> parse_line(const std::string& text, int line, const BinScheme& scheme,
                                       std::string& problem) {
    std::string invalid;
    const std::optional<nlohmann::json> parsed = try_parse_untrusted_json(text, &invalid);
    if (!parsed) {
        problem = "not JSON (" + invalid + ")";
        return std::nullopt;
    }
    const nlohmann::json& j = *parsed;
    if (!j.is_object()) {
        problem = "expected a JSON object, found " + json_type_name(j);
        return std::nullopt;
    }

    ImportedPair pair;
    pair.line = line;
    std::array<std::string*, 5> targets{&pair.comparison_id, &pair.pack, &pair.anchor_code, &pair.candidate_code,
                                        &pair.hardware};
    for (size_t i = 0; i < kRequiredStrings.size(); ++i) {
        const auto it = j.find(kRequiredStrings[i]);
        if (it == j.end()) {
            problem = std::string("missing field \"") + kRequiredStrings[i] + "\"";
            return std::nullopt;
        }
        if (!it->is_string()) {
            problem =
                std::string("field \"") + kRequiredStrings[i] + "\" must be a string, found " + json_type_name(*it);
            return std::nullopt;
        }
        *targets[i] = it->get<std::string>();
    }
    if (pair.comparison_id.empty()) {
        problem = "field \"comparison_id\" is empty";
        return std::nullopt;
    }

    // Required but nullable: null is how the schema records a failed candidate.
    const auto speedup = j.find(kSpeedup);
    if (speedup == j.end()) {
        problem = std::string("missing field \"") + kSpeedup + "\" (use null for a failed candidate)";
        return std::nullopt;
    }
    if (!speedup->is_null()) {
        if (!speedup->is_number()) {
            problem =
                std::string("field \"") + kSpeedup + "\" must be a number or null, found " + json_type_name(*speedup);
            return std::nullopt;
        }
        const double s = speedup->get<double>();
        if (!std::isfinite(s) || s <= 0) {
            problem =
                std::string("field \"") + kSpeedup + "\" must be a positive finite number, found " + speedup->dump();
            return std::nullopt;
        }
        pair.speedup = s;
    }
    pair.true_bin = pair.speedup ? scheme.binOf(*pair.speedup) : 0;

    if (const auto bin = j.find(kTrueBin); bin != j.end() && !bin->is_null()) {
        if (!bin->is_number_integer()) {
            problem = std::string("field \"") + kTrueBin + "\" must be an integer, found " + json_type_name(*bin);
            return std::nullopt;
        }
        pair.source_true_bin = bin->get<int>();
    }

    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& key = it.key();
        const bool known = key == kSpeedup || key == kTrueBin ||
                           std::find_if(kRequiredStrings.begin(), kRequiredStrings.end(),
                                        [&](const char* k) { return key == k; }) != kRequiredStrings.end();
        if (!known)
            pair.extra[key] = it.value();
    }
    return pair;
}

}  // namespace

std::string json_type_name(const nlohmann::json& value) {
    if (value.is_number_integer())
        return "an integer";
    if (value.is_number())
        return "a number";
    if (value.is_string())
        return "a string";
    if (value.is_boolean())
        return "a boolean";
    if (value.is_null())
        return "null";
    if (value.is_array())
        return "an array";
    return "an object";
}

int ImportResult::binDisagreements() const {
    return static_cast<int>(std::count_if(pairs.begin(), pairs.end(), [](const ImportedPair& p) {
        return p.source_true_bin && *p.source_true_bin != p.true_bin;
    }));
}

ImportResult import_forecasters_jsonl(std::istream& in, const std::string& file_name, const BinScheme& scheme,
                                      ImportMode mode) {
    ImportResult result;
    std::unordered_map<std::string, int> first_line_of;  // comparison_id -> line it was first imported from
    std::string text;
    int line = 0;
    while (std::getline(in, text)) {
        ++line;
        if (trim(text).empty())
            continue;
        std::string problem;
        auto pair = parse_line(text, line, scheme, problem);
        if (pair) {
            const auto [it, inserted] = first_line_of.emplace(pair->comparison_id, line);
            if (!inserted) {
                problem = "duplicate comparison_id \"" + pair->comparison_id + "\" (first on line " +
                          std::to_string(it->second) + ")";
                pair.reset();
            }
        }
        if (!pair) {
            if (mode == ImportMode::Strict)
                throw Error(SourceLocation{file_name, line}, problem);
            result.issues.push_back({line, std::move(problem)});
            continue;
        }
        result.pairs.push_back(std::move(*pair));
    }
    if (in.bad())
        throw Error(SourceLocation{file_name, line}, "read error after this line");
    result.lines_read = line;
    return result;
}

ImportResult import_forecasters_jsonl_file(const std::string& path, const BinScheme& scheme, ImportMode mode) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(SourceLocation{path, 0}, "cannot open the pairs file for reading");
    return import_forecasters_jsonl(in, path, scheme, mode);
}

int forecasters_bin(double speedup) {
    if (!std::isfinite(speedup) || speedup <= 0)
        return 0;
    // Their SpeedupBin.from_speedup: math.floor(2 * math.log2(S)) + 4, clamped to [1, 8].
    const int bin = static_cast<int>(std::floor(2.0 * std::log2(speedup))) + 4;
    return std::clamp(bin, 1, kBinCount);
}

nlohmann::ordered_json to_forecasters_json(const ImportedPair& pair) {
    nlohmann::ordered_json j;
    j["comparison_id"] = pair.comparison_id;
    j["pack"] = pair.pack;
    j["hardware"] = pair.hardware;
    j["anchor_code"] = pair.anchor_code;
    j["candidate_code"] = pair.candidate_code;
    j[kSpeedup] = pair.speedup ? nlohmann::ordered_json(*pair.speedup) : nlohmann::ordered_json(nullptr);
    if (pair.source_true_bin)
        j[kTrueBin] = *pair.source_true_bin;
    else if (pair.speedup)
        j[kTrueBin] = forecasters_bin(*pair.speedup);
    else
        j[kTrueBin] = nullptr;
    for (auto it = pair.extra.begin(); it != pair.extra.end(); ++it)
        if (!j.contains(it.key()))  // a schema field is never overwritten by a stray copy in extra
            j[it.key()] = nlohmann::ordered_json::parse(it.value().dump());
    return j;
}

void export_forecasters_jsonl(std::ostream& out, const std::vector<ImportedPair>& pairs) {
    for (const auto& pair : pairs)
        out << to_forecasters_json(pair).dump() << '\n';
}

}  // namespace kerncast
