// Compile cost per kernel (cold, memory cache, disk cache) and pool throughput. Needs the CUDA toolkit only.
//   kerncast-bench-compile [--arch sm_90] [--jobs 16] [--threads 1,2,4]

#include "engine/gpu/compiler.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace kerncast;

namespace {

struct Sample {
    const char* name;
    const char* source;
};

const Sample kSamples[] = {
    {"saxpy", R"(extern "C" __global__ void saxpy(const float* x, float* y, float a, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
})"},
    {"smem-reduce", R"(extern "C" __global__ void reduce(const float* x, float* y, int n) {
    __shared__ float s[256];
    const int i = blockIdx.x * 256 + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 128; k > 0; k /= 2) { if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k]; __syncthreads(); }
    if (threadIdx.x == 0) y[blockIdx.x] = s[0];
})"},
    {"tiled-sgemm", R"(#define T 32
extern "C" __global__ void sgemm(const float* a, const float* b, float* c, int n) {
    __shared__ float as[T][T + 1], bs[T][T + 1];
    const int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n; t += T) {
        as[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = acc;
})"},
    {"cub-block-reduce", R"(#include <cub/block/block_reduce.cuh>
extern "C" __global__ void block_reduce(const float* x, float* y, int n) {
    using Reduce = cub::BlockReduce<float, 256>;
    __shared__ typename Reduce::TempStorage storage;
    const int i = blockIdx.x * 256 + threadIdx.x;
    const float sum = Reduce(storage).Sum(i < n ? x[i] : 0.0f);
    if (threadIdx.x == 0) y[blockIdx.x] = sum;
})"},
};

double msSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<unsigned> parseList(const std::string& text) {
    std::vector<unsigned> out;
    std::istringstream in(text);
    for (std::string part; std::getline(in, part, ',');)
        if (const int v = std::atoi(part.c_str()); v > 0)
            out.push_back(static_cast<unsigned>(v));
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::string arch = "sm_90";
    int jobs = 16;
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    std::vector<unsigned> threadCounts = {1, 2, hw};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--arch" && hasValue)
            arch = argv[++i];
        else if (a == "--jobs" && hasValue)
            jobs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--threads" && hasValue)
            threadCounts = parseList(argv[++i]);
        else {
            std::fprintf(stderr, "usage: %s [--arch sm_90] [--jobs N] [--threads 1,2,4]\n", argv[0]);
            return 2;
        }
    }

    const auto cacheDir =
        std::filesystem::temp_directory_path() / ("kerncast-bench-compile-" + std::to_string(::getpid()));
    std::printf("NVRTC %s, arch %s, %u hardware threads\n\n", Compiler::nvrtcVersion().c_str(), arch.c_str(), hw);
    std::printf("%-18s %10s %10s %10s %6s %8s %8s %8s\n", "kernel", "cold ms", "memory ms", "disk ms", "regs", "smem B",
                "stack B", "cubin KB");
    bool failed = false;
    for (const auto& s : kSamples) {
        CompileRequest req;
        req.source = s.source;
        req.file_name = std::string(s.name) + ".cu";
        req.arch = arch;
        CompileResult cold, memory, disk;
        double coldMs = 0, memoryMs = 0, diskMs = 0;
        {
            Compiler compiler(cacheDir.string(), 1);
            auto t0 = std::chrono::steady_clock::now();
            cold = compiler.compile(req);
            coldMs = msSince(t0);
            t0 = std::chrono::steady_clock::now();
            memory = compiler.compile(req);
            memoryMs = msSince(t0);
        }
        {
            Compiler fresh(cacheDir.string(), 1);  // a new process's view: only the disk cache is warm
            const auto t0 = std::chrono::steady_clock::now();
            disk = fresh.compile(req);
            diskMs = msSince(t0);
        }
        if (!cold.ok || !disk.from_cache || !memory.from_cache) {
            std::fprintf(stderr, "%s: %s\n", s.name, cold.ok ? "cache did not answer" : cold.log.c_str());
            failed = true;
            continue;
        }
        const auto& k = cold.kernels.front();
        std::printf("%-18s %10.1f %10.3f %10.2f %6d %8d %8d %8.1f\n", s.name, coldMs, memoryMs, diskMs, k.registers,
                    k.shared_bytes, k.stack_bytes, cold.cubin.size() / 1024.0);
    }

    std::printf("\npool throughput: %d distinct kernels (saxpy variants), memory-only cache\n", jobs);
    std::printf("%-8s %10s %12s\n", "threads", "wall ms", "kernels/s");
    for (unsigned threads : threadCounts) {
        Compiler compiler("", threads);
        std::vector<std::shared_future<CompileResult>> futures;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < jobs; ++i) {
            CompileRequest req;
            req.source = kSamples[0].source;
            req.file_name = "saxpy.cu";
            req.arch = arch;
            req.defines["VARIANT"] = threads * 100000 + i;  // distinct keys: nothing is answered from the cache
            futures.push_back(compiler.compileAsync(req));
        }
        for (auto& f : futures)
            failed = failed || !f.get().ok;
        const double ms = msSince(t0);
        std::printf("%-8u %10.1f %12.1f\n", threads, ms, jobs * 1000.0 / ms);
    }
    std::error_code ec;
    std::filesystem::remove_all(cacheDir, ec);
    return failed ? 1 : 0;
}
