// Gating policies: which forecast candidates are measured, trusted, discarded or audited.
#include "core/error.h"
#include "core/gating.h"

#include <QtTest>

using namespace kerncast;

namespace {

Forecast forecast(std::array<double, kBinCount> p) { return Forecast::fromRaw(p); }

GatingInput input(std::array<double, kBinCount> p) { return GatingInput{forecast(p)}; }

}  // namespace

class TestGating : public QObject {
    Q_OBJECT

private slots:
    void splitMixIsReproducibleFromItsState() {
        SplitMix a(42);
        a.next();
        const uint64_t state = a.state();
        const uint64_t x = a.next(), y = a.next();
        SplitMix b(0);
        b.setState(state);
        QCOMPARE(b.next(), x);
        QCOMPARE(b.next(), y);
        for (int i = 0; i < 1000; ++i) {
            const double u = a.uniform();
            QVERIFY(u >= 0 && u < 1);
            QVERIFY(a.below(7) < 7);
        }
    }

    void measureAllMeasuresEverything() {
        SplitMix rng(1);
        GatingConfig c;
        c.kind = GatingKind::MeasureAll;
        auto out = decide_gating(c, {input({0, 0, 0, 0, 0, 0, 0, 1}), GatingInput{}}, BinScheme::gfV2(), 2.0, rng);
        QCOMPARE(out.size(), size_t(2));
        for (const auto& o : out)
            QCOMPARE(o.decision, GatingDecision::Measure);
    }

    void topKMeasuresTheHighestExpectedBins() {
        SplitMix rng(1);
        GatingConfig c;
        c.kind = GatingKind::TopK;
        c.top_k = 2;
        c.epsilon = 0;
        // expected bins 2, 7, 5, 7.5: the 2nd and 4th are the top two.
        auto out = decide_gating(c,
                                 {input({0, 1, 0, 0, 0, 0, 0, 0}), input({0, 0, 0, 0, 0, 0, 1, 0}),
                                  input({0, 0, 0, 0, 1, 0, 0, 0}), input({0, 0, 0, 0, 0, 0, 0.5, 0.5})},
                                 BinScheme::gfV2(), 1.0, rng);
        QCOMPARE(out[0].decision, GatingDecision::Discard);
        QCOMPARE(out[1].decision, GatingDecision::Measure);
        QCOMPARE(out[2].decision, GatingDecision::Discard);
        QCOMPARE(out[3].decision, GatingDecision::Measure);
        QVERIFY(out[3].reason.find("rank 1 of 4") != std::string::npos);
    }

    void selectiveMeasuresUnsureAndPromisingTrustsTheRest() {
        SplitMix rng(1);
        GatingConfig c;
        c.kind = GatingKind::Selective;
        c.tau = 0.6;
        c.pi = 0.3;
        c.epsilon = 0;
        const double best = 1.2;  // bin 5 holds (1.0, 1.41]
        auto out = decide_gating(c,
                                 {
                                     input({0.2, 0.2, 0.2, 0.2, 0.2, 0, 0, 0}),  // unsure
                                     input({0, 0, 0, 0, 0, 0, 0.9, 0.1}),        // confident and fast
                                     input({0.9, 0.1, 0, 0, 0, 0, 0, 0}),        // confident and slow
                                     GatingInput{},                              // the surrogate failed
                                 },
                                 BinScheme::gfV2(), best, rng);
        QCOMPARE(out[0].decision, GatingDecision::Measure);
        QVERIFY(out[0].reason.find("unsure") != std::string::npos);
        QCOMPARE(out[1].decision, GatingDecision::Measure);
        QVERIFY(out[1].reason.find("promising") != std::string::npos);
        QVERIFY(out[1].p_above_best > 0.99);
        QCOMPARE(out[2].decision, GatingDecision::Discard);
        QVERIFY(out[2].p_above_best < 1e-12);
        QCOMPARE(out[3].decision, GatingDecision::Measure);
        QCOMPARE(out[0].confidence, 0.2);
    }

    void selectiveTrustsAConfidentForecastAboveTheBestButUnlikelyToBeatIt() {
        // All mass in bin 5 (1.0, 1.41], best 1.40: the expected speedup (geometric middle ~1.19) is below the
        // best, so the candidate is a trusted slow one; with best 1.05 the expected speedup beats it but P(S >
        // best) is high, so it is measured.
        SplitMix rng(1);
        GatingConfig c;
        c.tau = 0.5;
        c.pi = 0.99;
        c.epsilon = 0;
        auto out = decide_gating(c, {input({0, 0, 0, 0, 1, 0, 0, 0})}, BinScheme::gfV2(), 1.40, rng);
        QCOMPARE(out[0].decision, GatingDecision::Discard);
        out = decide_gating(c, {input({0, 0, 0, 0, 1, 0, 0, 0})}, BinScheme::gfV2(), 1.05, rng);
        QCOMPARE(out[0].decision, GatingDecision::Trust);
    }

    void auditShareMeasuresTrustedCandidates() {
        GatingConfig c;
        c.tau = 0.5;
        c.pi = 0.5;
        std::vector<GatingInput> batch(200, input({0.9, 0.1, 0, 0, 0, 0, 0, 0}));
        c.epsilon = 1.0;
        SplitMix rng(3);
        for (const auto& o : decide_gating(c, batch, BinScheme::gfV2(), 1.0, rng))
            QCOMPARE(o.decision, GatingDecision::Audit);
        c.epsilon = 0.0;
        for (const auto& o : decide_gating(c, batch, BinScheme::gfV2(), 1.0, rng))
            QCOMPARE(o.decision, GatingDecision::Discard);
        c.epsilon = 0.25;
        int audited = 0;
        for (const auto& o : decide_gating(c, batch, BinScheme::gfV2(), 1.0, rng))
            audited += o.decision == GatingDecision::Audit;
        QVERIFY2(audited > 25 && audited < 75, std::to_string(audited).c_str());
        // The same random state gives the same audits.
        SplitMix a(9), b(9);
        auto x = decide_gating(c, batch, BinScheme::gfV2(), 1.0, a);
        auto y = decide_gating(c, batch, BinScheme::gfV2(), 1.0, b);
        for (size_t i = 0; i < x.size(); ++i)
            QCOMPARE(x[i].decision, y[i].decision);
    }

    void configRoundTripsAndRejectsBadValues() {
        GatingConfig c;
        c.kind = GatingKind::TopK;
        c.top_k = 3;
        c.tau = 0.7;
        nlohmann::json j = c;
        const GatingConfig back = gating_config_from_json(j);
        QCOMPARE(back.kind, GatingKind::TopK);
        QCOMPARE(back.top_k, 3);
        QCOMPARE(back.tau, 0.7);
        QVERIFY_THROWS_EXCEPTION(Error, gating_config_from_json({{"policy", "sometimes"}}));
        QVERIFY_THROWS_EXCEPTION(Error, gating_config_from_json({{"tau", 1.5}}));
        QVERIFY_THROWS_EXCEPTION(Error, gating_config_from_json({{"pi", "high"}}));
        QCOMPARE(gating_decision_from_string("audit"), GatingDecision::Audit);
        QVERIFY_THROWS_EXCEPTION(Error, gating_decision_from_string("maybe"));
    }
};

QTEST_APPLESS_MAIN(TestGating)
#include "tst_gating.moc"
