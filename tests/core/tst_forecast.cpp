#include "core/error.h"
#include "core/forecast.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace kerncast;

namespace {

bool near(double a, double b, double eps = 1e-12) { return std::abs(a - b) <= eps; }

std::array<double, kBinCount> oneHot(int bin) {
    std::array<double, kBinCount> p{};
    p[bin - 1] = 1;
    return p;
}

}  // namespace

class TestForecast : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fromRawRenormalisesAndKeepsRawSum() {
        const auto f = Forecast::fromRaw({0.2, 0.2, 0.4, 0.4, 0.4, 0.2, 0.1, 0.1});
        QVERIFY(near(f.raw_sum, 2.0));
        QVERIFY(near(f.probabilities[0], 0.1));
        QVERIFY(near(f.probabilities[2], 0.2));
        QVERIFY(near(f.probabilities[7], 0.05));
        double sum = 0;
        for (double p : f.probabilities)
            sum += p;
        QVERIFY(near(sum, 1.0));
    }

    void predictedBinIsArgmaxTiesToLower_data() {
        QTest::addColumn<QList<double>>("raw");
        QTest::addColumn<int>("bin");
        QTest::newRow("clear winner") << QList<double>{0, 0, 0, 0, 0, 0.7, 0.3, 0} << 6;
        QTest::newRow("tie between 3 and 5") << QList<double>{0, 0, 0.4, 0.2, 0.4, 0, 0, 0} << 3;
        QTest::newRow("uniform") << QList<double>{1, 1, 1, 1, 1, 1, 1, 1} << 1;
        QTest::newRow("last bin") << QList<double>{0, 0, 0, 0, 0, 0, 0, 5} << 8;
    }
    void predictedBinIsArgmaxTiesToLower() {
        QFETCH(QList<double>, raw);
        QFETCH(int, bin);
        std::array<double, kBinCount> a{};
        std::copy(raw.begin(), raw.end(), a.begin());
        QCOMPARE(Forecast::fromRaw(a).predicted_bin, bin);
    }

    void invalidRawIsRejected_data() {
        QTest::addColumn<double>("bad");
        QTest::newRow("negative") << -0.1;
        QTest::newRow("NaN") << std::nan("");
        QTest::newRow("infinite") << std::numeric_limits<double>::infinity();
    }
    void invalidRawIsRejected() {
        QFETCH(double, bad);
        std::array<double, kBinCount> raw{0.5, 0.5, 0, 0, 0, 0, 0, 0};
        raw[3] = bad;
        QVERIFY_THROWS_EXCEPTION(Error, Forecast::fromRaw(raw));
        QVERIFY_THROWS_EXCEPTION(Error, Forecast::fromRaw({}));  // all zero
    }

    void confidenceOfUniformAndOneHot() {
        const auto u = Forecast::fromRaw({1, 1, 1, 1, 1, 1, 1, 1});
        QVERIFY(near(u.maxProbability(), 1.0 / 8));
        QVERIFY(near(u.normalizedEntropyConfidence(), 0.0));
        QVERIFY(near(u.top2Margin(), 0.0));
        QVERIFY(near(u.expectedBin(), 4.5));

        const auto h = Forecast::fromRaw(oneHot(6));
        QVERIFY(near(h.maxProbability(), 1.0));
        QVERIFY(near(h.normalizedEntropyConfidence(), 1.0));
        QVERIFY(near(h.top2Margin(), 1.0));
        QVERIFY(near(h.expectedBin(), 6.0));
    }

    void confidenceOfKnownDistribution() {
        // Two equally likely bins: entropy log 2, so 1 - log 2 / log 8 = 2/3.
        const auto f = Forecast::fromRaw({0, 0, 0, 0.5, 0.5, 0, 0, 0});
        QVERIFY(near(f.maxProbability(), 0.5));
        QVERIFY(near(f.normalizedEntropyConfidence(), 2.0 / 3.0));
        QVERIFY(near(f.top2Margin(), 0.0));
        QVERIFY(near(f.expectedBin(), 4.5));
        const auto g = Forecast::fromRaw({0, 0, 0, 0.1, 0.6, 0.3, 0, 0});
        QVERIFY(near(g.top2Margin(), 0.3));
        QVERIFY(near(g.expectedBin(), 0.4 + 3.0 + 1.8));
    }

    void expectedLogSpeedupUsesGeometricMidpoints() {
        const auto s = BinScheme::gfV2();
        QVERIFY(near(Forecast::fromRaw(oneHot(5)).expectedLogSpeedup(s), 0.5 * std::log(1.41)));
        QVERIFY(near(Forecast::fromRaw(oneHot(2)).expectedLogSpeedup(s), 0.5 * (std::log(0.25) + std::log(0.5))));
        // Open bins fall back to edge / sqrt(2) and edge * sqrt(2).
        QVERIFY(near(Forecast::fromRaw(oneHot(1)).expectedLogSpeedup(s), std::log(0.25 / std::sqrt(2.0))));
        QVERIFY(near(Forecast::fromRaw(oneHot(8)).expectedLogSpeedup(s), std::log(4.0 * std::sqrt(2.0))));
        // A half/half mix of bins 4 and 5 straddles S = 1.
        const auto mix = Forecast::fromRaw({0, 0, 0, 1, 1, 0, 0, 0});
        QVERIFY(near(mix.expectedLogSpeedup(s), 0.25 * (std::log(0.71) + std::log(1.41))));
    }

    void expectedLogSpeedupUsesMeasuredOpenBinMeans() {
        const auto s = BinScheme::gfV2();
        const auto f = Forecast::fromRaw({1, 0, 0, 0, 0, 0, 0, 1});
        QVERIFY(near(f.expectedLogSpeedup(s, {-3.0, 2.5}), 0.5 * (-3.0 + 2.5)));
        // A NaN mean means "no data in that bin": the geometric rule is used for it.
        QVERIFY(near(f.expectedLogSpeedup(s, {std::nan(""), 2.5}), 0.5 * (std::log(0.25 / std::sqrt(2.0)) + 2.5)));
        QVERIFY_THROWS_EXCEPTION(Error, f.expectedLogSpeedup(s, {1.0, 2.0, 3.0}));
    }

    void probabilityAboveThreshold() {
        const auto s = BinScheme::gfV2();
        const auto f = Forecast::fromRaw(oneHot(5));
        QVERIFY(near(f.probabilityAbove(s, 1.0), 1.0));
        QVERIFY(near(f.probabilityAbove(s, 1.41), 0.0));
        QVERIFY(near(f.probabilityAbove(s, std::sqrt(1.41)), 0.5, 1e-9));
        const auto mix = Forecast::fromRaw({0, 0, 0, 0.5, 0, 0, 0, 0.5});
        QVERIFY(near(mix.probabilityAbove(s, 1.0), 0.5));
        QVERIFY(near(mix.probabilityAbove(s, 0.0), 1.0));
    }

    void jsonRoundTrip() {
        auto f = Forecast::fromRaw({0, 0, 1, 2, 1, 0, 0, 0});
        f.surrogate_id = "local-xgb";
        f.reasoning = "memory bound; vector loads help";
        f.tokens_in = 1200;
        f.latency_ms = 35.5;
        const nlohmann::json j = f;
        const auto back = j.get<Forecast>();
        QCOMPARE(back.surrogate_id, f.surrogate_id);
        QCOMPARE(back.reasoning, f.reasoning);
        QCOMPARE(back.predicted_bin, 4);
        QCOMPARE(back.raw_sum, 4.0);
        QCOMPARE(back.tokens_in, int64_t{1200});
        for (int b = 0; b < kBinCount; ++b)
            QVERIFY(near(back.probabilities[b], f.probabilities[b]));
        QVERIFY_THROWS_EXCEPTION(Error, nlohmann::json::parse(R"({"probabilities": [1, 2]})").get<Forecast>());
    }
    // What the surrogate said before a run recalibrated it goes through JSON bit for bit beside the recalibrated
    // bins; a forecast left as given has no "uncalibrated" key and reads back without it (also from null).
    void jsonKeepsUncalibrated() {
        auto f = Forecast::fromRaw({0.03, 0.07, 0.25, 0.45, 0.05, 0.05, 0.05, 0.05});
        f.uncalibrated = std::array<double, kBinCount>{0.02, 0.1 / 3, 0.05, 0.15, 0.4, 0.2, 1.0 / 7, 1e-300};
        const nlohmann::json j = f;
        QVERIFY(j.contains("uncalibrated"));
        const auto back = nlohmann::json::parse(j.dump()).get<Forecast>();
        QVERIFY(back.uncalibrated.has_value());
        for (int b = 0; b < kBinCount; ++b) {
            QCOMPARE((*back.uncalibrated)[b], (*f.uncalibrated)[b]);
            QCOMPARE(back.probabilities[b], f.probabilities[b]);
        }
        QCOMPARE(back.predicted_bin, 4);

        const auto given = Forecast::fromRaw({0, 0, 1, 2, 1, 0, 0, 0});
        const nlohmann::json plain = given;
        QVERIFY(!plain.contains("uncalibrated"));
        QVERIFY(!plain.get<Forecast>().uncalibrated.has_value());
        nlohmann::json with_null = plain;
        with_null["uncalibrated"] = nullptr;
        QVERIFY(!with_null.get<Forecast>().uncalibrated.has_value());
    }

    void badUncalibratedJsonIsRefused_data() {
        QTest::addColumn<QString>("uncalibrated");
        QTest::addColumn<QString>("expected");
        QTest::newRow("too short") << "[0.5, 0.5]"
                                   << "\"uncalibrated\" must be an array of 8 numbers";
        QTest::newRow("too long") << "[0, 0, 0, 0, 0, 0, 0, 0.5, 0.5]"
                                  << "\"uncalibrated\" must be an array of 8 numbers";
        QTest::newRow("empty") << "[]"
                               << "\"uncalibrated\" must be an array of 8 numbers";
        QTest::newRow("a number") << "1"
                                  << "\"uncalibrated\" must be an array of 8 numbers";
        QTest::newRow("negative") << "[0.1, 0.1, 0.1, 0.1, 0.1, -0.1, 0.3, 0.3]"
                                  << "\"uncalibrated\" probability of bin 6 must be a finite number, not negative";
        QTest::newRow("text") << R"([0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, "0.2"])"
                              << "\"uncalibrated\" probability of bin 8 must be a finite number, not negative";
        QTest::newRow("null in it") << "[null, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.3]"
                                    << "\"uncalibrated\" probability of bin 1 must be a finite number, not negative";
        QTest::newRow("all zero") << "[0, 0, 0, 0, 0, 0, 0, 0]"
                                  << "\"uncalibrated\" gives no bin any probability";
    }
    void badUncalibratedJsonIsRefused() {
        QFETCH(QString, uncalibrated);
        QFETCH(QString, expected);
        nlohmann::json j = Forecast::fromRaw({1, 1, 1, 1, 1, 1, 1, 1});
        j["uncalibrated"] = nlohmann::json::parse(uncalibrated.toStdString());
        for (int reader = 0; reader < 2; ++reader) {
            try {
                if (reader == 0)
                    j.get<Forecast>();
                else
                    uncalibrated_from_json(j["uncalibrated"]);
                QFAIL("a bad \"uncalibrated\" was read");
            } catch (const Error& e) {
                QVERIFY2(std::string(e.what()).find(expected.toStdString()) != std::string::npos, e.what());
            }
        }
    }

    void storedForecastIsNotRenormalisedOnRead() {
        // A normalised vector whose sum is 1 only to within an ulp: dividing by that sum again moves its values.
        const std::array<double, kBinCount> p{0.15, 0.15, 0.15, 0.15, 0.1, 0.1, 0.1, 0.1};
        double sum = 0;
        for (double v : p)
            sum += v;
        QVERIFY(sum != 1.0);  // the premise: it sums to 0.9999999999999999
        const Forecast back = nlohmann::json{{"probabilities", p}, {"raw_sum", 3.0}}.get<Forecast>();
        for (int b = 0; b < kBinCount; ++b)
            QCOMPARE(back.probabilities[b], p[b]);  // bit for bit
        QCOMPARE(back.raw_sum, 3.0);
        // An unnormalised stored vector (an old file) is still normalised.
        const Forecast scaled = nlohmann::json{{"probabilities", {2, 2, 0, 0, 0, 0, 0, 0}}}.get<Forecast>();
        QCOMPARE(scaled.probabilities[0], 0.5);
    }
};

QTEST_GUILESS_MAIN(TestForecast)
#include "tst_forecast.moc"
