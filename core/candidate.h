#pragma once
// A candidate kernel program in a run, with its lineage.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace kerncast {

enum class Mutator {
    Seed,        // hand-written starting point
    Reference,   // the problem's reference
    Parametric,  // a family configuration
    LlmRewrite,
    LlmDiff,
    Human,     // edited in the GUI
    Imported,  // a pair of an imported eval set (offline evaluation)
};
const char* to_string(Mutator mutator);
Mutator mutator_from_string(const std::string& name);

struct Candidate {
    int64_t id = 0;         // store row id; 0 before it is stored
    int64_t parent_id = 0;  // 0 for roots (reference, seeds)
    int generation = 0;
    Mutator mutator = Mutator::Seed;
    std::string label;                        // e.g. "seed:vec4.cu" or "family BLOCK=256 VEC=4"
    std::string source;                       // the kernel program text
    std::map<std::string, int64_t> tunables;  // values passed as -D defines
    std::string source_hash;                  // content_hash(source, tunables)
};

// Stable hash of a kernel program and its tunable values (hex SHA-256-like 64-bit FNV pair). The replay device
// and the compile cache key on it.
std::string content_hash(const std::string& source, const std::map<std::string, int64_t>& tunables);

// The program text with what does not change the compiled kernel taken out: comments (but not the `// @kerncast`
// lines, which are the launch plan) and differences in spacing. Two LLM answers that differ only there are the same
// candidate.
std::string normalized_source(const std::string& source);
// content_hash(normalized_source(source), tunables): what duplicates are found by.
std::string normalized_hash(const std::string& source, const std::map<std::string, int64_t>& tunables);

void to_json(nlohmann::json& j, const Candidate& c);
void from_json(const nlohmann::json& j, Candidate& c);

}  // namespace kerncast
