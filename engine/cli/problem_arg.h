#pragma once
// Helpers shared by the commands that take --problem and print failures the same way.

#include "engine/cli/cli.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kerncast::cli {

// A folder holding problem.json (or the file itself), else the name of a folder under <resources>/problems.
// Throws Error naming what was tried and the known problem names.
std::string resolve_problem_dir(const std::string& arg);

// The recordings folder `given`, or the library's where it is empty; throws Error when it is not a folder.
std::string recordings_root(const std::string& given);

// Each device folder's recording of `problem` (<root>/<device>/<problem>.jsonl), sorted; throws Error naming where
// it looked when there is none.
std::vector<std::string> problem_recordings(const std::string& root, const std::string& problem);

// The text of a kernel program file; throws Error naming the file when it cannot be read.
std::string read_kernel_file(const std::string& path);

// NAME=VALUE arguments (of --tunable, or the option named) as a map; throws Error naming the option and the bad
// argument.
std::map<std::string, int64_t> parse_tunables(const std::vector<std::string>& args,
                                              const std::string& option = "--tunable");

// Prints "kerncast-cli <command>: <message>" (or {"ok":false,"error":...} with --json) and sets exit code 1.
void report_failure(Context& ctx, const std::string& command, const std::string& message);

}  // namespace kerncast::cli
