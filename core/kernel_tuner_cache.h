#pragma once
// Kernel Tuner cache files (its `cache=` JSON), read and written byte for byte the way Kernel Tuner itself writes
// them: a header written with Python's json.dumps(indent="") minus its closing "}\n}", then one
// `"v1,v2,...": {...},` line per configuration, then the closing brackets. A cache whose session was cut short has
// no closing brackets and may end with a comma; Kernel Tuner reads such a file, and so does parse().
//
// Header fields: device_name, kernel_name (the kernel function's name, which Kernel Tuner checks against its own
// kernel_name), problem_size (the sizes it checks against its own problem_size), tune_params_keys (the declared
// tunable order, which the cache keys follow), tune_params (the full value lists), objective, cache. Times are in
// milliseconds. A failed configuration has "__error__": "CompilationFailedConfig" or "RuntimeFailedConfig" (or
// "InvalidConfig", "ErrorConfig") and no time, as Kernel Tuner 1.x writes it; older files put the name in "time".
// Every entry is written with all of Kernel Tuner's own fields (compile_time, verification_time, benchmark_time,
// strategy_time, framework_time, timestamp), which its T4 conversion (file_utils.get_t4_results) requires.
// A file may be gzip-compressed (the benchmark hub's .json.gz): load_kernel_tuner_cache() reads it either way.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kerncast {

struct KernelTunerEntry {
    std::vector<int64_t> values;      // one per tune_params_keys entry, in that order
    std::optional<double> time_ms;    // the objective; nullopt for a failed configuration
    std::string error;                // the failure's name when time_ms is empty, e.g. "CompilationFailedConfig"
    std::vector<double> times_ms;     // the individual runs, when recorded
    double compile_time_ms = 0;       // compiling the configuration
    double verification_time_ms = 0;  // checking its output
    double benchmark_time_ms = 0;     // timing it, all runs and their overhead
    double strategy_time_ms = 0;      // the search strategy's share of the wall time (0 for a brute-force sweep)
    double framework_time_ms = 0;     // Kernel Tuner's own overhead for this configuration
    std::string timestamp;            // when it was measured, as Python's str(datetime) writes it (UTC)
    // A time of 0 is written as Kernel Tuner writes a time it did not take, the integer 0, except for the timing
    // fields named here, which the file read held as 0.0 (so that a file is written back as it was read).
    std::set<std::string> float_zero_times;
    // Every other field of the entry (e.g. GFLOP/s metrics, or Kerncast's own "kerncast_status"), written after
    // the standard ones and kept on read.
    nlohmann::ordered_json extra = nlohmann::ordered_json::object();
    int line = 0;  // where it was read from (1-based); 0 when not read from a file

    std::string key() const;  // "v1,v2,...", Kernel Tuner's cache key
};

struct KernelTunerCache {
    std::string device_name;
    std::string kernel_name;
    std::vector<int64_t> problem_size;
    std::vector<std::string> keys;             // tune_params_keys
    std::vector<std::vector<int64_t>> values;  // tune_params, one list per key
    std::string objective = "time";
    // Header fields other than Kernel Tuner's, written before "cache" (Kerncast keeps the reference's time there).
    nlohmann::ordered_json extra = nlohmann::ordered_json::object();
    std::vector<KernelTunerEntry> entries;  // in file order

    // Throws kerncast::Error naming the first inconsistency: a key without values, an entry whose value count or
    // values do not match the keys, a duplicate configuration.
    void validate(const std::string& file_name) const;
    const KernelTunerEntry* find(const std::vector<int64_t>& values) const;
};

// The file as Kernel Tuner writes it (closed). Throws kerncast::Error when the cache does not validate.
std::string write_kernel_tuner_cache(const KernelTunerCache& cache);

// Reads a cache file's text, closed or not (already decompressed). Throws kerncast::Error "file:line: ..." for text
// that is not JSON, a missing or mistyped header field, or an entry that does not match tune_params_keys.
KernelTunerCache parse_kernel_tuner_cache(const std::string& text, const std::string& file_name);
// The file at `path`, plain or gzip-compressed (told apart by its first bytes, not its name).
KernelTunerCache load_kernel_tuner_cache(const std::string& path);

// Kernel Tuner's timestamp of a measurement, str(datetime.now(timezone.utc)): "2023-12-22 09:54:05.502007+00:00",
// for seconds since the epoch.
std::string kernel_tuner_timestamp(double unix_seconds);
// An ISO 8601 UTC time as Kerncast's run store writes it ("2026-01-02T03:04:05.678Z") in Kernel Tuner's form
// ("2026-01-02 03:04:05.678000+00:00"); a text that is not one is returned as it is.
std::string kernel_tuner_timestamp_of_iso(const std::string& iso);

// Python's json.dumps(value) with its default separators (", " and ": ") and ensure_ascii, as Kernel Tuner writes
// each cache line.
std::string python_json_dumps(const nlohmann::ordered_json& value);

}  // namespace kerncast
