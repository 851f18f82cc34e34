// The lineage graph draws a population as the evolution visualisers do: a column per generation, children beside
// their parents, crossovers joined to the candidate they took values from, the path to the best measured candidate
// highlighted; a click on a node picks that candidate, and the graph follows the rows of a running search.
#include "widgets/lineage_graph.h"
#include "widgets/population_model.h"

#include <QImage>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>

using namespace kerncast;

namespace {

CandidateRow row(int64_t id, int64_t parent, int generation, const char* status, std::optional<double> speedup = {},
                 const char* label = "family") {
    CandidateRow r;
    r.id = id;
    r.parent_id = parent;
    r.generation = generation;
    r.mutator = parent == 0 ? (id == 1 ? Mutator::Reference : Mutator::Seed) : Mutator::Parametric;
    r.label = QString::fromLatin1(label);
    r.status = QString::fromLatin1(status);
    r.measured_speedup = speedup;
    return r;
}

// The reference (#1) and a seed (#2); #3 and #4 children of the seed; #5, #6 and #9 children of #3 (#5 a crossover
// with the reference, #6 a suspect 5x), #8 a child of #4; #7 a trusted child of #5.
std::vector<CandidateRow> population() {
    return {row(1, 0, 0, "ok", 1.0, "reference"),
            row(2, 0, 0, "ok", 1.2, "seed:vec4.cu"),
            row(3, 2, 1, "ok", 1.5, "family BLOCK=128 (move)"),
            row(4, 2, 1, "incorrect"),
            row(5, 3, 2, "ok", 2.1, "family BLOCK=256 (crossover with #1)"),
            row(6, 3, 2, "suspect", 5.0),
            row(7, 5, 3, "trusted"),
            row(8, 4, 2, "ok", 0.7),
            row(9, 3, 2, "ok", 1.1)};
}

}  // namespace

