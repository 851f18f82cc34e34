// The local forecaster's features of one program (local_feature_names(), local_features()) and the bins of a
// predicted log speedup (speedup_bins()).

#include "engine/surrogate/local_program.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <regex>

namespace kerncast {

namespace {

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Occurrences of `needle` anywhere in the text.
double count_substring(const std::string& text, const std::string& needle) {
    double n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size()))
        ++n;
    return n;
}

// Identifiers that start with `prefix` (whole_word: that are exactly `prefix`).
double count_identifiers(const std::string& text, const std::string& prefix, bool whole_word) {
    double n = 0;
    for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + prefix.size())) {
        if (at > 0 && is_identifier_char(text[at - 1]))
            continue;
        const size_t end = at + prefix.size();
        if (whole_word && end < text.size() && is_identifier_char(text[end]))
            continue;
        ++n;
    }
    return n;
}

double sm_count_of(const ForecastQuery& q) {
    if (q.hardware_table.is_object() && q.hardware_table.contains("sm_count") &&
        q.hardware_table["sm_count"].is_number() && q.hardware_table["sm_count"].get<double>() > 0)
        return q.hardware_table["sm_count"].get<double>();
    static const std::regex sms(R"((\d+) SMs)");
    std::smatch m;
    const std::string hardware =
        q.hardware.substr(0, 256);  // untrusted (pair files); std::regex recurses per character
    if (std::regex_search(hardware, m, sms))
        return std::stod(m[1].str());
    return kNaN;
}

// The limits of one SM (compute capability 8.0 to 9.0) that occupancy is reckoned with.
constexpr double kSmThreads = 2048, kSmBlocks = 32, kSmRegisters = 65536, kSmSharedBytes = 227 * 1024;

}  // namespace

const std::vector<std::string>& local_feature_names() {
    static const std::vector<std::string> names = {
        "static.kernels",
        "static.max_registers",
        "static.shared_bytes",
        "static.spill_bytes",
        "static.barriers",
        "static.stack_bytes",
        "plan.launches",
        "plan.total_blocks",
        "plan.threads_per_block",
        "plan.dynamic_smem",
        "plan.waves",
        "plan.log2_threads",
        "plan.bytes_per_thread",
        "plan.flops_per_thread",
        "plan.occupancy",
        "plan.filled",
        "problem.log2_bytes",
        "problem.log2_flops",
        "problem.intensity",
        "ref.log_time_us",
        "parent.log_speedup",
        "src.length",
        "src.shfl",
        "src.shared",
        "src.vector_types",
        "src.mma",
        "src.atomic",
        "src.unroll",
        "src.syncthreads",
        "src.is_reference",
    };
    return names;
}

