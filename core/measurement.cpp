#include "core/measurement.h"

#include "core/error.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace kerncast {

namespace {
constexpr std::array<std::pair<Status, const char*>, 8> kStatusNames{{
    {Status::Ok, "ok"},
    {Status::CompileError, "compile_error"},
    {Status::LaunchError, "launch_error"},
    {Status::Incorrect, "incorrect"},
    {Status::Timeout, "timeout"},
    {Status::Crashed, "crashed"},
    {Status::Suspect, "suspect"},
    {Status::NotRecorded, "not_recorded"},
}};
}  // namespace

const char* to_string(Status status) {
    for (const auto& [s, name] : kStatusNames)
        if (s == status)
            return name;
    return "unknown";
}

Status status_from_string(const std::string& name) {
    for (const auto& [s, n] : kStatusNames)
        if (name == n)
            return s;
    throw Error("unknown measurement status '" + name +
                "' (expected ok, compile_error, launch_error, incorrect, timeout, crashed, suspect or not_recorded)");
}

bool is_failure(Status status) {
    switch (status) {
    case Status::CompileError:
    case Status::LaunchError:
    case Status::Incorrect:
    case Status::Timeout:
    case Status::Crashed:
        return true;
    default:
        return false;
    }
}

std::string DeviceFingerprint::slug() const {
    std::string out;
    for (char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c)))
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        else if (!out.empty() && out.back() != '-')
            out += '-';
    }
    while (!out.empty() && out.back() == '-')
        out.pop_back();
    return out.empty() ? "unknown-device" : out;
}

void to_json(nlohmann::json& j, const TimingStats& t) {
    j = {{"median_us", t.median_us},
         {"mean_us", t.mean_us},
         {"p10_us", t.p10_us},
         {"p90_us", t.p90_us},
         {"ci_low_us", t.ci_low_us},
         {"ci_high_us", t.ci_high_us},
         {"rel_std_error", t.rel_std_error},
         {"n", t.n},
         {"samples_us", t.samples_us},
         {"events_median_us", t.events_median_us}};
}

void from_json(const nlohmann::json& j, TimingStats& t) {
    t.median_us = j.at("median_us").get<double>();
    t.mean_us = j.value("mean_us", 0.0);
    t.p10_us = j.value("p10_us", 0.0);
    t.p90_us = j.value("p90_us", 0.0);
    t.ci_low_us = j.value("ci_low_us", 0.0);
    t.ci_high_us = j.value("ci_high_us", 0.0);
    t.rel_std_error = j.value("rel_std_error", 0.0);
    t.n = j.value("n", 0);
    t.samples_us = j.value("samples_us", std::vector<double>{});
    t.events_median_us = j.value("events_median_us", 0.0);
}

void to_json(nlohmann::json& j, const DeviceFingerprint& d) {
    j = {{"name", d.name},
         {"uuid", d.uuid},
         {"sm_count", d.sm_count},
         {"cc", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
         {"l2_bytes", d.l2_bytes},
         {"memory_bytes", d.memory_bytes},
         {"driver_version", d.driver_version},
         {"cuda_version", d.cuda_version},
         {"sm_clock_mhz", d.sm_clock_mhz},
         {"mem_clock_mhz", d.mem_clock_mhz}};
    if (d.power_limit_mw > 0)
        j["power_limit_mw"] = d.power_limit_mw;
}

void from_json(const nlohmann::json& j, DeviceFingerprint& d) {
    d.name = j.value("name", "");
    d.uuid = j.value("uuid", "");
    d.sm_count = j.value("sm_count", 0);
    const std::string cc = j.value("cc", "0.0");
    const auto dot = cc.find('.');
    d.cc_major = std::atoi(cc.substr(0, dot).c_str());
    d.cc_minor = dot == std::string::npos ? 0 : std::atoi(cc.substr(dot + 1).c_str());
    d.l2_bytes = j.value("l2_bytes", int64_t{0});
    d.memory_bytes = j.value("memory_bytes", int64_t{0});
    d.driver_version = j.value("driver_version", 0);
    d.cuda_version = j.value("cuda_version", 0);
    d.sm_clock_mhz = j.value("sm_clock_mhz", 0);
    d.mem_clock_mhz = j.value("mem_clock_mhz", 0);
    d.power_limit_mw = j.value("power_limit_mw", 0);
}

void to_json(nlohmann::json& j, const ClockSample& c) {
    j = {{"sm_clock_mhz", c.sm_clock_mhz}, {"mem_clock_mhz", c.mem_clock_mhz}, {"temperature_c", c.temperature_c}};
}

void from_json(const nlohmann::json& j, ClockSample& c) {
    c.sm_clock_mhz = j.value("sm_clock_mhz", 0);
    c.mem_clock_mhz = j.value("mem_clock_mhz", 0);
    c.temperature_c = j.value("temperature_c", 0);
}

void to_json(nlohmann::json& j, const Measurement& m) {
    j = {{"status", to_string(m.status)},
         {"reason", m.reason},
         {"speedup", m.speedup},
         {"reverified", m.reverified},
         {"roofline_floor_us", m.roofline_floor_us},
         {"max_abs_error", m.max_abs_error},
         {"max_rel_error", m.max_rel_error},
         {"seeds_checked", m.seeds_checked},
         {"clocks_before", m.clocks_before},
         {"clocks_after", m.clocks_after},
         {"device", m.device},
         {"device_kind", m.device_kind},
         {"compile_ms", m.compile_ms},
         {"verify_ms", m.verify_ms},
         {"time_ms", m.time_ms}};
    if (!m.worker.empty())
        j["worker"] = m.worker;
    if (m.candidate)
        j["candidate"] = *m.candidate;
    if (m.reference)
        j["reference"] = *m.reference;
}

void from_json(const nlohmann::json& j, Measurement& m) {
    m.status = status_from_string(j.at("status").get<std::string>());
    m.reason = j.value("reason", "");
    m.speedup = j.value("speedup", 0.0);
    m.reverified = j.value("reverified", false);
    m.roofline_floor_us = j.value("roofline_floor_us", 0.0);
    m.max_abs_error = j.value("max_abs_error", 0.0);
    m.max_rel_error = j.value("max_rel_error", 0.0);
    m.seeds_checked = j.value("seeds_checked", 0);
    if (j.contains("clocks_before"))
        m.clocks_before = j["clocks_before"].get<ClockSample>();
    if (j.contains("clocks_after"))
        m.clocks_after = j["clocks_after"].get<ClockSample>();
    if (j.contains("device"))
        m.device = j["device"].get<DeviceFingerprint>();
    m.device_kind = j.value("device_kind", "");
    m.compile_ms = j.value("compile_ms", 0.0);
    m.verify_ms = j.value("verify_ms", 0.0);
    m.time_ms = j.value("time_ms", 0.0);
    m.worker = j.value("worker", "");
    if (j.contains("candidate"))
        m.candidate = j["candidate"].get<TimingStats>();
    else
        m.candidate.reset();
    if (j.contains("reference"))
        m.reference = j["reference"].get<TimingStats>();
    else
        m.reference.reset();
}

}  // namespace kerncast
