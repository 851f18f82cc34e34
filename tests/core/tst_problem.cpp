#include "core/error.h"
#include "core/problem.h"

#include "tests/support/error_of.h"

#include <QTest>

using namespace kerncast;
using kerncast::test::errorOf;

namespace {

const std::string kData = KERNCAST_TEST_DATA;

// A valid problem.json, one field per line, so the inline cases below can break one line and know its number.
std::string validJson(const std::string& replaceFrom = {}, const std::string& replaceTo = {}) {
    std::string s = R"({
  "name": "scale",
  "sizes": {
    "benchmark": {"M": 4096, "N": 4096},
    "correctness": [{"M": 3, "N": 1000}, {"M": 17, "N": 4099}]
  },
  "buffers": [
    {"name": "x", "dtype": "f32", "shape": ["M", "N"], "role": "in"},
    {"name": "idx", "dtype": "i32", "shape": ["M"], "role": "in", "init": {"dist": "randint", "lo": 0, "hi": "N"}},
    {"name": "y", "dtype": "f32", "shape": ["M"], "role": "out"}
  ],
  "scalars": [{"name": "alpha", "dtype": "f32", "value": 0.5}],
  "flops": "M * N",
  "bytes": "4 * M * N + 8 * M"
}
)";
    if (!replaceFrom.empty()) {
        const auto at = s.find(replaceFrom);
        if (at == std::string::npos)
            qFatal("test setup: '%s' not in the valid problem", replaceFrom.c_str());
        s.replace(at, replaceFrom.size(), replaceTo);
    }
    return s;
}

}  // namespace

