// kerncast-cli problems list|validate: the problem library and the checks a problem folder must pass.
#include "engine/cli/cli.h"
#include "engine/cli/problem_arg.h"
#include "engine/gpu/compiler.h"

#include "core/error.h"
#include "core/problem_fingerprint.h"
#include "core/problem_library.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <future>
#include <iomanip>
#include <optional>
#include <ostream>
#include <set>
#include <thread>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

struct ProblemsOptions {
    std::string root;                // --root; default <resources>/problems
    std::vector<std::string> paths;  // validate: folders, problem.json files, library names or roots
    bool compile = true;
    std::string arch = "sm_90";
};

constexpr size_t kCompileEveryConfigurationUpTo = 64;

std::string default_root() { return (fs::path(resources_dir()) / "problems").string(); }

// The message of an Error without its "file:line: " prefix (JSON output carries file and line separately).
std::string bare_message(const Error& e) { return std::string(e.what()).substr(Error::format(e.where(), "").size()); }

nlohmann::json error_json(const Error& e) {
    return {{"file", e.where().file}, {"line", e.where().line}, {"message", bare_message(e)}};
}

void run_list(Context& ctx, const ProblemsOptions& opt) {
    const std::string root = opt.root.empty() ? default_root() : opt.root;
    std::vector<std::string> folders;
    try {
        folders = list_problem_folders(root);
    } catch (const Error& e) {
        report_failure(ctx, "problems list", e.what());
        return;
    }
    nlohmann::json rows = nlohmann::json::array();
    bool any_invalid = false;
    for (const auto& dir : folders) {
        nlohmann::json row{{"folder", dir}, {"name", fs::path(dir).filename().string()}};
        try {
            const auto b = load_problem_folder(dir);
            row["name"] = b.problem.name;
            row["description"] = b.problem.description;
            row["seeds"] = b.seeds.size();
            row["family_configurations"] = b.family ? nlohmann::json(b.family->configurationCount()) : nlohmann::json();
            row["valid"] = true;
        } catch (const Error& e) {
            row["valid"] = false;
            row["error"] = e.what();
            any_invalid = true;
        }
        rows.push_back(row);
    }
    if (any_invalid)
        ctx.exit_code = 1;
    if (ctx.json) {
        *ctx.out << nlohmann::json{{"ok", !any_invalid}, {"root", root}, {"problems", rows}}.dump(2) << "\n";
        return;
    }
    auto& out = *ctx.out;
    if (rows.empty()) {
        out << "No problem folders (sub-folders with a problem.json) in " << root << "\n";
        return;
    }
    // The name column fits the longest name, so that no name runs into the next column.
    int name_width = 20;
    for (const auto& r : rows)
        name_width = std::max(name_width, static_cast<int>(r["name"].get<std::string>().size()) + 2);
    out << std::left << std::setw(name_width) << "NAME" << std::setw(7) << "SEEDS" << std::setw(9) << "FAMILY"
        << "DESCRIPTION\n";
    for (const auto& r : rows) {
        out << std::left << std::setw(name_width) << r["name"].get<std::string>();
        if (!r["valid"].get<bool>()) {
            out << "invalid: " << r["error"].get<std::string>() << "\n";
            continue;
        }
        const auto& fam = r["family_configurations"];
        out << std::setw(7) << r["seeds"].get<size_t>() << std::setw(9)
            << (fam.is_null() ? std::string("-") : std::to_string(fam.get<size_t>()))
            << r["description"].get<std::string>() << "\n";
    }
    if (any_invalid)
        out << "Run 'kerncast-cli problems validate --root " << root << "' to see every error.\n";
}

// Folders named on the command line: a problem folder, its problem.json, a library name, or a folder of problems.
std::vector<std::string> expand_paths(const ProblemsOptions& opt,
                                      std::vector<std::pair<std::string, Error>>& unresolved) {
    std::vector<std::string> out;
    if (opt.paths.empty()) {
        const std::string root = opt.root.empty() ? default_root() : opt.root;
        try {
            return list_problem_folders(root);
        } catch (const Error& e) {
            unresolved.emplace_back(root, e);
            return {};
        }
    }
    for (const auto& p : opt.paths) {
        std::error_code ec;
        if (fs::is_directory(p, ec) && !fs::exists(fs::path(p) / "problem.json", ec)) {
            const auto inside = list_problem_folders(p);
            if (!inside.empty()) {
                out.insert(out.end(), inside.begin(), inside.end());
                continue;
            }
        }
        try {
            out.push_back(resolve_problem_dir(p));
        } catch (const Error& e) {
            unresolved.emplace_back(p, e);
        }
    }
    return out;
}

