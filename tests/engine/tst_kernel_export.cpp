// Exported kernels (core/kernel_export.h, export --format cuda|torch): every family configuration of three problems
// compiles with nvcc for sm_90 as exported (the launch plan's expressions of sizes in conv2d, scratch buffers in
// mse_loss, several launches with a scratch buffer sized from N in prefix_sum), all configurations of a problem in
// one nvcc run, each unit in its own namespace, as a project embedding several kernels would have them. And the
// export of a run's candidate: the best one, its README naming where it came from, the errors a user meets.
#include "core/kernel_export.h"
#include "core/kernel_program.h"
#include "core/problem.h"
#include "core/problem_fingerprint.h"
#include "core/run_store.h"
#include "core/text_util.h"
#include "tests/support/cli_runner.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace kerncast;
using namespace kerncast::test;
namespace fs = std::filesystem;

namespace {

const std::string kProblems = std::string(KERNCAST_TEST_DATA) + "/../../resources/problems";

QString find_nvcc() {
    QString nvcc = QStandardPaths::findExecutable("nvcc");
    if (nvcc.isEmpty())
        nvcc =
            QStandardPaths::findExecutable("nvcc", {qEnvironmentVariable("CUDA_HOME") + "/bin", "/usr/local/cuda/bin"});
    return nvcc;
}

void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

std::string read(const fs::path& path) { return read_text_file(path.string()); }

// The complete Hopper example of docs/formats.md (a tensor map, a cluster of two, target sm_90a) and its problem.
std::string documented_hopper_example() {
    const std::string doc = read_text_file(KERNCAST_TEST_DATA "/../../docs/formats.md");
    const size_t begin = doc.find("  // @kerncast target sm_90a\n  // @kerncast launch tile2x");
    if (begin == std::string::npos)
        return {};
    std::string src;
    std::istringstream lines(doc.substr(begin, doc.find("  ```", begin) - begin));
    for (std::string line; std::getline(lines, line);)
        src += (line.size() >= 2 ? line.substr(2) : line) + "\n";
    return src;
}

Problem tile2x_problem() {
    return Problem::parse(R"json({
  "name": "tile2x", "description": "Y = 2 X",
  "sizes": {"benchmark": {"R": 100, "C": 200}, "correctness": [{"R": 3, "C": 8}, {"R": 33, "C": 72}]},
  "buffers": [{"name": "X", "dtype": "f16", "shape": ["R", "C"], "role": "in"},
              {"name": "Y", "dtype": "f32", "shape": ["R", "C"], "role": "out"}],
  "flops": "R * C", "bytes": "6 * R * C"})json",
                          "tile2x.json");
}

}  // namespace

