#include "core/problem_fingerprint.h"
#include "core/text_util.h"

#include "core/candidate.h"
#include "core/error.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast {

std::string problem_fingerprint(const std::string& problem) {
    fs::path file = problem;
    std::error_code ec;
    if (fs::is_directory(file, ec))
        file /= "problem.json";
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(read_text_file(file.string(), "the problem definition"));
    } catch (const nlohmann::json::exception& e) {
        throw Error(SourceLocation{file.string(), 0}, std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object())
        throw Error(SourceLocation{file.string(), 0}, "expected a JSON object");
    j.erase("description");
    j.erase("pytorch");
    // The KernelBench counterpart's name is a reference for people, not part of what is measured: the recordings
    // were fingerprinted before problem.json named it.
    j.erase("kernelbench");
    const auto ref = j.find("reference");
    const std::string reference_name = ref != j.end() && ref->is_string() ? ref->get<std::string>() : "reference.cu";
    const std::string reference = read_text_file((file.parent_path() / reference_name).string(), "the reference kernel");
    return content_hash(j.dump() + "\n" + reference, {});
}

}  // namespace kerncast