// NVRTC compile checks for a folder whose formats are valid: the reference, every seed and the family's
// configurations (all of them up to 64, else a sample holding every value of every tunable, so that a
// static_assert failing at one corner is found). Compiles run on the compiler's pool, overlapping one another.
// The kernel programs of a folder that parse, whatever else is wrong with it: a broken problem.json or a launch
// line naming an unknown argument does not hide the compile errors of the other programs.
ProblemBundle parsed_programs(const std::string& dir, bool& has_reference) {
    std::vector<Error> ignored;  // validate_problem_folder reported them
    ProblemBundle b;
    b.problem = Problem::load(dir, ignored);
    const fs::path folder = b.problem.dir.empty() ? fs::path(dir) : fs::path(b.problem.dir);
    auto load = [](const fs::path& path) -> std::optional<KernelProgram> {
        try {
            return KernelProgram::load(path.string());
        } catch (const Error&) {
            return std::nullopt;  // its parse error is reported already
        }
    };
    const auto reference =
        load(folder / (b.problem.reference_file.empty() ? "reference.cu" : b.problem.reference_file));
    has_reference = reference.has_value();
    if (reference)
        b.reference = *reference;
    std::error_code ec;
    std::vector<fs::path> seeds;
    for (const auto& entry : fs::directory_iterator(folder / "seeds", ec))
        if (entry.is_regular_file() && entry.path().extension() == ".cu")
            seeds.push_back(entry.path());
    std::sort(seeds.begin(), seeds.end());
    for (const auto& path : seeds)
        if (auto k = load(path))
            b.seeds.push_back(std::move(*k));
    if (fs::exists(folder / "family.cu", ec))
        b.family = load(folder / "family.cu");
    return b;
}

void compile_checks(Compiler& compiler, const ProblemBundle& b, const std::string& arch, std::vector<Error>& errors,
                    bool has_reference = true) {
    struct Job {
        std::string file;
        std::string label;
        std::string arch;  // the program's target where it names one
        std::shared_future<CompileResult> result;
    };
    std::vector<Job> jobs;
    auto submit = [&](const KernelProgram& k, const Bindings& defines, const std::string& label) {
        CompileRequest req;
        req.source = k.source;
        req.file_name = k.file;
        req.defines = defines;
        try {
            req.arch = k.compileArch(arch);  // a program with a target line is compiled for it
        } catch (const Error& e) {
            errors.push_back(e);
            return;
        }
        req.kernel_names = k.kernelNames();
        const std::string compiled_for = req.arch;
        jobs.push_back({k.file, label, compiled_for, compiler.compileAsync(std::move(req))});
    };
    if (has_reference)
        submit(b.reference, {}, "");
    for (const auto& s : b.seeds)
        submit(s, s.configurations(1).empty() ? Bindings{} : s.configurations(1).front(), "");
    if (b.family) {
        for (const Bindings& config : b.family->compileCheckConfigurations(kCompileEveryConfigurationUpTo)) {
            std::string label;
            for (const auto& [k, v] : config)
                label += (label.empty() ? "" : " ") + k + "=" + std::to_string(v);
            submit(*b.family, config, label);
        }
    }
    std::set<std::string> reported_errors;  // one family mistake fails many configurations: say it once per line
    for (auto& job : jobs) {
        const CompileResult& r = job.result.get();
        if (r.ok)
            continue;
        const std::string suffix = " (NVRTC, " + job.arch + (job.label.empty() ? "" : ", " + job.label) + ")";
        bool reported = false;
        for (const auto& d : r.diagnostics)
            if (d.severity == "error") {
                reported = true;
                const std::string file = d.file.empty() ? job.file : d.file;
                if (!reported_errors.insert(file + ":" + std::to_string(d.line) + ":" + d.message).second)
                    continue;
                errors.emplace_back(SourceLocation{file, d.line}, d.message + suffix);
            }
        if (!reported) {
            std::string log = r.log.substr(0, 600);
            errors.emplace_back(SourceLocation{job.file, 0}, "does not compile" + suffix + ": " + log);
        }
    }
}

