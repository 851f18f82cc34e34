// The C++ that exported launch functions compute their grids with (core/expr_cpp.h) against Expr::eval: every
// expression below is translated, compiled by the host C++ compiler into one program and run on a few hundred
// bindings of sizes and tunables (negative, zero, odd, near the 64-bit limits); each value, and each error, must be
// what the engine's evaluation gives.
#include "core/error.h"
#include "core/expr.h"
#include "core/expr_cpp.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace kerncast;

namespace {

const std::vector<std::string> kNames = {"N", "M", "K", "X", "Y", "BLOCK", "VEC"};

struct Case {
    const char* text;
    bool condition;
};

// Every operator of the expression language, alone and mixed, and the short-circuits that keep a condition from
// dividing by zero.
const std::vector<Case> kCases = {
    {"N + M", false},
    {"N - M * K", false},
    {"(N + M) * (N - M)", false},
    {"N / M", false},
    {"-N / M", false},
    {"N % M", false},
    {"-N % M", false},
    {"N // M", false},
    {"-N // M", false},
    {"N // -M", false},
    {"-N", false},
    {"--N", false},
    {"ceil_div(N, M)", false},
    {"ceil_div(-N, M)", false},
    {"ceil_div(N, BLOCK * VEC)", false},
    {"ceil_div(ceil_div(N, BLOCK * VEC), 256)", false},
    {"ceil_div(W_ - 2, X)", false},
    {"min(N, M)", false},
    {"max(N, M, K)", false},
    {"min(N, max(M, 3), K / X)", false},
    {"min(ceil_div(N, BLOCK * 16 * VEC), 2112)", false},
    {"N ** 2", false},
    {"2 ** K", false},
    {"M ** X", false},
    {"-2 ** 2", false},
    {"X ** Y ** 2", false},
    {"N * M * K", false},
    {"9223372036854775807 + N", false},
    {"(BLOCK / X) * (VEC / Y) + N % 7 - 3", false},
    {"N < M", true},
    {"N <= M <= K", true},
    {"32 <= X * Y <= 1024", true},
    {"N == M", true},
    {"N != M", true},
    {"N > M >= K != X", true},
    {"N > 0 && M / N > 4", true},
    {"N == 0 || M / N > 1", true},
    {"N > 0 and M // N > 4", true},
    {"N < 0 or M < 0", true},
    {"not N == 1", true},
    {"!N", true},
    {"!N + 1", true},
    {"not (N < M) and K > 1", true},
    {"X in [1, 2, 4]", true},
    {"X not in (1, 2)", true},
    {"N in [M, K, M / N]", true},
    {"X * Y in [N, M] or BLOCK in []", true},
    {"True", true},
    {"False and N / 0 > 1", true},
    {"True or N / 0 > 1", true},
    {"(N < M) + (M < K)", true},
    {"N // M == -1", true},
    {"BLOCK % 32 == 0 and BLOCK * VEC <= 4096 and VEC ** 2 < 64", true},
    {"min(N, M) < max(K, X) == (Y > 0)", true},
};

std::vector<std::map<std::string, int64_t>> bindings() {
    const std::vector<int64_t> pool = {-1000003,
                                       -33,
                                       -7,
                                       -2,
                                       -1,
                                       0,
                                       1,
                                       2,
                                       3,
                                       4,
                                       7,
                                       31,
                                       32,
                                       33,
                                       64,
                                       255,
                                       1000,
                                       4096,
                                       65537,
                                       2147483647,
                                       int64_t{1} << 40,
                                       int64_t{3037000499},
                                       std::numeric_limits<int64_t>::max(),
                                       std::numeric_limits<int64_t>::min()};
    std::vector<std::map<std::string, int64_t>> out;
    uint64_t state = 0x2545F4914F6CDD1DULL;
    for (int i = 0; i < 400; ++i) {
        std::map<std::string, int64_t> b;
        for (const auto& name : kNames) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            b[name] = pool[(state >> 33) % pool.size()];
        }
        b["W_"] = b["N"];
        out.push_back(b);
    }
    return out;
}

// INT64_MIN has no literal of its own.
std::string literal(int64_t v) {
    if (v == std::numeric_limits<int64_t>::min())
        return "(-9223372036854775807LL - 1)";
    return "int64_t(" + std::to_string(v) + "LL)";
}

}  // namespace

class TestExprCpp : public QObject {
    Q_OBJECT

