// Exported kernels on the GPU (label gpu): the CUDA unit of a family configuration, compiled by nvcc with a small host
// program, computes what the problem asks at odd sizes (saxpy; prefix_sum with its scratch buffers from the stream and
// from the caller's workspace); kerncast-cli sweep measures a run's candidate at several sizes and stores them in the
// run.
#include "core/kernel_export.h"
#include "core/kernel_program.h"
#include "core/problem.h"
#include "core/run_store.h"
#include "core/text_util.h"
#include "engine/gpu/cuda_driver.h"
#include "tests/support/cli_runner.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace kerncast;
using namespace kerncast::test;

namespace {

const std::string kProblems = std::string(KERNCAST_TEST_DATA) + "/../../resources/problems";

// Host programs: fill the inputs, run launch(), compare with the CPU; print "ok" or the first mismatch.
const char* kSaxpyMain = R"(#include "saxpy.h"
#include <cstdio>
#include <vector>
int main() {
    for (int n : {1, 1000, 4099, 1 << 20}) {
        std::vector<float> x(n), y(n);
        for (int i = 0; i < n; ++i) { x[i] = (i % 17) * 0.25f - 2.0f; y[i] = (i % 5) * 0.5f; }
        float *dx, *dy;
        cudaMalloc(&dx, n * 4); cudaMalloc(&dy, n * 4);
        cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(dy, y.data(), n * 4, cudaMemcpyHostToDevice);
        const char* why = nullptr;
        if (kerncast_saxpy::launch(dx, dy, n, 2.5f, nullptr, nullptr, &why) != cudaSuccess) { std::printf("launch failed: %s\n", why); return 1; }
        std::vector<float> out(n);
        cudaMemcpy(out.data(), dy, n * 4, cudaMemcpyDeviceToHost);
        for (int i = 0; i < n; ++i)
            if (out[i] != 2.5f * x[i] + y[i]) { std::printf("N=%d: y[%d] = %g, expected %g\n", n, i, out[i], 2.5f * x[i] + y[i]); return 1; }
        cudaFree(dx); cudaFree(dy);
    }
    std::printf("ok\n");
}
)";

const char* kPrefixSumMain = R"(#include "prefix_sum.h"
#include <cstdio>
#include <vector>
int main() {
    for (int n : {1, 1000, 99991, 1000003}) {
        for (bool own : {false, true}) {
            std::vector<int> x(n);
            for (int i = 0; i < n; ++i) x[i] = (i * 7919) % 201 - 100;
            int *dx, *dy;
            cudaMalloc(&dx, n * 4); cudaMalloc(&dy, n * 4);
            cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice);
            void* workspace = nullptr;
            if (own) cudaMalloc(&workspace, kerncast_prefix_sum::workspace_bytes(n));
            const char* why = nullptr;
            if (kerncast_prefix_sum::launch(dx, dy, n, nullptr, workspace, &why) != cudaSuccess) { std::printf("launch failed: %s\n", why); return 1; }
            std::vector<int> out(n);
            cudaMemcpy(out.data(), dy, n * 4, cudaMemcpyDeviceToHost);
            long long sum = 0;
            for (int i = 0; i < n; ++i) {
                sum += x[i];
                if (out[i] != static_cast<int>(sum)) { std::printf("N=%d: y[%d] = %d, expected %lld\n", n, i, out[i], sum); return 1; }
            }
            cudaFree(dx); cudaFree(dy); cudaFree(workspace);
        }
    }
    std::printf("ok\n");
}
)";

