#include "core/error.h"
#include "core/problem_library.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

using namespace kerncast;
namespace fs = std::filesystem;

namespace {

const std::string kData = KERNCAST_TEST_DATA;
const std::string kSaxpy = kData + "/problems/saxpy_fixture";

void writeFile(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

std::string joined(const std::vector<Error>& errors) {
    std::string out;
    for (const auto& e : errors)
        out += std::string(e.what()) + "\n";
    return out;
}

// A copy of the valid fixture that a test may break.
fs::path copyOfSaxpy(const QTemporaryDir& tmp) {
    const fs::path dir = fs::path(tmp.path().toStdString()) / "saxpy";
    fs::copy(kSaxpy, dir, fs::copy_options::recursive);
    return dir;
}

}  // namespace

class TestProblemLibrary : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void loadsAWholeFolder() {
        const auto b = load_problem_folder(kSaxpy);
        QCOMPARE(b.problem.name, std::string("saxpy"));
        QCOMPARE(b.reference.kernelNames(), (std::vector<std::string>{"saxpy"}));
        QCOMPARE(b.seeds.size(), size_t{2});
        QCOMPARE(fs::path(b.seeds[0].file).filename().string(), std::string("grid_stride.cu"));  // sorted by name
        QCOMPARE(fs::path(b.seeds[1].file).filename().string(), std::string("vec4.cu"));
        QVERIFY(b.family.has_value());
        QCOMPARE(b.family->configurations().size(), size_t{17});
    }

    void validFolderHasNoErrors() {
        const auto errors = validate_problem_folder(kSaxpy);
        QVERIFY2(errors.empty(), joined(errors).c_str());
    }

    void listsProblemFoldersSorted() {
        QTemporaryDir tmp;
        const fs::path root = tmp.path().toStdString();
        writeFile(root / "zeta" / "problem.json", "{}");
        writeFile(root / "alpha" / "problem.json", "{}");
        fs::create_directories(root / "notes");  // no problem.json: not a problem
        writeFile(root / "readme.txt", "problems live in sub-folders");
        const auto folders = list_problem_folders(root.string());
        QCOMPARE(folders, (std::vector<std::string>{(root / "alpha").string(), (root / "zeta").string()}));
        QVERIFY_THROWS_EXCEPTION(Error, list_problem_folders((root / "missing").string()));
        const auto fixtures = list_problem_folders(kData + "/problems");
        QVERIFY(std::find(fixtures.begin(), fixtures.end(), kSaxpy) != fixtures.end());
    }

