#include "engine/replay/recording_carry.h"

#include "core/candidate.h"
#include "core/error.h"
#include "core/kernel_program.h"
#include "core/source_scan.h"
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

// For each line of the text, whether it starts in code: not inside a block comment, a string or a raw string, and
// not continued from the line before by a backslash. Only a tunable line that starts in code and does not itself end
// with a backslash is a comment of its own, whose text the compiler never sees: a `/*` opened above it, a raw string
// around it or a backslash at its end would make its text, or the line after it, part of the code.
std::vector<bool> starts_in_code(const std::string& text) {
    const std::vector<SourceChar> kind = classify_source(text);
    std::vector<bool> out{true};
    for (size_t i = 0; i < text.size(); ++i)
        if (text[i] == '\n')
            out.push_back(kind[i] == SourceChar::Code);  // a spliced newline, or one in a comment or string, is not
    return out;
}

// A line whose last character (spaces and a CR aside) is a backslash continues onto the next line.
bool continues(const std::string& line) {
    const auto last = line.find_last_not_of(" \t\r");
    return last != std::string::npos && line[last] == '\\';
}

// The lines of the text that are not tunable lines of their own (see starts_in_code), with their line numbers.
std::vector<std::pair<int, std::string>> kept_lines(const std::string& text) {
    const std::vector<std::string> lines = split_lines(text);
    const std::vector<bool> code = starts_in_code(text);
    std::vector<std::pair<int, std::string>> kept;
    for (size_t i = 0; i < lines.size(); ++i) {
        const bool own_comment = i < code.size() && code[i] && !continues(lines[i]);
        if (!(is_tunable_line(lines[i]) && own_comment))
            kept.push_back({static_cast<int>(i + 1), lines[i]});
    }
    return kept;
}

}  // namespace

std::string family_difference_beyond_tunables(const std::string& current, const std::string& earlier) {
    // Line numbers of the current family's kept lines, so that a difference is shown where its author sees it.
    const auto a = kept_lines(current), b = kept_lines(earlier);
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
        write_lines_atomically(path, lines);
    }
    return out;
}

}  // namespace kerncast
