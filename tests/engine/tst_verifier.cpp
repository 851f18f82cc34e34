#include "core/problem.h"
#include "engine/gpu/gpu_session.h"
#include "engine/gpu/verifier.h"

#include <QTest>

#include <bit>
#include <cmath>
#include <limits>

using namespace kerncast;

Q_DECLARE_METATYPE(std::vector<double>)

namespace {

const double kNan = std::numeric_limits<double>::quiet_NaN();
// What an unwritten f32 element reads as after the worker widens it.
double poisoned_f32() { return static_cast<double>(std::bit_cast<float>(0xffffffffu)); }

Tolerance tol(double rtol, double atol, bool scale) {
    Tolerance t;
    t.rtol = rtol;
    t.atol = atol;
    t.scale_atol_by_rms = scale;
    return t;
}

const char* kProblem = R"({
  "name": "axpy",
  "description": "z = a * x + y",
  "sizes": {"benchmark": {"N": 8}, "correctness": [{"N": 3}, {"N": 4}]},
  "buffers": [
    {"name": "x", "dtype": "f32", "shape": ["N"], "role": "in", "init": {"dist": "uniform", "lo": -1, "hi": 1}},
    {"name": "y", "dtype": "f32", "shape": ["N"], "role": "inout", "init": {"dist": "normal", "mean": 0, "std": 1}},
    {"name": "z", "dtype": "f32", "shape": ["N"], "role": "out"}
  ],
  "scalars": [{"name": "a", "dtype": "f32", "value": 2}],
  "tolerance": {"rtol": 1e-5, "atol": 1e-6, "scale_atol_by_rms": false},
  "flops": "2 * N",
  "bytes": "16 * N"
})";

}  // namespace

