// Candidates' identity: two programs that differ only in comments or spacing are the same candidate (what the
// search's duplicate check relies on), while a change to the code, the launch plan or the tunables is not.
#include "core/candidate.h"

#include <QTest>

using namespace kerncast;

namespace {

const char* kProgram = R"(// @kerncast launch saxpy grid(ceil_div(N, 256)) block(256) args(x, y, a, N)
// Computes y = a*x + y.
extern "C" __global__ void saxpy(const float* x, float* y, float a, int N) {
    int i = blockIdx.x * 256 + threadIdx.x;  /* one element per thread */
    if (i < N) y[i] = a * x[i] + y[i];
}
)";

}  // namespace

class TestCandidate : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sameProgramSameNormalizedHash_data() {
        QTest::addColumn<QString>("variant");
        QTest::newRow("other comments") << QString::fromLatin1(kProgram).replace("Computes y = a*x + y.", "faster");
        QTest::newRow("no comments") << QString::fromLatin1(kProgram)
                                            .remove("// Computes y = a*x + y.\n")
                                            .remove("/* one element per thread */");
        QTest::newRow("reindented and blank lines") << QString::fromLatin1(kProgram)
                                                           .replace("    int i", "\tint i")
                                                           .replace("{\n", "{\n\n\n")
                                                           .replace(" = ", "   =   ");
    }
    void sameProgramSameNormalizedHash() {
        QFETCH(QString, variant);
        const std::map<std::string, int64_t> tunables{{"BLOCK", 256}};
        QVERIFY(variant.toStdString() != kProgram);
        QCOMPARE(normalized_source(variant.toStdString()), normalized_source(kProgram));
        QCOMPARE(normalized_hash(variant.toStdString(), tunables), normalized_hash(kProgram, tunables));
        QVERIFY(content_hash(variant.toStdString(), tunables) != content_hash(kProgram, tunables));
    }

    void differentProgramDifferentHash_data() {
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("tunable");
        QTest::newRow("code") << QString::fromLatin1(kProgram).replace("a * x[i]", "2 * a * x[i]") << "256";
        QTest::newRow("launch plan") << QString::fromLatin1(kProgram).replace("block(256)", "block(128)") << "256";
        QTest::newRow("a string literal's spacing")
            << QString::fromLatin1(kProgram).replace("extern \"C\"", "extern \"C \"") << "256";
        QTest::newRow("tunables") << QString::fromLatin1(kProgram) << "128";
    }
    void differentProgramDifferentHash() {
        QFETCH(QString, variant);
        QFETCH(QString, tunable);
        QVERIFY(normalized_hash(variant.toStdString(), {{"BLOCK", tunable.toLongLong()}}) !=
                normalized_hash(kProgram, {{"BLOCK", 256}}));
    }

    void keepsThePlanAndCode() {
        const std::string n = normalized_source(kProgram);
        QVERIFY(n.find("// @kerncast launch saxpy grid(ceil_div(N, 256)) block(256)") != std::string::npos);
        QVERIFY(n.find("Computes") == std::string::npos);
        QVERIFY(n.find("one element") == std::string::npos);
        QVERIFY(n.find("if (i < N) y[i] = a * x[i] + y[i];") != std::string::npos);
        QCOMPARE(normalized_source("  \n// only a comment\n  "), std::string());
    }
};

QTEST_GUILESS_MAIN(TestCandidate)
#include "tst_candidate.moc"
