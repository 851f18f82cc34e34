#include "core/problem_fingerprint.h"
#include "core/text_util.h"

#include "core/candidate.h"
#include "core/error.h"
#include "core/untrusted_json.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast {

namespace {

nlohmann::json problem_object(const std::string& problem_json, const std::string& file) {
    nlohmann::json j = parse_untrusted_json(problem_json, SourceLocation{file, 1});
    if (!j.is_object())
        throw Error(SourceLocation{file, 0}, "expected a JSON object");
    return j;
}

}  // namespace

std::string problem_fingerprint_of(const std::string& problem_json, const std::string& reference_source,
                                   const std::string& file) {
    nlohmann::json j = problem_object(problem_json, file);
    j.erase("description");
    j.erase("pytorch");
    j.erase("kernelbench");  // a pointer for readers, like the prose: naming it changes nothing measured
    return content_hash(j.dump() + "\n" + reference_source, {});
}

std::string problem_fingerprint(const std::string& problem) {
    fs::path file = problem;
    std::error_code ec;
    if (fs::is_directory(file, ec))
        file /= "problem.json";
    const std::string text = read_text_file(file.string(), "the problem definition");
    const nlohmann::json j = problem_object(text, file.string());
    const auto ref = j.find("reference");
    const std::string reference_name = ref != j.end() && ref->is_string() ? ref->get<std::string>() : "reference.cu";
    const std::string reference =
        read_text_file((file.parent_path() / reference_name).string(), "the reference kernel");
    return problem_fingerprint_of(text, reference, file.string());
}

}  // namespace kerncast
