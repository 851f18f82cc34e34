#include "core/candidate.h"

#include "core/error.h"
#include "core/source_scan.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <utility>

namespace kerncast {

namespace {
constexpr std::array<std::pair<Mutator, const char*>, 7> kMutatorNames{{
    {Mutator::Seed, "seed"},
    {Mutator::Reference, "reference"},
    {Mutator::Parametric, "parametric"},
    {Mutator::LlmRewrite, "llm_rewrite"},
    {Mutator::LlmDiff, "llm_diff"},
    {Mutator::Human, "human"},
    {Mutator::Imported, "imported"},
}};

uint64_t fnv1a(const std::string& text, uint64_t hash) {
    for (unsigned char c : text) {
        hash ^= c;
        hash *= 0x100000001b3ULL;
    }
    return hash;
}
}  // namespace

const char* to_string(Mutator mutator) {
    for (const auto& [m, name] : kMutatorNames)
        if (m == mutator)
            return name;
    return "unknown";
}

Mutator mutator_from_string(const std::string& name) {
    for (const auto& [m, n] : kMutatorNames)
        if (name == n)
            return m;
    throw Error("unknown mutator '" + name +
                "' (expected seed, reference, parametric, llm_rewrite, llm_diff, human or imported)");
}

std::string content_hash(const std::string& source, const std::map<std::string, int64_t>& tunables) {
    // Canonical text: the source, then the tunables in name order. std::map keeps the order stable.
    std::string canonical = source;
    canonical += "\n//@kerncast-tunables";
    for (const auto& [name, value] : tunables)
        canonical += " " + name + "=" + std::to_string(value);
    const uint64_t a = fnv1a(canonical, 0xcbf29ce484222325ULL);
    const uint64_t b = fnv1a(canonical, 0x84222325cbf29ce4ULL ^ a);
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    return buf;
}

std::string normalized_source(const std::string& source) {
    // Comments out (read as the compiler reads them: literals, raw strings and line splices respected), except the
    // `// @kerncast` lines, which are the launch plan; line splices joined.
    const std::vector<SourceChar> kind = classify_source(source);
    std::string code;
    for (size_t i = 0; i < source.size();) {
        const SourceChar k = kind[i];
        if (k == SourceChar::Splice) {
            ++i;
        } else if (k == SourceChar::LineComment || k == SourceChar::BlockComment) {
            const bool plan = k == SourceChar::LineComment &&
                              (source.compare(i, 12, "// @kerncast") == 0 || source.compare(i, 11, "//@kerncast") == 0);
            for (; i < source.size() && (kind[i] == k || kind[i] == SourceChar::Splice); ++i)
                if (plan && kind[i] == k)
                    code += source[i];
            if (k == SourceChar::BlockComment)
                code += ' ';
        } else {
            code += source[i++];
        }
    }
    // Each line's spacing collapsed, blank lines dropped.
    std::string out;
    size_t from = 0;
    while (from <= code.size()) {
        const size_t end = std::min(code.find('\n', from), code.size());
        std::string line;
        bool space = false;
        for (size_t k = from; k < end; ++k) {
            const unsigned char ch = static_cast<unsigned char>(code[k]);
            if (std::isspace(ch)) {
                space = !line.empty();
            } else {
                if (space)
                    line += ' ';
                space = false;
                line += static_cast<char>(ch);
            }
        }
        if (!line.empty())
            out += (out.empty() ? "" : "\n") + line;
        from = end + 1;
    }
    return out;
}

std::string normalized_hash(const std::string& source, const std::map<std::string, int64_t>& tunables) {
    return content_hash(normalized_source(source), tunables);
}

void to_json(nlohmann::json& j, const Candidate& c) {
    j = {
        {"id", c.id},       {"parent_id", c.parent_id}, {"generation", c.generation}, {"mutator", to_string(c.mutator)},
        {"label", c.label}, {"source", c.source},       {"tunables", c.tunables},     {"source_hash", c.source_hash}};
}

void from_json(const nlohmann::json& j, Candidate& c) {
    c.id = j.value("id", int64_t{0});
    c.parent_id = j.value("parent_id", int64_t{0});
    c.generation = j.value("generation", 0);
    c.mutator = mutator_from_string(j.value("mutator", "seed"));
    c.label = j.value("label", "");
    c.source = j.value("source", "");
    c.tunables = j.value("tunables", std::map<std::string, int64_t>{});
    c.source_hash = j.value("source_hash", "");
}

}  // namespace kerncast
