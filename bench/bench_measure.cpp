// kerncast-bench-measure: where the wall time of one candidate goes on a real GPU (compile / verify / time / the
// rest: worker round trip, buffers, comparison), for a ~10 us and a ~1 ms kernel, and how busy the GPU stays over
// a stream of candidates when the next one compiles while this one is measured.
//
//   kerncast-bench-measure [--reps N] [--stream N] [--kernelbench-ms SMALL,LARGE]
//
// --kernelbench-ms takes the per-candidate wall times printed by bench/kernelbench_harness.py for the same two
// kernels, and adds the ratio to the table.
#include "engine/worker/gpu_device.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace kerncast;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::string reference_source() {
    return R"(// @kerncast launch saxpy grid(ceil_div(N, 256)) block(256) args(x, y, a, N)
extern "C" __global__ void saxpy(const float* x, float* y, float a, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
        y[i] = a * x[i] + y[i];
}
)";
}

// A saxpy problem of a given size; N picks the kernel's duration (12 bytes per element at about 3 TB/s).
std::string write_problem(const fs::path& root, const std::string& name, long long n) {
    const fs::path dir = root / name;
    fs::create_directories(dir);
    std::ofstream(dir / "problem.json") << R"({
  "name": ")" << name << R"(",
  "description": "saxpy for the measurement benchmark",
  "sizes": {"benchmark": {"N": )" << n << R"(}, "correctness": [{"N": 1}, {"N": 4099}]},
  "buffers": [
    {"name": "x", "dtype": "f32", "shape": ["N"], "role": "in", "init": {"dist": "uniform", "lo": -1, "hi": 1}},
    {"name": "y", "dtype": "f32", "shape": ["N"], "role": "inout", "init": {"dist": "normal", "mean": 0, "std": 1}}
  ],
  "scalars": [{"name": "a", "dtype": "f32", "value": 2.5}],
  "tolerance": {"rtol": 1e-5, "atol": 1e-6, "scale_atol_by_rms": true},
  "flops": "2 * N",
  "bytes": "12 * N",
  "reference": "reference.cu"
})";
    std::ofstream(dir / "reference.cu") << reference_source();
    return dir.string();
}

}  // namespace

// Candidate k: a vectorised saxpy whose text differs per k, so every candidate really compiles (no cache hit), as
// in a search where every child is new code.
std::string candidate_source(int k) {
    return "// candidate " + std::to_string(k) + R"(
// @kerncast launch saxpy4 grid(ceil_div(N, 1024)) block(256) args(x, y, a, N)
extern "C" __global__ void saxpy4(const float* __restrict__ x, float* __restrict__ y, float a, int N) {
    const int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (i + 3 < N) {
        const float4 xv = *reinterpret_cast<const float4*>(x + i);
        float4 yv = *reinterpret_cast<float4*>(y + i);
        yv.x = a * xv.x + yv.x; yv.y = a * xv.y + yv.y; yv.z = a * xv.z + yv.z; yv.w = a * xv.w + yv.w;
        *reinterpret_cast<float4*>(y + i) = yv;
    } else {
        for (int j = i; j < N; ++j)
            y[j] = a * x[j] + y[j];
    }
}
)";
}

