#include "app/gui/translations.h"
#include "core/gating.h"
#include "core/run_store.h"
#include "widgets/engine_text.h"
#include "widgets/forecast_inspector.h"
#include "widgets/measurement_panel.h"

#include <QImage>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>

#include <cmath>

using namespace kerncast;

namespace {

Forecast peakedForecast() {
    // Most mass on bin 5 (minor speedup), some on 6, a little elsewhere.
    Forecast f = Forecast::fromRaw({0.02, 0.03, 0.05, 0.10, 0.50, 0.20, 0.07, 0.03});
    f.reasoning = "Vectorised loads halve the number of memory transactions.";
    f.surrogate_id = "llm:test";
    return f;
}

CandidateRow rowWith(const QString& status, std::optional<double> speedup = {}) {
    CandidateRow r;
    r.id = 42;
    r.run_id = 1;
    r.parent_id = 7;
    r.generation = 3;
    r.mutator = Mutator::LlmRewrite;
    r.label = QStringLiteral("float4 loads");
    r.status = status;
    r.measured_speedup = speedup;
    const Forecast f = peakedForecast();
    r.probabilities = f.probabilities;
    r.predicted_bin = f.predicted_bin;
    r.confidence = f.maxProbability();
    return r;
}

QString text(const QWidget& w, const char* name) {
    auto* label = w.findChild<QLabel*>(QLatin1String(name));
    return label ? label->text() : QStringLiteral("<no %1>").arg(QLatin1String(name));
}

}  // namespace