class TestKernelExport : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyConfigurationCompiles_data() {
        QTest::addColumn<QString>("problem_name");
        QTest::newRow("conv2d: grid expressions of sizes") << "conv2d";
        QTest::newRow("mse_loss: scratch, two launches") << "mse_loss";
        QTest::newRow("prefix_sum: scratch sized by N, two launches") << "prefix_sum";
        QTest::newRow("hgemm_tc: tensor maps, when(...), sm_90a") << "hgemm_tc";
    }
    void everyConfigurationCompiles() {
        QFETCH(QString, problem_name);
        const QString nvcc = find_nvcc();
        if (nvcc.isEmpty())
            QSKIP("nvcc is not installed (not on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin): the exported units "
                  "cannot be compiled");
        const std::string dir = kProblems + "/" + problem_name.toStdString();
        const Problem problem = Problem::load(dir);
        const KernelProgram family = KernelProgram::load(dir + "/family.cu");
        const auto configurations = family.configurations();
        QVERIFY(configurations.size() > 10);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const fs::path root = tmp.path().toStdString();
        // Two translation units, one per core, each including half of the units.
        std::ostringstream all[2];
        for (size_t i = 0; i < configurations.size(); ++i) {
            KernelExportOptions options;
            options.name_space = "config_" + std::to_string(i);
            options.unit = "unit";
            const auto files = export_cuda(problem, family, configurations[i], options);
            QCOMPARE(files.size(), size_t{3});
            for (const auto& f : files)
                write(root / options.name_space / f.path, f.text);
            all[i % 2] << "#include \"" << options.name_space << "/unit.cu\"\n";
        }
        QProcess compilers[2];
        for (int k = 0; k < 2; ++k) {
            const fs::path tu = root / ("all_" + std::to_string(k) + ".cu");
            write(tu, all[k].str());
            compilers[k].setWorkingDirectory(tmp.path());
            // As each unit's README says: the program's target, else sm_90.
            const QStringList arch = family.targets.empty() ? QStringList{"-arch=sm_90"}
                                                            : QStringList{"-gencode", "arch=compute_90a,code=sm_90a"};
            compilers[k].start(
                nvcc, QStringList{"-std=c++17"} + arch +
                          QStringList{"-Werror", "all-warnings", "-c", QString::fromStdString(tu.string()), "-o",
                                      QString::fromStdString((root / ("all_" + std::to_string(k) + ".o")).string())});
        }
        bool finished[2];
        for (int k = 0; k < 2; ++k)
            finished[k] = compilers[k].waitForFinished(280000);
        for (int k = 0; k < 2; ++k) {
            QVERIFY(finished[k]);
            QVERIFY2(compilers[k].exitCode() == 0, compilers[k].readAllStandardError().left(6000).constData());
        }
    }

    // The complete Hopper example of docs/formats.md (a tensor map, a cluster of two, target sm_90a) exports to a unit
    // that builds the map and launches through cudaLaunchKernelExC with the cluster attribute, and compiles.
    void clusterAndTensorMapCompile() {
        const QString nvcc = find_nvcc();
        if (nvcc.isEmpty())
            QSKIP("nvcc is not installed");
        const std::string src = documented_hopper_example();
        QVERIFY(!src.empty());
        const Problem problem = tile2x_problem();
        const KernelProgram program = KernelProgram::parse(src, "tile2x.cu");
        const auto files = export_cuda(problem, program, {}, {});
        const std::string& unit = files[1].text;
        QVERIFY(unit.find("kc_cluster.val.clusterDim.x = static_cast<unsigned>(cluster0x);") != std::string::npos);
        QVERIFY(unit.find("kerncast_launch::tensor_map(&kc_arg0, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, X") !=
                std::string::npos);
        QVERIFY(unit.find("cudaLaunchKernelExC") != std::string::npos);
        QVERIFY2(files[2].text.find("nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a") != std::string::npos,
                 files[2].text.c_str());
        QTemporaryDir tmp;
        for (const auto& f : files)
            write(fs::path(tmp.path().toStdString()) / f.path, f.text);
        QProcess cc;
        cc.setWorkingDirectory(tmp.path());
        cc.start(nvcc, {"-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-Werror", "all-warnings", "-c",
                        "tile2x.cu", "-o", "tile2x.o"});
        QVERIFY(cc.waitForFinished(240000));
        QVERIFY2(cc.exitCode() == 0, cc.readAllStandardError().left(6000).constData());
    }

    // The exported unit checks each tensor map against its buffer before it calls CUDA: a map one row longer than X
    // (the cheapest way to let the copy engine read past a buffer) is refused with the unit's message, on a machine
    // without a GPU too. (The documented map passes the check: the exported hgemm_tc units run on the GPU in
    // tst_export_gpu.)
    void aTensorMapPastItsBufferIsRefusedByTheUnit() {
        const QString nvcc = find_nvcc();
        if (nvcc.isEmpty())
            QSKIP("nvcc is not installed");
        std::string src = documented_hopper_example();
        const std::string map = "tensormap(X, shape(C, R), box(64, 32), swizzle(0))";
        const size_t at = src.find(map);
        QVERIFY(at != std::string::npos);
        src.replace(at, map.size(), "tensormap(X, shape(C, R + 1), box(64, 32), swizzle(0))");
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        const auto files = export_cuda(tile2x_problem(), KernelProgram::parse(src, "tile2x.cu"), {}, {});
        for (const auto& f : files)
            write(root / f.path, f.text);
        QVERIFY(files[0].text.find("launch(const __half* X, float* Y, int64_t C, int64_t R,") != std::string::npos);
        write(root / "main.cu", R"cpp(#include "tile2x.h"
#include <cstdio>
#include <cstring>
int main() {
    const char* message = nullptr;
    const cudaError_t e = kerncast_tile2x::launch(nullptr, nullptr, 200, 100, nullptr, nullptr, &message);
    std::printf("%d %s\n", static_cast<int>(e), message ? message : "");
    return e != cudaSuccess && message && std::strstr(message, "does not lie inside") ? 0 : 1;
}
)cpp");
        QProcess cc;
        cc.setWorkingDirectory(tmp.path());
        cc.start(nvcc,
                 {"-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "main.cu", "tile2x.cu", "-o", "past"});
        QVERIFY(cc.waitForFinished(240000));
        QVERIFY2(cc.exitCode() == 0, cc.readAllStandardError().left(6000).constData());
        QProcess run;
        run.start(QString::fromStdString((root / "past").string()), {});
        QVERIFY(run.waitForFinished(60000));
        const QByteArray said = run.readAllStandardOutput();
        QVERIFY2(run.exitCode() == 0 && said.contains("the tensor map of X"), said.constData());
    }

    // The exported unit is the kernel with its tunables fixed and a launch function that takes the problem's
    // buffers, sizes and scalars, and names the plan's expressions.
    void unitHoldsThePlan() {
        const std::string dir = kProblems + "/prefix_sum";
        const auto files = export_cuda(Problem::load(dir), KernelProgram::load(dir + "/family.cu"),
                                       {{"BLOCK", 512}, {"ITEMS", 4}, {"PAD", 0}, {"DIRECT", 1}}, {});
        QCOMPARE(files[0].path, std::string("prefix_sum.h"));
        QCOMPARE(files[1].path, std::string("prefix_sum.cu"));
        const std::string& h = files[0].text;
        const std::string& cu = files[1].text;
        QVERIFY2(h.find("cudaError_t launch(const int32_t* x, int32_t* y, int64_t N, cudaStream_t stream = nullptr, "
                        "void* workspace = nullptr, const char** message = nullptr);") != std::string::npos,
                 h.c_str());
        QVERIFY(h.find("inline constexpr int64_t BLOCK = 512;") != std::string::npos);
        QVERIFY(h.find("size_t workspace_bytes(int64_t N") != std::string::npos);
        QVERIFY(cu.find("#define BLOCK 512\n") != std::string::npos);
        QVERIFY(cu.find("#undef BLOCK\n") != std::string::npos);
        QVERIFY(cu.find("#undef TILE\n") != std::string::npos);  // the kernel's own macros
        QVERIFY(cu.find("// ceil_div(ceil_div(N, BLOCK * ITEMS), 256)") != std::string::npos);
        QVERIFY(cu.find("scan_init<<<") < cu.find("scan_family<<<"));
        QVERIFY(cu.find("cudaMallocAsync") != std::string::npos);
    }

    // Only what the compiler reads as code is moved or named: an #include or #define in a block comment or a raw
    // string stays in place (hoisted, a commented-out include would become a real one), and `extern "C"` in a
    // string is left as written.
    void onlyCodeIsHoistedOrRenamed() {
        const std::string src = "// @kerncast launch twice grid(ceil_div(R * C, 256)) block(256) args(X, Y, R, C)\n"
                                "#include <cuda_fp16.h>\n"
                                "/*\n#include <not_a_header.h>\n#define HIDDEN 1\n*/\n"
                                "#define SHOWN 2\n"
                                "static const char* raw = R\"(\n#include <also_not_a_header.h>\n)\";\n"
                                "__device__ const char* note = \"extern \\\"C\\\" stays\";\n"
                                "extern \"C\" __global__ void twice(const __half* X, float* Y, int R, int C) {\n"
                                "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "    if (i < R * C) Y[i] = SHOWN * __half2float(X[i]);\n"
                                "}\n";
        const auto files = export_cuda(tile2x_problem(), KernelProgram::parse(src, "twice.cu"), {}, {});
        const std::string& cu = files[1].text;
        QVERIFY2(cu.find("#include <cuda_fp16.h>") < cu.find("namespace"), cu.c_str());
        // Each commented or quoted include once, where it was.
        for (const std::string& kept : {std::string("/*\n#include <not_a_header.h>\n#define HIDDEN 1\n*/\n"),
                                        std::string("R\"(\n#include <also_not_a_header.h>\n)\";")}) {
            QVERIFY2(cu.find(kept) != std::string::npos, cu.c_str());
            QCOMPARE(cu.find(kept.substr(kept.find("#include"), 20)), cu.rfind(kept.substr(kept.find("#include"), 20)));
        }
        QVERIFY2(cu.find("#undef SHOWN") != std::string::npos, cu.c_str());
        QVERIFY2(cu.find("#undef HIDDEN") == std::string::npos, cu.c_str());
        QVERIFY2(cu.find("\"extern \\\"C\\\" stays\"") != std::string::npos, cu.c_str());
        QVERIFY2(cu.find("extern \"C\" __global__") == std::string::npos, cu.c_str());
    }

    // forward() takes the problem's inputs as the pytorch expression does: sizes from the input shapes, a size no
    // shape gives as a keyword, scalars as keywords with the problem's values; a reduction's one element as 0-dim.
    void torchWrapper_data() {
        QTest::addColumn<QString>("problem_name");
        QTest::addColumn<QString>("signature");
        QTest::addColumn<QString>("call");
        QTest::newRow("softmax") << "softmax"
                                 << "def forward(x):"
                                 << "extension().forward([x], [int(x.shape[0]), int(x.shape[1])], [])";
        QTest::newRow("saxpy: scalar, inout") << "saxpy"
                                              << "def forward(x, y, *, a=2.5):"
                                              << "extension().forward([x, y], [int(x.shape[0])], [float(a)])";
        QTest::newRow("groupnorm: G from no shape") << "groupnorm"
                                                    << "def forward(x, w, b, *, G=None, eps=1e-05):"
                                                    << "[int(x.shape[0]), int(x.shape[1]), int(G), int(x.shape[2]), "
                                                       "int(x.shape[3])], [float(eps)])";
        QTest::newRow("cross_entropy: 0-dim loss") << "cross_entropy"
                                                   << "def forward(logits, labels):"
                                                   << "outputs[0] = outputs[0].reshape(())";
    }
    void torchWrapper() {
        QFETCH(QString, problem_name);
        QFETCH(QString, signature);
        QFETCH(QString, call);
        const std::string dir = kProblems + "/" + problem_name.toStdString();
        const KernelProgram family = KernelProgram::load(dir + "/family.cu");
        const auto files = export_torch(Problem::load(dir), family, family.configurations(1).front(), {});
        std::map<std::string, std::string> by_path;
        for (const auto& f : files)
            by_path[f.path] = f.text;
        const std::string unit = problem_name.toStdString();
        for (const auto& name : {unit + ".h", unit + ".cu", unit + "_op.cu", unit + ".py", "test_" + unit + ".py",
                                 std::string("problem.json"), std::string("README.md")})
            QVERIFY2(by_path.count(name), name.c_str());
        const std::string& py = by_path[unit + ".py"];
        QVERIFY2(py.find(signature.toStdString()) != std::string::npos, py.c_str());
        QVERIFY2(py.find(call.toStdString()) != std::string::npos, py.c_str());
        QVERIFY(by_path["test_" + unit + ".py"].find("import " + unit + " as op") != std::string::npos);
        QVERIFY(by_path[unit + "_op.cu"].find("#include \"" + unit + ".cu\"") != std::string::npos);
        // The Python files are valid Python.
        const QString python = QStandardPaths::findExecutable("python3");
        if (python.isEmpty())
            return;
        for (const auto& name : {unit + ".py", "test_" + unit + ".py"}) {
            QProcess check;
            check.start(python, {"-c", "import ast, sys; ast.parse(sys.stdin.read())"});
            check.write(QByteArray::fromStdString(by_path[name]));
            check.closeWriteChannel();
            QVERIFY(check.waitForFinished(30000));
            QVERIFY2(check.exitCode() == 0, check.readAllStandardError().constData());
        }
    }

    void torchNeedsAPytorchExpression() {
        const std::string dir = std::string(KERNCAST_TEST_DATA) + "/problems/saxpy_fixture";
        Problem problem = Problem::load(dir);
        problem.pytorch.clear();
        const KernelProgram reference = KernelProgram::load(problem.referencePath());
        try {
            export_torch(problem, reference, {}, {});
            QFAIL("exported without a pytorch expression");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("no \"pytorch\" expression") != std::string::npos, e.what());
        }
    }

    void exportErrors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString family = QString::fromStdString(kProblems + "/softmax/family.cu");
        QTest::newRow("missing tunable") << QStringList{"--problem", "softmax",   "--kernel",
                                                        family,      "--tunable", "TPR=128"}
                                         << "tunables without a value: ROWS, VEC, ITEMS";
        QTest::newRow("invalid configuration")
            << QStringList{"--problem", "softmax", "--kernel",  family,  "--tunable", "TPR=32",
                           "--tunable", "ROWS=1",  "--tunable", "VEC=1", "--tunable", "ITEMS=1"}
            << "not a valid configuration";
        QTest::newRow("no out folder") << QStringList{"--problem", "softmax", "--kernel", family, "--out", "-"}
                                       << "give --out DIR";
        QTest::newRow("bad namespace") << QStringList{"--problem",
                                                      "saxpy",
                                                      "--kernel",
                                                      QString::fromStdString(kProblems + "/saxpy/reference.cu"),
                                                      "--namespace",
                                                      "my-kernels"}
                                       << "is not a C++ identifier";
    }
    void exportErrors() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QTemporaryDir tmp;
        std::vector<std::string> a = {"export", "--format", "cuda"};
        if (!args.contains("--out"))
            a.insert(a.end(), {"--out", tmp.filePath("out").toStdString()});
        for (const auto& s : args)
            a.push_back(s.toStdString());
        const CliResult r = run_cli(a);
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find(message.toStdString()) != std::string::npos, r.err.c_str());
    }

    // --candidate best is the fastest candidate measured correct on a device; its README says where it came from.
    void exportsTheBestCandidateOfARun() {
        QTemporaryDir tmp;
        const std::string run_file = tmp.filePath("run.kcrun").toStdString();
        const std::string dir = kProblems + "/softmax";
        const std::string family = read(dir + "/family.cu");
        {
            RunStore store = RunStore::create(run_file);
            RunInfo run;
            run.problem = "softmax";
            run.device = "cuda:0";
            store.addRun(run);
            ProblemRecord pr;
            pr.name = "softmax";
            pr.dir = dir;
            store.addProblem(pr);
            auto add = [&](std::map<std::string, int64_t> t, Status status, double speedup) {
                Candidate c;
                c.mutator = Mutator::Parametric;
                c.source = family;
                c.tunables = t;
                c.label = "family";
                for (const auto& [k, v] : t)
                    c.label += " " + k + "=" + std::to_string(v);
                store.addCandidate(run.id, c);
                Measurement m;
                m.status = status;
                m.speedup = speedup;
                m.device.name = "NVIDIA H100 80GB HBM3";
                m.device_kind = "cuda";
                m.candidate = TimingStats{};
                m.candidate->median_us = 100.0 / std::max(speedup, 0.01);
                m.reference = TimingStats{};
                m.reference->median_us = 100.0;
                store.addMeasurement(c.id, m);
                return c.id;
            };
            add({{"TPR", 128}, {"ROWS", 1}, {"VEC", 4}, {"ITEMS", 2}}, Status::Ok, 1.5);
            add({{"TPR", 256}, {"ROWS", 1}, {"VEC", 4}, {"ITEMS", 1}}, Status::Incorrect, 0);
            add({{"TPR", 64}, {"ROWS", 2}, {"VEC", 2}, {"ITEMS", 4}}, Status::Ok, 2.25);
        }
        const std::string out = tmp.filePath("best").toStdString();
        const CliResult r =
            run_cli({"--json", "export", "--run", run_file, "--candidate", "best", "--format", "cuda", "--out", out});
        QVERIFY2(r.code == 0, r.err.c_str());
        const auto summary = nlohmann::json::parse(r.out);
        QCOMPARE(summary["candidate"].get<int64_t>(), int64_t{3});
        QCOMPARE(summary["tunables"]["TPR"].get<int64_t>(), int64_t{64});
        const std::string readme = read(fs::path(out) / "README.md");
        QVERIFY2(readme.find("candidate 3 (family ITEMS=4 ROWS=2 TPR=64 VEC=2) of run 1 in run.kcrun") !=
                     std::string::npos,
                 readme.c_str());
        QVERIFY(readme.find("2.250x") != std::string::npos);
        QVERIFY(readme.find("NVIDIA H100 80GB HBM3") != std::string::npos);
        QVERIFY(readme.find(problem_fingerprint(dir)) != std::string::npos);
        QVERIFY(read(fs::path(out) / "softmax.h").find("inline constexpr int64_t TPR = 64;") != std::string::npos);

        // A failed candidate exports too (by id), without a speedup; an unknown one is an error.
        const CliResult failed = run_cli({"export", "--run", run_file, "--candidate", "2", "--format", "cuda", "--out",
                                          tmp.filePath("two").toStdString()});
        QVERIFY2(failed.code == 0, failed.err.c_str());
        QVERIFY(read(tmp.filePath("two/README.md").toStdString()).find("none: not measured correct") !=
                std::string::npos);
        const CliResult unknown = run_cli({"export", "--run", run_file, "--candidate", "9", "--format", "cuda", "--out",
                                           tmp.filePath("nine").toStdString()});
        QCOMPARE(unknown.code, 1);
        QVERIFY2(unknown.err.find("has no candidate 9") != std::string::npos, unknown.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestKernelExport)
#include "tst_kernel_export.moc"
