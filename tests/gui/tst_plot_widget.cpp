// The base of every plot: title, axis labels, the "no data yet" placeholder, PNG and PDF export with readable
// errors, and the export context menu.
#include "widgets/plot_widget.h"
#include "widgets/qcustomplot_include.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QFontMetrics>
#include <QImage>
#include <QMenu>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include <unistd.h>

using namespace kerncast;

namespace {

QByteArray head(const QString& path, int bytes) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.read(bytes);
}

}  // namespace

class TestPlotWidget : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void showsThePlaceholderUntilThereIsData() {
        PlotWidget plot;
        QVERIFY(plot.isPlaceholderVisible());
        QCOMPARE(plot.placeholderText(), QStringLiteral("No data yet"));
        plot.setPlaceholderText(QStringLiteral("Start a run to see its forecasts"));
        QCOMPARE(plot.placeholderText(), QStringLiteral("Start a run to see its forecasts"));
    }

    void titleAndAxisLabelsReachThePlot() {
        PlotWidget plot;
        plot.setTitle(QStringLiteral("Calibration"));
        plot.setAxisLabels(QStringLiteral("Confidence"), QStringLiteral("Accuracy"));
        QCOMPARE(plot.title(), QStringLiteral("Calibration"));
        QCOMPARE(plot.customPlot()->xAxis->label(), QStringLiteral("Confidence"));
        QCOMPARE(plot.customPlot()->yAxis->label(), QStringLiteral("Accuracy"));
    }

    // A y-axis label longer than its axis (German, in the plots dock of a 1920×1080 window) is broken onto more lines
    // rather than running past the plot's top and bottom; on a tall plot it stays on one.
    void aLongAxisLabelIsBrokenOntoTwoLinesOnAShortAxis() {
        const QString label = QStringLiteral("Gemessene Beschleunigung gegenüber demselben Anker");
        PlotWidget plot;
        plot.setAxisLabels(QStringLiteral("Erwartete Beschleunigung"), label);
        plot.resize(520, 260);
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        plot.customPlot()->replot(QCustomPlot::rpImmediateRefresh);
        plot.customPlot()->replot(QCustomPlot::rpImmediateRefresh);
        QCPAxis* y = plot.customPlot()->yAxis;
        const QMargins margins = y->axisRect()->margins();
        const int axisLength = y->axisRect()->height() + 2 * std::min(margins.top(), margins.bottom());
        const QFontMetrics fm(y->labelFont());
        QVERIFY2(fm.horizontalAdvance(label) > axisLength, qPrintable(QString::number(axisLength)));
        const QStringList lines = y->label().split(QLatin1Char('\n'));
        QVERIFY2(lines.size() >= 2 && lines.size() <= 3, qPrintable(y->label()));
        QCOMPARE(lines.join(QLatin1Char(' ')), label);  // whole: broken at a space, nothing left out
        for (const QString& line : lines)
            QVERIFY2(fm.horizontalAdvance(line) <= axisLength, qPrintable(line));

        plot.resize(520, 900);
        plot.customPlot()->replot(QCustomPlot::rpImmediateRefresh);
        plot.customPlot()->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(y->label(), label);
    }

    // On a plot too low for the label on three lines (German at 1280×720) the label ends in "…"; hovering its side of
    // the plot shows it whole, and the other side and the plot area show nothing of it.
    void aCutAxisLabelIsWholeInItsToolTip() {
        const QString label = QStringLiteral("Gemessene Beschleunigung gegenüber demselben Anker");
        PlotWidget plot;
        plot.setAxisLabels(QStringLiteral("Erwartete Beschleunigung"), label);
        plot.resize(420, 150);
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        plot.customPlot()->replot(QCustomPlot::rpImmediateRefresh);
        plot.customPlot()->replot(QCustomPlot::rpImmediateRefresh);
        QCPAxis* y = plot.customPlot()->yAxis;
        QVERIFY2(y->label().endsWith(QStringLiteral("…")), qPrintable(y->label()));
        const QRect inner = y->axisRect()->rect();
        QCOMPARE(plot.axisLabelToolTipAt(QPoint(inner.left() / 2, inner.center().y())), label);
        QVERIFY(plot.axisLabelToolTipAt(inner.center()).isEmpty());
        QVERIFY(plot.axisLabelToolTipAt(QPoint(inner.center().x(), inner.bottom() + 5)).isEmpty());  // x label whole
        // Tall again: the label is whole, and so no tooltip.
        plot.resize(420, 900);
        plot.customPlot()->replot(QCustomPlot::rpImmediateRefresh);
        plot.customPlot()->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(y->label(), label);
        QVERIFY(plot.axisLabelToolTipAt(QPoint(y->axisRect()->rect().left() / 2, y->axisRect()->rect().center().y()))
                    .isEmpty());
    }

    // A long title in a narrow dock wraps onto a second line rather than running off both edges.
    void aLongTitleWrapsInANarrowPlot() {
        PlotWidget plot;
        plot.setTitle(QStringLiteral("Best speedup ×6.98 after 400 GPU measurements on the replay device"));
        QCPLayoutElement* title = plot.customPlot()->plotLayout()->element(0, 0);
        const int lineHeight = QFontMetrics(plot.font()).height();
        plot.resize(1200, 400);
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        plot.customPlot()->replot(QCustomPlot::rpImmediateRefresh);
        const int wide = title->outerRect().height();
        plot.resize(260, 400);
        QTRY_COMPARE(plot.customPlot()->width(), 260);
        plot.customPlot()->replot(QCustomPlot::rpImmediateRefresh);
        const int narrow = title->outerRect().height();
        QVERIFY2(narrow >= wide + lineHeight, qPrintable(QStringLiteral("%1 vs %2").arg(narrow).arg(wide)));
    }

    void exportsAPngOfTheRequestedSize_data() {
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("height");
        QTest::addColumn<double>("scale");
        QTest::newRow("panel") << 640 << 480 << 1.0;
        QTest::newRow("wide strip") << 1200 << 300 << 1.0;
        QTest::newRow("tiny") << 60 << 40 << 1.0;
        QTest::newRow("twice the density") << 400 << 300 << 2.0;
    }
    void exportsAPngOfTheRequestedSize() {
        QFETCH(int, width);
        QFETCH(int, height);
        QFETCH(double, scale);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("plot.png"));
        PlotWidget plot;
        plot.setTitle(QStringLiteral("Export"));
        QString error;
        QVERIFY2(plot.exportPng(path, width, height, &error, scale), qPrintable(error));
        QCOMPARE(head(path, 8), QByteArray("\x89PNG\r\n\x1a\n", 8));
        const QImage image(path, "PNG");
        QCOMPARE(image.size(), QSize(qRound(width * scale), qRound(height * scale)));
    }

    void exportsAPdf() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("plot.pdf"));
        PlotWidget plot;
        plot.setTitle(QStringLiteral("Export"));
        QString error;
        QVERIFY2(plot.exportPdf(path, &error), qPrintable(error));
        QCOMPARE(head(path, 5), QByteArray("%PDF-"));
        QVERIFY(QFileInfo(path).size() > 500);
    }

    void exportErrorsSayWhatIsWrong_data() {
        QTest::addColumn<QString>("relativePath");  // under a fresh temporary folder; empty: no path at all
        QTest::addColumn<int>("width");
        QTest::addColumn<QString>("expected");  // {dir}: the temporary folder
        QTest::newRow("no path") << QString() << 100 << QStringLiteral("No file name was given");
        QTest::newRow("missing folder") << QStringLiteral("nope/plot.png") << 100
                                        << QStringLiteral("the folder {dir}/nope does not exist");
        QTest::newRow("a folder") << QStringLiteral(".") << 100 << QStringLiteral("it is a folder");
        QTest::newRow("zero width") << QStringLiteral("plot.png") << 0 << QStringLiteral("0 × 300 pixels");
        QTest::newRow("huge") << QStringLiteral("plot.png") << 30000 << QStringLiteral("each side must be 1 to 20000");
    }
    void exportErrorsSayWhatIsWrong() {
        QFETCH(QString, relativePath);
        QFETCH(int, width);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString path = relativePath.isNull() ? QString() : dir.filePath(relativePath);
        PlotWidget plot;
        expected.replace(QStringLiteral("{dir}"), QDir::toNativeSeparators(dir.path()));
        QString error;
        QVERIFY(!plot.exportPng(path, width, 300, &error));
        QVERIFY2(error.contains(expected), qPrintable(error));
        QVERIFY(path.isEmpty() || !QFileInfo(path).isFile());
        if (width > 0 && width <= 20000) {  // the same checks guard the PDF
            error.clear();
            QVERIFY(!plot.exportPdf(path, &error));
            QVERIFY2(error.contains(expected), qPrintable(error));
        }
    }

    void refusesAReadOnlyFolder() {
        if (geteuid() == 0)
            QSKIP("root may write into read-only folders");
        QTemporaryDir dir;
        const QString folder = dir.filePath(QStringLiteral("locked"));
        QVERIFY(QDir().mkdir(folder));
        QVERIFY(QFile::setPermissions(folder, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
        PlotWidget plot;
        QString error;
        QVERIFY(!plot.exportPdf(folder + QStringLiteral("/plot.pdf"), &error));
        QVERIFY2(error.contains(QStringLiteral("is not writable")), qPrintable(error));
        QFile::setPermissions(folder, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }

    void contextMenuOffersBothExports() {
        PlotWidget plot;
        const std::unique_ptr<QMenu> menu(plot.createContextMenu());
        QStringList texts;
        for (QAction* action : menu->actions())
            if (!action->isSeparator())
                texts << action->text();
        QCOMPARE(texts, (QStringList{QStringLiteral("Export as PNG…"), QStringLiteral("Export as PDF…")}));
    }
};

QTEST_MAIN(TestPlotWidget)
#include "tst_plot_widget.moc"
