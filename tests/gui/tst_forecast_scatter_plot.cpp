// Forecast against measured speedup: points reach the plot, a click on a point names its candidate, the selection
// ring follows, confident forecasts are drawn darker, and new points leave a zoomed view alone.
#include "widgets/forecast_scatter_plot.h"
#include "widgets/qcustomplot_include.h"

#include <QApplication>
#include <QFile>
#include <QImage>
#include <QMenu>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>
#include <memory>
#include <random>

using namespace kerncast;

namespace {

// Nine candidates on a 3 x 3 grid of log-speedups (-1, 0, 1), ids 1..9 row by row, far apart on screen; candidate
// i has confidence i / 10.
std::vector<ForecastPoint> grid() {
    std::vector<ForecastPoint> points;
    for (double measured : {-1.0, 0.0, 1.0})
        for (double expected : {-1.0, 0.0, 1.0}) {
            const auto id = static_cast<int64_t>(points.size()) + 1;
            points.push_back({id, expected, measured, 0.1 * static_cast<double>(id)});
        }
    return points;
}

void showAt(QWidget& widget, const QSize& size) {
    widget.resize(size);
    widget.show();
    QVERIFY(QTest::qWaitForWindowExposed(&widget));
}

const QCPGraph* graphNamed(const QCustomPlot* plot, const QString& name) {
    for (int i = 0; i < plot->graphCount(); ++i)
        if (plot->graph(i)->name() == name)
            return plot->graph(i);
    return nullptr;
}

double distance(const QPointF& a, const QPointF& b) { return std::hypot(a.x() - b.x(), a.y() - b.y()); }

}  // namespace

