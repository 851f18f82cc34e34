// kerncast-cli problems validate|list|fingerprint on problem folders made for each case: the compile check reaches
// every family configuration (or every value of every tunable), a family too large to enumerate is a clear error
// rather than an hour of work, and the fingerprint is the one the replay fixture was stamped with.
#include "tests/support/cli_runner.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using kerncast::test::run_cli;

namespace {

const std::string kFixture = KERNCAST_TEST_DATA "/problems/saxpy_fixture";

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A copy of the saxpy fixture (problem.json and reference) with the given family.cu, in dir/name.
std::string problemWithFamily(const QTemporaryDir& dir, const std::string& name, const std::string& family) {
    const std::string folder = dir.filePath(QString::fromStdString(name)).toStdString();
    QDir().mkpath(QString::fromStdString(folder));
    std::ofstream(folder + "/problem.json") << read(kFixture + "/problem.json");
    std::ofstream(folder + "/reference.cu") << read(kFixture + "/reference.cu");
    std::ofstream(folder + "/family.cu") << family;
    return folder;
}

// A saxpy family with the given tunable lines and a static_assert that fails where `bad` holds.
std::string family(const std::string& tunables, const std::string& bad) {
    return "// @kerncast launch saxpy_family grid(ceil_div(N, BLOCK * ITEMS)) block(BLOCK) args(x, y, a, N)\n" +
           tunables +
           "#ifndef UNROLL\n#define UNROLL 1\n#endif\n"
           "static_assert(UNROLL >= 1 && !(" +
           bad +
           "), \"this corner does not compile\");\n"
           "extern \"C\" __global__ void saxpy_family(const float* x, float* y, float a, int n) {\n"
           "    const int base = blockIdx.x * BLOCK * ITEMS + threadIdx.x;\n"
           "    for (int k = 0; k < ITEMS; ++k) {\n"
           "        const int i = base + k * BLOCK;\n"
           "        if (i < n) y[i] = a * x[i] + y[i];\n"
           "    }\n"
           "}\n";
}

}  // namespace

