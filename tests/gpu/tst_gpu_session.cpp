// GpuSession on a real GPU: seeded inputs of every dtype reproduced bit-for-bit on the host, poisoned outputs, the
// launch of a plan against fp64 CPU arithmetic, shared-memory limits and the device's ceilings.
#include "core/kernel_program.h"
#include "core/problem.h"
#include "core/t1_problem.h"
#include "engine/gpu/compiler.h"
#include "engine/gpu/cuda_driver.h"
#include "engine/gpu/gpu_session.h"
#include "engine/gpu/verifier.h"

#include <QFile>
#include <QProcess>
#include <QTest>

#include <bit>
#include <chrono>
#include <cmath>
#include <memory>
#include <sstream>

using namespace kerncast;

namespace {

const char* kDtypes = R"({
  "name": "dtypes",
  "description": "one input of every dtype and distribution",
  "sizes": {"benchmark": {"N": 5000}, "correctness": [{"N": 5000}, {"N": 3}]},
  "buffers": [
    {"name": "f", "dtype": "f32", "shape": ["N"], "role": "in", "init": {"dist": "uniform", "lo": -3, "hi": 5}},
    {"name": "h", "dtype": "f16", "shape": ["N"], "role": "in", "init": {"dist": "uniform", "lo": -2, "hi": 2}},
    {"name": "b", "dtype": "bf16", "shape": ["N"], "role": "in", "init": {"dist": "uniform", "lo": 0, "hi": 100}},
    {"name": "d", "dtype": "f64", "shape": ["N"], "role": "in", "init": {"dist": "uniform", "lo": -1, "hi": 1}},
    {"name": "k", "dtype": "i32", "shape": ["N"], "role": "in", "init": {"dist": "randint", "lo": -5, "hi": "N"}},
    {"name": "u", "dtype": "u8", "shape": ["N"], "role": "in", "init": {"dist": "randint", "lo": 0, "hi": 256}},
    {"name": "g", "dtype": "f32", "shape": ["N"], "role": "in", "init": {"dist": "normal", "mean": 1, "std": 2}},
    {"name": "o", "dtype": "f32", "shape": ["N"], "role": "out"}
  ],
  "tolerance": {"rtol": 1e-5, "atol": 1e-6, "scale_atol_by_rms": false},
  "flops": "N",
  "bytes": "8 * N"
})";

// Writes the even elements of o only, through dynamic shared memory sized by the plan.
const char* kEvenOnly = R"(// @kerncast launch even grid(ceil_div(N, 128)) block(128) smem(SMEM) args(f, o, N)
// @kerncast tunable SMEM 512 100000 1048576
extern "C" __global__ void even(const float* f, float* o, int n) {
    extern __shared__ float tile[];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? f[i] : 0.0f;
    __syncthreads();
    if (i < n && i % 2 == 0)
        o[i] = tile[threadIdx.x] * 2.0f;
}
)";

// A tile of X (f16, R x C) goes through shared memory by TMA and comes out doubled in Y (f32); the launch is made of
// clusters of two blocks along x and each block writes its rank in the cluster to K. `target sm_90a` because of
// the wgmma fence, which only the arch-specific target has. SWIZZLE is replaced by 0 or 128: with 128 the copy
// engine swizzles 16-byte chunks of each 128-byte row by the row's index modulo 8, which the read undoes.
const char* kTmaProblem = R"json({
  "name": "tma_tile",
  "description": "Y = 2 X through TMA tiles; K holds each block's rank in its cluster",
  "sizes": {"benchmark": {"R": 100, "C": 200}, "correctness": [{"R": 100, "C": 200}, {"R": 33, "C": 72}]},
  "buffers": [
    {"name": "X", "dtype": "f16", "shape": ["R", "C"], "role": "in", "init": {"dist": "uniform", "lo": -4, "hi": 4}},
    {"name": "Y", "dtype": "f32", "shape": ["R", "C"], "role": "out"},
    {"name": "K", "dtype": "i32", "shape": ["2 * ceil_div(C, 128) * ceil_div(R, 32)"], "role": "out"}
  ],
  "tolerance": {"rtol": 0, "atol": 0, "scale_atol_by_rms": false},
  "flops": "R * C",
  "bytes": "6 * R * C"
})json";

