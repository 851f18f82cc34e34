#pragma once
// T4, the autotuning community's results format (Kernel Tuner's file_utils.get_t4_results and store_output_file,
// schemas kernel_tuner/schema/T4/1.0.0/{results,metadata}-schema.json; docs/formats.md "T4 results"), both ways, by
// way of a Kernel Tuner cache in memory: a T4 results file reads as the cache Kernel Tuner would have written for the
// same results, and a cache writes as the T4 results and metadata files Kernel Tuner's conversion gives for it.
//
// A result: {"timestamp", "configuration": {name: value}, "times": {"compilation", "benchmark", "framework",
// "search_algorithm", "validation", "runtimes": [...]}, "invalidity": "correct" | "compile" | "runtime" |
// "constraints" | "timeout" | "correctness", "correctness", "measurements": [{"name", "value", "unit"}],
// "objectives": ["time"]}. Times are in the file's metadata.timeunit (milliseconds when absent).

#include "core/kernel_tuner_cache.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kerncast {

inline constexpr const char* kT4SchemaVersion = "1.0.0";

struct T4Results {
    // The results as a cache: keys in `key_order` when the configurations name exactly those, else alphabetical;
    // value lists those the results use, ascending; no kernel name or problem size (T4 results name neither);
    // device_name from Kerncast's own metadata when present. The file's "metadata.kerncast" (what Kerncast writes
    // in the cache's "kerncast" header) is kept in extra["kerncast"]. A failure is CompilationFailedConfig
    // ("compile"), InvalidConfig ("constraints") or RuntimeFailedConfig (the others; "timeout" and "correctness"
    // keep their kind in the entry's "kerncast_status"). Times are in ms.
    KernelTunerCache cache;
    std::string time_unit;            // as the file writes it ("milliseconds", or Kernel Tuner's "miliseconds")
    int benchmark_from_runtimes = 0;  // results without times.benchmark (Kernel Tuner before 1.1): their benchmark
                                      // time is the sum of their runtimes, a lower bound of what timing took
};

// Throws kerncast::Error "file: results[i] (name=value ...): ..." for text that is not a T4 results object, a result
// without a configuration or with a non-integer tunable value, an unknown invalidity, a "correct" result without a
// numeric "time" measurement, results that name different tunables, a configuration that appears twice, or a time
// unit it does not know.
T4Results parse_t4_results(const std::string& text, const std::string& file_name,
                           const std::vector<std::string>& key_order = {});
// The file at `path`, plain or gzip-compressed.
T4Results load_t4_results(const std::string& path, const std::vector<std::string>& key_order = {});

// The cache's entries as T4 results, as get_t4_results() converts them (times in ms, every timing field, the
// runtimes, invalidity from the failure's name and "kerncast_status", the objective and every other entry field as
// measurements), with metadata {"timeunit": "milliseconds", "kerncast": the cache's "kerncast" header}.
nlohmann::ordered_json t4_results_json(const KernelTunerCache& cache);
// The T4 metadata file for a cache: the device as the hardware description and device query (from the cache's
// "kerncast" header when it has one), the kernel, problem size and tunables of the cache, and Kerncast's version.
nlohmann::ordered_json t4_metadata_json(const KernelTunerCache& cache);

// "block_size_x=32 block_size_y=16 ...": a configuration as errors and summaries name it.
std::string describe_configuration(const std::vector<std::string>& keys, const std::vector<int64_t>& values);

}  // namespace kerncast
