#include "core/bins.h"
#include "core/error.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace kerncast;

class TestBins : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void gfV2IsTheAgreedScheme() {
        const auto s = BinScheme::gfV2();
        QCOMPARE(s.id(), std::string("gf-v2"));
        const std::array<double, 7> edges{0.25, 0.5, 0.71, 1.0, 1.41, 2.0, 4.0};
        QCOMPARE(s.edges(), edges);
        QCOMPARE(s.name(1), std::string("severe slowdown"));
        QCOMPARE(s.name(4), std::string("minor slowdown"));
        QCOMPARE(s.name(5), std::string("minor speedup"));
        QCOMPARE(s.name(8), std::string("extreme speedup"));
        QCOMPARE(s.name(0), std::string("failure"));
    }

    void binOfIsUpperInclusive_data() {
        QTest::addColumn<double>("speedup");
        QTest::addColumn<int>("bin");
        QTest::newRow("tiny") << 1e-9 << 1;
        QTest::newRow("0.25 exactly") << 0.25 << 1;
        QTest::newRow("just above 0.25") << 0.2500001 << 2;
        QTest::newRow("0.5 exactly") << 0.5 << 2;
        QTest::newRow("0.71 exactly") << 0.71 << 3;
        QTest::newRow("0.8") << 0.8 << 4;
        QTest::newRow("1.0 exactly") << 1.0 << 4;
        QTest::newRow("1.0001") << 1.0001 << 5;
        QTest::newRow("1.41 exactly") << 1.41 << 5;
        QTest::newRow("1.4101") << 1.4101 << 6;
        QTest::newRow("2.0 exactly") << 2.0 << 6;
        QTest::newRow("4.0 exactly") << 4.0 << 7;
        QTest::newRow("4.01") << 4.01 << 8;
        QTest::newRow("huge") << 1e12 << 8;
        QTest::newRow("zero is failure") << 0.0 << 0;
        QTest::newRow("negative is failure") << -1.0 << 0;
        QTest::newRow("NaN is failure") << std::nan("") << 0;
        QTest::newRow("infinity is failure") << std::numeric_limits<double>::infinity() << 0;
    }
    void binOfIsUpperInclusive() {
        QFETCH(double, speedup);
        QFETCH(int, bin);
        QCOMPARE(BinScheme::gfV2().binOf(speedup), bin);
    }

    void edgesOfEachBin() {
        const auto s = BinScheme::gfV2();
        QCOMPARE(s.lowerEdge(1), 0.0);
        QCOMPARE(s.upperEdge(1), 0.25);
        QCOMPARE(s.lowerEdge(5), 1.0);
        QCOMPARE(s.upperEdge(5), 1.41);
        QCOMPARE(s.lowerEdge(8), 4.0);
        QVERIFY(std::isinf(s.upperEdge(8)));
        for (int b = 1; b <= kBinCount; ++b) {
            // The upper edge belongs to the bin, anything just above it to the next one.
            if (b < kBinCount) {
                QCOMPARE(s.binOf(s.upperEdge(b)), b);
                QCOMPARE(s.binOf(std::nextafter(s.upperEdge(b), 100.0)), b + 1);
            }
        }
        QVERIFY_THROWS_EXCEPTION(Error, s.lowerEdge(0));
        QVERIFY_THROWS_EXCEPTION(Error, s.upperEdge(9));
        QVERIFY_THROWS_EXCEPTION(Error, s.name(9));
    }

    void promptTableListsEveryBin() {
        const std::string table = BinScheme::gfV2().promptTable();
        const char* expected = "bin 1 (severe slowdown): S <= 0.25x\n"
                               "bin 2 (significant slowdown): 0.25x < S <= 0.50x\n"
                               "bin 3 (moderate slowdown): 0.50x < S <= 0.71x\n"
                               "bin 4 (minor slowdown): 0.71x < S <= 1.00x\n"
                               "bin 5 (minor speedup): 1.00x < S <= 1.41x\n"
                               "bin 6 (significant speedup): 1.41x < S <= 2.00x\n"
                               "bin 7 (high speedup): 2.00x < S <= 4.00x\n"
                               "bin 8 (extreme speedup): S > 4.00x\n";
        QCOMPARE(table, std::string(expected));
    }

    void customSchemeBinsAndTable() {
        const BinScheme s("octaves", {0.125, 0.25, 0.5, 1, 2, 4, 8}, {"a", "b", "c", "d", "e", "f", "g", "h"});
        QCOMPARE(s.binOf(1.0), 4);
        QCOMPARE(s.binOf(3.0), 6);
        QCOMPARE(s.binOf(100.0), 8);
        QCOMPARE(s.binOf(0.1), 1);
        // An edge that needs more than two decimals keeps its precision in the prompt.
        QVERIFY(s.promptTable().find("bin 1 (a): S <= 0.125x\n") == 0);
        QVERIFY(s.promptTable().find("bin 2 (b): 0.125x < S <= 0.25x\n") != std::string::npos);
    }

    void invalidSchemesAreRejected_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("expected");
        const QString names = R"("names": ["a","b","c","d","e","f","g","h"])";
        QTest::newRow("not increasing") << R"({"id": "x", "edges": [0.25, 0.5, 0.5, 1, 2, 3, 4], )" + names + "}"
                                        << "strictly increasing";
        QTest::newRow("decreasing") << R"({"id": "x", "edges": [4, 2, 1, 0.9, 0.8, 0.7, 0.6], )" + names + "}"
                                    << "strictly increasing";
        QTest::newRow("zero edge") << R"({"id": "x", "edges": [0, 0.5, 0.7, 1, 2, 3, 4], )" + names + "}"
                                   << "positive finite";
        QTest::newRow("six edges") << R"({"id": "x", "edges": [0.5, 0.7, 1, 2, 3, 4], )" + names + "}"
                                   << "array of 7 numbers, found 6 entries";
        QTest::newRow("edge is text") << R"({"id": "x", "edges": [0.25, "0.5", 0.7, 1, 2, 3, 4], )" + names + "}"
                                      << "edge 2 must be a number";
        QTest::newRow("seven names")
            << R"({"id": "x", "edges": [0.25, 0.5, 0.7, 1, 2, 3, 4], "names": ["a","b","c","d","e","f","g"]})"
            << "array of 8 strings, found 7 entries";
        QTest::newRow("duplicate names")
            << R"({"id": "x", "edges": [0.25, 0.5, 0.7, 1, 2, 3, 4], "names": ["a","b","c","d","e","f","g","a"]})"
            << "used twice";
        QTest::newRow("empty name")
            << R"({"id": "x", "edges": [0.25, 0.5, 0.7, 1, 2, 3, 4], "names": ["a","b","c","","e","f","g","h"]})"
            << "bin 4 needs a name";
        QTest::newRow("missing id") << R"({"edges": [0.25, 0.5, 0.7, 1, 2, 3, 4], )" + names + "}"
                                    << "missing \"id\"";
        QTest::newRow("empty id") << R"({"id": "", "edges": [0.25, 0.5, 0.7, 1, 2, 3, 4], )" + names + "}"
                                  << "non-empty id";
        QTest::newRow("not an object") << "[1, 2]"
                                       << "expected an object";
    }
    void invalidSchemesAreRejected() {
        QFETCH(QString, json);
        QFETCH(QString, expected);
        try {
            bin_scheme_from_json(nlohmann::json::parse(json.toStdString()));
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find(expected.toStdString()) != std::string::npos, e.what());
        }
    }

    void schemeJsonRoundTrip() {
        const nlohmann::json j = BinScheme::gfV2();
        QCOMPARE(j["id"].get<std::string>(), std::string("gf-v2"));
        const auto back = bin_scheme_from_json(j);
        QCOMPARE(back.edges(), BinScheme::gfV2().edges());
        QCOMPARE(back.names(), BinScheme::gfV2().names());
        QCOMPARE(back.promptTable(), BinScheme::gfV2().promptTable());
    }
};

QTEST_GUILESS_MAIN(TestBins)
#include "tst_bins.moc"