class TestVerifier : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void compareOutput_data() {
        QTest::addColumn<std::vector<double>>("got");
        QTest::addColumn<std::vector<double>>("expected");
        QTest::addColumn<bool>("scaleByRms");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("reason");  // a fragment the reason must contain
        const std::vector<double> ref{1.0, -2.0, 3.0, 4.5};
        QTest::newRow("identical") << ref << ref << false << true << "";
        QTest::newRow("within rtol") << std::vector<double>{1.0, -2.0, 3.00001, 4.5} << ref << false << true << "";
        QTest::newRow("beyond rtol")
            << std::vector<double>{1.0, -2.0, 3.1, 4.5} << ref << false << false
            << "output z: 1 of 4 elements differ; first at index 2: 3.1 vs 3 (tolerance 3.1e-05)";
        QTest::newRow("every element off") << std::vector<double>{2, -1, 4, 5.5} << ref << false << false
                                           << "4 of 4 elements differ; first at index 0";
        // Small absolute errors next to large values: only the RMS-scaled atol accepts them.
        const std::vector<double> big{1000.0, 0.0, -1000.0, 0.0};
        const std::vector<double> near{1000.0, 0.5, -1000.0, -0.5};
        QTest::newRow("atol unscaled rejects") << near << big << false << false << "2 of 4 elements differ";
        QTest::newRow("atol scaled by rms accepts") << near << big << true << true << "";
        QTest::newRow("unwritten element")
            << std::vector<double>{1.0, poisoned_f32(), 3.0, 4.5} << ref << false << false
            << "output z: 1 of 4 elements not written (they still hold the poison pattern); first at index 1";
        QTest::newRow("NaN written") << std::vector<double>{1.0, -2.0, kNan, 4.5} << ref << false << false
                                     << "1 of 4 elements are not finite; first at index 2: nan";
        QTest::newRow("infinity written") << std::vector<double>{1.0, std::numeric_limits<double>::infinity(), 3.0, 4.5}
                                          << ref << false << false << "are not finite";
        QTest::newRow("constant output") << std::vector<double>{7, 7, 7, 7} << ref << false << false
                                         << "output z is constant (every element 7) but the reference's is not";
        QTest::newRow("all zeros") << std::vector<double>{0, 0, 0, 0} << ref << false << false
                                   << "is constant (every element 0)";
        QTest::newRow("all zeros like the reference")
            << std::vector<double>{0, 0, 0, 0} << std::vector<double>{0, 0, 0, 0} << false << true << "";
        QTest::newRow("constant within a huge tolerance is still rejected")
            << std::vector<double>{2, 2, 2, 2} << std::vector<double>{2, 2, 2, 2.0001} << true << false
            << "is constant";
        QTest::newRow("size mismatch") << std::vector<double>{1, 2} << ref << false << false
                                       << "2 elements but the reference has 4";
        QTest::newRow("reference not finite")
            << ref << std::vector<double>{1.0, -2.0, kNan, 4.5} << false << false << "the reference's output z";
    }
    void compareOutput() {
        QFETCH(std::vector<double>, got);
        QFETCH(std::vector<double>, expected);
        QFETCH(bool, scaleByRms);
        QFETCH(bool, ok);
        QFETCH(QString, reason);
        const Verifier v(tol(1e-5, scaleByRms ? 1e-3 : 1e-6, scaleByRms));
        const VerifyResult r = v.compareOutput("z", DType::F32, got, expected);
        QCOMPARE(r.ok, ok);
        if (ok)
            QVERIFY(r.reason.empty());
        else
            QVERIFY2(QString::fromStdString(r.reason).contains(reason), r.reason.c_str());
    }

    void errorMagnitudesAreReported() {
        const Verifier v(tol(1e-5, 1e-6, false));
        const VerifyResult r = v.compareOutput("z", DType::F64, {1.0, 2.5, 4.0}, {1.0, 2.0, 4.0});
        QVERIFY(!r.ok);
        QCOMPARE(r.max_abs, 0.5);
        QCOMPARE(r.max_rel, 0.25);
    }

    void poisonPatternPerDtype_data() {
        QTest::addColumn<double>("value");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<bool>("poison");
        QTest::newRow("f32 0xFFFFFFFF") << poisoned_f32() << int(DType::F32) << true;
        QTest::newRow("f64 all ones") << std::bit_cast<double>(~uint64_t{0}) << int(DType::F64) << true;
        QTest::newRow("f16 0xFFFF") << half_to_double(0xffff) << int(DType::F16) << true;
        QTest::newRow("bf16 0xFFFF") << bfloat16_to_double(0xffff) << int(DType::BF16) << true;
        QTest::newRow("canonical") << poison_value(DType::F32) << int(DType::F32) << true;
        // The GPU's own NaN (0x7FFFFFFF) is a written value, not poison.
        QTest::newRow("GPU NaN") << static_cast<double>(std::bit_cast<float>(0x7fffffffu)) << int(DType::F32) << false;
        QTest::newRow("negative NaN from 0/0 on the CPU") << -kNan << int(DType::F32) << false;
        QTest::newRow("i32 -1") << -1.0 << int(DType::I32) << true;
        QTest::newRow("u8 255") << 255.0 << int(DType::U8) << true;
        QTest::newRow("i32 0") << 0.0 << int(DType::I32) << false;
        QTest::newRow("f32 1") << 1.0 << int(DType::F32) << false;
    }
    void poisonPatternPerDtype() {
        QFETCH(double, value);
        QFETCH(int, dtype);
        QFETCH(bool, poison);
        QCOMPARE(is_poison(value, static_cast<DType>(dtype)), poison);
    }

    void integerOutputs() {
        const Verifier v(tol(0, 0, false));
        QVERIFY(v.compareOutput("idx", DType::I32, {0, 5, 2}, {0, 5, 2}).ok);
        const VerifyResult unwritten = v.compareOutput("idx", DType::I32, {0, -1, 2}, {0, 5, 2});
        QVERIFY(!unwritten.ok);
        QVERIFY(QString::fromStdString(unwritten.reason).contains("not written"));
        // -1 is also a legitimate value: where the reference produced it, the element counts as written.
        QVERIFY(v.compareOutput("idx", DType::I32, {0, -1, 2}, {0, -1, 2}).ok);
    }

    void halfAndBfloatConversions_data() {
        QTest::addColumn<int>("bits");
        QTest::addColumn<bool>("bf16");
        QTest::addColumn<double>("value");
        QTest::newRow("f16 1") << 0x3c00 << false << 1.0;
        QTest::newRow("f16 -2") << 0xc000 << false << -2.0;
        QTest::newRow("f16 max") << 0x7bff << false << 65504.0;
        QTest::newRow("f16 smallest subnormal") << 0x0001 << false << std::ldexp(1.0, -24);
        QTest::newRow("f16 0.333") << 0x3555 << false << 0.333251953125;
        QTest::newRow("f16 inf") << 0x7c00 << false << std::numeric_limits<double>::infinity();
        QTest::newRow("bf16 1") << 0x3f80 << true << 1.0;
        QTest::newRow("bf16 pi") << 0x4049 << true << 3.140625;
        QTest::newRow("bf16 -0.5") << 0xbf00 << true << -0.5;
    }
    void halfAndBfloatConversions() {
        QFETCH(int, bits);
        QFETCH(bool, bf16);
        QFETCH(double, value);
        const auto b = static_cast<uint16_t>(bits);
        QCOMPARE(bf16 ? bfloat16_to_double(b) : half_to_double(b), value);
    }

    void inputsMustStayUnchanged() {
        const Verifier v(tol(1e-5, 1e-6, false));
        QVERIFY(v.checkUnchanged("x", {1, 2, 3}, {1, 2, 3}).ok);
        const VerifyResult r = v.checkUnchanged("x", {1, 2, 3}, {1, 2.5, 3});
        QVERIFY(!r.ok);
        QCOMPARE(r.reason, std::string("input x was modified: 1 of 3 elements changed; first at index 1: 2 became "
                                       "2.5 (an input must stay unchanged unless its role is inout)"));
        // even a change far inside the output tolerance is a change
        QVERIFY(!v.checkUnchanged("x", {1, 2, 3}, {1, 2 + 1e-12, 3}).ok);
    }

    void wholeRunAgainstAProblem() {
        const Problem p = Problem::parse(kProblem, "problem.json");
        const Verifier v(p.tolerance);
        const BufferValues before{{"x", {1, 2, 3}}, {"y", {0.5, 0.5, 0.5}}};
        const BufferValues expected{{"x", {1, 2, 3}}, {"y", {0.5, 0.5, 0.5}}, {"z", {2.5, 4.5, 6.5}}};
        QVERIFY(v.verify(p, expected, expected, before).ok);

        // The inout buffer y may change (and is compared with the reference's y), the in buffer x may not.
        BufferValues got = expected;
        got["y"] = {9, 9, 9};
        VerifyResult r = v.verify(p, got, expected, before);
        QVERIFY(!r.ok);
        QVERIFY2(QString::fromStdString(r.reason).startsWith("output y"), r.reason.c_str());

        got = expected;
        got["x"] = {1, 2, 4};
        r = v.verify(p, got, expected, before);
        QVERIFY(!r.ok);
        QVERIFY2(QString::fromStdString(r.reason).startsWith("input x was modified"), r.reason.c_str());

        got = expected;
        got["z"] = {2.5, poisoned_f32(), poisoned_f32()};
        r = v.verify(p, got, expected, before);
        QVERIFY(!r.ok);
        QVERIFY2(QString::fromStdString(r.reason).contains("2 of 3 elements not written"), r.reason.c_str());

        got = expected;
        got.erase("z");
        QVERIFY(!v.verify(p, got, expected, before).ok);
    }
};

QTEST_GUILESS_MAIN(TestVerifier)
#include "tst_verifier.moc"