class TestForecastInspector : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QLocale::setDefault(QLocale::c()); }

    // A discarded candidate says why: the gate's numbers against tau and pi, from the reason the engine wrote.
    void aDiscardedCandidateSaysWhyWithItsNumbers() {
        GatingConfig config;
        config.epsilon = 0;
        GatingInput input;
        input.forecast = Forecast::fromRaw({0.02, 0.05, 0.20, 0.65, 0.05, 0.02, 0.005, 0.005});
        SplitMix rng(1);
        const auto outcome = decide_gating(config, {input}, BinScheme::gfV2(), 2.0, rng).front();
        QCOMPARE(outcome.decision, GatingDecision::Discard);
        CandidateRow row = rowWith(QString::fromLatin1(candidate_status::Discarded));
        row.decision = GatingDecision::Discard;
        row.reason = QString::fromStdString(outcome.reason);
        ForecastInspector inspector;
        inspector.setCandidate(row, std::nullopt, {});
        const QString status = text(inspector, "statusLabel");
        for (const char* part : {"confidence 0.65 ≥ τ 0.40", "< π 0.30", "P(S > best 2×)", "≤ the best"})
            QVERIFY2(status.contains(QString::fromUtf8(part)), qPrintable(status));
    }

    // Bins carry their speedup range wherever their number is shown, and the engine's phrases (bin names, end
    // reasons, how a candidate was made, the gate's reason) reach the interface in German.
    void binsAndEnginePhrasesInGerman() {
        QVERIFY(install_translations(QLocale(QLocale::German, QLocale::Germany)));
        const auto restore = qScopeGuard([] {
            install_translations(QLocale(QLocale::English, QLocale::UnitedStates));
            QLocale::setDefault(QLocale::c());
        });
        const BinScheme scheme = BinScheme::gfV2();
        QCOMPARE(EngineText::binLabel(scheme, 5), QStringLiteral("5 · leichte Beschleunigung (1,00–1,41×)"));
        QCOMPARE(EngineText::binLabel(scheme, 1), QStringLiteral("1 · starke Verlangsamung (≤ 0,25×)"));
        QCOMPARE(EngineText::binLabel(scheme, 8), QStringLiteral("8 · extreme Beschleunigung (> 4,00×)"));
        QCOMPARE(EngineText::message(std::string("measurement budget spent (40)")),
                 QStringLiteral("Messbudget aufgebraucht (40)"));
        QCOMPARE(EngineText::message(std::string("family TPR=256 ROWS=1 (crossover with #26)")),
                 QStringLiteral("family TPR=256 ROWS=1 (Kreuzung mit #26)"));
        QCOMPARE(EngineText::message(std::string("unsure: confidence 0.31 < tau 0.40")),
                 QStringLiteral("unsicher: Konfidenz 0,31 < τ 0,40"));
        ForecastInspector inspector;
        inspector.setCandidate(rowWith(QStringLiteral("ok"), 1.8), peakedForecast(), {});
        QVERIFY2(text(inspector, "predictedBinValue").contains(QStringLiteral("leichte Beschleunigung")),
                 qPrintable(text(inspector, "predictedBinValue")));
    }

    // The Measurement tab reads as a profiler would: samples and their spread, the reference and the speedup, the
    // share of the roofline, the correctness verdict, and the static report per kernel.
    void theMeasurementPanelShowsWhatTheDeviceSaid() {
        Measurement m;
        m.status = Status::Ok;
        TimingStats t;
        t.median_us = 10;
        t.mean_us = 10.2;
        t.p10_us = 9.8;
        t.p90_us = 10.9;
        t.ci_low_us = 9.9;
        t.ci_high_us = 10.1;
        t.n = 3;
        t.samples_us = {9.8, 10.0, 10.9};
        m.candidate = t;
        TimingStats r = t;
        r.median_us = 25;
        m.reference = r;
        m.speedup = 2.5;
        m.roofline_floor_us = 8;
        m.seeds_checked = 3;
        m.max_abs_error = 1e-6;
        m.device.name = "NVIDIA H200";
        m.device_kind = "replay";
        StaticReport k;
        k.kernel = "saxpy_float4";
        k.registers = 32;
        k.shared_bytes = 1024;
        k.spill_store_bytes = 8;
        MeasurementPanel panel;
        QVERIFY(panel.text().contains(QStringLiteral("Not measured yet")));
        panel.setMeasurement(m, {k});
        const QString text = panel.text();
        for (const char* part : {"Median", "10.00 µs (95% CI 9.90 µs – 10.10 µs)", "9.80, 10.00, 10.90", "25.00 µs",
                                 "2.500× over the reference", "80.0% of the roofline", "3 seed", "NVIDIA H200",
                                 "saxpy_float4", "32 registers, 1024 B shared", "spills 8 B stored"})
            QVERIFY2(text.contains(QString::fromUtf8(part)), qPrintable(QString::fromUtf8(part) + " in:\n" + text));
        ForecastInspector inspector;
        QVERIFY(inspector.measurementPanel());
    }

    // With the run's problem the panel says what a profiler would of the same numbers: the bandwidth and arithmetic
    // rate reached at the benchmark sizes (beside the reference's), and what the worker found for each correctness
    // case and seed; what the run file does not hold (each case's error) is said.
    void theMeasurementPanelShowsRatesAndVerdictsPerCase() {
        const Problem saxpy = Problem::parse(R"({
  "name": "saxpy", "description": "y = a * x + y",
  "sizes": {"benchmark": {"N": 67108864}, "correctness": [{"N": 1}, {"N": 4099}, {"N": 100003}]},
  "buffers": [{"name": "x", "dtype": "f32", "shape": ["N"], "role": "in"},
              {"name": "y", "dtype": "f32", "shape": ["N"], "role": "inout"}],
  "scalars": [{"name": "a", "dtype": "f32", "value": 2.5}],
  "flops": "2 * N", "bytes": "12 * N", "reference": "reference.cu"})",
                                             "problem.json");
        Measurement m;
        m.status = Status::Ok;
        TimingStats t;
        t.median_us = 1000;
        t.n = 1;
        t.samples_us = {1000};
        m.candidate = t;
        t.median_us = 2500;
        m.reference = t;
        m.speedup = 2.5;
        m.seeds_checked = 3;
        MeasurementPanel panel;
        panel.setMeasurement(m, {}, &saxpy);
        QString text = panel.text();
        // 12 * 2^26 bytes in 1 ms: 805.3 GB/s; 2 * 2^26 flops: 134.2 GFLOP/s; the reference in 2.5 ms.
        for (const char* part :
             {"805.3 GB/s (the reference 322.1 GB/s)", "134.2 GFLOP/s (the reference 53.7 GFLOP/s)", "N=67108864",
              "Correctness case 1 (N=1)", "Correctness case 3 (N=100003)", "passed on seeds 1–3",
              "Benchmark case (N=67108864)", "passed on seed 1", "not each case's"})
            QVERIFY2(text.contains(QString::fromUtf8(part)), qPrintable(QString::fromUtf8(part) + " in:\n" + text));
        QCOMPARE(text.count(QStringLiteral("passed on seeds 1–3")), 3);

        // A wrong result: the worker stopped at the case and seed its reason names; the cases after it never ran.
        Measurement wrong;
        wrong.status = Status::Incorrect;
        wrong.reason = "correctness case 2 (N=4099), seed 2: y[17]: expected 1.5, got 1.25";
        panel.setMeasurement(wrong, {}, &saxpy);
        text = panel.text();
        for (const char* part : {"Correctness case 1 (N=1)\npassed on every seed",
                                 "Correctness case 2 (N=4099)\nfailed on seed 2 after passing seed 1",
                                 "Correctness case 3 (N=100003)\nnot run", "Benchmark case (N=67108864)\nnot run"})
            QVERIFY2(text.contains(QString::fromUtf8(part)), qPrintable(QString::fromUtf8(part) + " in:\n" + text));
        QVERIFY(!text.contains(QStringLiteral("GB/s")));  // nothing was timed

        // A problem that states no bytes says so; without the problem there are no rates and no per-case lines.
        Problem noBytes = saxpy;
        noBytes.bytes = Expr();
        panel.setMeasurement(m, {}, &noBytes);
        QVERIFY2(panel.text().contains(QStringLiteral("the problem states no bytes moved")), qPrintable(panel.text()));
        // Flops of 0 are unknown (an imported T1 problem states none), not a rate of 0 GFLOP/s.
        Problem noFlops = saxpy;
        noFlops.flops = Expr::parse("0");
        panel.setMeasurement(m, {}, &noFlops);
        QVERIFY2(panel.text().contains(QStringLiteral("the problem states no floating-point work")),
                 qPrintable(panel.text()));
        QVERIFY(!panel.text().contains(QStringLiteral("GFLOP/s")));
        panel.setMeasurement(m, {});
        QVERIFY(!panel.text().contains(QStringLiteral("GB/s")));
        QVERIFY(!panel.text().contains(QStringLiteral("Correctness case")));
    }

    void showsTheScores() {
        ForecastInspector inspector;
        const Forecast f = peakedForecast();
        inspector.setCandidate(rowWith(QStringLiteral("ok"), 1.8), f, QStringLiteral("You are a CUDA expert..."));
        QCOMPARE(inspector.candidateId(), int64_t{42});
        QCOMPARE(text(inspector, "predictedBinValue"), QStringLiteral("5 · minor speedup (1.00–1.41×)"));
        QCOMPARE(text(inspector, "maxProbabilityValue"), QStringLiteral("0.50"));
        QCOMPARE(text(inspector, "entropyConfidenceValue"), QString::number(f.normalizedEntropyConfidence(), 'f', 2));
        QCOMPARE(text(inspector, "top2MarginValue"), QStringLiteral("0.30"));
        QVERIFY(text(inspector, "expectedSpeedupValue")
                    .startsWith(QString::number(std::exp(f.expectedLogSpeedup(BinScheme::gfV2())), 'f', 2) +
                                QStringLiteral("×")));
        // 1.8 lies in (1.41, 2.0]: bin 6.
        QCOMPARE(text(inspector, "measuredValue"),
                 QStringLiteral("1.80× vs reference — bin 6 · significant speedup (1.41–2.00×)"));
        QVERIFY(text(inspector, "titleLabel").contains(QStringLiteral("float4 loads")));
        QCOMPARE(inspector.findChild<QPlainTextEdit*>(QStringLiteral("reasoningText"))->toPlainText(),
                 QString::fromStdString(f.reasoning));
        QCOMPARE(inspector.findChild<QPlainTextEdit*>(QStringLiteral("promptText"))->toPlainText(),
                 QStringLiteral("You are a CUDA expert..."));

        BinDistributionWidget* bars = inspector.distribution();
        QCOMPARE(bars->probabilities().size(), kBinCount);
        for (int i = 0; i < kBinCount; ++i)
            QCOMPARE(bars->probabilities()[i], f.probabilities[static_cast<size_t>(i)]);
        QCOMPARE(bars->measuredBin(), 6);
        QCOMPARE(bars->predictedBin(), 5);
    }

    void scoresAreWholeOnANarrowDock_data() {
        QTest::addColumn<QLocale>("language");
        QTest::addColumn<QSize>("size");
        for (const QLocale& language :
             {QLocale(QLocale::English, QLocale::UnitedStates), QLocale(QLocale::German, QLocale::Germany)})
            for (const QSize& size : {QSize(332, 330), QSize(332, 600), QSize(440, 380)})
                QTest::addRow("%s %dx%d", language.name().toLatin1().constData(), size.width(), size.height())
                    << language << size;
    }
    // The inspector of a 1280×720 window (332×330) or of a 1920×1080 one (440×380): the tabs are in view at the top,
    // Forecast first and Measurement beside it, and each score is shown whole on as many lines as it needs (scrolled
    // to, not cut off halfway through a line).
    void scoresAreWholeOnANarrowDock() {
        QFETCH(QLocale, language);
        QFETCH(QSize, size);
        if (language.language() != QLocale::English)
            QVERIFY(install_translations(language));
        const auto restore = qScopeGuard([] {
            install_translations(QLocale(QLocale::English, QLocale::UnitedStates));
            QLocale::setDefault(QLocale::c());
        });
        ForecastInspector inspector;
        CandidateRow row = rowWith(QStringLiteral("ok"), 1.8);
        row.label = QStringLiteral("family TPR=256 ROWS=1 VEC=4 ITEMS=8 (crossover with #26)");
        Forecast f = peakedForecast();
        f.anchor_id = 5;
        f.anchor_speedup = 1.7;
        inspector.setCandidate(row, f, {});
        inspector.resize(size);
        inspector.show();
        QVERIFY(QTest::qWaitForWindowExposed(&inspector));
        QCoreApplication::processEvents();
        QCOMPARE(inspector.size(), size);
        QTabWidget* tabs = inspector.tabs();
        QCOMPARE(tabs->currentIndex(), 0);
        QCOMPARE(tabs->indexOf(inspector.measurementPanel()), 1);
        QVERIFY(tabs->geometry().top() < size.height() / 3);
        for (const char* name : {"predictedBinValue", "maxProbabilityValue", "entropyConfidenceValue",
                                 "top2MarginValue", "expectedSpeedupValue", "measuredValue"}) {
            const auto* label = inspector.findChild<QLabel*>(QLatin1String(name));
            QVERIFY(label && label->isVisible());
            QVERIFY2(label->height() >= label->heightForWidth(label->width()) &&
                         label->width() + label->x() <= label->parentWidget()->width(),
                     qPrintable(QStringLiteral("%1: %2x%3 at x %4, needs height %5; '%6'")
                                    .arg(QLatin1String(name))
                                    .arg(label->width())
                                    .arg(label->height())
                                    .arg(label->x())
                                    .arg(label->heightForWidth(label->width()))
                                    .arg(label->text())));
        }
        QVERIFY(inspector.distribution()->height() >= 90);
    }

    // Without the stored forecast the row's probabilities still give the scores; there is no reasoning to show.
    void scoresFromTheRowAlone() {
        ForecastInspector inspector;
        inspector.setCandidate(rowWith(QStringLiteral("trusted")));
        QCOMPARE(text(inspector, "maxProbabilityValue"), QStringLiteral("0.50"));
        QCOMPARE(text(inspector, "measuredValue"), QStringLiteral("not measured"));
        QVERIFY(inspector.findChild<QPlainTextEdit*>(QStringLiteral("reasoningText"))->toPlainText().isEmpty());
        QCOMPARE(inspector.distribution()->measuredBin(), 0);

        CandidateRow bare = rowWith(QStringLiteral("proposed"));
        bare.predicted_bin = 0;
        inspector.setCandidate(bare);
        QCOMPARE(text(inspector, "predictedBinValue"), QStringLiteral("no forecast yet"));
        QVERIFY(inspector.distribution()->probabilities().isEmpty());
        QVERIFY(text(inspector, "maxProbabilityValue").isEmpty());
    }

    // A search run's stored calls: the mutation that wrote the candidate and its forecasts, with prompt, reply and
    // reasoning; a deferred forecast says so where the predicted bin would be.
    void showsTheModelCalls() {
        ForecastInspector inspector;
        CandidateRow row = rowWith(QStringLiteral("pending"));
        row.probabilities = {};
        row.predicted_bin = 0;
        inspector.setCandidate(row);
        LlmCall rewrite;
        rewrite.kind = "mutate_rewrite";
        rewrite.model = "openai/gpt-oss-120b";
        rewrite.prompt = "[user]\nWrite a faster kernel";
        rewrite.reply = "```cuda\n// faster\n```";
        rewrite.tokens_in = 900;
        rewrite.tokens_out = 1200;
        rewrite.cost_usd = 0.0123;
        rewrite.latency_ms = 2500;
        rewrite.outcome = "ok";
        LlmCall forecast = rewrite;
        forecast.kind = "forecast";
        forecast.prompt = "[system]\nbins\n\n[user]\nthe candidate";
        forecast.reply = "defer_to_measurement {\"reasoning\": \"cannot tell\"}";
        forecast.reasoning = "The loads might coalesce or not.";
        forecast.outcome = "deferred";
        inspector.setLlmCalls({rewrite, forecast});
        const QString calls = inspector.findChild<QPlainTextEdit*>(QStringLiteral("llmCallsText"))->toPlainText();
        QVERIFY2(
            calls.contains("mutate_rewrite · ok · openai/gpt-oss-120b · 900 in / 1200 out tokens · $0.0123 · 2.5 s"),
            qPrintable(calls));
        QVERIFY(calls.contains("forecast · deferred"));
        QVERIFY(calls.contains("Reply:\n```cuda"));
        QVERIFY(calls.contains("Reasoning:\nThe loads might coalesce or not."));
        QCOMPARE(inspector.findChild<QPlainTextEdit*>(QStringLiteral("promptText"))->toPlainText(),
                 QStringLiteral("[system]\nbins\n\n[user]\nthe candidate"));
        QCOMPARE(inspector.findChild<QPlainTextEdit*>(QStringLiteral("reasoningText"))->toPlainText(),
                 QStringLiteral("The loads might coalesce or not."));
        QVERIFY(text(inspector, "predictedBinValue").contains("deferred"));
        inspector.setLlmCalls({});
        QVERIFY(inspector.findChild<QPlainTextEdit*>(QStringLiteral("llmCallsText"))->toPlainText().isEmpty());
    }

    // A mutation's call says what its prompt was made of, in tokens (4 characters each), by the template's headings.
    void showsWhatAMutationPromptIsMadeOf() {
        ForecastInspector inspector;
        inspector.setCandidate(rowWith(QStringLiteral("pending")));
        LlmCall rewrite;
        rewrite.kind = "mutate_rewrite";
        rewrite.outcome = "ok";
        rewrite.prompt = "[system]\n" + std::string(400, 's') + "\n\n[user]\n# Problem: p\n" + std::string(788, 'p') +
                         "# Reference kernel program\n" + std::string(374, 'r') + "# Parent to improve\n" +
                         std::string(2381, 'x') + "# Other measured programs of this search\n" +
                         std::string(3959, 'i') + "\n\nWrite a faster kernel.";
        LlmCall forecast = rewrite;
        forecast.kind = "forecast";
        inspector.setLlmCalls({rewrite, forecast});
        const QString calls = inspector.findChild<QPlainTextEdit*>(QStringLiteral("llmCallsText"))->toPlainText();
        const QLocale locale;
        const QString expected =
            QStringLiteral("Prompt: about %1 tokens; instructions 110, problem 200, reference 100, "
                           "parent 600, inspirations %2\n")
                .arg(locale.toString(2011), locale.toString(1000));
        QVERIFY2(calls.contains(expected), qPrintable(calls));
        QCOMPARE(calls.count(QStringLiteral("Prompt: about")), 1);  // not for the forecast
    }

    void failedMeasurementShowsItsReason() {
        ForecastInspector inspector;
        CandidateRow row = rowWith(QStringLiteral("incorrect"));
        row.reason = QStringLiteral("output 17 differs by 3.2");
        inspector.setCandidate(row, peakedForecast());
        QCOMPARE(text(inspector, "measuredValue"), QStringLiteral("incorrect: output 17 differs by 3.2"));
        QCOMPARE(inspector.distribution()->measuredBin(), 0);
    }

    void measureButton_data() {
        QTest::addColumn<QString>("status");
        QTest::addColumn<bool>("hasSpeedup");
        QTest::addColumn<bool>("enabled");
        QTest::newRow("forecast") << "forecast" << false << true;
        QTest::newRow("trusted") << "trusted" << false << true;
        QTest::newRow("discarded") << "discarded" << false << true;
        QTest::newRow("queued") << "queued" << false << false;
        QTest::newRow("measuring") << "measuring" << false << false;
        QTest::newRow("ok") << "ok" << true << false;
        QTest::newRow("incorrect") << "incorrect" << false << false;
        QTest::newRow("compile error") << "compile_error" << false << false;
    }
    void measureButton() {
        QFETCH(QString, status);
        QFETCH(bool, hasSpeedup);
        QFETCH(bool, enabled);
        ForecastInspector inspector;
        QSignalSpy requested(&inspector, &ForecastInspector::forceMeasureRequested);
        inspector.setCandidate(rowWith(status, hasSpeedup ? std::optional<double>(1.3) : std::nullopt));
        auto* button = inspector.findChild<QPushButton*>(QStringLiteral("measureButton"));
        QVERIFY(button);
        QCOMPARE(button->isEnabled(), enabled);
        QVERIFY(!button->toolTip().isEmpty());
        QTest::mouseClick(button, Qt::LeftButton);
        QCOMPARE(requested.count(), enabled ? 1 : 0);
        if (enabled)
            QCOMPARE(requested[0][0].toLongLong(), 42);
        inspector.clear();
        QVERIFY(!button->isEnabled());
        QCOMPARE(inspector.candidateId(), int64_t{0});
    }

    // What is drawn: bar heights follow the probabilities, the predicted bar and the measured column stand out.
    void drawsTheDistribution() {
        BinDistributionWidget bars;
        bars.resize(400, 200);
        const QList<double> p{0.02, 0.03, 0.05, 0.10, 0.50, 0.20, 0.07, 0.03};
        bars.setDistribution(p, 6, {"a", "b", "c", "d", "e", "f", "g", "h"});
        QCOMPARE(bars.predictedBin(), 5);
        const double full = bars.barRect(5).height();
        QVERIFY(full > 100);
        for (int bin = 1; bin <= 8; ++bin) {
            QVERIFY(bars.columnRect(bin).contains(bars.barRect(bin).center()));
            QVERIFY(qAbs(bars.barRect(bin).height() / full - p[bin - 1] / 0.5) < 1e-9);
            QCOMPARE(bars.barRect(bin).bottom(), bars.barRect(5).bottom());
        }
        QVERIFY(bars.columnRect(2).right() <= bars.columnRect(3).left());
        QCOMPARE(bars.binAt(bars.barRect(3).center()), 3);
        QCOMPARE(bars.binAt(QPointF(-5, -5)), 0);

        const QImage image = bars.grab().toImage();
        const auto pixel = [&](QPointF at) { return QColor(image.pixel(at.toPoint())); };
        QCOMPARE(pixel(bars.barRect(5).center()), BinDistributionWidget::predictedBarColor());
        QCOMPARE(pixel(bars.barRect(2).center()), BinDistributionWidget::barColor());
        // Above the measured bin's bar its column is tinted; above another bin's bar it is not.
        const auto aboveBar = [&](int bin) {
            return QPointF(bars.columnRect(bin).left() + 2, bars.columnRect(bin).top() + 2);
        };
        QCOMPARE(pixel(aboveBar(6)), BinDistributionWidget::measuredColumnColor());
        QVERIFY(pixel(aboveBar(7)) != BinDistributionWidget::measuredColumnColor());
        QCOMPARE(pixel(aboveBar(7)), bars.palette().base().color());

        bars.setDistribution(p, 0, {});
        const QImage unmarked = bars.grab().toImage();
        QCOMPARE(QColor(unmarked.pixel(aboveBar(6).toPoint())), bars.palette().base().color());
        bars.setDistribution(p, 12, {});  // out of range: nothing marked
        QCOMPARE(bars.measuredBin(), 0);
    }
};

QTEST_MAIN(TestForecastInspector)
#include "tst_forecast_inspector.moc"