// hgemm_tc's Hopper family: tensor maps over the caller's buffers where K and N are multiples of 8, over padded
// scratch elsewhere (when(...)), sm_90a code; compared with fp64 sums of the same f16 inputs.
const char* kHgemmMain = R"(#include "hgemm_tc.h"
#include <cmath>
#include <cstdio>
#include <vector>
int main() {
    const int cases[][3] = {{256, 512, 192}, {131, 77, 45}, {300, 136, 72}};
    for (const auto& c : cases) {
        const int M = c[0], N = c[1], K = c[2];
        std::vector<__half> a(M * K), b(K * N);
        std::vector<double> af(M * K), bf(K * N);
        for (int i = 0; i < M * K; ++i) { a[i] = __float2half(((i * 37) % 19 - 9) / 8.0f); af[i] = __half2float(a[i]); }
        for (int i = 0; i < K * N; ++i) { b[i] = __float2half(((i * 11) % 23 - 11) / 16.0f); bf[i] = __half2float(b[i]); }
        __half *da, *db; float* dc;
        cudaMalloc(&da, a.size() * 2); cudaMalloc(&db, b.size() * 2); cudaMalloc(&dc, (size_t)M * N * 4);
        cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice);
        cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice);
        const char* why = nullptr;
        if (kerncast_hgemm_tc::launch(da, db, dc, K, M, N, nullptr, nullptr, &why) != cudaSuccess) { std::printf("launch failed: %s\n", why); return 1; }
        if (cudaDeviceSynchronize() != cudaSuccess) { std::printf("kernel failed\n"); return 1; }
        std::vector<float> out((size_t)M * N);
        cudaMemcpy(out.data(), dc, out.size() * 4, cudaMemcpyDeviceToHost);
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                double want = 0;
                for (int k = 0; k < K; ++k) want += af[i * K + k] * bf[k * N + j];
                if (std::fabs(out[(size_t)i * N + j] - want) > 1e-3 * (1 + std::fabs(want))) { std::printf("M=%d N=%d K=%d: C[%d][%d] = %g, expected %g\n", M, N, K, i, j, out[(size_t)i * N + j], want); return 1; }
            }
        cudaFree(da); cudaFree(db); cudaFree(dc);
    }
    std::printf("ok\n");
}
)";

// A run of saxpy in the store, its problem folder recorded; returns its id.
int64_t saxpyRun(RunStore& store) {
    RunInfo run;
    run.problem = "saxpy";
    store.addRun(run);
    ProblemRecord pr{0, "saxpy", kProblems + "/saxpy", nlohmann::json::object()};
    store.addProblem(pr);
    return run.id;
}

int64_t addSaxpyCandidate(RunStore& store, int64_t run, int64_t block, int64_t vec, int64_t items) {
    Candidate c;
    c.mutator = Mutator::Parametric;
    c.source = read_text_file(kProblems + "/saxpy/family.cu");
    c.tunables = {{"BLOCK", block}, {"VEC", vec}, {"ITEMS", items}};
    c.label =
        "family BLOCK=" + std::to_string(block) + " ITEMS=" + std::to_string(items) + " VEC=" + std::to_string(vec);
    return store.addCandidate(run, c);
}

}  // namespace

