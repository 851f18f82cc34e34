// The tunables plot: each family configuration at its tunable's value, measured times and forecast times (the
// reference's time over the expected speedup over the reference).
#include "widgets/parameter_plot.h"
#include "widgets/qcustomplot_include.h"

#include <QComboBox>
#include <QSignalSpy>
#include <QTest>

#include <cmath>

using namespace kerncast;

namespace {

CandidateRow configuration(int64_t id, int block, int vec, std::optional<double> timeUs, double expectedSpeedup) {
    CandidateRow r;
    r.id = id;
    r.mutator = Mutator::Parametric;
    r.tunables = {{"BLOCK", block}, {"VEC", vec}};
    r.time_us = timeUs;
    if (expectedSpeedup > 0) {
        r.predicted_bin = 5;
        r.confidence = 0.6;
        r.expected_log_speedup = std::log(expectedSpeedup);
        r.anchor_speedup = 1;
    }
    return r;
}

}  // namespace

class TestParameterPlot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void showsMeasuredAndForecastTimesPerValue() {
        ParameterPlot plot;
        QSignalSpy changed(&plot, &ParameterPlot::tunablesChanged);
        CandidateRow reference;
        reference.id = 1;
        reference.mutator = Mutator::Reference;
        reference.time_us = 100.0;
        plot.setRows({reference, configuration(2, 128, 2, 50.0, 2.0), configuration(3, 256, 4, std::nullopt, 4.0),
                      configuration(4, 512, 4, 20.0, 0)});
        QCOMPARE(changed.count(), 1);
        QCOMPARE(plot.tunables(), (QStringList{QStringLiteral("BLOCK"), QStringLiteral("VEC")}));
        QCOMPARE(plot.tunable(), QStringLiteral("BLOCK"));
        QCOMPARE(plot.chooser()->count(), 2);
        QCOMPARE(plot.measuredGraph()->dataCount(), 2);
        QCOMPARE(plot.forecastGraph()->dataCount(), 2);
        // Configuration 3 is forecast at 4x the reference's 100 us: 25 us at BLOCK = 256.
        const auto forecast = plot.forecastGraph()->data();
        bool found = false;
        for (auto it = forecast->constBegin(); it != forecast->constEnd(); ++it)
            found = found || (it->key == 256 && std::abs(it->value - 25.0) < 1e-9);
        QVERIFY(found);
        QVERIFY(!plot.isPlaceholderVisible());

        // Another tunable from the chooser.
        plot.chooser()->setCurrentText(QStringLiteral("VEC"));
        QCOMPARE(plot.tunable(), QStringLiteral("VEC"));
        QCOMPARE(plot.measuredGraph()->data()->constBegin()->key, 2.0);
        QVERIFY(!plot.setTunable(QStringLiteral("ITEMS")));

        // A run without tunables: nothing to draw, and it says so.
        plot.setRows({reference});
        QVERIFY(plot.tunables().isEmpty());
        QVERIFY(plot.isPlaceholderVisible());
    }
};

QTEST_MAIN(TestParameterPlot)
#include "tst_parameter_plot.moc"