int main(int argc, char** argv) {
    int reps = 3, stream = 50;
    double kb_small = 0, kb_large = 0;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--stream") && i + 1 < argc)
            stream = std::max(2, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--kernelbench-ms") && i + 1 < argc)
            std::sscanf(argv[++i], "%lf,%lf", &kb_small, &kb_large);
        else {
            std::fprintf(stderr, "usage: %s [--reps N] [--stream N] [--kernelbench-ms SMALL,LARGE]\n", argv[0]);
            return 2;
        }
    }

    std::unique_ptr<GpuDevice> gpu;
    try {
        gpu = std::make_unique<GpuDevice>(0, find_worker_executable());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kerncast-bench-measure needs a GPU: %s\n", e.what());
        return 1;
    }
    const fs::path root = fs::temp_directory_path() / ("kerncast-bench-" + std::to_string(::getpid()));
    struct Size {
        const char* label;
        long long n;
        double kernelbench_ms;
    };
    const Size sizes[] = {{"~10 us", 1ll << 20, kb_small}, {"~1 ms", 1ll << 28, kb_large}};

    std::printf("device: %s (%s), worker %s\n\n", gpu->fingerprint().name.c_str(), gpu->arch().c_str(),
                gpu->supervisor().executable().c_str());
    std::printf("%-8s %10s %8s %10s %10s %10s %10s %10s %9s %12s\n", "kernel", "N", "status", "compile", "verify",
                "time", "other", "wall", "kernel", "KernelBench");
    std::printf("%-8s %10s %8s %10s %10s %10s %10s %10s %9s %12s\n", "", "", "", "ms", "ms", "ms", "ms", "ms", "us",
                "wall ratio");
    int candidate = 0;
    std::string small_dir;
    for (const auto& size : sizes) {
        const std::string dir = write_problem(root, std::string("bench_saxpy_") + std::to_string(size.n), size.n);
        if (small_dir.empty())
            small_dir = dir;
        std::vector<double> compile, verify, timing, wall, kernel;
        std::string status = "ok";
        for (int r = 0; r < reps; ++r) {
            MeasureRequest req;
            req.problem_dir = dir;
            req.reference.source = reference_source();
            req.reference.file_name = "reference.cu";
            req.candidate.source = candidate_source(candidate++);
            req.candidate.file_name = "saxpy4.cu";
            const auto t0 = Clock::now();
            const auto out = gpu->measure(req);  // compile not overlapped: this is one candidate's own cost
            wall.push_back(ms_since(t0));
            const auto& m = out.measurement;
            if (m.status != Status::Ok) {
                status = to_string(m.status);
                std::fprintf(stderr, "%s: %s\n%s\n", size.label, m.reason.c_str(), out.compile_log.c_str());
            }
            compile.push_back(m.compile_ms);
            verify.push_back(m.verify_ms);
            timing.push_back(m.time_ms);
            kernel.push_back(m.candidate ? m.candidate->median_us : 0);
        }
        const double w = median(wall), c = median(compile), v = median(verify), t = median(timing);
        char ratio[32] = "-";
        if (size.kernelbench_ms > 0)
            std::snprintf(ratio, sizeof ratio, "%.1fx", size.kernelbench_ms / w);
        std::printf("%-8s %10lld %8s %10.1f %10.1f %10.1f %10.1f %10.1f %9.2f %12s\n", size.label, size.n,
                    status.c_str(), c, v, t, std::max(0.0, w - c - v - t), w, median(kernel), ratio);
    }

    // A stream of candidates: candidate i+1 compiles (engine pool) while the worker measures candidate i.
    auto run_stream = [&](int count, bool overlap) {
        double busy = 0;
        int ok = 0;
        const auto t0 = Clock::now();
        auto make = [&](int k) {
            MeasureRequest req;
            req.problem_dir = small_dir;
            req.reference.source = reference_source();
            req.reference.file_name = "reference.cu";
            req.candidate.source = candidate_source(candidate + k);
            req.candidate.file_name = "saxpy4.cu";
            return req;
        };
        PreparedMeasure next = gpu->prepare(make(0));
        for (int k = 0; k < count; ++k) {
            PreparedMeasure current = std::move(next);
            if (overlap && k + 1 < count)
                next = gpu->prepare(make(k + 1));
            const auto out = gpu->measurePrepared(current);
            busy += out.measurement.verify_ms + out.measurement.time_ms;
            ok += out.measurement.status == Status::Ok;
            if (!overlap && k + 1 < count)
                next = gpu->prepare(make(k + 1));
        }
        candidate += count;
        const double total = ms_since(t0);
        std::printf("%-34s %4d candidates %4d ok  wall %8.0f ms  %7.1f ms/candidate  worker busy %5.1f%%\n",
                    overlap ? "stream, compile overlapped" : "stream, compile then measure", count, ok, total,
                    total / count, 100.0 * busy / total);
    };
    std::printf("\n");
    run_stream(stream, true);
    run_stream(std::max(2, stream / 5), false);
    std::printf("\n'worker busy' is the share of wall time the worker spent verifying and timing (GPU work and its\n"
                "host-side checks); the rest is compilation not hidden by overlap and per-candidate round trips.\n");
    std::error_code ec;
    fs::remove_all(root, ec);
    return 0;
}
