// The risk-coverage curve: a step line over coverage, the full-coverage risk as a reference, AURC in the title.
#include "widgets/plot_tickers.h"
#include "widgets/qcustomplot_include.h"
#include "widgets/risk_coverage_plot.h"

#include "tests/support/plot_data.h"

#include <QTest>

#include <cmath>

using namespace kerncast;
using kerncast::test::pointsOf;

namespace {

// Thresholds from confident to unsure, listed out of order on purpose.
std::vector<RiskCoveragePoint> curve() {
    return {{0.4, 1.0, 0.35}, {0.9, 0.25, 0.0}, {0.6, 0.75, 0.2}, {0.8, 0.5, 0.1}};
}

}  // namespace

class TestRiskCoveragePlot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void theCurveIsAStepLineOverCoverage() {
        RiskCoveragePlot plot;
        plot.setCurve(curve(), 0.1125);
        QCOMPARE(plot.curve()->lineStyle(), QCPGraph::lsStepRight);
        // Sorted by coverage, starting from zero coverage at the most confident set's risk.
        QCOMPARE(pointsOf(plot.curve()), (QVector<QPointF>{{0, 0}, {0.25, 0}, {0.5, 0.1}, {0.75, 0.2}, {1, 0.35}}));
        QCOMPARE(pointsOf(plot.fullCoverageLine()), (QVector<QPointF>{{0, 0.35}, {1, 0.35}}));
        const QCPRange y = plot.curve()->valueAxis()->range();
        QVERIFY(y.lower == 0 && y.upper > 0.35 && y.upper <= 1 + 1e-6);
        QCOMPARE(plot.curve()->keyAxis()->range().upper, kFullShare);
    }

    void theTitleCarriesTheAurc_data() {
        QTest::addColumn<double>("aurc");
        QTest::addColumn<QString>("title");
        QTest::newRow("typical") << 0.1125 << QStringLiteral("Risk–coverage (AURC = 0.113)");
        QTest::newRow("small") << 0.0421 << QStringLiteral("Risk–coverage (AURC = 0.042)");
    }
    void theTitleCarriesTheAurc() {
        QFETCH(double, aurc);
        QFETCH(QString, title);
        RiskCoveragePlot plot;
        plot.setLocale(QLocale::c());
        plot.setCurve(curve(), aurc);
        QCOMPARE(plot.title(), title);
    }

    void takesTheMetricsAsComputed() {
        ForecastMetrics metrics;
        metrics.risk_coverage = curve();
        metrics.aurc = 0.2;
        RiskCoveragePlot plot;
        plot.setLocale(QLocale::c());
        plot.setMetrics(metrics);
        QCOMPARE(plot.title(), QStringLiteral("Risk–coverage (AURC = 0.200)"));
        QCOMPARE(plot.curve()->data()->size(), 5);
    }

    void leavesOutPointsThatAreNotNumbers() {
        RiskCoveragePlot plot;
        std::vector<RiskCoveragePoint> points = curve();
        points.push_back({0.1, std::nan(""), 0.5});
        plot.setCurve(points, 0.1);
        QCOMPARE(plot.curve()->data()->size(), 5);
    }

    void withoutACurveShowsThePlaceholder() {
        RiskCoveragePlot plot;
        QVERIFY(plot.isPlaceholderVisible());
        QCOMPARE(plot.title(), QStringLiteral("Risk–coverage"));
        plot.setCurve(curve(), 0.1);
        QVERIFY(!plot.isPlaceholderVisible());
        plot.clear();
        QVERIFY(plot.isPlaceholderVisible());
        QVERIFY(plot.curve()->data()->isEmpty());
        QVERIFY(plot.fullCoverageLine()->data()->isEmpty());
        QCOMPARE(plot.title(), QStringLiteral("Risk–coverage"));
    }
};

QTEST_MAIN(TestRiskCoveragePlot)
#include "tst_risk_coverage_plot.moc"
