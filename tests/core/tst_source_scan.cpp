// The one scanner that says where a program's comments, literals and line splices are (core/source_scan): each case
// is a way to make a reader that is not the compiler's see code where the compiler sees a comment or a string, or
// the other way round. The consumers (duplicate detection, kernel names, recording carry) read through it.
#include "core/candidate.h"
#include "core/error.h"
#include "core/kernel_program.h"
#include "core/problem.h"
#include "core/source_scan.h"

#include <QTest>

#include <algorithm>
#include <string>

using namespace kerncast;

namespace {

// One letter per character: C code, L line comment, B block comment, S literal, J line splice.
QString letters(const std::string& text) {
    QString out;
    for (const SourceChar k : classify_source(text))
        out += k == SourceChar::Code           ? 'C'
               : k == SourceChar::LineComment  ? 'L'
               : k == SourceChar::BlockComment ? 'B'
               : k == SourceChar::Literal      ? 'S'
                                               : 'J';
    return out;
}

}  // namespace

class TestSourceScan : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void classifies_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("kinds");
        QTest::newRow("line comment, its newline code") << "a//b\nc"
                                                        << "CLLLCC";
        QTest::newRow("block comment") << "a/*b*/c"
                                       << "CBBBBBC";
        QTest::newRow("// inside a string") << "\"//\"x"
                                            << "SSSSC";
        QTest::newRow("a double quote as a character") << "'\"'/*c*/"
                                                       << "SSSBBBBB";
        QTest::newRow("digit separator") << "1'000/*c*/"
                                         << "CCCCCBBBBB";
        QTest::newRow("u8'a' is a character, not a separator") << "u8'a'/*c*/"
                                                               << "CCSSSBBBBB";
        QTest::newRow("raw string over a line, holding /*") << "R\"x(\n/*)x\"y"
                                                            << "SSSSSSSSSSC";
        QTest::newRow("u8R raw string") << "u8R\"(//)\"z"
                                        << "CCSSSSSSSC";
        QTest::newRow("a name ending in R before a string") << "FOOR\"(x)\""
                                                            << "CCCCSSSSS";
        QTest::newRow("ill-formed raw string: the rest is a literal") << "R\"a b(x)a b\"\n//c"
                                                                      << "SSSSSSSSSSSSSSSS";
        QTest::newRow("a splice continues a line comment") << "//a\\\nb\nc"
                                                           << "LLLJJLCC";
        QTest::newRow("a splice with spaces before the newline") << "//a\\ \t\nb"
                                                                 << "LLLJJJJL";
        QTest::newRow("a splice between the slashes") << "/\\\n/x\ny"
                                                      << "LJJLLCC";
        QTest::newRow("a splice in a block comment's end") << "/*a*\\\n/b"
                                                           << "BBBBJJBC";
        QTest::newRow("an escaped backslash's splice keeps the string") << "\"a\\\\\nb\"c"
                                                                        << "SSSJJSSC";
        QTest::newRow("an unterminated string ends with its line") << "\"ab\n/*c*/"
                                                                   << "SSSCBBBBB";
        QTest::newRow("an escaped quote") << "'\\''//"
                                          << "SSSSLL";
        QTest::newRow("CRLF splice") << "x\\\r\ny"
                                     << "CJJJC";
    }
    void classifies() {
        QFETCH(QString, text);
        QFETCH(QString, kinds);
        QCOMPARE(letters(text.toStdString()), kinds);
    }

    void codeOnlyShowsWhatTheCompilerSeesAsCode() {
        const std::string src = "/* __global__ void a() */\n"
                                "const char* s = \"__global__ void b()\";\n"
                                "const char q = '\"';\n"
                                "__glo\\\nbal__ void c() {}\n";
        const std::string code = code_only(src);
        QVERIFY(code.find("void a") == std::string::npos);
        QVERIFY(code.find("void b") == std::string::npos);
        QVERIFY(code.find("__global__ void c()") != std::string::npos);
        QCOMPARE(std::count(code.begin(), code.end(), '\n'), std::count(src.begin(), src.end(), '\n') - 1);
    }

    // Duplicate detection drops a child whose normalized text equals an earlier one: code that only a misreading
    // takes for a comment must stay in the text, or a different program is dropped as a duplicate.
    void normalizedSourceKeepsCodeThatOnlyLooksCommented() {
        // A raw string holding "/*" over a line: the compiler sees the call after it as code.
        const std::string base = "const char* s = R\"(\n/*)\";\n";
        const std::string a = base + "int x = 1;\n// */\n";
        const std::string b = base + "int x = 2;\n// */\n";
        QVERIFY(normalized_source(a) != normalized_source(b));
        // A double quote as a character: the comment after it is a comment, the code after that code.
        const std::string c = "char q = '\"'; /* note */ int y = 1;";
        QCOMPARE(normalized_source(c), std::string("char q = '\"'; int y = 1;"));
        // A line comment continued by a splice is one comment; the launch plan's lines stay.
        QCOMPARE(normalized_source("// @kerncast launch k grid(1) block(1) args(x)\nint z; // a \\\n b\n"),
                 std::string("// @kerncast launch k grid(1) block(1) args(x)\nint z;"));
    }

    // A kernel is found after a double quote written as a character, and one named only inside a string is none.
    void kernelNamesAreReadAsTheCompilerReadsThem() {
        const Problem problem = Problem::parse(R"json({
  "name": "one", "description": "x = q",
  "sizes": {"benchmark": {"N": 4}, "correctness": [{"N": 3}, {"N": 5}]},
  "buffers": [{"name": "x", "dtype": "f32", "shape": ["N"], "role": "out"}],
  "flops": "N", "bytes": "4 * N"})json",
                                               "one.json");
        const auto missing_kernel = [&](const std::string& src) {
            std::string found;
            for (const Error& e : KernelProgram::parse(src, "k.cu").validationErrors(problem))
                if (std::string(e.what()).find("no __global__ function") != std::string::npos)
                    found += e.what();
            return found;
        };
        const std::string quote = "// @kerncast launch k grid(1) block(1) args(x)\n"
                                  "__device__ char q = '\"';\n"
                                  "extern \"C\" __global__ void k(float* x) { x[0] = q; }\n";
        QCOMPARE(missing_kernel(quote), std::string());
        const std::string fake = "// @kerncast launch fake grid(1) block(1) args(x)\n"
                                 "__device__ const char* note = \"__global__ void fake(float* x)\";\n"
                                 "extern \"C\" __global__ void k(float* x) { x[0] = 1; }\n";
        const std::string message = missing_kernel(fake);
        QVERIFY2(message.find("'fake'") != std::string::npos, "a kernel named only in a string was taken for one");
    }
};

QTEST_MAIN(TestSourceScan)
#include "tst_source_scan.moc"
