#include "core/problem_fingerprint.h"

#include "core/candidate.h"
#include "core/error.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast {

namespace {

std::string read_text(const fs::path& file, const std::string& what) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
        throw Error(SourceLocation{file.string(), 0}, "cannot read " + what);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

std::string problem_fingerprint_of(const std::string& problem_json, const std::string& reference_source,
                                   const std::string& file) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(problem_json);
    } catch (const nlohmann::json::exception& e) {
        throw Error(SourceLocation{file, 0}, std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object())
        throw Error(SourceLocation{file, 0}, "expected a JSON object");
    j.erase("description");
    j.erase("pytorch");
    return content_hash(j.dump() + "\n" + reference_source, {});
}

std::string problem_fingerprint(const std::string& problem) {
    fs::path file = problem;
    std::error_code ec;
    if (fs::is_directory(file, ec))
        file /= "problem.json";
    const std::string text = read_text(file, "the problem definition");
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    const auto ref = j.is_object() ? j.find("reference") : j.end();
    const std::string reference_name =
        j.is_object() && ref != j.end() && ref->is_string() ? ref->get<std::string>() : "reference.cu";
    if (!j.is_object())
        return problem_fingerprint_of(text, "", file.string());  // throws with what is wrong
    return problem_fingerprint_of(text, read_text(file.parent_path() / reference_name, "the reference kernel"),
                                  file.string());
}

}  // namespace kerncast