class TestForecastScatterPlot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void pointsReachThePlot() {
        ForecastScatterPlot plot;
        plot.setPoints(grid());
        QCOMPARE(plot.pointCount(), 9);
        QVERIFY(!plot.isPlaceholderVisible());
        bool found = false;
        const QCPRange keys = plot.cloud()->getKeyRange(found);
        QVERIFY(found);
        QCOMPARE(keys.lower, -1.0);
        QCOMPARE(keys.upper, 1.0);
        const QCPRange values = plot.cloud()->getValueRange(found);
        QCOMPARE(values.lower, -1.0);
        QCOMPARE(values.upper, 1.0);
        // Every point is in view, on axes with the same range so that the diagonal is "forecast = measured".
        const QCPRange x = plot.customPlot()->xAxis->range();
        const QCPRange y = plot.customPlot()->yAxis->range();
        QVERIFY(x.lower < -1 && x.upper > 1);
        QCOMPARE(x, y);
    }

    void leavesOutWhatItCannotPlace() {
        ForecastScatterPlot plot;
        const double inf = std::numeric_limits<double>::infinity();
        plot.setPoints({{1, 0.2, -inf, 0.5},          // failed measurement: no log-speedup
                        {2, std::nan(""), 0.1, 0.5},  // no forecast
                        {3, 0.2, 0.3, std::nan("")},  // no confidence: drawn as least confident
                        {4, 0.5, 0.5, 0.9},
                        {4, -0.5, -0.5, 0.9}});  // the same candidate again: the later point wins
        QCOMPARE(plot.pointCount(), 2);
        QVERIFY(!plot.contains(1));
        QVERIFY(!plot.contains(2));
        QVERIFY(plot.contains(3));
        bool found = false;
        QCOMPARE(plot.cloud()->getKeyRange(found), QCPRange(-0.5, 0.2));
    }

    void appendAddsNewCandidatesAndMovesKnownOnes() {
        ForecastScatterPlot plot;
        plot.setPoints(grid());
        plot.appendPoints({{10, 2.0, 2.5, 0.7}, {5, 0.5, -0.5, 0.7}});
        QCOMPARE(plot.pointCount(), 10);
        bool found = false;
        QCOMPARE(plot.cloud()->getKeyRange(found), QCPRange(-1, 2));
        QCOMPARE(plot.cloud()->getValueRange(found), QCPRange(-1, 2.5));
        QVERIFY(plot.customPlot()->yAxis->range().contains(2.5));  // the view grew to show the new point
        // Candidate 5 moved from (0, 0) to (0.5, -0.5): a click there finds it.
        QCOMPARE(plot.candidateAt(plot.pixelOf(5)), int64_t{5});
        QCOMPARE(plot.pixelOf(5).x(), plot.customPlot()->xAxis->coordToPixel(0.5));
        QCOMPARE(plot.pixelOf(5).y(), plot.customPlot()->yAxis->coordToPixel(-0.5));
    }

    // On a narrow plot the tick labels keep apart and the legend sits under the axes, never over the points.
    void aNarrowPlotKeepsItsLabelsApartAndItsPointsUncovered_data() {
        QTest::addColumn<int>("width");
        QTest::newRow("narrow") << 300;
        QTest::newRow("medium") << 520;
        QTest::newRow("wide") << 1100;
    }
    void aNarrowPlotKeepsItsLabelsApartAndItsPointsUncovered() {
        QFETCH(int, width);
        ForecastScatterPlot plot;
        std::vector<ForecastPoint> points;
        for (int i = 0; i <= 40; ++i)  // about twelve doublings each way: many candidate ticks
            points.push_back({i + 1, -4.0 + i * 0.2, -4.0 + i * 0.21, 0.5});
        plot.setPoints(points);
        showAt(plot, QSize(width, 420));
        QCustomPlot* qcp = plot.customPlot();
        qcp->replot();
        qcp->replot();  // tick counts follow the axis length laid out by the first pass
        QCPAxisRect* rect = qcp->axisRect();
        QCPAxis* x = rect->axis(QCPAxis::atBottom);
        const QFontMetrics metrics(x->tickLabelFont());
        const QVector<double> ticks = x->tickVector();
        const QVector<QString> labels = x->tickVectorLabels();
        QVERIFY(ticks.size() >= 2);
        for (int i = 1; i < ticks.size(); ++i) {
            const double gap = x->coordToPixel(ticks[i]) - x->coordToPixel(ticks[i - 1]);
            const double needed =
                (metrics.horizontalAdvance(labels[i]) + metrics.horizontalAdvance(labels[i - 1])) / 2.0;
            QVERIFY2(gap > needed + 4, qPrintable(QStringLiteral("labels %1 and %2: %3 px apart, need %4")
                                                      .arg(labels[i - 1], labels[i])
                                                      .arg(gap)
                                                      .arg(needed)));
        }
        QVERIFY(qcp->legend->visible());
        QVERIFY2(!qcp->legend->outerRect().intersects(rect->rect()), "the legend lies outside the axes");
    }

    // The plots dock of a 1280×720 window leaves the scatter plot about 170 pixels: the colour scale's percentages
    // keep apart, and the y-axis label stays inside the plot (on more lines, or shortened with "…").
    void aLowPlotKeepsItsScaleLabelsApart() {
        ForecastScatterPlot plot;
        plot.setPoints(grid());
        showAt(plot, QSize(580, 170));
        QCustomPlot* qcp = plot.customPlot();
        qcp->replot();
        qcp->replot();
        auto* colorScale = qcp->findChild<QCPColorScale*>();
        QVERIFY(colorScale);
        QCPAxis* scale = colorScale->axis();
        const QVector<double> ticks = scale->tickVector();
        const int lineHeight = QFontMetrics(scale->tickLabelFont()).height();
        QVERIFY(!ticks.isEmpty());
        for (int i = 1; i < ticks.size(); ++i) {
            const double gap = std::abs(scale->coordToPixel(ticks[i]) - scale->coordToPixel(ticks[i - 1]));
            QVERIFY2(gap >= lineHeight,
                     qPrintable(QStringLiteral("%1 px apart, a label is %2 high").arg(gap).arg(lineHeight)));
        }
        QCPAxis* y = qcp->axisRect()->axis(QCPAxis::atLeft);
        const QFontMetrics label(y->labelFont());
        // Centred on the axis, each line stays between the plot's top and the foot of the axis rect's margin.
        const QRect axis = y->axisRect()->rect();
        const int room = axis.height() + 2 * std::min(axis.top(), y->axisRect()->margins().bottom());
        for (const QString& line : y->label().split(QLatin1Char('\n')))
            QVERIFY2(label.horizontalAdvance(line) <= room, qPrintable(line));
    }

    void clickingAPointEmitsItsCandidate_data() {
        QTest::addColumn<qint64>("id");
        QTest::addColumn<QPoint>("offset");  // from the point's centre, in pixels
        QTest::newRow("bottom left, dead centre") << qint64(1) << QPoint(0, 0);
        QTest::newRow("centre, slightly off") << qint64(5) << QPoint(3, -3);
        QTest::newRow("top right, at the edge of the radius") << qint64(9) << QPoint(-4, 4);
        QTest::newRow("middle right") << qint64(6) << QPoint(0, 5);
    }
    void clickingAPointEmitsItsCandidate() {
        QFETCH(qint64, id);
        QFETCH(QPoint, offset);
        ForecastScatterPlot plot;
        plot.setPoints(grid());
        showAt(plot, {600, 500});
        QSignalSpy clicked(&plot, &ForecastScatterPlot::candidateClicked);
        const QPoint at = plot.pixelOf(id).toPoint() + offset;
        QTest::mouseClick(plot.customPlot(), Qt::LeftButton, Qt::NoModifier, at);
        QCOMPARE(clicked.count(), 1);
        QCOMPARE(clicked.front().front().toLongLong(), id);
        QCOMPARE(plot.selectedId(), int64_t(id));
    }

    void clickingBetweenPointsEmitsNothing() {
        ForecastScatterPlot plot;
        plot.setPoints(grid());
        showAt(plot, {600, 500});
        QSignalSpy clicked(&plot, &ForecastScatterPlot::candidateClicked);
        const QPointF between = (plot.pixelOf(1) + plot.pixelOf(5)) / 2;  // far from every point
        QTest::mouseClick(plot.customPlot(), Qt::LeftButton, Qt::NoModifier, between.toPoint());
        // Just outside the click radius of a point.
        const QPoint beside = plot.pixelOf(5).toPoint() + QPoint(int(ForecastScatterPlot::kClickRadius) + 3, 0);
        QTest::mouseClick(plot.customPlot(), Qt::LeftButton, Qt::NoModifier, beside);
        QCOMPARE(clicked.count(), 0);
        QCOMPARE(plot.selectedId(), int64_t{0});
    }

    void aDragThatEndsOnAPointIsNotAClick() {
        ForecastScatterPlot plot;
        plot.setPoints(grid());
        showAt(plot, {600, 500});
        QSignalSpy clicked(&plot, &ForecastScatterPlot::candidateClicked);
        const QPoint target = plot.pixelOf(5).toPoint();
        QTest::mousePress(plot.customPlot(), Qt::LeftButton, Qt::NoModifier, target - QPoint(40, 0));
        QTest::mouseRelease(plot.customPlot(), Qt::LeftButton, Qt::NoModifier, target);
        QCOMPARE(clicked.count(), 0);
    }

    void hitTestFindsTheNearestPointInADenseCloud() {
        std::mt19937 rng(7);
        std::normal_distribution<double> normal(0, 0.6);
        std::vector<ForecastPoint> cloud;
        for (int64_t id = 1; id <= 20000; ++id)
            cloud.push_back({id, normal(rng), normal(rng), 0.5});
        ForecastScatterPlot plot;
        plot.setPoints(cloud);
        showAt(plot, {700, 500});
        std::uniform_int_distribution<int> pick(0, int(cloud.size()) - 1);
        std::vector<QPointF> pixels;
        for (const ForecastPoint& p : cloud)
            pixels.push_back(plot.pixelOf(p.candidate_id));
        for (int probe = 0; probe < 100; ++probe) {
            // Near an existing point, a little off so that the nearest one is not trivially it.
            const QPointF at = pixels[pick(rng)] + QPointF(2.5, -1.5);
            double best = ForecastScatterPlot::kClickRadius;
            for (const QPointF& pixel : pixels)
                best = std::min(best, distance(pixel, at));
            const int64_t hit = plot.candidateAt(at);
            QVERIFY(hit != 0);
            QCOMPARE(distance(plot.pixelOf(hit), at), best);
        }
    }

    void theSelectionRingFollowsTheSelectedCandidate() {
        ForecastScatterPlot plot;
        plot.setPoints(grid());
        const QCPGraph* ring = graphNamed(plot.customPlot(), QStringLiteral("Selected candidate"));
        QVERIFY(ring);
        QVERIFY(ring->data()->isEmpty());
        plot.setSelected(6);
        QCOMPARE(plot.selectedId(), int64_t{6});
        QCOMPARE(ring->data()->size(), 1);
        QCOMPARE(ring->data()->at(0)->key, 1.0);
        QCOMPARE(ring->data()->at(0)->value, 0.0);
        plot.appendPoints({{6, -0.25, 0.75, 0.4}});  // the candidate moves: so does its ring
        QCOMPARE(ring->data()->at(0)->key, -0.25);
        plot.setSelected(404);  // not shown
        QCOMPARE(plot.selectedId(), int64_t{0});
        QVERIFY(ring->data()->isEmpty());
    }

    void confidentForecastsAreDrawnDarker() {
        ForecastScatterPlot plot;
        plot.setPoints({{1, -1, -1, 0.05}, {2, 1, 1, 0.95}});
        showAt(plot, {600, 500});
        const QImage image = plot.customPlot()->toPixmap().toImage();
        const QColor unsure = image.pixelColor(plot.pixelOf(1).toPoint());
        const QColor confident = image.pixelColor(plot.pixelOf(2).toPoint());
        QVERIFY2(unsure.lightness() < 245, "the unsure point was not drawn");
        QVERIFY2(confident.lightness() + 60 < unsure.lightness(),
                 qPrintable(QStringLiteral("%1 vs %2").arg(confident.name(), unsure.name())));
    }

    void exportsTheCloudToPdfAndPng() {
        QTemporaryDir dir;
        ForecastScatterPlot empty, plot;
        plot.setPoints(grid());
        QString error;
        QVERIFY2(empty.exportPdf(dir.filePath(QStringLiteral("empty.pdf")), &error), qPrintable(error));
        QVERIFY2(plot.exportPdf(dir.filePath(QStringLiteral("plot.pdf")), &error), qPrintable(error));
        QFile pdf(dir.filePath(QStringLiteral("plot.pdf")));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QCOMPARE(pdf.read(5), QByteArray("%PDF-"));
        // The points are in it: an image of the cloud makes the file larger than the empty plot's.
        QVERIFY(pdf.size() > QFileInfo(dir.filePath(QStringLiteral("empty.pdf"))).size());
        QVERIFY2(plot.exportPng(dir.filePath(QStringLiteral("plot.png")), 800, 600, &error, 2), qPrintable(error));
        QCOMPARE(QImage(dir.filePath(QStringLiteral("plot.png"))).size(), QSize(1600, 1200));
    }

    void showsThePlaceholderWithoutPoints() {
        ForecastScatterPlot plot;
        QVERIFY(plot.isPlaceholderVisible());
        plot.setPoints({{1, std::nan(""), 0, 0.5}});
        QVERIFY(plot.isPlaceholderVisible());
        plot.setPoints(grid());
        QVERIFY(!plot.isPlaceholderVisible());
        plot.clear();
        QVERIFY(plot.isPlaceholderVisible());
        QCOMPARE(plot.pointCount(), 0);
    }

    void newPointsLeaveAZoomedViewAloneUntilItIsReset() {
        ForecastScatterPlot plot;
        plot.setPoints(grid());
        showAt(plot, {600, 500});
        const QPointF centre = plot.pixelOf(5);
        QWheelEvent wheel(centre, plot.customPlot()->mapToGlobal(centre), QPoint(), QPoint(0, 240), Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(plot.customPlot(), &wheel);
        const QCPRange zoomed = plot.customPlot()->xAxis->range();
        QVERIFY(zoomed.size() < 2);  // zoomed in: the grid's corners are out of view
        plot.appendPoints({{10, 3.0, 3.0, 0.5}});
        QCOMPARE(plot.customPlot()->xAxis->range(), zoomed);

        const std::unique_ptr<QMenu> menu(plot.createContextMenu());
        QAction* reset = nullptr;
        for (QAction* action : menu->actions())
            if (action->text() == QStringLiteral("Reset View"))
                reset = action;
        QVERIFY(reset);
        reset->trigger();
        QVERIFY(plot.customPlot()->xAxis->range().contains(3.0));
        QVERIFY(plot.customPlot()->xAxis->range().contains(-1.0));
    }

    void handlesAWholeRun() {
        std::mt19937 rng(3);
        std::normal_distribution<double> normal(0, 0.8);
        std::uniform_real_distribution<double> confidence(0.125, 1);
        std::vector<ForecastPoint> run;
        for (int64_t id = 1; id <= 100000; ++id) {
            const double measured = normal(rng);
            run.push_back({id, measured + 0.3 * normal(rng), measured, confidence(rng)});
        }
        ForecastScatterPlot plot;
        plot.setPoints(run);
        showAt(plot, {800, 600});
        QCOMPARE(plot.pointCount(), 100000);
        QCOMPARE(plot.candidateAt(plot.pixelOf(run.back().candidate_id)), run.back().candidate_id);
    }
};

QTEST_MAIN(TestForecastScatterPlot)
#include "tst_forecast_scatter_plot.moc"