    void invalidFixtureFolders_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("expected");
        QTest::newRow("bad dtype") << "bad_dtype"
                                   << "problem.json:7: buffers[1].dtype";
        QTest::newRow("missing reference") << "missing_reference"
                                           << "problem.json: reference kernel program 'ref.cu' not found";
        QTest::newRow("family without configurations")
            << "family_without_configurations"
            << "family.cu:2: no combination of tunable values satisfies every where condition";
        QTest::newRow("one correctness case") << "one_correctness_case"
                                              << "expected at least 2 correctness cases";
        QTest::newRow("not a folder") << "no_such_folder"
                                      << "no_such_folder: no such problem folder";
    }
    void invalidFixtureFolders() {
        QFETCH(QString, folder);
        QFETCH(QString, expected);
        const auto errors = validate_problem_folder(kData + "/problems/" + folder.toStdString());
        QVERIFY(!errors.empty());
        QVERIFY2(joined(errors).find(expected.toStdString()) != std::string::npos, joined(errors).c_str());
        QVERIFY_THROWS_EXCEPTION(Error, load_problem_folder(kData + "/problems/" + folder.toStdString()));
    }

    void collectsErrorsFromEveryFile() {
        QTemporaryDir tmp;
        const fs::path dir = copyOfSaxpy(tmp);
        writeFile(dir / "seeds" / "broken.cu", "// @kerncast launch saxpy grid(N +) block(256) args(x, y, a, N)\n");
        writeFile(dir / "family.cu",
                  "// @kerncast launch saxpy grid(1) block(B) args(x, y, w, N)\n// @kerncast tunable B 32\n"
                  "extern \"C\" __global__ void saxpy() {}\n");
        const auto errors = validate_problem_folder(dir.string());
        QCOMPARE(errors.size(), size_t{2});
        const std::string all = joined(errors);
        QVERIFY2(all.find("broken.cu:1: expected a number, a name or '('") != std::string::npos, all.c_str());
        QVERIFY2(all.find("family.cu:1: launch saxpy: unknown argument 'w'") != std::string::npos, all.c_str());
    }

    void kernelErrorsReportedEvenWhenProblemJsonIsBroken() {
        QTemporaryDir tmp;
        const fs::path dir = copyOfSaxpy(tmp);
        writeFile(dir / "problem.json", "{ \"name\": ");
        writeFile(dir / "seeds" / "broken.cu", "// @kerncast lanch saxpy\n");
        const std::string all = joined(validate_problem_folder(dir.string()));
        QVERIFY2(all.find("problem.json:1: invalid JSON") != std::string::npos, all.c_str());
        QVERIFY2(all.find("broken.cu:1: unknown directive 'lanch'") != std::string::npos, all.c_str());
    }

    void launchPlanMustResolveForEveryCase() {
        QTemporaryDir tmp;
        const fs::path dir = copyOfSaxpy(tmp);
        // Fine for the small correctness cases, 2^26 / 32 blocks in grid.y is not.
        writeFile(dir / "seeds" / "too_tall.cu",
                  "// @kerncast launch saxpy grid(1, ceil_div(N, 32)) block(32) args(x, y, a, N)\n"
                  "extern \"C\" __global__ void saxpy(const float* x, float* y, float a, int n) {}\n");
        const std::string all = joined(validate_problem_folder(dir.string()));
        QVERIFY2(all.find("too_tall.cu:1: grid.y = 2097152") != std::string::npos, all.c_str());
    }

    void referenceMustHaveNoTunables() {
        QTemporaryDir tmp;
        const fs::path dir = copyOfSaxpy(tmp);
        fs::copy_file(dir / "family.cu", dir / "reference.cu", fs::copy_options::overwrite_existing);
        const std::string all = joined(validate_problem_folder(dir.string()));
        QVERIFY2(all.find("reference.cu:3: the reference must have no tunables") != std::string::npos, all.c_str());
    }

    // Every problem shipped in resources/ stays valid.
    void shippedProblemsAreValid_data() {
        QTest::addColumn<QString>("folder");
        const std::string root = std::string(KERNCAST_SOURCE_DIR) + "/resources/problems";
        if (!fs::is_directory(root))
            return;
        for (const auto& f : list_problem_folders(root))
            QTest::newRow(fs::path(f).filename().string().c_str()) << QString::fromStdString(f);
    }
    void shippedProblemsAreValid() {
        QFETCH(QString, folder);
        const auto errors = validate_problem_folder(folder.toStdString());
        QVERIFY2(errors.empty(), joined(errors).c_str());
    }

    // The shipped library keeps one problem for each operator family of KernelBench's level 1 that it is meant to
    // cover, and every shipped problem names the PyTorch eager call that its recordings are compared with.
    void shippedLibraryCoversKernelBenchFamilies() {
        const std::string root = std::string(KERNCAST_SOURCE_DIR) + "/resources/problems";
        std::set<std::string> named;
        for (const auto& f : list_problem_folders(root)) {
            const Problem p = Problem::load(f);
            QVERIFY2(!p.pytorch.empty(), (p.name + " names no PyTorch eager call").c_str());
            const auto json = nlohmann::json::parse(p.json_text);
            if (json.contains("kernelbench")) {
                const std::string kb = json["kernelbench"].get<std::string>();
                QVERIFY2(named.insert(kb).second, (kb + " is named twice").c_str());
            }
        }
        const char* families[] = {
            "level1/63_conv_standard_2D__square_input__square_kernel.py",  // 2-D convolution
            "level1/82_conv_depthwise_2D_square_input_square_kernel.py",   // depthwise convolution
            "level1/42_Max_Pooling_2D.py",
            "level1/45_Average_Pooling_2D.py",
            "level1/40_LayerNorm.py",
            "level1/33_BatchNorm.py",
            "level1/35_GroupNorm_.py",
            "level1/24_LogSoftmax.py",
            "level1/51_Argmax_over_a_dimension.py",
            "level1/48_Mean_reduction_over_a_dimension.py",
            "level1/53_Min_reduction_over_a_dimension.py",
            "level1/3_Batched_matrix_multiplication.py",
            "level1/17_Matmul_with_transposed_B.py",
            "level1/12_Matmul_with_diagonal_matrices_.py",
            "level1/91_cumsum_reverse.py",
            "level1/94_MSELoss.py",
            "level1/96_HuberLoss.py",
            "level1/98_KLDivLoss.py",
            "level1/25_Swish.py",
            "level1/29_Softplus.py",
        };
        for (const char* f : families)
            QVERIFY2(named.count(f), (std::string("no shipped problem names ") + f).c_str());
        QVERIFY(list_problem_folders(root).size() >= 33);
    }
};

QTEST_GUILESS_MAIN(TestProblemLibrary)
#include "tst_problem_library.moc"
