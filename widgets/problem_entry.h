#pragma once
// One problem folder as the workbench shows it: whatever could be read from it, plus every error found. Built off
// the GUI thread (plain values, no Qt) and handed to the models by copy.

#include "core/error.h"
#include "core/problem.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kerncast {

struct ProgramEntry {
    enum class Kind { Reference, Seed, Family };
    Kind kind = Kind::Reference;
    std::string path;    // the .cu file
    std::string source;  // its text, shown even when the launch plan does not parse
    bool parsed = false;
    // Family only: valid tunable configurations (capped); -1 when the program did not parse.
    int64_t configurations = -1;
    std::vector<std::string> tunables;
};

// What a recording made on one device says about the problem (resources/recordings/<device>/<problem>.jsonl).
struct RecordedSummary {
    std::string device;  // the GPU's name from the recording's header
    std::string file;
    int measured = 0;         // programs in the recording
    int failed = 0;           // of those, not ok
    double reference_us = 0;  // 0 when the reference is not recorded
    std::string best_label;   // the fastest ok program other than the reference
    double best_us = 0;
    double pytorch_eager_us = 0;  // 0 when the header has none
    std::string error;            // the recording could not be read (file:line: why)
};

struct ProblemEntry {
    std::string dir;
    std::string name;  // problem.json's name, or the folder name when problem.json cannot be read
    std::string description;
    std::optional<Problem> problem;         // absent when problem.json does not parse
    std::vector<ProgramEntry> programs;     // reference, seeds in file order, family
    std::vector<Error> errors;              // from validate_problem_folder(); empty means the folder is valid
    std::vector<RecordedSummary> recorded;  // one per device with a recording of this problem

    bool valid() const { return errors.empty(); }
    const ProgramEntry* family() const;
};

// Reads one folder. Never throws: what cannot be read becomes an entry in `errors`, so a broken folder still shows
// up in the browser with the reason next to it. Recordings are looked up in the resources layout: a problem in
// <resources>/problems/<name>/ has its recordings in <resources>/recordings/<device>/<name>.jsonl.
ProblemEntry read_problem_entry(const std::string& dir);
// The recordings of a problem under recordings_root (one folder per device), sorted by device folder.
std::vector<RecordedSummary> read_recorded_summaries(const std::string& recordings_root, const std::string& problem);
// Every problem folder under root (or root itself when it holds a problem.json), sorted by path.
std::vector<ProblemEntry> read_problem_entries(const std::string& root);

}  // namespace kerncast
