#pragma once
// Pairs in the GPU Forecasters eval-set schema (JSON lines): read them into a run store, write them back out.
//
// One line is one comparison of a candidate kernel against an anchor on one GPU:
//   {"comparison_id": "...", "pack": "...", "anchor_code": "...", "candidate_code": "...", "hardware": "...",
//    "aggregated_speedup": 1.7 | null, "true_bin": 5, ...any other fields...}
// aggregated_speedup is null when the candidate failed. Their true_bin is floor(2*log2 S)+4, a partition that differs
// from the one our forecasts use (ARCHITECTURE §4), so the true bin is recomputed with our scheme and theirs is kept
// aside.

#include "core/bins.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace kerncast {

struct ImportedPair {
    std::string comparison_id;
    std::string pack;
    std::string hardware;
    std::string anchor_code;
    std::string candidate_code;
    std::optional<double> speedup;       // aggregated_speedup; nullopt for a failed candidate
    int true_bin = 0;                    // recomputed with our scheme; 0 when there is no speedup (failure)
    std::optional<int> source_true_bin;  // the file's own true_bin, as written
    nlohmann::json extra = nlohmann::json::object();  // every other field (problem_id, problem_name, ...)
    int line = 0;                                     // 1-based line in the file it came from; 0 when not from a file
};

struct ImportIssue {
    int line = 0;
    std::string message;
};

struct ImportResult {
    std::vector<ImportedPair> pairs;
    std::vector<ImportIssue> issues;  // one per skipped line, in line order
    int lines_read = 0;               // lines in the input, blank ones included (= the last line number)

    // Pairs whose recomputed bin differs from the file's own true_bin.
    int binDisagreements() const;
};

enum class ImportMode {
    Skip,    // report each malformed line in ImportResult::issues and go on
    Strict,  // throw kerncast::Error (file:line: what is wrong) at the first malformed line
};

// Reads JSON lines. Blank lines are ignored; a malformed line is one that is not a JSON object, lacks a required
// field, has a field of the wrong type, a speedup that is not a positive finite number, or a comparison_id seen
// before. `file_name` only names the input in messages.
ImportResult import_forecasters_jsonl(std::istream& in, const std::string& file_name, const BinScheme& scheme,
                                      ImportMode mode);
// Same, from a file. Throws kerncast::Error when the file cannot be read.
ImportResult import_forecasters_jsonl_file(const std::string& path, const BinScheme& scheme, ImportMode mode);

// "an integer", "a number", "a string", "a boolean", "null", "an array" or "an object": for messages about a field.
std::string json_type_name(const nlohmann::json& value);

// Their bin for a speedup, clamp(floor(2*log2 S)+4, 1, 8) (their SpeedupBin.from_speedup); 0 for a speedup that
// is not positive and finite. Used when exporting a pair that has no true_bin of its own (one measured by Kerncast)
// so that their tools read it as they expect.
int forecasters_bin(double speedup);

// One pair as an eval-set object: the schema's fields, then `extra`. true_bin is the pair's source_true_bin, or
// forecasters_bin(speedup) when it has none, or null for a failure without one.
nlohmann::ordered_json to_forecasters_json(const ImportedPair& pair);
// One line per pair, in order.
void export_forecasters_jsonl(std::ostream& out, const std::vector<ImportedPair>& pairs);

}  // namespace kerncast
