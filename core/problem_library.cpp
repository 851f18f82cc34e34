#include "core/problem_library.h"

#include <algorithm>
#include <filesystem>

namespace kerncast {

namespace fs = std::filesystem;

namespace {

// How many configurations of a family are resolved against every case: enough to cover real families, bounded so
// that validating a huge search space stays quick.
constexpr size_t kResolveCheckLimit = 4096;

std::vector<std::string> seed_files(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    const fs::path seeds = fs::path(dir) / "seeds";
    if (!fs::is_directory(seeds, ec))
        return out;
    for (const auto& entry : fs::directory_iterator(seeds, ec))
        if (entry.is_regular_file() && entry.path().extension() == ".cu")
            out.push_back(entry.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

// Semantic checks of one kernel program against the problem, appended to `errors`: names, a valid configuration,
// and a launch plan that resolves for every case (first kResolveCheckLimit configurations).
void check_program(const KernelProgram& k, const Problem& problem, bool is_reference, std::vector<Error>& errors) {
    const size_t before = errors.size();
    auto found = k.validationErrors(problem);
    errors.insert(errors.end(), found.begin(), found.end());
    if (is_reference && !k.tunables.empty())
        errors.emplace_back(SourceLocation{k.file, k.tunables.front().line},
                            "the reference must have no tunables: every speedup is measured against one fixed program");
    if (errors.size() != before)
        return;  // resolving a plan with unknown names would only repeat the same errors
    std::vector<Bindings> configs;
    try {
        configs = k.configurations(kResolveCheckLimit);
    } catch (const Error& e) {  // too large a space to enumerate
        errors.push_back(e);
        return;
    }
    if (configs.empty()) {
        errors.emplace_back(SourceLocation{k.file, k.tunables.empty() ? 0 : k.tunables.front().line},
                            "no combination of tunable values satisfies every where condition");
        return;
    }
    // One error per file is enough to point at the mistake; the rest are usually the same one for other cases.
    try {
        for (const auto& config : configs)
            for (const auto& sizes : problem.allCases()) {
                k.resolve(problem, sizes, config);
                k.resolveScratch(problem, sizes, config);
            }
    } catch (const Error& e) {
        errors.push_back(e);
    }
}

}  // namespace

ProblemBundle load_problem_folder(const std::string& dir) {
    ProblemBundle b;
    b.problem = Problem::load(dir);
    std::vector<Error> errors;
    b.reference = KernelProgram::load(b.problem.referencePath());
    check_program(b.reference, b.problem, true, errors);
    for (const auto& path : seed_files(b.problem.dir)) {
        b.seeds.push_back(KernelProgram::load(path));
        check_program(b.seeds.back(), b.problem, false, errors);
    }
    const fs::path family = fs::path(b.problem.dir) / "family.cu";
    std::error_code ec;
    if (fs::exists(family, ec)) {
        b.family = KernelProgram::load(family.string());
        check_program(*b.family, b.problem, false, errors);
    }
    if (!errors.empty())
        throw errors.front();
    return b;
}

std::vector<Error> validate_problem_folder(const std::string& dir) {
    std::vector<Error> errors;
    std::error_code ec;
    if (!fs::is_directory(dir, ec) && !fs::is_regular_file(dir, ec)) {
        errors.emplace_back(SourceLocation{dir, 0}, "no such problem folder");
        return errors;
    }
    const Problem problem = Problem::load(dir, errors);
    const bool problem_ok = errors.empty();

    // Kernel programs are still parsed when problem.json is broken, so syntax errors show up in the same pass.
    auto check = [&](const std::string& path, bool is_reference) {
        try {
            const auto k = KernelProgram::load(path);
            if (problem_ok)
                check_program(k, problem, is_reference, errors);
        } catch (const Error& e) {
            errors.push_back(e);
        }
    };
    const std::string folder = problem.dir.empty() ? dir : problem.dir;
    const fs::path reference = fs::path(folder) / problem.reference_file;
    if (!fs::is_regular_file(reference, ec))
        errors.emplace_back(SourceLocation{problem.file, 0},
                            "reference kernel program '" + problem.reference_file + "' not found in " + folder);
    else
        check(reference.string(), true);
    for (const auto& path : seed_files(folder))
        check(path, false);
    const fs::path family = fs::path(folder) / "family.cu";
    if (fs::exists(family, ec))
        check(family.string(), false);
    return errors;
}

std::vector<std::string> list_problem_folders(const std::string& root) {
    std::error_code ec;
    if (!fs::is_directory(root, ec))
        throw Error(SourceLocation{root, 0}, "not a folder; expected a folder of problem folders");
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(root, ec))
        if (entry.is_directory() && fs::is_regular_file(entry.path() / "problem.json"))
            out.push_back(entry.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace kerncast
