#include "engine/cli/problem_arg.h"
#include "core/text_util.h"

#include "core/error.h"
#include "core/problem_library.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast::cli {

std::string resolve_problem_dir(const std::string& arg) {
    std::error_code ec;
    const fs::path given(arg);
    if (fs::is_regular_file(given, ec) && given.filename() == "problem.json")
        return given.parent_path().string();
    if (fs::is_regular_file(given / "problem.json", ec))
        return given.string();
    const fs::path library = fs::path(resources_dir()) / "problems";
    if (given.is_relative() && fs::is_regular_file(library / given / "problem.json", ec))
        return (library / given).string();
    std::string known;
    for (const auto& dir : list_problem_folders(library.string()))
        known += (known.empty() ? "" : ", ") + fs::path(dir).filename().string();
    throw Error("unknown problem '" + arg + "': no folder " + arg + " with a problem.json, and no " +
                (library / given).string() + " (known problems: " + (known.empty() ? "none" : known) + ")");
}

void report_failure(Context& ctx, const std::string& command, const std::string& message) {
    if (ctx.json)
        *ctx.out << nlohmann::json{{"ok", false}, {"error", message}}.dump(2) << "\n";
    else
        *ctx.err << "kerncast-cli " << command << ": " << message << "\n" << missing_resources_note();
    ctx.exit_code = 1;
}

std::string recordings_root(const std::string& given) {
    const std::string root = given.empty() ? resources_dir() + "/recordings" : given;
    if (!fs::is_directory(root))
        throw Error("no recordings folder " + root);
    return root;
}

std::vector<std::string> problem_recordings(const std::string& root, const std::string& problem) {
    std::vector<std::string> files;
    for (const auto& device : fs::directory_iterator(root))
        if (device.is_directory() && fs::exists(device.path() / (problem + ".jsonl")))
            files.push_back((device.path() / (problem + ".jsonl")).string());
    std::sort(files.begin(), files.end());
    if (files.empty())
        throw Error("no recording of problem '" + problem + "' under " + root + " (looked for <device>/" + problem +
                    ".jsonl)");
    return files;
}

std::string read_kernel_file(const std::string& path) { return read_text_file(path, "the kernel file"); }

std::map<std::string, int64_t> parse_tunables(const std::vector<std::string>& args, const std::string& option) {
    std::map<std::string, int64_t> out;
    for (const auto& a : args) {
        const auto eq = a.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == a.size())
            throw Error(option + " '" + a + "': expected NAME=VALUE, e.g. " + option + " BLOCK=256");
        const std::string value = a.substr(eq + 1);
        size_t used = 0;
        int64_t v = 0;
        try {
            v = std::stoll(value, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != value.size())
            throw Error(option + " '" + a + "': the value must be an integer");
        if (!out.emplace(a.substr(0, eq), v).second)
            throw Error(option + " '" + a + "': " + a.substr(0, eq) + " is given twice");
    }
    return out;
}

}  // namespace kerncast::cli