class TestLineageGraph : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void generationsAreColumnsAndChildrenSitByTheirParents() {
        PopulationModel model;
        model.setRows(population());
        LineageGraph graph;
        graph.resize(600, 400);
        graph.setPopulation(&model);
        QCOMPARE(graph.nodeCount(), 9);
        QCOMPARE(graph.generationCount(), 4);
        for (const auto& [id, column] : {std::pair<qint64, int>{1, 0}, {2, 0}, {3, 1}, {4, 1}, {5, 2}, {8, 2}, {7, 3}})
            QCOMPARE(graph.columnOf(id), column);
        const auto y = [&](qint64 id) { return graph.nodeCenter(id)->y(); };
        const auto x = [&](qint64 id) { return graph.nodeCenter(id)->x(); };
        QVERIFY(x(1) < x(3) && x(3) < x(5) && x(5) < x(7));
        QCOMPARE(x(5), x(8));
        // Within a column, the children of the upper parent come first, whatever their ids: #9 (a child of #3)
        // above #8 (a child of #4).
        QVERIFY(y(3) < y(4));
        QVERIFY(y(5) < y(6) && y(6) < y(9));
        QVERIFY(y(9) < y(8));
        QVERIFY(!graph.nodeCenter(42));
        QCOMPARE(graph.columnOf(42), -1);
    }

    // The highlighted path ends at the best measured candidate: a suspect 5x is not one, nor is a trusted forecast.
    void theBestPathRunsFromARootToTheBest() {
        PopulationModel model;
        model.setRows(population());
        LineageGraph graph;
        graph.setPopulation(&model);
        QCOMPARE(graph.bestPath(), (QList<qint64>{2, 3, 5}));
        model.setRows({row(1, 0, 0, "ok", 1.0, "reference"), row(2, 1, 1, "trusted")});
        QCOMPARE(graph.bestPath(), (QList<qint64>{1}));
        model.setRows({row(1, 0, 0, "proposed")});
        QVERIFY(graph.bestPath().isEmpty());
    }

    void crossoversAreJoinedToTheCandidateTheyTookValuesFrom() {
        PopulationModel model;
        model.setRows(population());
        LineageGraph graph;
        graph.setPopulation(&model);
        QCOMPARE(graph.crossoverEdges().size(), size_t{1});
        QCOMPARE(graph.crossoverEdges().front(), (std::pair<qint64, qint64>{1, 5}));
    }

    // A real click on a node's circle picks its candidate; a click between nodes picks nothing.
    void aClickOnANodePicksItsCandidate() {
        PopulationModel model;
        model.setRows(population());
        LineageGraph graph;
        graph.resize(600, 400);
        graph.setPopulation(&model);
        graph.show();
        QVERIFY(QTest::qWaitForWindowExposed(&graph));
        QSignalSpy clicked(&graph, &LineageGraph::candidateClicked);
        const QPoint at = *graph.nodeCenter(8);
        QCOMPARE(graph.candidateAt(at), qint64{8});
        QTest::mouseClick(graph.viewport(), Qt::LeftButton, {}, at + QPoint(2, -1));
        QCOMPARE(clicked.count(), 1);
        QCOMPARE(clicked.front().front().toLongLong(), qint64{8});
        QCOMPARE(graph.selected(), qint64{8});
        // Halfway between two columns there is no node.
        const QPoint between = (*graph.nodeCenter(3) + *graph.nodeCenter(5)) / 2;
        QTest::mouseClick(graph.viewport(), Qt::LeftButton, {}, between);
        QCOMPARE(clicked.count(), 1);
    }

    // While a search runs the graph follows its rows: a new best extends the highlighted path.
    void followsTheRowsOfARunningSearch() {
        PopulationModel model;
        model.setRows(population());
        LineageGraph graph;
        graph.setPopulation(&model);
        model.appendRows({row(10, 5, 3, "ok", 3.2)});
        QTRY_COMPARE(graph.nodeCount(), 10);
        QCOMPARE(graph.bestPath(), (QList<qint64>{2, 3, 5, 10}));
        model.clear();
        QCOMPARE(graph.nodeCount(), 0);
    }

    // A generation of thousands scrolls: the candidate on show is brought into view.
    void theSelectedCandidateIsScrolledIntoView() {
        std::vector<CandidateRow> rows{row(1, 0, 0, "ok", 1.0, "reference")};
        for (int64_t id = 2; id <= 3001; ++id)
            rows.push_back(row(id, 1, 1, "ok", 1.0 + double(id) / 10000));
        PopulationModel model;
        model.setRows(std::move(rows));
        LineageGraph graph;
        graph.resize(400, 300);
        graph.setPopulation(&model);
        graph.show();
        QVERIFY(QTest::qWaitForWindowExposed(&graph));
        QVERIFY(graph.verticalScrollBar()->maximum() > 0);
        QVERIFY(!graph.viewport()->rect().contains(*graph.nodeCenter(2500)));
        graph.setSelected(2500);
        QVERIFY(graph.viewport()->rect().contains(*graph.nodeCenter(2500)));
        QCOMPARE(graph.candidateAt(*graph.nodeCenter(2500)), qint64{2500});
    }

    // Scrolled down a generation of hundreds, the graph still says which column is which generation: the numbers
    // stay at the top of the view, drawn over the nodes that pass under them, and a click there picks no node.
    void theGenerationNumbersStayInViewWhenScrolledDown() {
        std::vector<CandidateRow> rows{row(1, 0, 0, "ok", 1.0, "reference")};
        for (int64_t id = 2; id <= 301; ++id)
            rows.push_back(row(id, 1, 1, "ok", 2.0));
        for (int64_t id = 302; id <= 601; ++id)
            rows.push_back(row(id, id - 300, 2, "ok", 3.0));
        PopulationModel model;
        model.setRows(std::move(rows));
        LineageGraph graph;
        graph.resize(400, 300);
        graph.setPopulation(&model);
        graph.show();
        QVERIFY(QTest::qWaitForWindowExposed(&graph));
        QScrollBar* vertical = graph.verticalScrollBar();
        QVERIFY(vertical->maximum() > 1000);
        const QRect header = graph.generationHeaderRect();
        QVERIFY(header.height() >= graph.fontMetrics().height());
        for (int value : {0, vertical->maximum() / 2 + 7, vertical->maximum()}) {
            vertical->setValue(value);
            const QImage image = graph.viewport()->grab().toImage();
            const qreal ratio = image.devicePixelRatio();
            const QColor base = graph.palette().color(QPalette::Base);
            // Nodes do pass under the header once the graph is scrolled, and a click there picks none of them.
            qint64 under = 0;
            for (qint64 id = 2; id <= 601 && !under; ++id)
                if (header.contains(*graph.nodeCenter(id)))
                    under = id;
            QCOMPARE(under != 0, value > 0);
            if (under)
                QCOMPARE(graph.candidateAt(*graph.nodeCenter(under)), qint64{0});
            for (int generation = 0; generation < graph.generationCount(); ++generation) {
                const QRect label = graph.generationLabelRect(generation);
                QVERIFY2(header.contains(label) && graph.viewport()->rect().contains(label),
                         qPrintable(QStringLiteral("generation %1 at scroll %2").arg(generation).arg(value)));
                // The number is drawn there, on the view's background: no node's green shows through it.
                int ink = 0, green = 0;
                for (int y = label.top(); y <= label.bottom(); ++y)
                    for (int x = std::max(0, label.left()); x <= std::min(label.right(), graph.viewport()->width() - 1);
                         ++x) {
                        const QColor c = image.pixelColor(QPoint(x, y) * ratio);
                        if (c.green() > c.red() + 40 && c.green() > c.blue() + 40)
                            ++green;
                        else if (std::abs(c.lightness() - base.lightness()) > 60)
                            ++ink;
                    }
                QVERIFY2(ink > 5 && green == 0, qPrintable(QStringLiteral("generation %1 at scroll %2: %3 dark, %4 "
                                                                          "green pixels")
                                                               .arg(generation)
                                                               .arg(value)
                                                               .arg(ink)
                                                               .arg(green)));
            }
        }
    }
};

QTEST_MAIN(TestLineageGraph)
#include "tst_lineage_graph.moc"