class TestProblem : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parsesTheDocumentedExample() {
        const auto p = Problem::load(kData + "/problems/saxpy_fixture");
        QCOMPARE(p.name, std::string("saxpy"));
        QCOMPARE(p.description, std::string("y = a * x + y over N floats"));
        QCOMPARE(p.benchmark, (Bindings{{"N", 67108864}}));
        QCOMPARE(p.correctness.size(), size_t{2});
        QCOMPARE(p.correctness[1].at("N"), int64_t{4099});
        QCOMPARE(p.buffers.size(), size_t{2});
        const auto* x = p.buffer("x");
        QVERIFY(x);
        QCOMPARE(x->dtype, DType::F32);
        QCOMPARE(x->role, Role::In);
        QCOMPARE(x->init.dist, std::string("uniform"));
        QCOMPARE(x->init.lo, -1.0);
        QCOMPARE(x->line, 9);
        const auto* y = p.buffer("y");
        QCOMPARE(y->role, Role::InOut);
        QCOMPARE(y->init.dist, std::string("normal"));
        QCOMPARE(y->init.std, 1.0);
        QCOMPARE(p.scalar("a")->value, 2.5);
        QCOMPARE(p.scalar("a")->dtype, DType::F32);
        QVERIFY(!p.scalar("b"));
        QCOMPARE(p.tolerance.rtol, 1e-5);
        QVERIFY(p.tolerance.scale_atol_by_rms);
        QCOMPARE(p.flops.eval(p.benchmark), int64_t{2} * 67108864);
        QCOMPARE(p.bytes.eval(p.benchmark), int64_t{12} * 67108864);
        QCOMPARE(p.reference_file, std::string("reference.cu"));
        QCOMPARE(p.dir, kData + "/problems/saxpy_fixture");
        QCOMPARE(p.referencePath(), kData + "/problems/saxpy_fixture/reference.cu");
        QVERIFY(p.json_text.find("\"saxpy\"") != std::string::npos);
        // The file path and the folder load the same problem.
        QCOMPARE(Problem::load(kData + "/problems/saxpy_fixture/problem.json").name, p.name);
    }

    void casesAndElementCounts() {
        const auto p = Problem::parse(validJson(), "scale/problem.json");
        const auto cases = p.allCases();
        QCOMPARE(cases.size(), size_t{3});
        QCOMPARE(cases[0].at("N"), int64_t{1000});  // correctness first
        QCOMPARE(cases[2], p.benchmark);            // benchmark last
        QCOMPARE(p.buffer("x")->elements(cases[1]), int64_t{17} * 4099);
        QCOMPARE(p.buffer("x")->bytes(cases[1]), int64_t{17} * 4099 * 4);
        QCOMPARE(p.buffer("idx")->init.dist, std::string("randint"));
        QCOMPARE(p.buffer("idx")->init.hi_expr.eval(cases[0]), int64_t{1000});
        QCOMPARE(p.sizeNames(), (std::vector<std::string>{"M", "N"}));
        // Defaults when the optional fields are absent.
        QCOMPARE(p.tolerance.atol, 1e-6);
        QCOMPARE(p.reference_file, std::string("reference.cu"));
    }

    // A correctness case's own input distributions replace the buffers' for that case only.
    void caseInitOverridesTheBuffers() {
        const auto p =
            Problem::parse(validJson(R"({"M": 17, "N": 4099})",
                                     R"({"M": 17, "N": 4099, "init": {"x": {"dist": "normal", "mean": 0, "std": 60},
                          "idx": {"dist": "randint", "lo": 2, "hi": "N"}}})"),
                           "scale/problem.json");
        QCOMPARE(p.correctness.size(), size_t{2});
        QCOMPARE(p.correctness[1], (Bindings{{"M", 17}, {"N", 4099}}));  // "init" is not a size
        QCOMPARE(p.correctness_init.size(), size_t{2});
        QVERIFY(p.correctness_init[0].empty());
        QCOMPARE(p.correctness_init[1].at("x").dist, std::string("normal"));
        QCOMPARE(p.correctness_init[1].at("x").std, 60.0);
        QCOMPARE(p.correctness_init[1].at("idx").lo_expr.eval(p.correctness[1]), int64_t{2});
        QCOMPARE(p.buffer("x")->init.dist, std::string("uniform"));  // the buffer's own is unchanged
        // Whole numbers in a float buffer (ties): randint is allowed there.
        const auto ties =
            Problem::parse(validJson(R"({"M": 3, "N": 1000})",
                                     R"({"M": 3, "N": 1000, "init": {"x": {"dist": "randint", "lo": 0, "hi": 4}}})"),
                           "scale/problem.json");
        QCOMPARE(ties.correctness_init[0].at("x").dist, std::string("randint"));
    }

    void caseInitErrors_data() {
        QTest::addColumn<QString>("init");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown buffer") << R"({"z": {"dist": "normal", "mean": 0, "std": 1}})"
                                        << "sizes.correctness[1].init.z: names no buffer of the problem";
        QTest::newRow("out buffer") << R"({"y": {"dist": "normal", "mean": 0, "std": 1}})"
                                    << "sizes.correctness[1].init.y: an out buffer is poisoned";
        QTest::newRow("bad distribution") << R"({"x": {"dist": "normal", "mean": 0, "std": 0}})"
                                          << "sizes.correctness[1].init.x.std: expected std > 0";
        QTest::newRow("uniform on integers") << R"({"idx": {"dist": "uniform", "lo": 0, "hi": 1}})"
                                             << "sizes.correctness[1].init.idx.dist: an i32 buffer needs";
        QTest::newRow("not an object") << R"([1])"
                                       << "sizes.correctness[1].init: expected an object naming input";
    }
    void caseInitErrors() {
        QFETCH(QString, init);
        QFETCH(QString, expected);
        const std::string json =
            validJson(R"({"M": 17, "N": 4099})", R"({"M": 17, "N": 4099, "init": )" + init.toStdString() + "}");
        const std::string error = errorOf([&] { Problem::parse(json, "scale/problem.json"); });
        QVERIFY2(QString::fromStdString(error).contains(expected), error.c_str());
    }

    void namesItsKernelBenchCounterpart() {
        const std::string text =
            validJson(R"("flops": "M * N",)",
                      R"("flops": "M * N", "kernelbench": "level1/47_Sum_reduction_over_a_dimension.py",)");
        std::vector<Error> errors;
        Problem::parse(text, "scale/problem.json", errors);
        QVERIFY2(errors.empty(), errors.empty() ? "" : errors.front().what());
    }

    void dtypes_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("size");
        QTest::newRow("f32") << "f32" << 4;
        QTest::newRow("f16") << "f16" << 2;
        QTest::newRow("bf16") << "bf16" << 2;
        QTest::newRow("f64") << "f64" << 8;
        QTest::newRow("i32") << "i32" << 4;
        QTest::newRow("u8") << "u8" << 1;
    }
    void dtypes() {
        QFETCH(QString, name);
        QFETCH(int, size);
        const DType t = dtype_from_string(name.toStdString());
        QCOMPARE(std::string(to_string(t)), name.toStdString());
        QCOMPARE(dtype_size(t), size_t(size));
        const std::string msg = errorOf([] { dtype_from_string("float", {"p.json", 3}); });
        QCOMPARE(msg, std::string("p.json:3: expected one of f32 f16 bf16 f64 i32 u8, found \"float\""));
    }

    // The malformed fixtures: each error names the file, the line of the offending field and what was expected.
    void malformedFixtures_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("expected");
        QTest::newRow("JSON syntax")
            << "bad_json_syntax" << 8
            << "invalid JSON at column 11: syntax error while parsing object - unexpected string literal; expected '}'";
        QTest::newRow("bad dtype") << "bad_dtype" << 7
                                   << "buffers[1].dtype: expected one of f32 f16 bf16 f64 i32 u8, found \"float\"";
        QTest::newRow("unknown size in shape")
            << "unknown_size_in_shape" << 9 << "buffers[1].shape[0]: unknown size 'M' in 'M' (sizes: N)";
        QTest::newRow("missing field") << "missing_field" << 6 << "buffers[0]: missing field \"role\"";
        QTest::newRow("one correctness case")
            << "one_correctness_case" << 6 << "sizes.correctness: expected at least 2 correctness cases";
    }
    void malformedFixtures() {
        QFETCH(QString, folder);
        QFETCH(int, line);
        QFETCH(QString, expected);
        const std::string file = kData + "/problems/" + folder.toStdString() + "/problem.json";
        try {
            Problem::load(file);
            QFAIL("expected an error");
        } catch (const Error& e) {
            const std::string prefix = file + ":" + std::to_string(line) + ": ";
            QVERIFY2(std::string(e.what()).rfind(prefix, 0) == 0, e.what());
            QVERIFY2(std::string(e.what()).find(expected.toStdString()) != std::string::npos, e.what());
            QCOMPARE(e.where().line, line);
        }
    }

    void collectsEveryError() {
        std::vector<Error> errors;
        Problem::load(kData + "/problems/missing_field", errors);
        QCOMPARE(errors.size(), size_t{2});
        QVERIFY2(std::string(errors[0].what()).find(":6: buffers[0]: missing field \"role\"") != std::string::npos,
                 errors[0].what());
        QVERIFY2(std::string(errors[1].what()).find(":1: (top level): missing field \"bytes\"") != std::string::npos,
                 errors[1].what());
        // A broken field is reported once, not again as the consequences it has elsewhere.
        errors.clear();
        Problem::load(kData + "/problems/bad_dtype", errors);
        QCOMPARE(errors.size(), size_t{1});
    }

    void malformedInline_data() {
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("expected");
        QTest::newRow("cases name different sizes")
            << R"({"M": 17, "N": 4099})"
            << R"({"N": 4099})" << 5 << "sizes.correctness[1]: names sizes {N}, but the benchmark case names {M, N}";
        QTest::newRow("negative size") << R"("N": 1000)"
                                       << R"("N": -5)" << 5 << "expected a non-negative size, found -5";
        QTest::newRow("fractional size") << R"("N": 1000)"
                                         << R"("N": 10.5)" << 5
                                         << "sizes.correctness[0].N: expected an integer, found 10.5";
        QTest::newRow("shape syntax error")
            << R"(["M", "N"])"
            << R"(["M", "N *"])" << 8
            << "buffers[0].shape[1]: expected a number, a name or '(' but the expression ended at column 4 in 'N *'";
        QTest::newRow("unknown role") << R"("role": "out")"
                                      << R"("role": "output")" << 10
                                      << "buffers[2].role: expected one of in out inout, found \"output\"";
        QTest::newRow("init on an out buffer") << R"("role": "out")"
                                               << R"("role": "out", "init": {"dist": "normal", "mean": 0, "std": 1})"
                                               << 10 << "buffers[2].init: an out buffer is poisoned";
        QTest::newRow("integer input without init") << R"(, "init": {"dist": "randint", "lo": 0, "hi": "N"})"
                                                    << "" << 9 << "buffers[1]: an i32 input needs \"init\"";
        QTest::newRow("uniform on integers") << R"({"dist": "randint", "lo": 0, "hi": "N"})"
                                             << R"({"dist": "uniform", "lo": 0, "hi": 1})" << 9
                                             << "buffers[1].init.dist: an i32 buffer needs {\"dist\": \"randint\"";
        QTest::newRow("randint bound names unknown size")
            << R"("hi": "N")"
            << R"("hi": "K")" << 9 << "buffers[1].init.hi: unknown size 'K'";
        QTest::newRow("unknown distribution")
            << R"({"dist": "randint", "lo": 0, "hi": "N"})"
            << R"({"dist": "poisson"})" << 9 << "expected one of uniform normal randint, found \"poisson\"";
        QTest::newRow("misspelled top-level field")
            << R"("flops": "M * N",)"
            << R"("flops": "M * N", "tolerence": {},)" << 13 << "tolerence: unknown field; expected one of";
        QTest::newRow("name used twice") << R"({"name": "alpha")"
                                         << R"({"name": "x")" << 12 << "scalars[0].name: the name 'x' is already used";
        QTest::newRow("buffer named like a size")
            << R"({"name": "y")"
            << R"({"name": "N")" << 10 << "buffers[2].name: the name 'N' is already used";
        QTest::newRow("f16 scalar") << R"("dtype": "f32", "value")"
                                    << R"("dtype": "f16", "value")" << 12
                                    << "scalars[0].dtype: expected one of f32 f64 i32";
        QTest::newRow("flops divides by zero")
            << R"("flops": "M * N")"
            << R"x("flops": "N / (M - 3)")x" << 13 << "flops: division by zero in 'N / (M - 3)'";
        QTest::newRow("no checked output")
            << R"("role": "out")"
            << R"("role": "in")" << 7 << "buffers: expected at least one buffer with role out or inout";
        QTest::newRow("misspelled sizes") << R"(  "sizes": {)"
                                          << R"(  "sizez": {)" << 3 << "sizez: unknown field; expected one of";
        QTest::newRow("not an object") << QString::fromStdString(validJson()) << "[1, 2]" << 1
                                       << "expected a JSON object";
        QTest::newRow("kernelbench not a problem file")
            << R"("flops": "M * N",)"
            << R"("flops": "M * N", "kernelbench": "23_Softmax",)" << 13
            << "kernelbench: expected a KernelBench problem file like \"level1/23_Softmax.py\", found \"23_Softmax\"";
        QTest::newRow("kernelbench not a string")
            << R"("flops": "M * N",)"
            << R"("flops": "M * N", "kernelbench": 23,)" << 13 << "kernelbench: expected a string, found 23";
        QTest::newRow("truncated JSON") << R"("bytes": "4 * M * N + 8 * M")"
                                        << R"("bytes": )" << 15 << "invalid JSON";
        QTest::newRow("number past the largest double")
            << R"("value": 0.5)"
            << R"("value": 1e999)" << 12
            << "invalid JSON at column 58: the number 1e999 is not finite (too large for a double)";
        QTest::newRow("deeply nested value")
            << R"("value": 0.5)" << QString(R"("value": )") + QString(100000, '[') + QString(100000, ']') << 12
            << "objects and arrays nest deeper than 64 levels";
        QTest::newRow("unterminated long string")
            << R"("flops": "M * N",)" << QString("\"flops\": \"") + QString(200000, 'M') << 13
            << "must be escaped to \\u000A or \\n; last read: '\"MMMM";
        QTest::newRow("deeply nested shape expression")
            << R"(["M", "N"])" << QString("[\"M\", \"") + QString(1000, '(') + "N" + QString(1000, ')') + "\"]" << 8
            << "buffers[0].shape[1]: expected at most 64 levels of parentheses";
        QTest::newRow("long flops expression")
            << R"("flops": "M * N")" << QString(R"("flops": "M)") + QString("+M").repeated(100000) + "\"" << 13
            << "flops: expected an expression of at most 4096 characters";
    }
    void malformedInline() {
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(int, line);
        QFETCH(QString, expected);
        const std::string text = validJson(from.toStdString(), to.toStdString());
        const std::string msg = errorOf([&] { Problem::parse(text, "scale/problem.json"); });
        QVERIFY2(msg.rfind("scale/problem.json:" + std::to_string(line) + ": ", 0) == 0, msg.c_str());
        QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
        QVERIFY2(msg.size() < 1000, "untrusted text is quoted shortened");
    }

    void oversizedFileIsAnError() {
        std::string text = validJson(R"("name": "scale")",
                                     "\"name\": \"scale\", \"description\": \"" + std::string(2 << 20, 'x') + "\"");
        const std::string msg = errorOf([&] { Problem::parse(text, "big/problem.json"); });
        QVERIFY2(msg.rfind("big/problem.json:1: ", 0) == 0, msg.c_str());
        QVERIFY2(msg.find("at most 1048576 are accepted") != std::string::npos, msg.c_str());
    }

    void longKernelbenchNameNeitherCrashesNorFloods() {
        // Half a megabyte of name: checked in one pass (a std::regex here recursed per character and overflowed).
        const std::string name(500000, 'a');
        const std::string ok =
            validJson(R"("flops": "M * N",)", "\"flops\": \"M * N\", \"kernelbench\": \"level1/1_" + name + ".py\",");
        Problem::parse(ok, "long/problem.json");
        const std::string bad =
            validJson(R"("flops": "M * N",)", "\"flops\": \"M * N\", \"kernelbench\": \"level1/1_" + name + "-.py\",");
        const std::string msg = errorOf([&] { Problem::parse(bad, "long/problem.json"); });
        QVERIFY2(msg.find("expected a KernelBench problem file") != std::string::npos, msg.c_str());
        QVERIFY2(msg.size() < 1000, "untrusted text is quoted shortened");
        for (const char* wrong : {"level1/_Softmax.py", "level1/23_.py", "level0/23_Softmax.py", "level1/23Softmax.py",
                                  "level1/23_Soft max.py", "level12/23_Softmax.py"}) {
            const std::string text = validJson(
                R"("flops": "M * N",)", std::string("\"flops\": \"M * N\", \"kernelbench\": \"") + wrong + "\",");
            QVERIFY2(errorOf([&] {
                         Problem::parse(text, "k/problem.json");
                     }).find("expected a KernelBench problem file") != std::string::npos,
                     wrong);
        }
    }

    void missingFileIsAnError() {
        const std::string msg = errorOf([] { Problem::load(kData + "/problems/no_such_problem"); });
        QVERIFY2(msg.find("no_such_problem: cannot read the file") != std::string::npos, msg.c_str());
    }
};

QTEST_GUILESS_MAIN(TestProblem)
#include "tst_problem.moc"
