#include "core/error.h"
#include "core/kernel_program.h"
#include "core/problem.h"

#include "tests/support/error_of.h"

#include <QTest>

#include <limits>

using namespace kerncast;
using kerncast::test::errorOf;

namespace {

const std::string kData = KERNCAST_TEST_DATA;

// Row sums over an M x N matrix; matches tests/data/kernels/two_launches.cu.
Problem rowSumProblem() {
    return Problem::parse(R"({
  "name": "row_sum",
  "sizes": {"benchmark": {"M": 4096, "N": 8192}, "correctness": [{"M": 3, "N": 1000}, {"M": 5, "N": 4099}]},
  "buffers": [
    {"name": "x", "dtype": "f32", "shape": ["M", "N"], "role": "in"},
    {"name": "y", "dtype": "f32", "shape": ["M"], "role": "out"}
  ],
  "scalars": [{"name": "scale", "dtype": "f64", "value": 0.25}],
  "flops": "M * N",
  "bytes": "4 * M * N + 4 * M"
})",
                          "row_sum/problem.json");
}

Problem saxpy() { return Problem::load(kData + "/problems/saxpy_fixture"); }

KernelProgram program(const std::string& plan) {
    return KernelProgram::parse(plan + "\nextern \"C\" __global__ void k(float* y, int n) {}\n", "k.cu");
}

}  // namespace

