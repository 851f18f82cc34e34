#include "core/error.h"
#include "core/kernel_program.h"

#include <QTest>

#include <set>

using namespace kerncast;

namespace {

const std::string kData = KERNCAST_TEST_DATA;

// A launch line plus the given tunable lines (separated by ';').
KernelProgram withTunables(const QString& lines) {
    std::string plan = "// @kerncast launch k grid(1) block(32) args(y)\n";
    for (const auto& l : lines.split(';', Qt::SkipEmptyParts))
        plan += "// @kerncast tunable " + l.toStdString() + "\n";
    return KernelProgram::parse(plan + "extern \"C\" __global__ void k(float* y) {}\n", "k.cu");
}

}  // namespace

class TestTunables : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void noTunablesIsOneEmptyConfiguration() {
        const auto k = withTunables("");
        const auto configs = k.configurations();
        QCOMPARE(configs.size(), size_t{1});
        QVERIFY(configs[0].empty());
        QVERIFY(k.isValid({}));
        QCOMPARE(k.configurationCount(), size_t{1});
    }

    void countsValidCombinations_data() {
        QTest::addColumn<QString>("tunables");
        QTest::addColumn<int>("count");
        QTest::newRow("one tunable") << "B 64 128 256" << 3;
        QTest::newRow("cartesian product") << "A 1 2 3;B 1 2" << 6;
        QTest::newRow("constraint on the later line") << "A 1 2 3;B 1 2 where A * B <= 4" << 5;
        // Block size and rows per block: 64, 128 and 256 allow every ROWS, 512 only ROWS 1 and 2.
        QTest::newRow("design example") << "BLOCK 64 128 256 512;ROWS 1 2 4 where BLOCK*ROWS <= 1024" << 11;
        QTest::newRow("forward reference") << "A 1 2 3 where A < B;B 1 2 3" << 3;
        QTest::newRow("two constraints") << "A 1 2 4 8 where A != 2;B 1 2 4 8 where A * B >= 8 && B <= 4" << 5;
        QTest::newRow("three tunables") << "X 1 2;Y 1 2;Z 1 2 where X + Y + Z == 4" << 3;
        QTest::newRow("nothing valid") << "A 1 2;B 3 4 where A > B" << 0;
        QTest::newRow("division by zero excludes the value") << "A 0 1 2 where 8 / A >= 4" << 2;
        QTest::newRow("not and or") << "A 1 2 3 4 where !(A == 2) || A % 2 == 0" << 4;
    }
    void countsValidCombinations() {
        QFETCH(QString, tunables);
        QFETCH(int, count);
        const auto k = withTunables(tunables);
        const auto configs = k.configurations();
        QCOMPARE(configs.size(), size_t(count));
        QCOMPARE(k.configurationCount(), size_t(count));
        for (const auto& c : configs)
            QVERIFY(k.isValid(c));
    }

    void orderIsStable() {
        const auto k = withTunables("BLOCK 256 64;ROWS 1 2 where BLOCK * ROWS <= 256");
        const std::vector<Bindings> expected{
            {{"BLOCK", 256}, {"ROWS", 1}}, {{"BLOCK", 64}, {"ROWS", 1}}, {{"BLOCK", 64}, {"ROWS", 2}}};
        QCOMPARE(k.configurations(), expected);
        QCOMPARE(k.configurations(), expected);  // and the same every time
    }

    void limitStopsEnumeration() {
        const auto k = withTunables("A 1 2 3 4 5 6 7 8 9 10;B 1 2 3 4 5 6 7 8 9 10;C 1 2 3 4 5 6 7 8 9 10");
        QCOMPARE(k.configurations().size(), size_t{1000});
        QCOMPARE(k.configurations(7).size(), size_t{7});
        QCOMPARE(k.configurations(7).back(), (Bindings{{"A", 1}, {"B", 1}, {"C", 7}}));
        QCOMPARE(k.configurationCount(10), size_t{10});
        QVERIFY(k.configurations(0).empty());
    }

    void isValid_data() {
        QTest::addColumn<QString>("values");
        QTest::addColumn<bool>("valid");
        QTest::newRow("valid") << "BLOCK=128,ROWS=4" << true;
        QTest::newRow("violates where") << "BLOCK=512,ROWS=4" << false;
        QTest::newRow("value not listed") << "BLOCK=100,ROWS=1" << false;
        QTest::newRow("missing tunable") << "BLOCK=128" << false;
        QTest::newRow("extra name") << "BLOCK=128,ROWS=1,UNROLL=2" << false;
        QTest::newRow("empty") << "" << false;
    }
    void isValid() {
        QFETCH(QString, values);
        QFETCH(bool, valid);
        Bindings b;
        for (const auto& kv : values.split(',', Qt::SkipEmptyParts))
            b[kv.section('=', 0, 0).toStdString()] = kv.section('=', 1).toLongLong();
        const auto k = withTunables("BLOCK 64 128 256 512;ROWS 1 2 4 where BLOCK*ROWS <= 1024");
        QCOMPARE(k.isValid(b), valid);
    }

    void familyFixtureSpace() {
        // BLOCK 64..1024 x ITEMS 1..8 where BLOCK * ITEMS <= 2048: 4 + 4 + 4 + 3 + 2.
        const auto k = KernelProgram::load(kData + "/problems/saxpy_fixture/family.cu");
        const auto configs = k.configurations();
        QCOMPARE(configs.size(), size_t{17});
        QCOMPARE(configs.front(), (Bindings{{"BLOCK", 64}, {"ITEMS", 1}}));
        QCOMPARE(configs.back(), (Bindings{{"BLOCK", 1024}, {"ITEMS", 2}}));
        QVERIFY(k.tunable("ITEMS"));
        QVERIFY(!k.tunable("UNROLL"));
        QCOMPARE(k.tunable("ITEMS")->where.text(), std::string("BLOCK * ITEMS <= 2048"));
    }

    // Conditions are checked as soon as their tunables have values; the result is exactly the filtered cartesian
    // product, in its order.
    void prunedEnumerationIsTheFilteredProduct_data() { countsValidCombinations_data(); }
    void prunedEnumerationIsTheFilteredProduct() {
        QFETCH(QString, tunables);
        const auto k = withTunables(tunables);
        std::vector<Bindings> product{Bindings{}};
        for (const Tunable& t : k.tunables) {
            std::vector<Bindings> next;
            for (const Bindings& b : product)
                for (int64_t v : t.values) {
                    Bindings c = b;
                    c[t.name] = v;
                    next.push_back(c);
                }
            product = next;
        }
        std::vector<Bindings> valid;
        for (const Bindings& b : product)
            if (k.isValid(b))
                valid.push_back(b);
        QCOMPARE(k.configurations(), valid);
    }

    // 10^7 combinations, more than the enumeration will walk: a condition on the first tunable that nothing passes
    // ends it at once (without pruning this would hit the cap and throw).
    void earlyConditionPrunesAHugeSpace() {
        const QString ten = QStringLiteral(" 1 2 3 4 5 6 7 8 9 10");
        const auto k = withTunables("A" + ten + " where A > 10;B" + ten + ";C" + ten + ";D" + ten + ";E" + ten + ";F" +
                                    ten + ";G" + ten);
        QCOMPARE(k.configurationCount(), size_t{0});
        const auto half = withTunables("A" + ten + " where A == 3;B" + ten + " where B <= 2;C" + ten + ";D" + ten +
                                       ";E" + ten + ";F" + ten + " where F == 1;G" + ten);
        QCOMPARE(half.configurationCount(), size_t{2 * 1000 * 10});
    }

    // A space the conditions cannot prune early is not walked for an hour: a clear error names the file and line.
    void hugeUnprunableSpaceIsAnError() {
        const QString ten = QStringLiteral(" 1 2 3 4 5 6 7 8 9 10");
        const auto k = withTunables("A" + ten + ";B" + ten + ";C" + ten + ";D" + ten + ";E" + ten + ";F" + ten + ";G" +
                                    ten + " where A + B + C + D + E + F + G < 0");
        try {
            k.configurationCount();
            QFAIL("expected an error");
        } catch (const Error& e) {
            QCOMPARE(e.where().file, std::string("k.cu"));
            QCOMPARE(e.where().line, 2);  // the first tunable
            QVERIFY2(std::string(e.what()).find("more than 2000000 steps") != std::string::npos, e.what());
            QVERIFY2(std::string(e.what()).find("1e+07 combinations") != std::string::npos, e.what());
        }
    }

    // What `problems validate` compiles: all of a small family, else a sample with every value of every tunable.
    // `only` (a partial recording's configurations): what is valid, enumerated and counted is the intersection, a
    // configuration outside the where conditions stays invalid even when listed, and an empty set leaves nothing.
    void onlyRestrictsTheSpace() {
        auto k = withTunables("A 1 2 3;B 1 2 where A * B <= 4");
        k.only = std::set<Bindings>{{{"A", 1}, {"B", 2}}, {{"A", 3}, {"B", 1}}, {{"A", 3}, {"B", 2}}};
        QCOMPARE(k.configurationCount(), size_t{2});
        const auto configs = k.configurations();
        QCOMPARE(configs.size(), size_t{2});
        QCOMPARE(configs[0], (Bindings{{"A", 1}, {"B", 2}}));
        QCOMPARE(configs[1], (Bindings{{"A", 3}, {"B", 1}}));
        QVERIFY(k.isValid({{"A", 1}, {"B", 2}}));
        QVERIFY(!k.isValid({{"A", 1}, {"B", 1}}));  // valid in the family, not in `only`
        QVERIFY(!k.isValid({{"A", 3}, {"B", 2}}));  // in `only`, not valid in the family
        k.only = std::set<Bindings>{};
        QCOMPARE(k.configurationCount(), size_t{0});
        QVERIFY(k.configurations().empty());
    }

    void compileCheckSample() {
        const auto small = withTunables("A 1 2 3 4 5 6 7 8;B 1 2 3 4 5 6 7 8");
        QCOMPARE(small.compileCheckConfigurations(), small.configurations());
        QCOMPARE(small.compileCheckConfigurations().size(), size_t{64});

        const auto big = withTunables("A 1 2 3 4 5 6 7 8 9;B 1 2 3 4 5 6 7 8 9 where A * B <= 40;C 0 1");
        QVERIFY(big.configurationCount() > 64);
        const auto sample = big.compileCheckConfigurations();
        QVERIFY2(sample.size() <= 20, qPrintable(QString::number(sample.size())));
        for (const Tunable& t : big.tunables)
            for (int64_t v : t.values) {
                bool seen = false;
                for (const Bindings& b : sample)
                    seen |= b.at(t.name) == v;
                QVERIFY2(
                    seen,
                    qPrintable(QStringLiteral("%1=%2 is never compiled").arg(QString::fromStdString(t.name)).arg(v)));
            }
        for (const Bindings& b : sample)
            QVERIFY(big.isValid(b));
        // The first configuration is always among them.
        QCOMPARE(sample.front(), big.configurations(1).front());
    }

    void negativeAndLargeValues() {
        const auto k = withTunables("OFF -4 0 4;BIG 4294967296");
        QCOMPARE(k.configurations().size(), size_t{3});
        QCOMPARE(k.tunables[0].values.front(), int64_t{-4});
        QCOMPARE(k.tunables[1].values.front(), int64_t{4294967296});
    }
};

QTEST_GUILESS_MAIN(TestTunables)
#include "tst_tunables.moc"
