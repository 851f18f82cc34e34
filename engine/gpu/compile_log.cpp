#include "engine/gpu/compile_log.h"

#include "core/error.h"

#include <cctype>
#include <regex>
#include <sstream>

namespace kerncast::compile_log {

namespace {

// Lines the compiler puts in front of the kernel file. None today; diagnostics subtract it so that they always name
// the file's own lines.
constexpr int kPreludeLines = 0;

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        lines.push_back(std::move(line));
    }
    return lines;
}

std::string trimLeft(const std::string& s) {
    size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
        ++i;
    return s.substr(i);
}

// The integer written just before `suffix` in `line` ("80 registers" -> 80); -1 when absent.
long numberBefore(const std::string& line, const std::string& suffix, size_t from = 0) {
    const size_t at = line.find(suffix, from);
    if (at == std::string::npos)
        return -1;
    size_t end = at;
    while (end > 0 && line[end - 1] == ' ')
        --end;
    size_t begin = end;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1])))
        --begin;
    if (begin == end)
        return -1;
    return std::stol(line.substr(begin, end - begin));
}

// Sum of every "N bytes cmem[B]" on a line: a kernel's constant banks (parameters, compiler constants, user data).
int constantBytes(const std::string& line) {
    int total = 0;
    for (size_t at = line.find("bytes cmem["); at != std::string::npos; at = line.find("bytes cmem[", at + 1)) {
        const long n = numberBefore(line, "bytes cmem[", at);
        if (n > 0)
            total += static_cast<int>(n);
    }
    return total;
}

bool isBarrierInstruction(std::string line) {
    line = trimLeft(line);
    if (startsWith(line, "@")) {  // predicate guard, e.g. "@%p1 bar.sync 0;"
        const size_t space = line.find_first_of(" \t");
        if (space == std::string::npos)
            return false;
        line = trimLeft(line.substr(space));
    }
    // bar.warp.sync is __syncwarp: a warp-level fence, not a block barrier.
    for (const char* op : {"bar.sync", "bar.red", "bar.arrive", "bar.cta.", "barrier.sync", "barrier.red",
                           "barrier.arrive", "barrier.cta."})
        if (startsWith(line, op))
            return true;
    return false;
}

int threadProduct(const std::string& dims) {
    int product = 1;
    bool any = false;
    std::istringstream in(dims);
    for (std::string part; std::getline(in, part, ',');) {
        try {
            product *= std::stoi(part);
            any = true;
        } catch (const std::exception&) {
            return 0;
        }
    }
    return any ? product : 0;
}

std::string quotedOrRest(const std::string& line, const std::string& marker) {
    std::string name = trimLeft(line.substr(line.find(marker) + marker.size()));
    if (!name.empty() && name.front() == '\'') {
        const size_t close = name.find('\'', 1);
        return name.substr(1, close == std::string::npos ? std::string::npos : close - 1);
    }
    return name.substr(0, name.find_first_of(" \t:"));
}

int atLeastZero(long v) { return v < 0 ? 0 : static_cast<int>(v); }

constexpr size_t kLongestLogLine = 2048;

}  // namespace

// --- PTX: entry names, barrier instructions, launch bounds -------------------------------------------------------

std::vector<PtxEntry> parsePtxEntries(const std::string& ptx) {
    std::vector<PtxEntry> entries;
    PtxEntry* current = nullptr;
    int depth = 0;
    bool inBody = false;
    for (const auto& raw : splitLines(ptx)) {
        const std::string line = trimLeft(raw);
        if (!current) {
            const size_t at = line.find(".entry ");
            if (at == std::string::npos || line.find("//") < at)
                continue;
            std::string name = trimLeft(line.substr(at + 7));
            name = name.substr(0, name.find_first_of("( \t"));
            entries.push_back({name, 0, 0});
            current = &entries.back();
            depth = 0;
            inBody = false;
            continue;
        }
        if (!inBody) {
            for (const char* directive : {".maxntid", ".reqntid"})
                if (startsWith(line, directive))
                    current->max_threads = threadProduct(line.substr(std::string(directive).size()));
        } else if (isBarrierInstruction(line)) {
            ++current->barrier_instructions;
        }
        for (char c : line) {
            if (c == '{') {
                ++depth;
                inBody = true;
            } else if (c == '}') {
                --depth;
            }
        }
        if (inBody && depth <= 0)
            current = nullptr;
    }
    return entries;
}

// --- ptxas / nvJitLink verbose report ----------------------------------------------------------------------------

