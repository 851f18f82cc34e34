#pragma once
// The fingerprint of a problem's definition, stored in every recording's header (docs/formats.md "Recording"):
// the replay device answers only for the definition that was measured, so a problem edited to other sizes, buffers,
// tolerances or another reference is `not_recorded` instead of replaying numbers that no longer apply.

#include <string>

namespace kerncast {

// A hash of problem.json without its prose ("description", "pytorch", "kernelbench") in canonical form (sorted
// keys, one number format), followed by the reference kernel's text. `problem` is a problem folder or its
// problem.json. Throws Error (file) when either file cannot be read or problem.json is not a JSON object.
std::string problem_fingerprint(const std::string& problem);
// The same from the texts of problem.json and of its reference kernel (what a measure request carries); `file`
// names problem.json in errors.
std::string problem_fingerprint_of(const std::string& problem_json, const std::string& reference_source,
                                   const std::string& file);

}  // namespace kerncast