const char* kTmaTile = R"cu(// @kerncast target sm_90a
// @kerncast launch tma_tile grid(2 * ceil_div(C, 128), ceil_div(R, 32)) block(128) cluster(CLUSTER) args(tensormap(X, shape(C, R), box(64, 32), swizzle(SWIZZLE)), Y, K, R, C)
// @kerncast tunable CLUSTER 1 2 4
struct __align__(64) TensorMap { unsigned long long opaque[16]; };
#include <cuda_fp16.h>
#if SWIZZLE_BYTES == 128
__device__ int at(int r, int c) { return r * 64 + (((c / 8) ^ (r % 8)) * 8) + c % 8; }
#else
__device__ int at(int r, int c) { return r * 64 + c; }
#endif
extern "C" __global__ void tma_tile(const __grid_constant__ TensorMap map, float* y, int* k, int rows, int cols) {
    __shared__ __align__(1024) __half tile[32 * 64];
    __shared__ __align__(8) unsigned long long bar;
    const unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
    const unsigned t = static_cast<unsigned>(__cvta_generic_to_shared(tile));
    const int c0 = blockIdx.x * 64, r0 = blockIdx.y * 32;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b));
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b), "r"(32 * 64 * 2));
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
                     "[%4];\n" ::"r"(t), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(r0), "r"(b)
                     : "memory");
    }
    unsigned done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(b) : "memory");
    for (int i = threadIdx.x; i < 32 * 64; i += blockDim.x) {
        const int r = i / 64, c = i % 64;
        if (r0 + r < rows && c0 + c < cols)
            y[(size_t)(r0 + r) * cols + c0 + c] = 2.0f * __half2float(tile[at(r, c)]);
    }
    if (threadIdx.x == 0) {
        unsigned rank;
        asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
        k[blockIdx.y * gridDim.x + blockIdx.x] = static_cast<int>(rank);
    }
}
)cu";

std::string with_swizzle(int bytes) {
    std::string s = kTmaTile;
    const std::string key = "swizzle(SWIZZLE)";
    s.replace(s.find(key), key.size(), "swizzle(" + std::to_string(bytes) + ")");
    return "#define SWIZZLE_BYTES " + std::to_string(bytes) + "\n" + s;
}

// The worker's generator, reimplemented on the host (gpu_session.cpp, kerncast_fill).
uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
uint64_t draw(uint64_t key, uint64_t i) { return mix64(key + (i + 1) * 0x9e3779b97f4a7c15ULL); }
double uniform(uint64_t key, uint64_t i, double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(draw(key, i) >> 11) * (1.0 / 9007199254740992.0));
}
double randint(uint64_t key, uint64_t i, double lo, double hi) {
    const auto span = static_cast<uint64_t>(hi - lo);
    return lo + static_cast<double>(static_cast<uint64_t>((static_cast<unsigned __int128>(draw(key, i)) * span) >> 64));
}
double to_bf16(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    x += 0x7fffu + ((x >> 16) & 1u);
    return bfloat16_to_double(static_cast<uint16_t>(x >> 16));
}

}  // namespace

class TestGpuSession : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<GpuSession> m_gpu;
    std::unique_ptr<Compiler> m_compiler;
    std::string m_arch;

    std::vector<char> compile(const std::string& source, const std::string& file,
                              std::map<std::string, int64_t> defines = {}) {
        CompileRequest req;
        req.source = source;
        req.file_name = file;
        req.defines = std::move(defines);
        req.arch = KernelProgram::parse(source, file).compileArch(m_arch);  // sm_90a for a program that targets it
        const CompileResult r = m_compiler->compile(req);
        if (!r.ok)
            qWarning("%s", r.log.c_str());
        return r.cubin;
    }
    static std::string readFile(const QString& path) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            return {};
        return f.readAll().toStdString();
    }