LinkFacts parseLinkLog(const std::string& log) {
    LinkFacts facts;
    std::string ptxasCurrent, summaryCurrent;
    for (const auto& line : splitLines(log)) {
        const bool ptxas = startsWith(line, "ptxas");
        if (line.find("bytes gmem") != std::string::npos) {
            facts.module_cmem = std::max(facts.module_cmem, constantBytes(line));
            continue;
        }
        if (ptxas) {
            if (line.find("Compiling entry function") != std::string::npos) {
                ptxasCurrent = quotedOrRest(line, "Compiling entry function");
            } else if (line.find("Function properties for") != std::string::npos) {
                ptxasCurrent = quotedOrRest(line, "Function properties for");
            } else if (!ptxasCurrent.empty() && line.find("bytes stack frame") != std::string::npos) {
                auto& k = facts.kernels[ptxasCurrent];
                k.frame = numberBefore(line, "bytes stack frame");
                k.spill_stores = numberBefore(line, "bytes spill stores");
                k.spill_loads = numberBefore(line, "bytes spill loads");
            } else if (!ptxasCurrent.empty() && line.find(" registers") != std::string::npos) {
                auto& k = facts.kernels[ptxasCurrent];
                k.registers = numberBefore(line, " registers");
                k.barriers = numberBefore(line, " barriers");
                k.smem = std::max(0L, numberBefore(line, "bytes smem"));
                if (line.find("cmem[") != std::string::npos)
                    k.cmem = constantBytes(line);
            }
            continue;
        }
        if (line.find("Function properties for") != std::string::npos) {
            summaryCurrent = quotedOrRest(line, "Function properties for");
        } else if (!summaryCurrent.empty() && line.find(" registers") != std::string::npos) {
            auto& k = facts.kernels[summaryCurrent];
            k.total_stack = numberBefore(line, " stack");
            k.cmem = constantBytes(line);
            if (k.registers < 0)
                k.registers = numberBefore(line, " registers");
            if (k.barriers < 0)
                k.barriers = numberBefore(line, " barriers");
            summaryCurrent.clear();
        }
    }
    return facts;
}

std::vector<StaticReport> buildReports(const std::vector<PtxEntry>& entries, const LinkFacts& facts) {
    std::vector<StaticReport> reports;
    for (const auto& e : entries) {
        StaticReport r;
        r.kernel = e.name;
        r.max_threads_per_block = e.max_threads;
        r.barriers = e.barrier_instructions;
        if (auto it = facts.kernels.find(e.name); it != facts.kernels.end()) {
            const auto& k = it->second;
            r.registers = atLeastZero(k.registers);
            r.shared_bytes = atLeastZero(k.smem);
            r.stack_bytes = atLeastZero(std::max(k.frame, k.total_stack));
            r.spill_store_bytes = atLeastZero(k.spill_stores);
            r.spill_load_bytes = atLeastZero(k.spill_loads);
            r.constant_bytes = atLeastZero(k.cmem) + facts.module_cmem;
            // A barrier inside a non-inlined callee is invisible in the entry's PTX body; ptxas still counts it.
            if (r.barriers == 0)
                r.barriers = atLeastZero(k.barriers);
        }
        reports.push_back(r);
    }
    return reports;
}

// --- diagnostics ---------------------------------------------------------------------------------------------------

std::vector<CompileDiagnostic> parseNvrtcLog(const std::string& log, const std::string& fileName) {
    static const std::regex located(R"(^(.+)\((\d+)\): (catastrophic error|error|warning)(?: #[\w-]+)?: (.*)$)");
    static const std::regex unlocated(R"(^nvrtc: (error|warning)\s*: (.*)$)");
    std::vector<CompileDiagnostic> out;
    std::smatch m;
    for (const auto& whole : splitLines(log)) {
        // std::regex recurses once per character: a line quoting a huge identifier of an LLM-written kernel is
        // matched on its first kLongestLogLine characters only.
        const std::string line = whole.substr(0, kLongestLogLine);
        if (std::regex_match(line, m, located)) {
            CompileDiagnostic d;
            d.file = m[1].str();
            d.line = m[2].length() <= 9 ? std::stoi(m[2].str()) : 0;
            if (d.file == fileName)
                d.line = std::max(1, d.line - kPreludeLines);
            d.severity = m[3].str() == "warning" ? "warning" : "error";
            d.message = m[4].str();
            out.push_back(std::move(d));
        } else if (std::regex_match(line, m, unlocated)) {
            out.push_back({fileName, 0, m[1].str(), m[2].str()});
        }
    }
    return out;
}

std::vector<CompileDiagnostic> parseLinkerErrors(const std::string& log, const std::string& fileName) {
    // "error   : Entry function 'k' uses too much shared data (...)", "ptxas fatal : ...", "warning : ...".
    static const std::regex re(R"(^(?:ptxas\s+)?(?:[^:]*;\s*)?(error|fatal|warning)\s*: (.*)$)");
    std::vector<CompileDiagnostic> out;
    std::smatch m;
    for (const auto& whole : splitLines(log))
        if (const std::string line = whole.substr(0, kLongestLogLine); std::regex_match(line, m, re))
            out.push_back({fileName, 0, m[1].str() == "warning" ? "warning" : "error", m[2].str()});
    return out;
}

int launchLine(const std::string& source, const std::string& kernel) {
    int number = 0;
    for (const auto& line : splitLines(source)) {
        ++number;
        const size_t at = line.find("@kerncast");
        if (at == std::string::npos)
            continue;
        std::istringstream words(line.substr(at + 9));
        std::string verb, name;
        words >> verb >> name;
        if (verb == "launch" && name == kernel)
            return number;
    }
    return 0;
}

}  // namespace kerncast::compile_log
