#pragma once
// Carries a recording over to a family whose tunable lines changed. A family configuration's recording is keyed by
// the hash of the family's whole text and the configuration's values, so widening a family's space (another value
// of a tunable, a where-condition relaxed) leaves every earlier measurement of it unreachable, although the code
// compiled for each configuration is the same. Where the two texts are the same but for their
// `// @kerncast tunable` lines, each recorded configuration that the new space still holds is re-keyed to the new
// text; nothing is measured, every other line (the header, the reference, the seeds, configurations the new space
// no longer holds, programs of neither family) is kept byte for byte. docs/formats.md "Recording".

#include <cstddef>
#include <string>

namespace kerncast {

struct CarryOutcome {
    std::string file;
    size_t carried = 0;  // re-keyed from the earlier family to the current one
    size_t already = 0;  // keyed to the current family already (a second run carries nothing)
    size_t outside = 0;  // of the earlier family, but not a configuration of the current one: kept, unreachable
    size_t other = 0;    // lines of neither family (reference, seeds, other programs): kept
};

// The first line at which `current` and `earlier` differ once their tunable lines are set aside, as
// "line N of the current family: <text>" (empty: only tunable lines differ).
std::string family_difference_beyond_tunables(const std::string& current, const std::string& earlier);

// Re-keys the recording at `path` (a problem's <problem>.jsonl) from the family text `earlier` to `current`, writing
// the file again (atomically) when anything was carried, unless `dry_run` (then it only counts). Throws Error when the
// texts differ beyond their tunable lines, when the recording is of another problem, or when its problem fingerprint is
// not `fingerprint` (the reference or problem.json changed: the measurements are of another definition).
CarryOutcome carry_recording(const std::string& path, const std::string& problem, const std::string& fingerprint,
                             const std::string& current, const std::string& earlier, bool dry_run = false);

}  // namespace kerncast
