#include "core/error.h"
#include "core/kernel_program.h"
#include "core/problem.h"
#include "core/t1_problem.h"

#include "tests/support/error_of.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>

#include <QFileInfo>

using namespace kerncast;
using kerncast::test::errorOf;

namespace {

const std::string kBlur = KERNCAST_TEST_DATA "/t1/blur/blur.json";

// A copy of the blur fixture whose T1 JSON is edited by `edit`, in a temporary folder.
std::string editedBlur(const QTemporaryDir& dir, const std::function<void(nlohmann::json&)>& edit) {
    namespace fs = std::filesystem;
    const fs::path folder = dir.path().toStdString();
    for (const char* f : {"blur.cu", "blur_params.h"})
        fs::copy_file(fs::path(KERNCAST_TEST_DATA "/t1/blur") / f, folder / f, fs::copy_options::overwrite_existing);
    nlohmann::json t1 = nlohmann::json::parse(std::ifstream(kBlur));
    edit(t1);
    const std::string path = (folder / "edited.json").string();
    std::ofstream(path) << t1.dump(2);
    return path;
}

}  // namespace

class TestT1Problem : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void valuesLikeKernelTunerEvaluatesThem_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QList<qint64>>("expected");
        QTest::newRow("list") << "[16, 32, 48]" << QList<qint64>{16, 32, 48};
        QTest::newRow("range") << "range(3)" << QList<qint64>{0, 1, 2};
        QTest::newRow("list of a range with a step") << "list(range(32, 129, 32))" << QList<qint64>{32, 64, 96, 128};
        QTest::newRow("joined") << "[1, 2, 4, 8, 16] + list(range(32, 97, 32))"
                                << QList<qint64>{1, 2, 4, 8, 16, 32, 64, 96};
        QTest::newRow("comprehension with a power")
            << "[2**i for i in range(0, 6)]" << QList<qint64>{1, 2, 4, 8, 16, 32};
        QTest::newRow("comprehension over a list with if")
            << "[i * 3 for i in [1, 2, 3, 4] if i % 2 == 0]" << QList<qint64>{6, 12};
        QTest::newRow("negative step") << "range(10, 0, -4)" << QList<qint64>{10, 6, 2};
        QTest::newRow("single value") << "[0]" << QList<qint64>{0};
    }
    void valuesLikeKernelTunerEvaluatesThem() {
        QFETCH(QString, text);
        QFETCH(QList<qint64>, expected);
        const auto got = t1_values(text.toStdString());
        QCOMPARE(QList<qint64>(got.begin(), got.end()), expected);
    }

    void valuesThatAreNotIntegerListsAreRefused_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("float") << "[0.5, 1]"
                               << "'0.5' is not an integer";
        QTest::newRow("string") << "['a', 'b']"
                                << "is not an integer";
        QTest::newRow("call") << "sorted([2, 1])"
                              << "is not a list";
        QTest::newRow("zero step") << "range(0, 4, 0)"
                                   << "step of 0";
        QTest::newRow("unclosed") << "[1, 2"
                                  << "expected a closing bracket";
    }
    void valuesThatAreNotIntegerListsAreRefused() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const std::string msg = errorOf([&] { t1_values(text.toStdString(), {"t1.json", 0}); });
        QVERIFY2(msg.rfind("t1.json: ", 0) == 0, msg.c_str());
        QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
    }

    // The blur fixture: tunables from comprehensions, Python conditions (or, chained, in, not), a grid from GridDivX,
    // a header to inline, a plain C++ kernel, a constant-memory argument, Random and Constant fills, a scalar.
    void importsAProblemFolderThatLoads() {
        const T1Problem t1 = import_t1(kBlur);
        QCOMPARE(t1.name, std::string("blur_t1"));
        // 4 x 4 x 2 combinations; 22 satisfy the three conditions (counted by hand in the fixture's terms).
        QCOMPARE(t1.configurations, size_t{22});
        const Problem problem = Problem::parse(t1.problem_json, "problem.json");
        QCOMPARE(problem.benchmark, (Bindings{{"problem_size_x", 10000}}));
        QCOMPARE(problem.correctness.size(), size_t{2});
        QCOMPARE(problem.buffers.size(), size_t{3});
        QCOMPARE(int(problem.buffers[0].role), int(Role::Out));
        QCOMPARE(int(problem.buffers[1].role), int(Role::In));
        QCOMPARE(problem.buffers[1].init.dist, std::string("normal"));             // Kernel Tuner's numpy.random.randn
        QCOMPARE(problem.buffers[1].elements(problem.benchmark), int64_t{10007});  // max(block_size_x) // 16 - 1
        QCOMPARE(problem.buffers[2].init.dist, std::string("uniform"));            // a constant fill, spread
        QCOMPARE(problem.buffers[2].init.lo, -0.75);
        QCOMPARE(problem.buffers[2].init.hi, 1.25);
        QCOMPARE(problem.scalars.size(), size_t{1});
        QCOMPARE(problem.scalars[0].value, 0.5);

        const KernelProgram family = KernelProgram::parse(t1.family, "family.cu");
        family.validate(problem);
        QCOMPARE(family.tunables.size(), size_t{3});
        QCOMPARE(family.constants.size(), size_t{1});
        QCOMPARE(family.constants[0].symbol, std::string("weights"));
        QVERIFY(!family.isValid({{"block_size_x", 96}, {"tile", 8}, {"use_ldg", 0}}));   // not (...)
        QVERIFY(!family.isValid({{"block_size_x", 128}, {"tile", 8}, {"use_ldg", 0}}));  // chained <= 512
        QVERIFY(!family.isValid({{"block_size_x", 32}, {"tile", 1}, {"use_ldg", 1}}));   // use_ldg == 0 or tile in
        QVERIFY(family.isValid({{"block_size_x", 32}, {"tile", 4}, {"use_ldg", 1}}));
        // Kernel Tuner's grid: ceil(ProblemSize / (block_size_x * tile)); GlobalSize (a different number) is unused.
        const auto launches =
            family.resolve(problem, problem.benchmark, {{"block_size_x", 64}, {"tile", 2}, {"use_ldg", 0}});
        QCOMPARE(launches.size(), size_t{1});
        QCOMPARE(launches[0].grid[0], uint32_t{79});
        QCOMPARE(launches[0].block[0], uint32_t{64});
        QCOMPARE(launches[0].args.size(), size_t{4});
        // The header is inlined and the kernel gets C linkage without its definition being touched.
        QVERIFY(t1.family.find("#define TAPS 8") != std::string::npos);
        QVERIFY(t1.family.find("extern \"C\" __global__ void blur_kernel(float* out,") != std::string::npos);
        QVERIFY(t1.family.find("__global__ void blur_kernel(float* out, const float* in") != std::string::npos);
        bool mentionsGlobalSize = false;
        for (const auto& n : t1.notes)
            mentionsGlobalSize |= n.find("GlobalSize is not used") != std::string::npos;
        QVERIFY(mentionsGlobalSize);
    }

    // The default (32, 1, 1) breaks `use_ldg == 0 or tile in [2, 4]`: the nearest valid configuration, first in
    // enumeration order among those one change away, is the reference, and a note says what changed.
    void anInvalidDefaultTakesTheNearestValidConfiguration() {
        const T1Problem t1 = import_t1(kBlur);
        QCOMPARE(t1.reference_configuration, (Bindings{{"block_size_x", 32}, {"tile", 1}, {"use_ldg", 0}}));
        const Problem problem = Problem::parse(t1.problem_json, "problem.json");
        QCOMPARE(problem.reference_configuration, t1.reference_configuration);
        bool noted = false;
        for (const auto& n : t1.notes)
            noted |= n.find("use_ldg 1 -> 0") != std::string::npos;
        QVERIFY(noted);
        // The reference program is the family at that configuration: values defined, launch filled in.
        const KernelProgram reference = KernelProgram::parse(t1.reference, "reference.cu");
        QVERIFY(reference.tunables.empty());
        QCOMPARE(reference.constants.size(), size_t{1});
        QVERIFY(t1.reference.find("#define use_ldg 0") != std::string::npos);
        QCOMPARE(reference.resolve(problem, problem.benchmark, {})[0].grid[0], uint32_t{313});  // ceil(10000 / 32)

        T1ImportOptions chosen;
        chosen.reference_config = {{"tile", 2}, {"use_ldg", 1}};
        QCOMPARE(import_t1(kBlur, chosen).reference_configuration,
                 (Bindings{{"block_size_x", 32}, {"tile", 2}, {"use_ldg", 1}}));
        chosen.reference_config = {{"tile", 8}, {"block_size_x", 128}};
        QVERIFY(errorOf([&] { import_t1(kBlur, chosen); }).find("not valid for the family") != std::string::npos);
    }

    void writesAFolder() {
        QTemporaryDir dir;
        const T1Problem t1 = import_t1(kBlur);
        const std::string folder = dir.path().toStdString() + "/blur";
        write_t1_problem(t1, folder);
        for (const char* f : {"problem.json", "family.cu", "reference.cu"})
            QVERIFY2(std::filesystem::exists(folder + "/" + f), f);
        QCOMPARE(Problem::load(folder + "/problem.json").name, std::string("blur_t1"));
    }

    void refusesWhatItCannotImport_data() {
        QTest::addColumn<QString>("what");
        QTest::addColumn<QString>("expected");
        QTest::newRow("OpenCL") << "opencl"
                                << "the kernel is OpenCL";
        QTest::newRow("float tunable") << "float"
                                       << "Kerncast tunables are integers";
        QTest::newRow("condition on a non-tunable") << "unknown name"
                                                    << "reads 'warps', which is not a tunable";
        QTest::newRow("size from one configuration") << "size"
                                                     << "not one configuration's value";
        QTest::newRow("no output") << "no output"
                                   << "no output";
        QTest::newRow("no valid configuration") << "empty"
                                                << "no configuration satisfies every condition";
        QTest::newRow("HIP source") << "hip"
                                    << "the kernel is HIP source";
        QTest::newRow("int vector") << "int vector"
                                    << "supports float vectors only";
    }
    void refusesWhatItCannotImport() {
        QFETCH(QString, what);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const std::string path = editedBlur(dir, [&](nlohmann::json& t1) {
            auto& k = t1["KernelSpecification"];
            auto& space = t1["ConfigurationSpace"];
            if (what == "opencl")
                k["Language"] = "OpenCL";
            else if (what == "float")
                space["TuningParameters"][0]["Type"] = "float";
            else if (what == "unknown name")
                space["Conditions"].push_back({{"Expression", "warps > 1"}});
            else if (what == "size")
                k["Arguments"][1]["Size"] = "ProblemSize[0] + block_size_x";
            else if (what == "no output")
                k["Arguments"][0]["AccessType"] = "ReadOnly";
            else if (what == "empty")
                space["Conditions"].push_back({{"Expression", "block_size_x > 1000"}});
            else if (what == "hip")
                k["KernelFile"] = "hip.cu";
            else if (what == "int vector")
                k["Arguments"][1]["Type"] = "int";
        });
        if (what == "hip")
            std::ofstream(QFileInfo(QString::fromStdString(path)).absolutePath().toStdString() + "/hip.cu")
                << "#include \"hip/hip_runtime.h\"\n__global__ void blur_kernel(float* out) {}\n";
        const std::string msg = errorOf([&] { import_t1(path); });
        QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
    }

    // A "MemType": "Constant" argument whose kernel declares no such __constant__ variable stays a pointer argument,
    // and the import says so.
    void aConstantArgumentWithoutASymbolIsAPointerOnly() {
        QTemporaryDir dir;
        const std::string path =
            editedBlur(dir, [](nlohmann::json& t1) { t1["KernelSpecification"]["Arguments"][2]["Name"] = "taps"; });
        const T1Problem t1 = import_t1(path);
        QVERIFY(KernelProgram::parse(t1.family, "family.cu").constants.empty());
        bool noted = false;
        for (const auto& n : t1.notes)
            noted |= n.find("declares no __constant__ taps") != std::string::npos;
        QVERIFY(noted);
    }
};

QTEST_GUILESS_MAIN(TestT1Problem)
#include "tst_t1_problem.moc"