class TestExportGpu : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        std::string why;
        if (cuda::discover_devices(&why).empty())
            QSKIP(("no CUDA device: " + why).c_str());
    }

    void exportedUnitComputesTheProblem_data() {
        QTest::addColumn<QString>("problem_name");
        QTest::addColumn<QString>("main");
        QTest::newRow("saxpy") << "saxpy" << kSaxpyMain;
        QTest::newRow("prefix_sum: scratch, two launches") << "prefix_sum" << kPrefixSumMain;
        QTest::newRow("hgemm_tc: tensor maps, when(...), sm_90a") << "hgemm_tc" << kHgemmMain;
    }
    void exportedUnitComputesTheProblem() {
        QFETCH(QString, problem_name);
        QFETCH(QString, main);
        QString nvcc = QStandardPaths::findExecutable("nvcc");
        if (nvcc.isEmpty())
            nvcc = QStandardPaths::findExecutable("nvcc", {"/usr/local/cuda/bin"});
        if (nvcc.isEmpty())
            QSKIP("nvcc is not installed");
        const std::string dir = kProblems + "/" + problem_name.toStdString();
        const KernelProgram family = KernelProgram::load(dir + "/family.cu");
        const auto configs = family.configurations();
        QStringList arch = {"-arch=native"};
        if (!family.targets.empty()) {
            const auto devices = cuda::discover_devices();
            const std::string sm = "sm_" + std::to_string(devices[0].cc_major) + std::to_string(devices[0].cc_minor);
            try {
                const std::string target = family.compileArch(sm);
                arch = {"-gencode", QString::fromStdString("arch=compute_" + target.substr(3) + ",code=" + target)};
            } catch (const Error& e) {
                QSKIP(e.what());
            }
        }
        QTemporaryDir tmp;
        // The first and the last configuration: two different plans.
        for (const auto& config : {configs.front(), configs.back()}) {
            for (const auto& f : export_cuda(Problem::load(dir), family, config, {}))
                std::ofstream(tmp.filePath(QString::fromStdString(f.path)).toStdString()) << f.text;
            std::ofstream(tmp.filePath("main.cu").toStdString()) << main.toStdString();
            QProcess cc;
            cc.setWorkingDirectory(tmp.path());
            cc.start(nvcc,
                     QStringList{"-std=c++17"} + arch + QStringList{"-o", "check", "main.cu", problem_name + ".cu"});
            QVERIFY(cc.waitForFinished(240000));
            QVERIFY2(cc.exitCode() == 0, cc.readAllStandardError().left(4000).constData());
            QProcess check;
            check.start(tmp.filePath("check"), {});
            QVERIFY(check.waitForFinished(120000));
            QCOMPARE(check.readAllStandardOutput().trimmed(), QByteArray("ok"));
        }
    }

    void sweepStoresItsResultsInTheRun() {
        QTemporaryDir tmp;
        const std::string run_file = tmp.filePath("run.kcrun").toStdString();
        int64_t id = 0;
        {
            RunStore store = RunStore::create(run_file);
            id = addSaxpyCandidate(store, saxpyRun(store), 256, 4, 2);
        }
        const CliResult r = run_cli({"--json", "sweep", "--run", run_file, "--candidate", std::to_string(id), "--sizes",
                                     "N=1000,4099,1048576", "--device", "cuda:0"});
        QVERIFY2(r.code == 0, (r.err + r.out).c_str());
        const auto summary = nlohmann::json::parse(r.out);
        QCOMPARE(summary["results"].size(), size_t{3});
        for (const auto& row : summary["results"]) {
            QCOMPARE(row["status"].get<std::string>(), std::string("ok"));
            QVERIFY(row["speedup"].get<double>() > 0);
        }
        RunStore store = RunStore::openReadOnly(run_file);
        const auto events = store.events(store.runs().back().id);
        QVERIFY(std::any_of(events.begin(), events.end(), [&](const RunEvent& e) {
            return e.kind == "sweep" && e.payload["candidate"] == id && e.payload["results"].size() == 3;
        }));
    }

    // --top K re-ranks the run's K fastest candidates at each size, each sweep stored as its own event.
    void topCandidatesAreRankedAtEachSize() {
        QTemporaryDir tmp;
        const std::string run_file = tmp.filePath("run.kcrun").toStdString();
        {
            RunStore store = RunStore::create(run_file);
            const int64_t run = saxpyRun(store);
            double speedup = 1.5;
            for (const int64_t block : {128, 1024}) {
                const int64_t id = addSaxpyCandidate(store, run, block, 1, 1);
                Measurement m;
                m.status = Status::Ok;
                m.speedup = speedup;
                m.device_kind = "cuda";
                store.addMeasurement(id, m);
                speedup += 0.1;
            }
        }
        const CliResult r = run_cli(
            {"--json", "sweep", "--run", run_file, "--top", "2", "--sizes", "N=4099,1048576", "--device", "cuda:0"});
        QVERIFY2(r.code == 0, (r.err + r.out).c_str());
        const auto summary = nlohmann::json::parse(r.out);
        QCOMPARE(summary["candidates"].size(), size_t{2});
        QCOMPARE(summary["candidates"][0]["candidate"].get<int64_t>(), int64_t{2});  // the faster at the benchmark
        QCOMPARE(summary["ranking"].size(), size_t{2});
        for (const auto& r : summary["ranking"])
            QCOMPARE(r["candidates"].size(), size_t{2});
        RunStore store = RunStore::openReadOnly(run_file);
        const auto events = store.events(store.runs().back().id);
        QCOMPARE(std::count_if(events.begin(), events.end(), [](const RunEvent& e) { return e.kind == "sweep"; }), 2);
    }
};

QTEST_GUILESS_MAIN(TestExportGpu)
#include "tst_export_gpu.moc"
