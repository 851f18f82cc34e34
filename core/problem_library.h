#pragma once
// A problem folder as a whole (problem.json, reference.cu, seeds/*.cu, family.cu) and the library of such folders.

#include "core/error.h"
#include "core/kernel_program.h"
#include "core/problem.h"

#include <optional>
#include <string>
#include <vector>

namespace kerncast {

struct ProblemBundle {
    Problem problem;
    KernelProgram reference;
    std::vector<KernelProgram> seeds;     // seeds/*.cu, sorted by file name
    std::optional<KernelProgram> family;  // family.cu when present
};

// Loads and validates the whole folder; throws the first Error.
ProblemBundle load_problem_folder(const std::string& dir);
// Collects every error (format and semantic) in the folder; empty means valid. Also checks that there are at
// least 2 correctness cases, that the reference exists, and that the family (if any) has a valid configuration.
std::vector<Error> validate_problem_folder(const std::string& dir);
// Sub-folders of root that hold a problem.json, sorted by path.
std::vector<std::string> list_problem_folders(const std::string& root);

}  // namespace kerncast
