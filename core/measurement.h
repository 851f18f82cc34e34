#pragma once
// What a device (GPU worker or replay) reports about one candidate. Plain values, serialisable to JSON.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kerncast {

enum class Status {
    Ok,
    CompileError,
    LaunchError,
    Incorrect,
    Timeout,
    Crashed,
    Suspect,
    NotRecorded,
};

// Stable lower-case names used in JSON, the store and the CLI: "ok", "compile_error", ...
const char* to_string(Status status);
// Throws kerncast::Error for an unknown name.
Status status_from_string(const std::string& name);
// Bin 0 (failure) statuses: the candidate has no speedup.
bool is_failure(Status status);

// Summary of repeated timings of one kernel program (all kernels of its launch plan), in microseconds.
struct TimingStats {
    double median_us = 0;
    double mean_us = 0;
    double p10_us = 0;
    double p90_us = 0;
    double ci_low_us = 0;  // bootstrap 95% CI of the median
    double ci_high_us = 0;
    double rel_std_error = 0;
    int n = 0;
    std::vector<double> samples_us;  // primary timer (CUPTI activity durations)
    double events_median_us = 0;     // CUDA events cross-check
};

struct DeviceFingerprint {
    std::string name;
    std::string uuid;
    int sm_count = 0;
    int cc_major = 0;
    int cc_minor = 0;
    int64_t l2_bytes = 0;
    int64_t memory_bytes = 0;
    int driver_version = 0;  // e.g. 13000
    int cuda_version = 0;
    int sm_clock_mhz = 0;
    int mem_clock_mhz = 0;
    int power_limit_mw = 0;    // the board power limit in force (NVML), 0 when unknown; compute-bound times follow it
    std::string slug() const;  // file-system friendly, e.g. "nvidia-h100-80gb-hbm3"
};

struct ClockSample {
    int sm_clock_mhz = 0;
    int mem_clock_mhz = 0;
    int temperature_c = 0;
};

struct Measurement {
    Status status = Status::NotRecorded;
    std::string reason;  // human-readable; empty when ok
    std::optional<TimingStats> candidate;
    std::optional<TimingStats> reference;
    double speedup = 0;            // reference median / candidate median; 0 when failed
    bool reverified = false;       // passed the >10x guard
    double roofline_floor_us = 0;  // physically impossible below this
    double max_abs_error = 0;
    double max_rel_error = 0;
    int seeds_checked = 0;
    ClockSample clocks_before;
    ClockSample clocks_after;
    DeviceFingerprint device;
    std::string device_kind;  // "cuda" or "replay"
    std::string worker;       // which worker of a pool measured it: "cuda:0 on gpu-a, worker 2"
    double compile_ms = 0;
    double verify_ms = 0;
    double time_ms = 0;
};

void to_json(nlohmann::json& j, const TimingStats& t);
void from_json(const nlohmann::json& j, TimingStats& t);
void to_json(nlohmann::json& j, const DeviceFingerprint& d);
void from_json(const nlohmann::json& j, DeviceFingerprint& d);
void to_json(nlohmann::json& j, const ClockSample& c);
void from_json(const nlohmann::json& j, ClockSample& c);
void to_json(nlohmann::json& j, const Measurement& m);
void from_json(const nlohmann::json& j, Measurement& m);

}  // namespace kerncast
