// A picture of the workbench with a real search on show (what `kerncast --demo --screenshot` saves): not blank,
// of the window's size, with the population and the plots filled.
#include "app/gui/main_window.h"
#include "app/gui/run_control_panel.h"

#include "widgets/forecast_scatter_plot.h"
#include "widgets/population_model.h"

#include <QImage>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace kerncast;

namespace {

// Variance of the grey level over a grid of pixels: a blank or single-colour picture has (almost) none.
double greyVariance(const QImage& image) {
    double sum = 0, sumSq = 0;
    int n = 0;
    for (int y = 0; y < image.height(); y += 3)
        for (int x = 0; x < image.width(); x += 3) {
            const double g = qGray(image.pixel(x, y));
            sum += g;
            sumSq += g * g;
            ++n;
        }
    const double mean = sum / n;
    return sumSq / n - mean * mean;
}

}  // namespace

class TestWorkbenchScreenshot : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KerncastTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_workbench_screenshot"));
    }

    void demoScreenshotShowsResults() {
        MainWindow w({QStringLiteral(KERNCAST_SOURCE_DIR "/resources"), false});
        w.show();
        QSignalSpy ended(&w, &MainWindow::searchEnded);
        w.startDemo();  // waits for problems and devices, then starts
        QTRY_VERIFY_WITH_TIMEOUT(w.bridge()->isActive() || ended.count() > 0, 60000);
        QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 300000);
        QCOMPARE(ended.front().front().toBool(), true);
        QVERIFY(w.populationModel()->rowCount() > 0);
        QVERIFY(w.scatterPlot()->pointCount() > 0);
        QTest::qWait(300);  // let the views lay out and the plots repaint

        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("workbench.png"));
        QVERIFY(w.grab().save(file, "PNG"));
        QImage image(file);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), w.size() * w.devicePixelRatio());
        QVERIFY2(image.width() >= 1200 && image.height() >= 800,
                 qPrintable(QStringLiteral("%1x%2").arg(image.width()).arg(image.height())));
        const double variance = greyVariance(image);
        QVERIFY2(variance > 200, qPrintable(QString::number(variance)));
        // The plots dock is not an empty area: its part of the picture has detail of its own.
        const QWidget* plot = w.scatterPlot();
        const QRect inWindow(plot->mapTo(&w, QPoint(0, 0)), plot->size());
        QVERIFY(greyVariance(image.copy(inWindow)) > 50);
    }
};

QTEST_MAIN(TestWorkbenchScreenshot)
#include "tst_workbench_screenshot.moc"
