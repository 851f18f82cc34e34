#include "widgets/problem_entry.h"

#include "engine/replay/replay_device.h"

#include "core/kernel_program.h"
#include "core/problem_library.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast {

namespace {

// Family search spaces can be huge; past this the count is shown as "at least".
constexpr size_t kConfigurationCap = 1000000;

std::optional<std::string> read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

ProgramEntry read_program(const fs::path& path, ProgramEntry::Kind kind) {
    ProgramEntry entry;
    entry.kind = kind;
    entry.path = path.string();
    if (auto text = read_text(path))
        entry.source = std::move(*text);
    try {
        const auto program = KernelProgram::parse(entry.source, entry.path);
        entry.parsed = true;
        for (const auto& t : program.tunables)
            entry.tunables.push_back(t.name);
        if (kind == ProgramEntry::Kind::Family)
            entry.configurations = static_cast<int64_t>(program.configurationCount(kConfigurationCap));
    } catch (const std::exception&) {
        // validate_problem_folder() reports the same error with its line; the source is still worth showing.
    }
    return entry;
}

}  // namespace

const ProgramEntry* ProblemEntry::family() const {
    for (const auto& p : programs)
        if (p.kind == ProgramEntry::Kind::Family)
            return &p;
    return nullptr;
}

ProblemEntry read_problem_entry(const std::string& dir) {
    ProblemEntry entry;
    entry.dir = dir;
    entry.name = fs::path(dir).filename().string();
    if (entry.name.empty())
        entry.name = fs::path(dir).parent_path().filename().string();

    std::vector<Error> parse_errors;
    try {
        auto problem = Problem::load(dir, parse_errors);
        if (!problem.name.empty())
            entry.name = problem.name;
        entry.description = problem.description;
        if (parse_errors.empty())
            entry.problem = std::move(problem);
    } catch (const std::exception&) {
        // Unreadable problem.json: validate_problem_folder() below says why.
    }

    const fs::path root(dir);
    std::string reference = "reference.cu";
    if (entry.problem)
        reference = entry.problem->reference_file;
    if (fs::exists(root / reference))
        entry.programs.push_back(read_program(root / reference, ProgramEntry::Kind::Reference));

    std::vector<fs::path> seeds;
    std::error_code ec;
    for (const auto& f : fs::directory_iterator(root / "seeds", ec))
        if (f.is_regular_file() && f.path().extension() == ".cu")
            seeds.push_back(f.path());
    std::sort(seeds.begin(), seeds.end());
    for (const auto& s : seeds)
        entry.programs.push_back(read_program(s, ProgramEntry::Kind::Seed));
    if (fs::exists(root / "family.cu"))
        entry.programs.push_back(read_program(root / "family.cu", ProgramEntry::Kind::Family));

    const fs::path recordings = fs::absolute(root).lexically_normal().parent_path().parent_path() / "recordings";
    entry.recorded = read_recorded_summaries(recordings.string(), entry.name);

    try {
        entry.errors = validate_problem_folder(dir);
    } catch (const Error& e) {
        entry.errors.push_back(e);
    } catch (const std::exception& e) {
        entry.errors.emplace_back(SourceLocation{dir, 0}, e.what());
    }
    return entry;
}

std::vector<RecordedSummary> read_recorded_summaries(const std::string& recordings_root, const std::string& problem) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& d : fs::directory_iterator(recordings_root, ec))
        if (d.is_directory() && fs::exists(d.path() / (problem + ".jsonl")))
            files.push_back(d.path() / (problem + ".jsonl"));
    std::sort(files.begin(), files.end());

    std::vector<RecordedSummary> out;
    for (const auto& f : files) {
        RecordedSummary s;
        s.file = f.string();
        s.device = f.parent_path().filename().string();
        try {
            const Recording r = Recording::load(s.file);
            if (!r.header.device.name.empty())
                s.device = r.header.device.name;
            s.pytorch_eager_us = r.header.pytorch_eager_us.value_or(0);
            for (const auto& e : r.entries) {
                ++s.measured;
                const Measurement& m = e.measurement;
                if (m.status != Status::Ok || !m.candidate) {
                    ++s.failed;
                    continue;
                }
                if (e.label == "reference") {
                    s.reference_us = m.candidate->median_us;
                } else if (s.best_us == 0 || m.candidate->median_us < s.best_us) {
                    s.best_us = m.candidate->median_us;
                    s.best_label = e.label;
                }
            }
        } catch (const std::exception& e) {
            s.error = e.what();
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<ProblemEntry> read_problem_entries(const std::string& root) {
    std::vector<ProblemEntry> entries;
    if (fs::exists(fs::path(root) / "problem.json")) {
        entries.push_back(read_problem_entry(root));
        return entries;
    }
    for (const auto& dir : list_problem_folders(root))
        entries.push_back(read_problem_entry(dir));
    return entries;
}

}  // namespace kerncast
