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

}  // namespace kerncast