class TestCmdProblems : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A static_assert that fails for one configuration only: with at most 64 configurations every one is compiled,
    // with more a sample in which every value of every tunable appears.
    void validateCompilesBeyondTheFirstConfiguration_data() {
        QTest::addColumn<QString>("tunables");
        QTest::addColumn<QString>("bad");
        QTest::newRow("the last of 17 configurations")
            << "// @kerncast tunable BLOCK 64 128 256 512 1024\n"
               "// @kerncast tunable ITEMS 1 2 4 8 where BLOCK * ITEMS <= 2048\n"
            << "BLOCK == 1024 && ITEMS == 2";
        QTest::newRow("one value among 100 configurations") << "// @kerncast tunable BLOCK 64 128 256 512 1024\n"
                                                               "// @kerncast tunable ITEMS 1 2 4 8\n"
                                                               "// @kerncast tunable UNROLL 1 2 3 4 5\n"
                                                            << "UNROLL == 5";
    }
    void validateCompilesBeyondTheFirstConfiguration() {
        QFETCH(QString, tunables);
        QFETCH(QString, bad);
        QTemporaryDir dir;
        const std::string folder = problemWithFamily(dir, "corner", family(tunables.toStdString(), bad.toStdString()));
        const auto r = run_cli({"--json", "problems", "validate", folder});
        QCOMPARE(r.code, 1);
        const auto j = nlohmann::json::parse(r.out);
        const auto& errors = j["problems"][0]["errors"];
        QCOMPARE(errors.size(), size_t{1});  // said once, not once per failing configuration
        const std::string message = errors[0]["message"].get<std::string>();
        QVERIFY2(message.find("this corner does not compile") != std::string::npos, message.c_str());
        QCOMPARE(errors[0]["file"].get<std::string>(), folder + "/family.cu");

        // The same family without the bad corner passes.
        const std::string good = problemWithFamily(dir, "good", family(tunables.toStdString(), "false"));
        const auto ok = run_cli({"problems", "validate", good});
        QVERIFY2(ok.code == 0, (ok.out + ok.err).c_str());
    }

    // 10^7 combinations and no condition that prunes early: `list` and `validate` answer at once with the file,
    // the line and what to change.
    // validate reports every error of a folder in one pass: a broken problem.json, a launch line and the compile
    // errors of the other programs, not only the first kind found.
    void validateReportsEveryErrorOfAFolder() {
        QTemporaryDir dir;
        const std::string folder = dir.filePath(QStringLiteral("many_errors")).toStdString();
        std::filesystem::copy(kFixture, folder, std::filesystem::copy_options::recursive);
        // A compile error in the family and one in a seed, beside a tolerance that is not a number.
        std::string json = read(folder + "/problem.json");
        const auto rtol = json.find("\"rtol\"");
        QVERIFY(rtol != std::string::npos);
        json.replace(json.find(':', rtol) + 1, 0, " \"x\", \"rtol_was\":");
        std::ofstream(folder + "/problem.json") << json;
        std::string seed = read(folder + "/seeds/grid_stride.cu");
        seed += "\nstatic_assert(false, \"the seed's own mistake\");\n";
        std::ofstream(folder + "/seeds/grid_stride.cu") << seed;
        std::string fam = read(folder + "/family.cu");
        fam += "\nstatic_assert(false, \"the family's own mistake\");\n";
        std::ofstream(folder + "/family.cu") << fam;
        const auto r = run_cli({"problems", "validate", folder});
        QCOMPARE(r.code, 1);
        for (const char* part :
             {"rtol", "grid_stride.cu", "the seed's own mistake", "family.cu", "the family's own mistake"})
            QVERIFY2(r.out.find(part) != std::string::npos, (std::string(part) + " missing in:\n" + r.out).c_str());
    }

    void hugeFamilyIsAClearError() {
        QTemporaryDir dir;
        std::string tunables;
        for (const char* name : {"BLOCK", "ITEMS", "C", "D", "E", "F", "G"})
            tunables += std::string("// @kerncast tunable ") + name + " 1 2 3 4 5 6 7 8 9 10" +
                        (std::string(name) == "G" ? " where BLOCK + ITEMS + C + D + E + F + G < 0" : "") + "\n";
        const std::string folder = problemWithFamily(dir, "huge", family(tunables, "false"));
        const auto v = run_cli({"problems", "validate", folder});
        QCOMPARE(v.code, 1);
        QVERIFY2(v.out.find(folder + "/family.cu:2: enumerating the family's configurations takes more than") !=
                     std::string::npos,
                 v.out.c_str());
        const auto l = run_cli({"problems", "list", "--root", dir.path().toStdString()});
        QCOMPARE(l.code, 1);
        QVERIFY2(l.out.find("invalid: " + folder + "/family.cu:2: enumerating") != std::string::npos, l.out.c_str());
    }

    // The fingerprint the replay fixture's header holds is the one of its problem folder.
    void fingerprintMatchesTheStampedRecording() {
        const auto r = run_cli({"--json", "problems", "fingerprint", KERNCAST_TEST_DATA "/problems/replay_saxpy"});
        QCOMPARE(r.code, 0);
        const std::string fingerprint = nlohmann::json::parse(r.out)["problems"][0]["problem_fingerprint"];
        const std::string recording = read(KERNCAST_TEST_DATA "/recordings/test-h100/replay_saxpy.jsonl");
        const auto header = nlohmann::json::parse(recording.substr(0, recording.find('\n')));
        QCOMPARE(header["problem_fingerprint"].get<std::string>(), fingerprint);
        QCOMPARE(run_cli({"problems", "fingerprint", "/no/such/problem"}).code, 1);
    }
};

QTEST_GUILESS_MAIN(TestCmdProblems)
#include "tst_cmd_problems.moc"