    // results[case][binding]: the program's line, "v <value>" or "error <what>".
    std::vector<std::vector<std::string>> m_results;
    std::vector<std::map<std::string, int64_t>> m_bindings;

private Q_SLOTS:
    void initTestCase() {
        const QString compiler = QStandardPaths::findExecutable("c++");
        if (compiler.isEmpty())
            QSKIP("no host C++ compiler (c++) on PATH: the translated expressions cannot be compiled");
        m_bindings = bindings();
        std::ostringstream program;
        program << expr_cpp_support() << "#include <cstdio>\n\n";
        std::string params;
        for (const auto& n : kNames)
            params += (params.empty() ? "" : ", ") + std::string("int64_t ") + n;
        params += ", int64_t W_";
        for (size_t i = 0; i < kCases.size(); ++i) {
            const Expr e = Expr::parse(kCases[i].text, {}, kCases[i].condition);
            program << "static void case_" << i << "(" << params << ") {\n"
                    << "    kerncast_expr::Status st;\n"
                    << "    const int64_t value = " << expr_to_cpp(e, "st") << ";\n"
                    << "    if (st.error) std::printf(\"error %s\\n\", st.error);\n"
                    << "    else std::printf(\"v %lld\\n\", static_cast<long long>(value));\n}\n";
        }
        program << "static const int64_t kBindings[][" << kNames.size() + 1 << "] = {\n";
        for (const auto& b : m_bindings) {
            program << "    {";
            for (const auto& n : kNames)
                program << literal(b.at(n)) << ", ";
            program << literal(b.at("W_")) << "},\n";
        }
        program << "};\nint main() {\n    for (const auto& b : kBindings) {\n";
        std::string args;
        for (size_t n = 0; n <= kNames.size(); ++n)
            args += (n ? ", b[" : "b[") + std::to_string(n) + "]";
        for (size_t i = 0; i < kCases.size(); ++i)
            program << "        case_" << i << "(" << args << ");\n";
        program << "    }\n";
        program << "}\n";

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string source = dir.filePath("expressions.cpp").toStdString();
        std::ofstream(source) << program.str();
        QProcess cc;
        cc.start(compiler, {"-std=c++17", "-O0", "-Wall", "-Werror", "-o", dir.filePath("expressions"),
                            QString::fromStdString(source)});
        QVERIFY(cc.waitForFinished(240000));
        QVERIFY2(cc.exitCode() == 0, cc.readAllStandardError().left(4000).constData());
        QProcess run;
        run.start(dir.filePath("expressions"), {});
        QVERIFY(run.waitForFinished(60000));
        QCOMPARE(run.exitCode(), 0);
        std::istringstream lines(run.readAllStandardOutput().toStdString());
        m_results.assign(kCases.size(), {});
        std::string line;
        for (size_t b = 0; b < m_bindings.size(); ++b)
            for (size_t i = 0; i < kCases.size(); ++i) {
                QVERIFY(std::getline(lines, line));
                m_results[i].push_back(line);
            }
    }

    void matchesEvaluation_data() {
        QTest::addColumn<int>("index");
        for (size_t i = 0; i < kCases.size(); ++i)
            QTest::newRow(kCases[i].text) << static_cast<int>(i);
    }
    void matchesEvaluation() {
        QFETCH(int, index);
        const Expr e = Expr::parse(kCases[index].text, {}, kCases[index].condition);
        int values = 0, errors = 0;
        for (size_t b = 0; b < m_bindings.size(); ++b) {
            Bindings names(m_bindings[b].begin(), m_bindings[b].end());
            std::string expected;
            try {
                expected = "v " + std::to_string(e.eval(names));
                ++values;
            } catch (const Error&) {
                expected = "error";
                ++errors;
            }
            std::string got = m_results[index][b];
            if (got.rfind("error", 0) == 0)
                got = "error";
            if (got != expected) {
                std::string where;
                for (const auto& [k, v] : names)
                    where += k + "=" + std::to_string(v) + " ";
                QFAIL(("'" + std::string(kCases[index].text) + "' with " + where + ": C++ gives '" + got +
                       "', the engine '" + expected + "'")
                          .c_str());
            }
        }
        // Most bindings give a value (the table would prove little if nearly all were errors).
        QVERIFY2(values > 0, "no binding gave a value");
        Q_UNUSED(errors);
    }

    void translatesNames() {
        const std::string cpp = expr_to_cpp(Expr::parse("ceil_div(N, BLOCK)"), "st", [](const std::string& n) {
            return n == "N" ? std::string("sizes.N") : "tunables::" + n;
        });
        QVERIFY2(cpp.find("sizes.N") != std::string::npos && cpp.find("tunables::BLOCK") != std::string::npos,
                 cpp.c_str());
    }

    void emptyExpressionIsAnError() { QVERIFY_THROWS_EXCEPTION(Error, expr_to_cpp(Expr(), "st")); }
};

QTEST_GUILESS_MAIN(TestExprCpp)
#include "tst_expr_cpp.moc"