std::vector<double> local_features(const ForecastQuery& q) {
    std::vector<double> f;
    f.reserve(local_feature_names().size());
    // Static report.
    if (q.static_report.empty()) {
        f.insert(f.end(), 6, kNaN);
    } else {
        double regs = 0, shared = 0, spills = 0, barriers = 0, stack = 0;
        for (const StaticReport& r : q.static_report) {
            regs = std::max(regs, static_cast<double>(r.registers));
            shared += r.shared_bytes;
            spills += r.spill_store_bytes + r.spill_load_bytes;
            barriers += r.barriers;
            stack = std::max(stack, static_cast<double>(r.stack_bytes));
        }
        f.insert(f.end(), {static_cast<double>(q.static_report.size()), regs, shared, spills, barriers, stack});
    }
    // Launch plan.
    if (q.launches.empty()) {
        f.insert(f.end(), 10, kNaN);
    } else {
        const double sms = sm_count_of(q);
        double blocks = 0, max_threads = 0, smem = 0, waves = 0, threads = 0;
        for (const LaunchShape& l : q.launches) {
            const double b =
                static_cast<double>(l.grid[0]) * static_cast<double>(l.grid[1]) * static_cast<double>(l.grid[2]);
            const double t =
                static_cast<double>(l.block[0]) * static_cast<double>(l.block[1]) * static_cast<double>(l.block[2]);
            blocks += b;
            max_threads = std::max(max_threads, t);
            smem = std::max(smem, static_cast<double>(l.dynamic_smem));
            waves = std::max(waves, b / sms);
            threads += b * t;
        }
        f.insert(f.end(),
                 {static_cast<double>(q.launches.size()), blocks, max_threads, smem, std::isfinite(sms) ? waves : kNaN,
                  std::log2(threads), q.problem_bytes > 0 ? q.problem_bytes / threads : kNaN,
                  q.problem_flops > 0 ? q.problem_flops / threads : kNaN});
        // Occupancy of the largest launch: the threads an SM holds at once (threads, blocks, registers and shared
        // memory each limit it), as a share of what it can hold; and the share of the GPU's thread slots the launch
        // fills (a small grid leaves SMs idle). The limits are those of compute capability 8.0 to 9.0.
        auto threads_of = [](const LaunchShape& l) {
            return l.grid[0] * l.grid[1] * l.grid[2] * l.block[0] * l.block[1] * l.block[2];
        };
        const LaunchShape* largest = &q.launches.front();
        for (const LaunchShape& l : q.launches)
            if (threads_of(l) > threads_of(*largest))
                largest = &l;
        const double t = static_cast<double>(largest->block[0] * largest->block[1] * largest->block[2]);
        double regs = 0, static_smem = 0;
        for (const StaticReport& r : q.static_report)
            if (r.kernel == largest->kernel || q.static_report.size() == 1) {
                regs = r.registers;
                static_smem = r.shared_bytes;
            }
        double resident = std::min(kSmThreads, kSmBlocks * t);
        if (regs > 0)
            resident = std::min(resident, std::floor(kSmRegisters / (std::ceil(regs / 8.0) * 8.0 * t)) * t);
        if (const double block_smem = static_smem + static_cast<double>(largest->dynamic_smem); block_smem > 0)
            resident = std::min(resident, std::floor(kSmSharedBytes / block_smem) * t);
        const double launched = static_cast<double>(largest->grid[0] * largest->grid[1] * largest->grid[2]) * t;
        f.push_back(resident / kSmThreads);
        f.push_back(std::isfinite(sms) ? std::min(launched, resident * sms) / (kSmThreads * sms) : kNaN);
    }
    // Roofline numbers of the problem.
    f.push_back(q.problem_bytes > 0 ? std::log2(q.problem_bytes) : kNaN);
    f.push_back(q.problem_flops > 0 ? std::log2(q.problem_flops) : kNaN);
    f.push_back(q.problem_bytes > 0 && q.problem_flops > 0 ? q.problem_flops / q.problem_bytes : kNaN);
    f.push_back(log_or_nan(q.reference_time_us));
    f.push_back(log_or_nan(q.parent_speedup));
    // Source text.
    const std::string& s = q.candidate_source;
    if (s.empty()) {
        f.insert(f.end(), 8, kNaN);
    } else {
        double vectors = 0;
        for (const char* type : {"float2", "float4", "double2", "half2", "__half2", "__nv_bfloat162", "int2", "int4",
                                 "uint2", "uint4", "char4", "uchar4", "short4"})
            vectors += count_identifiers(s, type, true);
        f.insert(f.end(), {static_cast<double>(s.size()), count_identifiers(s, "__shfl", false),
                           count_substring(s, "__shared__"), vectors,
                           count_identifiers(s, "wmma", false) + count_substring(s, "mma_sync") +
                               count_substring(s, "mma.sync") + count_substring(s, "wgmma.mma_async"),
                           count_identifiers(s, "atomic", false), count_substring(s, "#pragma unroll"),
                           count_substring(s, "__syncthreads")});
    }
    f.push_back(q.reference_source.empty() || s.empty() ? kNaN : (s == q.reference_source ? 1.0 : 0.0));
    return f;
}

std::array<double, kBinCount> speedup_bins(double mu, double sigma, const BinScheme& scheme, double floor) {
    // Logistic with the variance of Normal(mu, sigma). Each bin's mass is taken from the side of mu it lies on
    // (the CDF below mu, the survival function above), so tiny tail masses keep their precision.
    const double scale = sigma * std::sqrt(3.0) / 3.14159265358979323846;
    auto cdf = [&](double x) { return 1.0 / (1.0 + std::exp(-(x - mu) / scale)); };
    auto sf = [&](double x) { return 1.0 / (1.0 + std::exp((x - mu) / scale)); };
    std::array<double, kBinCount> p{};
    for (int b = 1; b <= kBinCount; ++b) {
        const double lo = b == 1 ? -INFINITY : std::log(scheme.lowerEdge(b));
        const double hi = b == kBinCount ? INFINITY : std::log(scheme.upperEdge(b));
        double mass;
        if (hi <= mu)
            mass = (b == kBinCount ? 1.0 : cdf(hi)) - (b == 1 ? 0.0 : cdf(lo));
        else if (lo >= mu)
            mass = (b == 1 ? 1.0 : sf(lo)) - (b == kBinCount ? 0.0 : sf(hi));
        else
            mass = 1.0 - (b == 1 ? 0.0 : cdf(lo)) - (b == kBinCount ? 0.0 : sf(hi));
        p[b - 1] = (1.0 - floor) * std::max(0.0, mass) + floor / kBinCount;
    }
    return p;
}

}  // namespace kerncast
