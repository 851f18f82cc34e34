#include "engine/replay/recording_carry.h"

#include "core/candidate.h"
#include "core/error.h"
#include "core/kernel_program.h"
#include "core/text_util.h"
#include "engine/replay/replay_device.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <vector>

namespace kerncast {

namespace {

bool is_tunable_line(const std::string& line) {
    static const std::regex tunable(R"(^\s*//\s*@kerncast\s+tunable\b)");
    return std::regex_search(line, tunable);  // a line's start only: a '\r' of a CRLF file at its end is no matter
}

}  // namespace

std::string family_difference_beyond_tunables(const std::string& current, const std::string& earlier) {
    // Line numbers of the current family's kept lines, so that a difference is shown where its author sees it.
    std::vector<std::pair<int, std::string>> a, b;
    int n = 0;
    for (const auto& line : split_lines(current)) {
        ++n;
        if (!is_tunable_line(line))
            a.push_back({n, line});
    }
    for (const auto& line : split_lines(earlier))
        if (!is_tunable_line(line))
            b.push_back({0, line});
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
        if (i < a.size() && i < b.size() && a[i].second == b[i].second)
            continue;
        if (i >= a.size())
            return "the earlier family has more lines, from: " + b[i].second;
        return "line " + std::to_string(a[i].first) + " of the current family: " + a[i].second;
    }
    return {};
}

CarryOutcome carry_recording(const std::string& path, const std::string& problem, const std::string& fingerprint,
                             const std::string& current, const std::string& earlier, bool dry_run) {
    if (const std::string diff = family_difference_beyond_tunables(current, earlier); !diff.empty())
        throw Error("the family changed beyond its tunable lines (" + diff +
                    "): its recorded configurations measured other code and cannot be carried over");
    const KernelProgram now = KernelProgram::parse(current, "family.cu");
    const KernelProgram before = KernelProgram::parse(earlier, "the earlier family");

    const std::string text = read_text_file(path, "the recording");
    const Recording recording = Recording::parse(text, path);
    if (recording.header.problem != problem)
        throw Error(SourceLocation{path, 1},
                    "this recording is of problem '" + recording.header.problem + "', not of '" + problem + "'");
    if (recording.header.problem_fingerprint != fingerprint)
        throw Error(SourceLocation{path, 1},
                    "this recording measured another definition of problem '" + problem + "' (fingerprint " +
                        (recording.header.problem_fingerprint.empty() ? std::string("none")
                                                                      : recording.header.problem_fingerprint) +
                        ", the folder's is " + fingerprint +
                        "): its problem.json or reference changed, and carrying the family over would not make its "
                        "measurements current");

    CarryOutcome out;
    out.file = path;
    std::vector<std::string> lines = split_lines(text);
    for (const auto& e : recording.entries) {
        if (e.tunables.empty()) {
            ++out.other;
            continue;
        }
        if (e.source_hash == content_hash(now.source, e.tunables)) {
            ++out.already;
        } else if (e.source_hash != content_hash(before.source, e.tunables)) {
            ++out.other;
        } else if (!now.isValid(e.tunables)) {
            ++out.outside;
        } else {
            auto& line = lines.at(static_cast<size_t>(e.line - 1));
            nlohmann::json j = nlohmann::json::parse(line);
            j["source_hash"] = content_hash(now.source, e.tunables);
            line = j.dump();
            ++out.carried;
        }
    }
    if (out.carried > 0 && !dry_run) {
        std::string joined;
        for (const auto& line : lines)
            joined += line + "\n";
        write_file_atomically(path, joined);
    }
    return out;
}

}  // namespace kerncast