private Q_SLOTS:
    void initTestCase() {
        std::string why;
        const auto devices = cuda::discover_devices(&why);
        if (devices.empty())
            QSKIP(("no CUDA device: " + why).c_str());
        m_gpu = std::make_unique<GpuSession>(0);
        m_compiler = std::make_unique<Compiler>();
        m_arch = "sm_" + std::to_string(devices[0].cc_major) + std::to_string(devices[0].cc_minor);
    }

    void inputsAreSeededAndReproducible() {
        const Problem p = Problem::parse(kDtypes, "dtypes.json");
        const KernelProgram prog = KernelProgram::parse(kEvenOnly, "even.cu");
        const auto cubin = compile(kEvenOnly, "even.cu", {{"SMEM", 512}});
        QVERIFY(!cubin.empty());
        const Bindings sizes{{"N", 5000}};
        const RunOutput a = m_gpu->runOnce(p, prog, cubin, sizes, {{"SMEM", 512}}, 7);
        const RunOutput again = m_gpu->runOnce(p, prog, cubin, sizes, {{"SMEM", 512}}, 7);
        const RunOutput other = m_gpu->runOnce(p, prog, cubin, sizes, {{"SMEM", 512}}, 8);
        for (const char* name : {"f", "h", "b", "d", "k", "u", "g"}) {
            QVERIFY2(a.inputs_before.at(name) == again.inputs_before.at(name), name);
            QVERIFY2(a.inputs_before.at(name) != other.inputs_before.at(name), name);
            QVERIFY2(a.buffers.at(name) == a.inputs_before.at(name), name);  // the kernel only reads them
        }
        // Bit-for-bit what the host computes from the same counter-based generator.
        const auto& f = a.inputs_before.at("f");
        const auto& h = a.inputs_before.at("h");
        const auto& b = a.inputs_before.at("b");
        const auto& d = a.inputs_before.at("d");
        const auto& k = a.inputs_before.at("k");
        const auto& u = a.inputs_before.at("u");
        for (uint64_t i = 0; i < 5000; ++i) {
            QCOMPARE(f[i], static_cast<double>(static_cast<float>(uniform(input_key(7, "f"), i, -3, 5))));
            QCOMPARE(h[i], static_cast<double>(
                               static_cast<_Float16>(static_cast<float>(uniform(input_key(7, "h"), i, -2, 2)))));
            QCOMPARE(b[i], to_bf16(static_cast<float>(uniform(input_key(7, "b"), i, 0, 100))));
            QCOMPARE(d[i], uniform(input_key(7, "d"), i, -1, 1));
            QCOMPARE(k[i], randint(input_key(7, "k"), i, -5, 5000));
            QCOMPARE(u[i], randint(input_key(7, "u"), i, 0, 256));
        }
        // The normal draw: moments close to the asked mean and deviation.
        const auto& g = a.inputs_before.at("g");
        double sum = 0, sq = 0;
        for (double v : g)
            sum += v;
        const double mean = sum / static_cast<double>(g.size());
        for (double v : g)
            sq += (v - mean) * (v - mean);
        const double sd = std::sqrt(sq / static_cast<double>(g.size() - 1));
        QVERIFY2(std::abs(mean - 1) < 0.1, qPrintable(QString::number(mean)));
        QVERIFY2(std::abs(sd - 2) < 0.1, qPrintable(QString::number(sd)));
    }

    void unwrittenOutputsKeepThePoison_data() {
        QTest::addColumn<int>("smem");
        QTest::newRow("48 KiB default") << 512;
        QTest::newRow("raised above 48 KiB") << 100000;
    }
    void unwrittenOutputsKeepThePoison() {
        QFETCH(int, smem);
        const Problem p = Problem::parse(kDtypes, "dtypes.json");
        const KernelProgram prog = KernelProgram::parse(kEvenOnly, "even.cu");
        const auto cubin = compile(kEvenOnly, "even.cu", {{"SMEM", smem}});
        const RunOutput r = m_gpu->runOnce(p, prog, cubin, {{"N", 4099}}, {{"SMEM", smem}}, 1);
        const auto& o = r.buffers.at("o");
        const auto& f = r.inputs_before.at("f");
        QCOMPARE(o.size(), size_t{4099});
        for (size_t i = 0; i < o.size(); ++i) {
            if (i % 2 == 0)
                QCOMPARE(o[i], 2.0 * f[i]);  // exact in f32: doubling
            else
                QVERIFY2(is_poison(o[i], DType::F32), qPrintable(QString::number(i)));
        }
        const Verifier v(p.tolerance);
        const VerifyResult vr = v.compareOutput("o", DType::F32, o, std::vector<double>(o.size(), 1.0));
        QVERIFY(!vr.ok);
        QVERIFY(QString::fromStdString(vr.reason).contains("2049 of 4099 elements not written"));
    }

    // The same program compiled again by a fresh compiler (as by a second run of the CLI) reports what its first
    // compile did. Where a driver is installed, nvJitLink answers a repeat from the driver's compute cache unless told
    // not to, and that answer carries no ptxas lines: the static shared memory read as 0.
    void repeatedCompileKeepsTheStaticReport() {
        CompileRequest req;
        req.source = "// " + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "\n" +
                     "extern \"C\" __global__ void tile(const float* x, float* y, int n) {\n"
                     "    __shared__ float t[64][65];\n"
                     "    const int i = blockIdx.x * 64 + threadIdx.x;\n"
                     "    t[threadIdx.x][threadIdx.y] = i < n ? x[i] : 0.0f;\n"
                     "    __syncthreads();\n"
                     "    if (i < n) y[i] = t[threadIdx.y][threadIdx.x];\n"
                     "}\n";
        req.file_name = "tile.cu";
        req.arch = m_arch;
        std::vector<StaticReport> reports;
        for (int round = 0; round < 2; ++round) {
            Compiler fresh("", 1);
            const CompileResult r = fresh.compile(req);
            QVERIFY2(r.ok, r.log.c_str());
            QCOMPARE(r.kernels.size(), size_t{1});
            reports.push_back(r.kernels[0]);
        }
        for (const auto& k : reports) {
            QCOMPARE(k.shared_bytes, 64 * 65 * 4);
            QVERIFY(k.registers > 0);
            QCOMPARE(k.barriers, 1);
        }
        QCOMPARE(nlohmann::json(reports[1]).dump(), nlohmann::json(reports[0]).dump());
    }

    void tooMuchSharedMemoryIsALaunchError() {
        const Problem p = Problem::parse(kDtypes, "dtypes.json");
        const KernelProgram prog = KernelProgram::parse(kEvenOnly, "even.cu");
        const auto cubin = compile(kEvenOnly, "even.cu", {{"SMEM", 1048576}});
        try {
            m_gpu->runOnce(p, prog, cubin, {{"N", 100}}, {{"SMEM", 1048576}}, 1);
            QFAIL("expected a LaunchError");
        } catch (const LaunchError& e) {
            QVERIFY2(QString(e.what()).contains("1048576 bytes of dynamic shared memory"), e.what());
            QVERIFY2(QString(e.what()).contains("even.cu:1"), e.what());
        }
        // The session is still usable.
        const RunOutput r =
            m_gpu->runOnce(p, prog, compile(kEvenOnly, "even.cu", {{"SMEM", 512}}), {{"N", 10}}, {{"SMEM", 512}}, 1);
        QCOMPARE(r.buffers.at("o")[0], 2.0 * r.inputs_before.at("f")[0]);
    }

    // Hopper's launch features end to end: a tensor map the worker builds (plain and swizzled), clusters of 1, 2 and
    // 4 blocks (each block's rank proves the cluster formed), code compiled for sm_90a.
    void tensorMapsAndClustersRun_data() {
        QTest::addColumn<int>("swizzle");
        QTest::addColumn<int>("cluster");
        for (int swizzle : {0, 128})
            for (int cluster : {1, 2, 4})
                QTest::addRow("swizzle %d, cluster %d", swizzle, cluster) << swizzle << cluster;
    }
    void tensorMapsAndClustersRun() {
        QFETCH(int, swizzle);
        QFETCH(int, cluster);
        if (m_arch != "sm_90")
            QSKIP("the program targets sm_90a");
        const Problem p = Problem::parse(kTmaProblem, "tma.json");
        const std::string src = with_swizzle(swizzle);
        const KernelProgram prog = KernelProgram::parse(src, "tma.cu");
        prog.validate(p);
        const auto cubin = compile(src, "tma.cu", {{"CLUSTER", cluster}});
        QVERIFY(!cubin.empty());
        const RunOutput r = m_gpu->runOnce(p, prog, cubin, p.benchmark, {{"CLUSTER", cluster}}, 7);
        const auto& x = r.inputs_before.at("X");
        const auto& y = r.buffers.at("Y");
        QCOMPARE(y.size(), size_t{100 * 200});
        for (size_t i = 0; i < y.size(); ++i)
            if (y[i] != 2 * x[i])
                QFAIL(qPrintable(QString("Y[%1] = %2, expected %3").arg(i).arg(y[i]).arg(2 * x[i])));
        const auto& k = r.buffers.at("K");
        QCOMPARE(k.size(), size_t{4 * 4});
        for (size_t b = 0; b < k.size(); ++b)
            QCOMPARE(k[b], static_cast<double>(b % 4 % static_cast<size_t>(cluster)));
        // Compiled for the plain architecture, the wgmma fence does not assemble.
        CompileRequest plain;
        plain.source = src;
        plain.file_name = "tma.cu";
        plain.defines = {{"CLUSTER", cluster}};
        plain.arch = m_arch;
        QVERIFY(!m_compiler->compile(plain).ok);
    }

    // What an attacker or a slip writes: a map that reaches past its buffer, a cluster the kernel's own declaration
    // contradicts; each is a clear error and the session stays usable.
    void hopperLaunchErrorsAreClear() {
        if (m_arch != "sm_90")
            QSKIP("the program targets sm_90a");
        const Problem p = Problem::parse(kTmaProblem, "tma.json");
        std::string past = with_swizzle(0);
        past.replace(past.find("shape(C, R)"), 11, "shape(C, R + 32)");
        try {
            m_gpu->runOnce(p, KernelProgram::parse(past, "past.cu"), compile(past, "past.cu", {{"CLUSTER", 1}}),
                           p.benchmark, {{"CLUSTER", 1}}, 7);
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("past.cu:3: tensormap of X: the shape covers 26400 elements but X has "
                                                "20000"),
                     e.what());
        }

        std::string fixed = with_swizzle(0);
        fixed.replace(fixed.find("extern \"C\" __global__ void"), 26,
                      "extern \"C\" __global__ void __cluster_dims__(2, 1, 1)");
        try {
            m_gpu->runOnce(p, KernelProgram::parse(fixed, "fixed.cu"), compile(fixed, "fixed.cu", {{"CLUSTER", 4}}),
                           p.benchmark, {{"CLUSTER", 4}}, 7);
            QFAIL("expected a LaunchError");
        } catch (const LaunchError& e) {
            // The occupancy query or the launch refuses it, whichever the driver makes first; either names the line.
            QVERIFY2(QString(e.what()).contains("fixed.cu:3: "), e.what());
            qInfo("%s", e.what());
        }

        // Clusters of 16 blocks, each holding nearly all of an SM's shared memory: they fit where a GPC has 16 SMs
        // free, else the occupancy query says no before anything is launched.
        std::string big = with_swizzle(0);
        big.replace(big.find("cluster(CLUSTER)"), 16, "cluster(CLUSTER) smem(200 * 1024)");
        big.replace(big.find("tunable CLUSTER 1 2 4"), 21, "tunable CLUSTER 1 2 4 16");
        const Problem wide = Problem::parse(
            QString(kTmaProblem).replace("\"C\": 200}, \"correctness\"", "\"C\": 1024}, \"correctness\"").toStdString(),
            "tma.json");
        try {
            const RunOutput r =
                m_gpu->runOnce(wide, KernelProgram::parse(big, "wide.cu"), compile(big, "wide.cu", {{"CLUSTER", 16}}),
                               wide.benchmark, {{"CLUSTER", 16}}, 7);
            const auto& k = r.buffers.at("K");
            for (size_t b = 0; b < k.size(); ++b)
                QCOMPARE(k[b], static_cast<double>(b % 16));
            qInfo("clusters of 16 blocks with 200 KiB each fit on this device");
        } catch (const LaunchError& e) {
            QVERIFY2(QString(e.what()).contains("a cluster of 16 x 1 x 1 blocks (128 threads and 204800 bytes of "
                                                "dynamic shared memory each) does not fit"),
                     e.what());
            qInfo("%s", e.what());
        }

        // The session is still usable.
        const std::string good = with_swizzle(128);
        const RunOutput r = m_gpu->runOnce(p, KernelProgram::parse(good, "tma.cu"),
                                           compile(good, "tma.cu", {{"CLUSTER", 2}}), p.benchmark, {{"CLUSTER", 2}}, 7);
        QCOMPARE(r.buffers.at("Y")[5], 2 * r.inputs_before.at("X")[5]);
    }

    // The complete example of docs/formats.md, as it is printed there.
    void documentedTensorMapExampleRuns() {
        if (m_arch != "sm_90")
            QSKIP("the program targets sm_90a");
        const std::string doc = readFile(QStringLiteral(KERNCAST_TEST_DATA "/../../docs/formats.md"));
        const size_t begin = doc.find("  // @kerncast target sm_90a\n  // @kerncast launch tile2x");
        QVERIFY2(begin != std::string::npos, "the example is not in docs/formats.md");
        const size_t end = doc.find("  ```", begin);
        std::string src;
        std::istringstream lines(doc.substr(begin, end - begin));
        for (std::string line; std::getline(lines, line);)
            src += (line.size() >= 2 ? line.substr(2) : line) + "\n";
        const Problem p = Problem::parse(kTmaProblem, "tma.json");
        const KernelProgram prog = KernelProgram::parse(src, "example.cu");
        const RunOutput r = m_gpu->runOnce(p, prog, compile(src, "example.cu"), p.benchmark, {}, 3);
        const auto& x = r.inputs_before.at("X");
        const auto& y = r.buffers.at("Y");
        for (size_t i = 0; i < y.size(); ++i)
            if (y[i] != 2 * x[i])
                QFAIL(qPrintable(QString("Y[%1] = %2, expected %3").arg(i).arg(y[i]).arg(2 * x[i])));
    }

    void missingKernelIsALaunchError() {
        const Problem p = Problem::parse(kDtypes, "dtypes.json");
        const KernelProgram prog =
            KernelProgram::parse("// @kerncast launch odd grid(1) block(32) args(f, o, N)\n" +
                                     std::string(kEvenOnly).substr(std::string(kEvenOnly).find("extern")),
                                 "odd.cu");
        const auto cubin = compile(prog.source, "odd.cu", {{"SMEM", 512}});
        QVERIFY_THROWS_EXCEPTION(LaunchError, m_gpu->runOnce(p, prog, cubin, {{"N", 10}}, {}, 1));
    }

    void saxpyMatchesFp64() {
        const QString dir = QStringLiteral(KERNCAST_TEST_DATA "/problems_gpu/saxpy_out");
        const Problem p = Problem::parse(readFile(dir + "/problem.json"), (dir + "/problem.json").toStdString());
        const std::string src = readFile(dir + "/reference.cu");
        const KernelProgram prog = KernelProgram::parse(src, "reference.cu");
        const RunOutput r = m_gpu->runOnce(p, prog, compile(src, "reference.cu"), {{"N", 100003}}, {}, 3);
        const auto& x = r.inputs_before.at("x");
        const auto& y = r.inputs_before.at("y");
        const auto& z = r.buffers.at("z");
        double worst = 0;
        for (size_t i = 0; i < z.size(); ++i)
            worst = std::max(worst, std::abs(z[i] - (2.5 * x[i] + y[i])) / (std::abs(2.5 * x[i] + y[i]) + 1e-3));
        QVERIFY2(worst < 1e-6, qPrintable(QString::number(worst)));
    }

    // A T1 problem's constant-memory argument: the worker copies the buffer into the module's __constant__ variable
    // before the run, so the kernel (which reads only the constant) computes with this run's values.
    void constantMemoryIsFilledFromItsBuffer() {
        const T1Problem t1 = import_t1(KERNCAST_TEST_DATA "/t1/blur/blur.json");
        const Problem p = Problem::parse(t1.problem_json, "problem.json");
        const KernelProgram family = KernelProgram::parse(t1.family, "family.cu");
        const Bindings config{{"block_size_x", 64}, {"tile", 2}, {"use_ldg", 1}};
        const auto cubin = compile(t1.family, "family.cu", config);
        QVERIFY(!cubin.empty());
        for (uint64_t seed : {uint64_t{5}, uint64_t{6}}) {
            const RunOutput r = m_gpu->runOnce(p, family, cubin, p.benchmark, config, seed);
            const auto& in = r.inputs_before.at("in");
            const auto& w = r.inputs_before.at("weights");
            const auto& out = r.buffers.at("out");
            QCOMPARE(out.size(), size_t{10000});
            double worst = 0;
            for (size_t i = 0; i < out.size(); ++i) {
                double want = 0;
                for (size_t k = 0; k < 8; ++k)
                    want += w[k] * in[i + k];
                worst = std::max(worst, std::abs(out[i] - 0.5 * want));
            }
            QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));
        }
    }

    void constantMemoryErrorsAreLaunchErrors() {
        const T1Problem t1 = import_t1(KERNCAST_TEST_DATA "/t1/blur/blur.json");
        const Bindings config{{"block_size_x", 32}, {"tile", 1}, {"use_ldg", 0}};
        const auto cubin = compile(t1.family, "family.cu", config);
        // A buffer larger than the variable it fills.
        std::string json = t1.problem_json;
        json.replace(json.find("\"8\""), 3, "\"64\"");
        const Problem big = Problem::parse(json, "problem.json");
        try {
            m_gpu->runOnce(big, KernelProgram::parse(t1.family, "family.cu"), cubin, big.benchmark, config, 1);
            QFAIL("expected a LaunchError");
        } catch (const LaunchError& e) {
            QVERIFY2(QString(e.what()).contains("constant weights holds 64 bytes, but buffer weights has 256"),
                     e.what());
        }
        // A symbol the module does not have.
        std::string renamed = t1.family;
        renamed.replace(renamed.find("@kerncast constant weights"), 26, "@kerncast constant missing");
        const Problem p = Problem::parse(t1.problem_json, "problem.json");
        try {
            m_gpu->runOnce(p, KernelProgram::parse(renamed, "family.cu"), cubin, p.benchmark, config, 1);
            QFAIL("expected a LaunchError");
        } catch (const LaunchError& e) {
            QVERIFY2(QString(e.what()).contains("variable 'missing' is not in"), e.what());
        }
    }

    void ceilingsArePlausible() {
        const DeviceCeilings c = m_gpu->measureCeilings();
        qInfo("measured ceilings: %.0f GB/s, %.1f TFLOP/s fp32, L2 %lld bytes", c.dram_gbps, c.fp32_tflops,
              static_cast<long long>(c.l2_bytes));
        QVERIFY(c.dram_gbps > 100 && c.dram_gbps < 20000);
        QVERIFY(c.fp32_tflops > 1 && c.fp32_tflops < 1000);
        QCOMPARE(c.l2_bytes, m_gpu->fingerprint().l2_bytes);
    }

    // The fingerprint names the board power limit in force, as nvidia-smi reads it for the same GPU: what a
    // recording goes on under (tst_recorder resumeRefusesAnotherPowerLimit).
    void fingerprintCarriesThePowerLimit() {
        if (!nvml::available())
            QSKIP("NVML is not available here");
        const DeviceFingerprint f = m_gpu->fingerprint();
        qInfo("%s: power limit %d mW", f.uuid.c_str(), f.power_limit_mw);
        QVERIFY2(f.power_limit_mw > 50000 && f.power_limit_mw < 2000000, std::to_string(f.power_limit_mw).c_str());
        QProcess smi;
        smi.start(QStringLiteral("nvidia-smi"),
                  {QStringLiteral("--query-gpu=power.limit"), QStringLiteral("--format=csv,noheader,nounits"),
                   QStringLiteral("--id=") + QString::fromStdString(f.uuid)});
        if (!smi.waitForFinished(30000) || smi.exitCode() != 0)
            QSKIP("nvidia-smi did not answer");
        const double watts = QString::fromUtf8(smi.readAllStandardOutput()).trimmed().toDouble();
        QVERIFY2(std::abs(watts * 1000 - f.power_limit_mw) <= 1000,
                 (std::to_string(watts) + " W by nvidia-smi").c_str());
    }
};

QTEST_GUILESS_MAIN(TestGpuSession)
#include "tst_gpu_session.moc"