void run_validate(Context& ctx, const ProblemsOptions& opt) {
    std::vector<std::pair<std::string, Error>> unresolved;
    const auto folders = expand_paths(opt, unresolved);
    std::unique_ptr<Compiler> compiler;
    // One NVRTC compile per core (more only queue), and at most 8 at once: each holds hundreds of MB.
    if (opt.compile)
        compiler = std::make_unique<Compiler>("", std::clamp(std::thread::hardware_concurrency(), 1u, 8u));

    nlohmann::json results = nlohmann::json::array();
    size_t invalid = 0, total_errors = 0;
    for (const auto& [path, e] : unresolved) {
        results.push_back({{"folder", path}, {"valid", false}, {"errors", {error_json(e)}}});
        ++invalid;
        ++total_errors;
        if (!ctx.json)
            *ctx.out << e.what() << "\n";
    }
    for (const auto& dir : folders) {
        auto errors = validate_problem_folder(dir);
        std::string name = fs::path(dir).filename().string();
        if (errors.empty() && compiler) {
            try {
                const auto bundle = load_problem_folder(dir);
                name = bundle.problem.name;
                compile_checks(*compiler, bundle, opt.arch, errors);
            } catch (const Error& e) {
                errors.push_back(e);
            }
        } else if (compiler) {
            // Every error of the folder in one pass: the programs that parse are compiled too.
            try {
                bool has_reference = false;
                const auto programs = parsed_programs(dir, has_reference);
                if (!programs.problem.name.empty())
                    name = programs.problem.name;
                compile_checks(*compiler, programs, opt.arch, errors, has_reference);
            } catch (const Error& e) {
                // e.g. a family too large to enumerate, which validation has reported already
                if (std::none_of(errors.begin(), errors.end(),
                                 [&](const Error& known) { return std::string(known.what()) == e.what(); }))
                    errors.push_back(e);
            }
        }
        nlohmann::json list = nlohmann::json::array();
        for (const auto& e : errors)
            list.push_back(error_json(e));
        results.push_back({{"folder", dir}, {"name", name}, {"valid", errors.empty()}, {"errors", list}});
        total_errors += errors.size();
        invalid += errors.empty() ? 0 : 1;
        if (!ctx.json) {
            if (errors.empty())
                *ctx.out << "ok       " << dir << "\n";
            else
                *ctx.out << "INVALID  " << dir << " (" << errors.size() << (errors.size() == 1 ? " error" : " errors")
                         << ")\n";
            for (const auto& e : errors)
                *ctx.out << "  " << e.what() << "\n";
        }
    }
    const size_t checked = folders.size() + unresolved.size();
    if (invalid > 0 || checked == 0)
        ctx.exit_code = 1;
    if (ctx.json) {
        *ctx.out << nlohmann::json{{"ok", ctx.exit_code == 0}, {"checked", checked},      {"invalid", invalid},
                                   {"errors", total_errors},   {"compiled", opt.compile}, {"problems", results}}
                        .dump(2)
                 << "\n";
        return;
    }
    if (checked == 0) {
        *ctx.out << "No problem folders found.\n";
        return;
    }
    *ctx.out << checked << (checked == 1 ? " problem" : " problems") << " checked, " << invalid << " invalid ("
             << total_errors << (total_errors == 1 ? " error" : " errors") << ")"
             << (opt.compile ? "; kernel programs compiled with NVRTC for " + opt.arch : "; compilation not checked")
             << "\n";
}

void run_fingerprint(Context& ctx, const ProblemsOptions& opt) {
    std::vector<std::pair<std::string, Error>> unresolved;
    const auto folders = expand_paths(opt, unresolved);
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [path, e] : unresolved) {
        rows.push_back({{"folder", path}, {"error", e.what()}});
        ctx.exit_code = 1;
    }
    for (const auto& dir : folders) {
        try {
            rows.push_back({{"folder", dir},
                            {"name", Problem::load(dir).name},
                            {"problem_fingerprint", problem_fingerprint(dir)}});
        } catch (const Error& e) {
            rows.push_back({{"folder", dir}, {"error", e.what()}});
            ctx.exit_code = 1;
        }
    }
    if (ctx.json) {
        *ctx.out << nlohmann::json{{"ok", ctx.exit_code == 0}, {"problems", rows}}.dump(2) << "\n";
        return;
    }
    for (const auto& r : rows) {
        if (r.contains("error"))
            *ctx.err << r["error"].get<std::string>() << "\n";
        else
            *ctx.out << r["problem_fingerprint"].get<std::string>() << "  " << r["name"].get<std::string>() << "  "
                     << r["folder"].get<std::string>() << "\n";
    }
}

}  // namespace

void add_problems_command(CLI::App& app, Context& ctx) {
    auto opt = std::make_shared<ProblemsOptions>();
    auto* cmd = app.add_subcommand("problems", "List and validate problem folders");
    cmd->require_subcommand(1);

    auto* list = cmd->add_subcommand("list", "List the problems: name, seeds, family configurations, description");
    list->add_option("--root", opt->root, "Folder of problem folders (default: <resources>/problems)");
    list->callback([&ctx, opt] { run_list(ctx, *opt); });

    auto* validate = cmd->add_subcommand(
        "validate", "Check problem folders: problem.json, every kernel program, and that they compile");
    validate->add_option("--root", opt->root, "Folder of problem folders (default: <resources>/problems)");
    validate->add_option("paths", opt->paths,
                         "Problem folders, problem.json files, library problem names or folders of problems");
    validate->add_flag("!--no-compile", opt->compile, "Skip the NVRTC compile check");
    validate->add_option("--arch", opt->arch, "Architecture for the compile check")->capture_default_str();
    validate->callback([&ctx, opt] { run_validate(ctx, *opt); });

    auto* fingerprint = cmd->add_subcommand(
        "fingerprint", "Print the definition fingerprint of problems, as a recording's header stores it");
    fingerprint->add_option("--root", opt->root, "Folder of problem folders (default: <resources>/problems)");
    fingerprint->add_option("paths", opt->paths, "Problem folders, problem.json files or library problem names");
    fingerprint->callback([&ctx, opt] { run_fingerprint(ctx, *opt); });
}

}  // namespace kerncast::cli