class TestKernelProgram : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parsesLaunchPlan() {
        const auto k = KernelProgram::load(kData + "/kernels/two_launches.cu");
        QCOMPARE(k.file, kData + "/kernels/two_launches.cu");
        QCOMPARE(k.launches.size(), size_t{2});
        const auto& first = k.launches[0];
        QCOMPARE(first.kernel, std::string("partial_sums"));
        QCOMPARE(first.line, 2);
        QCOMPARE(first.grid[0].text(), std::string("ceil_div(N, CHUNK)"));
        QCOMPARE(first.grid[1].text(), std::string("M"));
        QCOMPARE(first.grid[2].eval({}), int64_t{1});  // omitted dimensions are 1
        QCOMPARE(first.smem.text(), std::string("CHUNK * 4"));
        QCOMPARE(first.args, (std::vector<std::string>{"x", "partial", "M", "N"}));
        QCOMPARE(k.launches[1].smem.eval({}), int64_t{0});  // no smem() means none
        QCOMPARE(k.scratch.size(), size_t{1});
        QCOMPARE(k.scratch[0].name, std::string("partial"));
        QCOMPARE(k.scratch[0].dtype, DType::F32);
        QCOMPARE(k.scratch[0].line, 4);
        QCOMPARE(k.tunables.size(), size_t{1});
        QCOMPARE(k.tunables[0].values, (std::vector<int64_t>{128, 256, 512, 1024}));
        QCOMPARE(k.kernelNames(), (std::vector<std::string>{"partial_sums", "finish"}));
        QVERIFY(k.source.find("__global__ void finish") != std::string::npos);
        k.validate(rowSumProblem());
    }

    void ordinaryCommentsAreIgnored() {
        const auto k = program("// kerncast launch notes: not a directive\n/* @kerncast launch k */\n"
                               "  //   @kerncast launch k grid(1) block(32) args(y)\n");
        QCOMPARE(k.launches.size(), size_t{1});
        QCOMPARE(k.launches[0].line, 3);
    }

    void malformedFixtures_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown directive")
            << "unknown_directive.cu" << 2
            << "unknown directive 'tuneable'; expected one of launch, scratch, constant, tunable, target at column 14";
        QTest::newRow("bad expression")
            << "bad_expression.cu" << 2
            << "expected a number, a name or '(' but the expression ended at column 19 in 'ceil_div(N, 256) +'";
        QTest::newRow("missing args") << "missing_args.cu" << 3 << "launch k: expected args(<name>, ...)";
        QTest::newRow("duplicate tunable") << "duplicate_tunable.cu" << 3 << "tunable BLOCK is declared twice";
        QTest::newRow("tunable without values")
            << "tunable_without_values.cu" << 2
            << "tunable UNROLL has no values; expected: tunable UNROLL <v1> <v2> ...";
    }
    void malformedFixtures() {
        QFETCH(QString, file);
        QFETCH(int, line);
        QFETCH(QString, expected);
        const std::string path = kData + "/kernels/" + file.toStdString();
        const std::string msg = errorOf([&] { KernelProgram::load(path); });
        QVERIFY2(msg.rfind(path + ":" + std::to_string(line) + ": ", 0) == 0, msg.c_str());
        QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
        QVERIFY2(msg.size() < 1000, "untrusted text is quoted shortened");
    }

    void oversizedProgramIsAnError() {
        const std::string msg = errorOf([] { program(std::string(2 << 20, ' ')); });
        QVERIFY2(msg.rfind("k.cu: expected a kernel program of at most 1 MiB", 0) == 0, msg.c_str());
    }

    void syntaxErrors_data() {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown clause") << "// @kerncast launch k grid(1) threads(32) args(y)"
                                        << "unknown clause 'threads'; expected grid(...), block(...), cluster(...), "
                                           "smem(...), when(...) or args(...) at "
                                           "column 31";
        QTest::newRow("clause twice") << "// @kerncast launch k grid(1) grid(2) block(32) args(y)"
                                      << "grid(...) is given twice";
        QTest::newRow("four dimensions") << "// @kerncast launch k grid(1, 1, 1, 1) block(32) args(y)"
                                         << "takes 1 to 3 dimensions";
        QTest::newRow("empty dimension") << "// @kerncast launch k grid(1, , 2) block(32) args(y)"
                                         << "expected an expression for grid dimension y";
        QTest::newRow("unclosed clause") << "// @kerncast launch k grid(ceil_div(N, 2) block(32) args(y)"
                                         << "expected ')' closing grid(";
        QTest::newRow("missing block") << "// @kerncast launch k grid(1) args(y)"
                                       << "expected block(<x>[, <y>[, <z>]])";
        QTest::newRow("bad argument") << "// @kerncast launch k grid(1) block(32) args(y, 2)"
                                      << "found '2'";
        QTest::newRow("no kernel name")
            << "// @kerncast launch grid(1) block(32) args(y)"
            << "expected a kernel name after 'launch', found the clause grid(...) at column 21";
        QTest::newRow("no directive") << "// @kerncast"
                                      << "expected a directive (launch, scratch, constant, tunable, target)";
        QTest::newRow("scratch dtype")
            << "// @kerncast scratch tmp float (N)"
            << "scratch tmp: dtype: expected one of f32 f16 bf16 f64 i32 u8, found \"float\"";
        QTest::newRow("scratch without count") << "// @kerncast scratch tmp f32"
                                               << "expected '(' after the dtype";
        QTest::newRow("tunable value not integer") << "// @kerncast tunable B 64 1.5"
                                                   << "expected an integer value or 'where' for tunable B, found '1.5'";
        QTest::newRow("tunable value twice") << "// @kerncast tunable B 64 128 64"
                                             << "lists the value 64 twice at column 31";
        QTest::newRow("empty where") << "// @kerncast tunable B 64 where"
                                     << "expected a condition after 'where'";
        QTest::newRow("bad where") << "// @kerncast tunable B 64 where B <"
                                   << "in 'B <'";
        QTest::newRow("scratch clashes with tunable") << "// @kerncast tunable T 1\n// @kerncast scratch T f32 (4)"
                                                      << "scratch T: the name is already declared";
        // What an LLM-written kernel can hold: bounded errors, never a crash or a hang.
        QTest::newRow("deeply nested grid")
            << "// @kerncast launch k grid(" + QString(2000, '(') + "N" + QString(2000, ')') + ") block(32) args(y)"
            << "expected at most 64 levels of parentheses";
        QTest::newRow("long smem chain") << "// @kerncast launch k grid(1) block(32) smem(1" +
                                                QString("*2").repeated(1000) + ") args(y)"
                                         << "at most 256 operations deep";
        QTest::newRow("very long directive") << "// @kerncast tunable B" + QString(" 1").repeated(100000)
                                             << "expected a @kerncast line of at most 8192 characters";
        QString values;
        for (int v = 0; v < 300; ++v)
            values += " " + QString::number(v);
        QTest::newRow("too many tunable values")
            << "// @kerncast tunable B" + values << "tunable B lists more than 256 values";
        QTest::newRow("tensormap without a box") << "// @kerncast launch k grid(1) block(32) args(tensormap(y, "
                                                    "shape(N)), N)"
                                                 << "tensormap of y: expected both shape(...) and box(...)";
        QTest::newRow("tensormap ranks differ")
            << "// @kerncast launch k grid(1) block(32) args(tensormap(y, shape(N, 4), box(16)), N)"
            << "box(...) has 1 dimensions and shape(...) 2";
        QTest::newRow("tensormap of six dimensions")
            << "// @kerncast launch k grid(1) block(32) args(tensormap(y, shape(1, 1, 1, 1, 1, 1), box(1, 1, 1, 1, "
               "1, 1)))"
            << "a tensor map has 1 to 5 dimensions";
        QTest::newRow("tensormap swizzle") << "// @kerncast launch k grid(1) block(32) args(tensormap(y, shape(N), "
                                              "box(16), swizzle(256)))"
                                           << "swizzle(256) must be 0, 32, 64 or 128";
        QTest::newRow("tensormap unknown part") << "// @kerncast launch k grid(1) block(32) args(tensormap(y, "
                                                   "shape(N), box(16), stride(4)))"
                                                << "expected shape(...), box(...) or swizzle(...), found 'stride(4)'";
        QTest::newRow("target not an architecture") << "// @kerncast target hopper"
                                                    << "expected an architecture such as sm_90a, found 'hopper'";
        QTest::newRow("target empty") << "// @kerncast target"
                                      << "expected the architectures the code needs after 'target'";
        QTest::newRow("target twice") << "// @kerncast target sm_90a\n// @kerncast target sm_100a"
                                      << "target is given twice";
        QString launches;
        for (int i = 0; i < 65; ++i)
            launches += "// @kerncast launch k grid(1) block(32) args(y)\n";
        QTest::newRow("too many launches") << launches << "k.cu:65: expected at most 64 launch lines";
    }
    void syntaxErrors() {
        QFETCH(QString, plan);
        QFETCH(QString, expected);
        const std::string msg = errorOf([&] { program(plan.toStdString()); });
        QVERIFY2(msg.rfind("k.cu:", 0) == 0, msg.c_str());
        QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
    }

    void validationErrors_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown argument (fixture)")
            << "@unknown_arg.cu" << 1
            << "launch k: unknown argument 'z'; expected a buffer (x, y), scratch (none), scalar (a) or size (N)";
        QTest::newRow("kernel not in source (fixture)")
            << "@kernel_not_in_source.cu" << 1
            << "launch scale_v2: no __global__ function 'scale_v2' in the source (found: scale)";
        QTest::newRow("unknown name in grid")
            << "// @kerncast launch k grid(ceil_div(M, 256)) block(256) args(y, N)\nextern \"C\" __global__ void "
               "k(float* y, int n) {}"
            << 1 << "launch k grid: unknown name 'M' in 'ceil_div(M, 256)' (sizes and tunables: N)";
        QTest::newRow("tunable as argument") << "// @kerncast launch k grid(1) block(B) args(y, B)\n// @kerncast "
                                                "tunable B 32 64\nextern \"C\" __global__ void k(float* y, int n) {}"
                                             << 1 << "argument 'B' is a tunable";
        QTest::newRow("scratch named like a buffer") << "// @kerncast launch k grid(1) block(32) args(y)\n// @kerncast "
                                                        "scratch x f32 (N)\nextern \"C\" __global__ void k(float* y) {}"
                                                     << 2 << "scratch x: the name is already a buffer of problem saxpy";
        QTest::newRow("tunable named like a size") << "// @kerncast launch k grid(1) block(32) args(y)\n// @kerncast "
                                                      "tunable N 1 2\nextern \"C\" __global__ void k(float* y) {}"
                                                   << 2 << "tunable N: the name is already a size";
        QTest::newRow("where reads a size") << "// @kerncast launch k grid(1) block(B) args(y)\n// @kerncast tunable B "
                                               "32 64 where B < N\nextern \"C\" __global__ void k(float* y) {}"
                                            << 2 << "tunable B where: unknown name 'N' in 'B < N' (tunables: B)";
        QTest::newRow("scratch count reads an unknown name")
            << "// @kerncast launch k grid(1) block(32) args(y, t)\n// @kerncast scratch t f32 (K)\nextern \"C\" "
               "__global__ void k(float* y, float* t) {}"
            << 2 << "scratch t: unknown name 'K'";
        QTest::newRow("constant from an unknown buffer")
            << "// @kerncast launch k grid(1) block(32) args(y)\n// @kerncast constant w z\n__constant__ float w[8];\n"
               "extern \"C\" __global__ void k(float* y) {}"
            << 2 << "constant w: unknown buffer 'z'; expected one of x, y";
        QTest::newRow("constant from an output")
            << "// @kerncast launch k grid(1) block(32) args(y)\n// @kerncast constant w y\n__constant__ float w[8];\n"
               "extern \"C\" __global__ void k(float* y) {}"
            << 2 << "buffer y is an inout buffer; constant memory is read-only";
        QTest::newRow("constant without a variable")
            << "// @kerncast launch k grid(1) block(32) args(y)\n// @kerncast constant w x\n__device__ float w[8];\n"
               "extern \"C\" __global__ void k(float* y) {}"
            << 2 << "constant w: no __constant__ variable 'w' in the source (found: none)";
        QTest::newRow("tensormap of an unknown buffer")
            << "// @kerncast launch k grid(1) block(32) args(tensormap(w, shape(N), box(16)))\nextern \"C\" "
               "__global__ void k(float* y) {}"
            << 1 << "launch k: tensormap of w: unknown buffer; a tensor map is built over a buffer (x, y)";
        QTest::newRow("tensormap shape reads an unknown name")
            << "// @kerncast launch k grid(1) block(32) args(tensormap(x, shape(M), box(16)))\nextern \"C\" "
               "__global__ void k(float* y) {}"
            << 1 << "launch k: tensormap of x shape: unknown name 'M'";
        QTest::newRow("cluster reads an unknown name")
            << "// @kerncast launch k grid(2) block(32) cluster(C) args(y)\nextern \"C\" __global__ void k(float* y) "
               "{}"
            << 1 << "launch k cluster: unknown name 'C'";
        QTest::newRow("no launch") << "extern \"C\" __global__ void k(float* y) {}" << 0
                                   << "expected at least one '// @kerncast launch";
        QTest::newRow("host function is not a kernel")
            << "// @kerncast launch k grid(1) block(32) args(y)\n__device__ void k(float* y) {}\n"
            << 1 << "no __global__ function 'k'";
    }
    void validationErrors() {
        QFETCH(QString, source);
        QFETCH(int, line);
        QFETCH(QString, expected);
        std::string file = "k.cu";
        KernelProgram k;
        if (source.startsWith('@')) {
            file = kData + "/kernels/" + source.mid(1).toStdString();
            k = KernelProgram::load(file);
        } else {
            k = KernelProgram::parse(source.toStdString(), file);
        }
        const std::string msg = errorOf([&] { k.validate(saxpy()); });
        const std::string prefix = line > 0 ? file + ":" + std::to_string(line) + ": " : file + ": ";
        QVERIFY2(msg.rfind(prefix, 0) == 0, msg.c_str());
        QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
    }

    void constantLines() {
        const KernelProgram k =
            KernelProgram::parse("// @kerncast launch k grid(1) block(32) args(y, x)\n// @kerncast constant taps x\n"
                                 "__constant__ float taps[64] = {0};  // a comment naming __constant__ other\n"
                                 "extern \"C\" __global__ void k(float* y, const float* x) {}\n",
                                 "k.cu");
        QCOMPARE(k.constants.size(), size_t{1});
        QCOMPARE(k.constants[0].symbol, std::string("taps"));
        QCOMPARE(k.constants[0].buffer, std::string("x"));
        QCOMPARE(k.constants[0].line, 2);
        k.validate(saxpy());
        QVERIFY(errorOf([] {
                    program("// @kerncast constant w x\n// @kerncast constant w x");
                }).find("k.cu:2: constant w is filled twice (also on line 1)") != std::string::npos);
        QVERIFY(errorOf([] { program("// @kerncast constant w"); }).find("expected the buffer that fills constant w") !=
                std::string::npos);
        QVERIFY(errorOf([] { program("// @kerncast constant w x y"); }).find("expected the end of the line") !=
                std::string::npos);
    }

    void findsKernelsInRealisticDeclarations_data() {
        QTest::addColumn<QString>("declaration");
        QTest::newRow("extern C") << "extern \"C\" __global__ void k(float* y) {}";
        QTest::newRow("launch bounds") << "extern \"C\" __global__ void __launch_bounds__(256, 2) k(float* y) {}";
        QTest::newRow("C++ linkage on two lines") << "__global__\nvoid\nk (float* y) {}";
        QTest::newRow("template") << "template <int B>\n__global__ void k(float* y) {}";
        QTest::newRow("declaration then definition") << "extern \"C\" __global__ void k(float* y);";
    }
    void findsKernelsInRealisticDeclarations() {
        QFETCH(QString, declaration);
        const auto k = KernelProgram::parse(
            "// @kerncast launch k grid(1) block(32) args(y)\n" + declaration.toStdString(), "k.cu");
        k.validate(saxpy());
    }

    void multipleErrorsAreCollected() {
        const auto k = KernelProgram::parse("// @kerncast launch k grid(M) block(32) args(q, y)\n", "k.cu");
        const auto errors = k.validationErrors(saxpy());
        QCOMPARE(errors.size(), size_t{3});  // unknown M, unknown q, no __global__ k
    }

    void resolveEvaluatesThePlan() {
        const auto p = rowSumProblem();
        const auto k = KernelProgram::load(kData + "/kernels/two_launches.cu");
        const Bindings sizes{{"M", 3}, {"N", 1000}};
        const auto launches = k.resolve(p, sizes, {{"CHUNK", 256}});
        QCOMPARE(launches.size(), size_t{2});
        QCOMPARE(launches[0].kernel, std::string("partial_sums"));
        QCOMPARE(launches[0].grid, (std::array<uint32_t, 3>{4, 3, 1}));
        QCOMPARE(launches[0].block, (std::array<uint32_t, 3>{256, 1, 1}));
        QCOMPARE(launches[0].smem, uint32_t{1024});
        QCOMPARE(launches[0].line, 2);
        const auto& args = launches[0].args;
        QCOMPARE(args.size(), size_t{4});
        QCOMPARE(args[0].kind, ResolvedArg::Kind::Buffer);
        QCOMPARE(args[0].dtype, DType::F32);
        QCOMPARE(args[1].kind, ResolvedArg::Kind::Scratch);
        QCOMPARE(args[2].kind, ResolvedArg::Kind::Size);
        QCOMPARE(args[2].size_value, int64_t{3});
        QCOMPARE(args[3].size_value, int64_t{1000});
        QCOMPARE(launches[1].grid, (std::array<uint32_t, 3>{1, 1, 1}));
        QCOMPARE(launches[1].block, (std::array<uint32_t, 3>{128, 1, 1}));
        const auto scratch = k.resolveScratch(p, sizes, {{"CHUNK", 256}});
        QCOMPARE(scratch.size(), size_t{1});
        QCOMPARE(scratch[0].name, std::string("partial"));
        QCOMPARE(scratch[0].elements, int64_t{3 * 4});
        // Another configuration changes the grid, not the plan.
        QCOMPARE(k.resolve(p, sizes, {{"CHUNK", 1024}})[0].grid[0], uint32_t{1});
    }

    void resolveScalarArguments() {
        const auto p = rowSumProblem();
        const auto k = KernelProgram::parse("// @kerncast launch k grid(M) block(32) args(x, scale, y)\n", "k.cu");
        const auto launches = k.resolve(p, p.benchmark, {});
        QCOMPARE(launches[0].args[1].kind, ResolvedArg::Kind::Scalar);
        QCOMPARE(launches[0].args[1].dtype, DType::F64);
        QCOMPARE(launches[0].args[1].scalar_value, 0.25);
        QCOMPARE(launches[0].grid[0], uint32_t{4096});
    }

    void resolveErrors_data() {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<qint64>("n");
        QTest::addColumn<QString>("tunables");
        QTest::addColumn<QString>("expected");
        const QString t = "\n// @kerncast tunable B 256 512 1024";
        QTest::newRow("block over 1024 threads")
            << "// @kerncast launch k grid(1) block(B, 2) args(y, N)" + t << qint64(1000) << "B=1024"
            << "k.cu:1: block has 2048 threads: expected at most 1024";
        QTest::newRow("block.x over 1024")
            << "// @kerncast launch k grid(1) block(2 * B) args(y, N)" + t << qint64(1000) << "B=1024"
            << "block.x = 2048 from '2 * B': expected 1..1024";
        QTest::newRow("empty grid")
            << "// @kerncast launch k grid(ceil_div(N, B)) block(B) args(y, N)" + t << qint64(0) << "B=256"
            << "grid.x = 0 from 'ceil_div(N, B)': expected 1..2147483647 (launch k with B=256, N=0)";
        QTest::newRow("grid.y over 65535")
            << "// @kerncast launch k grid(1, N) block(32) args(y, N)" << qint64(70000) << ""
            << "grid.y = 70000";
        QTest::newRow("size argument over int32")
            << "// @kerncast launch k grid(1) block(32) args(y, N)" << qint64(1) << ""
            << "";
        QTest::newRow("negative smem") << "// @kerncast launch k grid(1) block(32) smem(B - 1024) args(y, N)" + t
                                       << qint64(1) << "B=256"
                                       << "smem = -768";
        QTest::newRow("unknown tunable") << "// @kerncast launch k grid(1) block(32) args(y, N)" << qint64(1) << "C=4"
                                         << "k.cu: unknown tunable 'C' (declared: none)";
        QTest::newRow("missing tunable") << "// @kerncast launch k grid(1) block(B) args(y, N)" + t << qint64(1) << ""
                                         << "k.cu:2: tunable B has no value";
        QTest::newRow("value not allowed")
            << "// @kerncast launch k grid(1) block(B) args(y, N)" + t << qint64(1) << "B=128"
            << "tunable B=128 is not one of its allowed values";
        QTest::newRow("where violated") << "// @kerncast launch k grid(1) block(B) args(y, N)" + t + " where B < 1024"
                                        << qint64(1) << "B=1024"
                                        << "violates a where condition";
    }
    void resolveErrors() {
        QFETCH(QString, plan);
        QFETCH(qint64, n);
        QFETCH(QString, tunables);
        QFETCH(QString, expected);
        const auto k = program(plan.toStdString());
        Bindings values;
        if (!tunables.isEmpty())
            values[tunables.section('=', 0, 0).toStdString()] = tunables.section('=', 1).toLongLong();
        Bindings sizes{{"N", n}};
        std::string want = expected.toStdString();
        if (want.empty()) {
            // A size is passed as a 32-bit int: one past INT32_MAX cannot be.
            sizes["N"] = int64_t{std::numeric_limits<int32_t>::max()} + 1;
            want = "size argument N = 2147483648 does not fit in a 32-bit int";
        }
        const std::string msg = errorOf([&] { k.resolve(saxpy(), sizes, values); });
        QVERIFY2(msg.find(want) != std::string::npos, msg.c_str());
    }

    void hopperLaunchFeatures() {
        const auto k = program("// @kerncast target sm_90a sm_100a\n"
                               "// @kerncast scratch t f16 (N * 64)\n"
                               "// @kerncast launch k grid(ceil_div(N, 64), 2) block(384) cluster(CM, 2) smem(S) "
                               "args(tensormap(y, shape(N), box(64), swizzle(0)), tensormap(t, shape(64, N), box(64, "
                               "B), swizzle(128)), N)\n"
                               "// @kerncast tunable CM 1 2\n// @kerncast tunable B 64 128\n"
                               "// @kerncast tunable S 1024 200000");
        QCOMPARE(k.targets, (std::vector<std::string>{"sm_90a", "sm_100a"}));
        QCOMPARE(k.compileArch("sm_90"), std::string("sm_90a"));
        QCOMPARE(k.compileArch("sm_100"), std::string("sm_100a"));
        const std::string other = errorOf([&] { k.compileArch("sm_80"); });
        QVERIFY2(other.find("k.cu:1: this program is written for sm_90a, sm_100a (its target line) and cannot run "
                            "on this device, sm_80") == 0,
                 other.c_str());
        QCOMPARE(program("// @kerncast launch k grid(1) block(32) args(y)").compileArch("sm_80"), std::string("sm_80"));
        QVERIFY(k.usesTensorMaps() && k.launches[0].hasCluster());
        QVERIFY(!program("// @kerncast launch k grid(2) block(32) cluster(1, 1) args(y)").launches[0].hasCluster());
        QVERIFY(!program("// @kerncast launch k grid(2) block(32) args(y)").launches[0].hasCluster());
        k.validate(saxpy());

        const auto launches = k.resolve(saxpy(), {{"N", 256}}, {{"CM", 2}, {"B", 128}, {"S", 200000}});
        QCOMPARE(launches[0].cluster, (std::array<uint32_t, 3>{2, 2, 1}));
        QCOMPARE(launches[0].smem, uint32_t{200000});
        const auto& args = launches[0].args;
        QCOMPARE(args.size(), size_t{3});
        QCOMPARE(args[0].kind, ResolvedArg::Kind::TensorMap);
        QCOMPARE(args[0].tensormap.buffer, std::string("y"));
        QVERIFY(!args[0].tensormap.scratch);
        QCOMPARE(args[0].tensormap.dtype, DType::F32);
        QCOMPARE(args[0].tensormap.shape, (std::vector<uint64_t>{256}));
        QCOMPARE(args[1].tensormap.buffer, std::string("t"));
        QVERIFY(args[1].tensormap.scratch);
        QCOMPARE(args[1].tensormap.dtype, DType::F16);
        QCOMPARE(args[1].tensormap.shape, (std::vector<uint64_t>{64, 256}));
        QCOMPARE(args[1].tensormap.box, (std::vector<uint32_t>{64, 128}));
        QCOMPARE(args[1].tensormap.swizzle, 128);
        QCOMPARE(args[2].kind, ResolvedArg::Kind::Size);
    }

    // A launch with when(...) is part of the plan only where its condition holds: a program can take a direct path
    // at aligned sizes and a padding one elsewhere.
    void whenChoosesLaunches() {
        const auto k = program("// @kerncast launch k grid(1) block(32) when(N % 8 != 0 || PAD) args(y)\n"
                               "// @kerncast launch k grid(ceil_div(N, B)) block(B) when(N % 8 == 0) args(y, N)\n"
                               "// @kerncast tunable B 32 64\n// @kerncast tunable PAD 0 1");
        k.validate(saxpy());
        QCOMPARE(k.resolve(saxpy(), {{"N", 1000}}, {{"B", 32}, {"PAD", 0}}).size(), size_t{1});
        QCOMPARE(k.resolve(saxpy(), {{"N", 1000}}, {{"B", 32}, {"PAD", 0}})[0].line, 2);
        QCOMPARE(k.resolve(saxpy(), {{"N", 1001}}, {{"B", 32}, {"PAD", 0}})[0].line, 1);
        QCOMPARE(k.resolve(saxpy(), {{"N", 1000}}, {{"B", 32}, {"PAD", 1}}).size(), size_t{2});
        const auto none = program("// @kerncast launch k grid(1) block(32) when(N > 5000) args(y)");
        const std::string msg = errorOf([&] { none.resolve(saxpy(), {{"N", 1000}}, {}); });
        QVERIFY2(msg.find("k.cu:1: no launch's when(...) holds with N=1000: the plan launches nothing") == 0,
                 msg.c_str());
        const std::string unknown =
            errorOf([&] { program("// @kerncast launch k grid(1) block(32) when(M > 1) args(y)").validate(saxpy()); });
        QVERIFY2(unknown.find("launch k when: unknown name 'M'") != std::string::npos, unknown.c_str());
        // A launch whose condition fails is not evaluated: its tensor map may be one these sizes cannot have.
        const auto direct = program("// @kerncast launch k grid(1) block(32) when(N % 4 == 0) args(tensormap(y, "
                                    "shape(N / 2, 2), box(4, 1)))\n"
                                    "// @kerncast launch k grid(1) block(32) when(N % 4 != 0) args(y)");
        QCOMPARE(direct.resolve(saxpy(), {{"N", 1002}}, {})[0].args[0].kind, ResolvedArg::Kind::Buffer);
        QCOMPARE(direct.resolve(saxpy(), {{"N", 1000}}, {})[0].args[0].kind, ResolvedArg::Kind::TensorMap);
    }

    // The cheapest ways past the inside-the-buffer check: a scratch buffer declared smaller than its map, and a shape
    // whose element count wraps around 64 bits.
    void tensorMapsStayInsideTheirBuffers() {
        const auto small = program("// @kerncast scratch t f32 (N / 2)\n"
                                   "// @kerncast launch k grid(1) block(32) args(tensormap(t, shape(N), box(16)))");
        const std::string msg = errorOf([&] { small.resolve(saxpy(), {{"N", 1024}}, {}); });
        QVERIFY2(msg.find("k.cu:2: tensormap of t: the shape covers 1024 elements but t has 512") == 0, msg.c_str());
        const std::string wrap = errorOf([&] {
            program("// @kerncast launch k grid(1) block(32) args(tensormap(y, shape(4294967296, 4294967296), "
                    "box(16, 1)))")
                .resolve(saxpy(), {{"N", 1024}}, {});
        });
        QVERIFY2(wrap.find("tensormap of y: the shape's element count overflows 64 bits") != std::string::npos,
                 wrap.c_str());
    }

    void hopperResolveErrors_data() {
        QTest::addColumn<QString>("args");
        QTest::addColumn<QString>("cluster");
        QTest::addColumn<QString>("expected");
        QTest::newRow("grid not whole clusters") << "y"
                                                 << "3"
                                                 << "grid.x = 16 is not a multiple of cluster.x = 3";
        QTest::newRow("cluster over 16 blocks") << "y"
                                                << "4, 32"
                                                << "cluster.y = 32 from '32': expected 1..16";
        QTest::newRow("cluster of 32") << "y"
                                       << "4, 4, 2"
                                       << "a cluster of 32 blocks: expected at most 16";
        QTest::newRow("map larger than its buffer") << "tensormap(y, shape(N, 2), box(16, 1))"
                                                    << "1"
                                                    << "the shape covers 2048 elements but y has 1024";
        QTest::newRow("stride not 16 bytes") << "tensormap(y, shape(3, 8), box(4, 8))"
                                             << "1"
                                             << "dimension 1 has a stride of 12 bytes";
        QTest::newRow("box over 256") << "tensormap(y, shape(N), box(512))"
                                      << "1"
                                      << "box[0] = 512";
        QTest::newRow("box row not 16 bytes") << "tensormap(y, shape(N), box(6))"
                                              << "1"
                                              << "box[0] = 6 elements is 24 bytes";
        QTest::newRow("box row wider than its swizzle") << "tensormap(y, shape(N), box(64), swizzle(128))"
                                                        << "1"
                                                        << "box[0] is 256 bytes, more than its swizzle of 128";
        QTest::newRow("empty shape") << "tensormap(y, shape(N - 1024), box(4))"
                                     << "1"
                                     << "shape[0] = 0";
    }
    void hopperResolveErrors() {
        QFETCH(QString, args);
        QFETCH(QString, cluster);
        QFETCH(QString, expected);
        const auto k = program("// @kerncast launch k grid(16, 16, 2) block(32) cluster(" + cluster.toStdString() +
                               ") args(" + args.toStdString() + ")");
        const std::string msg = errorOf([&] { k.resolve(saxpy(), {{"N", 1024}}, {}); });
        QVERIFY2(msg.rfind("k.cu:1: ", 0) == 0, msg.c_str());
        QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
    }

    void resolveScratchRejectsEmptyBuffers() {
        const auto k =
            program("// @kerncast launch k grid(1) block(32) args(y, t)\n// @kerncast scratch t f32 (N - 1000)");
        QCOMPARE(k.resolveScratch(saxpy(), {{"N", 1001}}, {})[0].elements, int64_t{1});
        const std::string msg = errorOf([&] { k.resolveScratch(saxpy(), {{"N", 1000}}, {}); });
        QVERIFY2(msg.find("k.cu:2: scratch t has 0 elements") == 0, msg.c_str());
    }
};

QTEST_GUILESS_MAIN(TestKernelProgram)
#include "tst_kernel_program.moc"
