#include "widgets/lineage_model.h"
#include "widgets/population_model.h"

#include <QAbstractItemModelTester>
#include <QHeaderView>
#include <QSignalSpy>
#include <QTest>
#include <QTreeView>

#include <random>

using namespace kerncast;

namespace {

CandidateRow makeRow(int64_t id, int64_t parent, const QString& status = QStringLiteral("proposed")) {
    CandidateRow r;
    r.id = id;
    r.run_id = 1;
    r.parent_id = parent;
    r.mutator = parent ? Mutator::LlmDiff : Mutator::Seed;
    r.label = QStringLiteral("candidate %1").arg(id);
    r.status = status;
    return r;
}

qlonglong idOf(const QModelIndex& index) { return index.data(PopulationModel::CandidateIdRole).toLongLong(); }

// "1(2(4) 3) 5": every node with its children in brackets, in model order.
QString shape(const QAbstractItemModel& m, const QModelIndex& parent = {}) {
    QStringList parts;
    for (int r = 0; r < m.rowCount(parent); ++r) {
        const QModelIndex child = m.index(r, 0, parent);
        QString part = QString::number(idOf(child));
        if (m.rowCount(child) > 0)
            part += QLatin1Char('(') + shape(m, child) + QLatin1Char(')');
        parts << part;
    }
    return parts.join(QLatin1Char(' '));
}

// A lineage over its population, checked by QAbstractItemModelTester throughout.
struct Tree {
    PopulationModel population;
    LineageModel lineage;
    QAbstractItemModelTester tester{&lineage, QAbstractItemModelTester::FailureReportingMode::QtTest};
    explicit Tree(std::vector<CandidateRow> rows = {}) {
        population.setRows(std::move(rows));
        lineage.setPopulation(&population);
    }
    std::pair<PopulationModel&, LineageModel&> parts() { return {population, lineage}; }
};

}  // namespace

class TestLineageModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void buildsTheTree_data() {
        QTest::addColumn<QList<qlonglong>>("ids");
        QTest::addColumn<QList<qlonglong>>("parents");
        QTest::addColumn<QString>("expected");
        QTest::newRow("roots only") << QList<qlonglong>{1, 2} << QList<qlonglong>{0, 0} << "1 2";
        QTest::newRow("two generations") << QList<qlonglong>{1, 2, 3, 4, 5} << QList<qlonglong>{0, 1, 1, 2, 0}
                                         << "1(2(4) 3) 5";
        // Rows need not come parent first: a child is placed once its parent is.
        QTest::newRow("child before parent") << QList<qlonglong>{4, 2, 1} << QList<qlonglong>{2, 1, 0} << "1(2(4))";
        // Broken links cannot be drawn as a tree; the rows are still shown.
        QTest::newRow("cycle") << QList<qlonglong>{1, 2, 3, 4} << QList<qlonglong>{0, 3, 2, 3} << "1 2 3 4";
        QTest::newRow("own parent") << QList<qlonglong>{1, 2} << QList<qlonglong>{0, 2} << "1 2";
        QTest::newRow("missing parent waits at the top") << QList<qlonglong>{1, 7} << QList<qlonglong>{0, 99} << "1 7";
    }
    void buildsTheTree() {
        QFETCH(QList<qlonglong>, ids);
        QFETCH(QList<qlonglong>, parents);
        QFETCH(QString, expected);
        std::vector<CandidateRow> rows;
        for (int i = 0; i < ids.size(); ++i)
            rows.push_back(makeRow(ids[i], parents[i]));
        PopulationModel population;
        LineageModel lineage;
        QAbstractItemModelTester tester(&lineage, QAbstractItemModelTester::FailureReportingMode::QtTest);
        lineage.setPopulation(&population);
        population.setRows(rows);
        QCOMPARE(shape(lineage), expected);
        // The same rows appended to a model that already has a tree go the incremental way.
        Tree grown({makeRow(1000, 0)});
        grown.population.appendRows(rows);
        QCOMPARE(shape(grown.lineage), QStringLiteral("1000 ") + expected);
    }

    void insertsOncePerParent() {
        Tree tree({makeRow(1, 0), makeRow(2, 1), makeRow(3, 0)});
        auto [population, lineage] = tree.parts();
        QSignalSpy inserted(&lineage, &QAbstractItemModel::rowsInserted);
        // Three children of 1, two of 3, one of 2, and 10 under the new 9: four insertions in two waves.
        population.appendRows(
            {makeRow(4, 1), makeRow(5, 3), makeRow(6, 1), makeRow(7, 2), makeRow(8, 3), makeRow(9, 1), makeRow(10, 9)});
        QCOMPARE(inserted.count(), 4);
        QCOMPARE(shape(lineage), QStringLiteral("1(2(7) 4 6 9(10)) 3(5 8)"));
        for (const auto& args : inserted) {
            const auto parent = args[0].value<QModelIndex>();
            const int first = args[1].toInt();
            const int last = args[2].toInt();
            if (idOf(parent) == 1) {
                QCOMPARE(first, 1);
                QCOMPARE(last, 3);
            }
            QVERIFY(parent.isValid());
        }
    }

    void orphanMovesUnderItsParentWhenItArrives() {
        Tree tree({makeRow(1, 0), makeRow(5, 3), makeRow(6, 3), makeRow(2, 0)});
        auto [population, lineage] = tree.parts();
        QCOMPARE(shape(lineage), QStringLiteral("1 5 6 2"));
        QSignalSpy moved(&lineage, &QAbstractItemModel::rowsMoved);
        population.appendRows({makeRow(3, 1)});
        QCOMPARE(moved.count(), 2);
        QCOMPARE(shape(lineage), QStringLiteral("1(3(5 6)) 2"));
        const QModelIndex five = lineage.indexOfId(5);
        QCOMPARE(idOf(five.parent()), 3);
        QCOMPARE(idOf(five.parent().parent()), 1);
        QVERIFY(!five.parent().parent().parent().isValid());
    }

    void showsThePopulationsCells() {
        PopulationModel population;
        auto measured = makeRow(2, 1, QStringLiteral("ok"));
        measured.measured_speedup = 1.75;
        population.setRows({makeRow(1, 0), measured});
        LineageModel lineage;
        lineage.setPopulation(&population);
        const QModelIndex node = lineage.indexOfId(2);
        QVERIFY(node.isValid());
        for (int column = 0; column < LineageModel::ColumnCount; ++column) {
            const QModelIndex cell = lineage.index(node.row(), column, node.parent());
            const QModelIndex source = population.index(1, LineageModel::populationColumn(column));
            for (int role : {int(Qt::DisplayRole), int(Qt::BackgroundRole), int(PopulationModel::SortRole)})
                QCOMPARE(cell.data(role), source.data(role));
            QCOMPARE(lineage.headerData(column, Qt::Horizontal),
                     population.headerData(LineageModel::populationColumn(column), Qt::Horizontal));
        }
        QCOMPARE(lineage.index(node.row(), LineageModel::SpeedupColumn, node.parent()).data().toString(),
                 population.index(1, PopulationModel::SpeedupColumn).data().toString());
        QCOMPARE(lineage.populationRow(node), 1);
    }

    // The tree column is indented by depth, so a deep lineage pushes its text out of view: the id must not be in it.
    void theIdStaysInViewAtAnyDepth() {
        std::vector<CandidateRow> chain;
        for (int64_t id = 1; id <= 16; ++id)
            chain.push_back(makeRow(id, id - 1));
        Tree tree(std::move(chain));
        QTreeView view;
        view.setModel(&tree.lineage);
        view.resize(420, 400);
        view.expandAll();
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QModelIndex deepest = tree.lineage.indexOfId(16, LineageModel::IdColumn);
        QVERIFY(deepest.isValid());
        QCOMPARE(deepest.data().toLongLong(), 16);
        view.scrollTo(deepest);
        const QRect cell = view.visualRect(deepest);
        QVERIFY2(cell.width() >= view.fontMetrics().horizontalAdvance(QStringLiteral("16")),
                 qPrintable(QStringLiteral("the id cell is %1 px wide").arg(cell.width())));
        QVERIFY(cell.left() >= 0 && cell.right() <= view.viewport()->width());
        QCOMPARE(tree.lineage.headerData(LineageModel::IdColumn, Qt::Horizontal).toString(), QStringLiteral("Id"));
    }

    void followsUpdatesAndResets() {
        Tree tree({makeRow(1, 0), makeRow(2, 1), makeRow(3, 2)});
        auto [population, lineage] = tree.parts();
        QSignalSpy changed(&lineage, &QAbstractItemModel::dataChanged);
        population.updateRows({makeRow(3, 2, QStringLiteral("ok"))});
        QCOMPARE(changed.count(), 1);
        QCOMPARE(idOf(changed[0][0].value<QModelIndex>()), 3);
        QCOMPARE(changed[0][0].value<QModelIndex>().parent(), lineage.indexOfId(2));
        QCOMPARE(lineage.indexOfId(3)
                     .siblingAtColumn(LineageModel::StatusColumn)
                     .data(PopulationModel::StatusRole)
                     .toString(),
                 QStringLiteral("ok"));
        population.setRows({makeRow(9, 0)});
        QCOMPARE(shape(lineage), QStringLiteral("9"));
        population.clear();
        QCOMPARE(lineage.rowCount(), 0);
    }

    void forgetsAPopulationThatGoesAway() {
        auto* population = new PopulationModel;
        population->setRows({makeRow(1, 0), makeRow(2, 1)});
        LineageModel lineage;
        lineage.setPopulation(population);
        QCOMPARE(lineage.rowCount(), 1);
        delete population;
        QCOMPARE(lineage.rowCount(), 0);
        QVERIFY(!lineage.indexOfId(1).isValid());
    }

    // Batches of a growing random population: the incremental tree equals one built in a single pass.
    void incrementalEqualsRebuilt() {
        std::mt19937 rng(11);
        Tree tree;
        auto [population, lineage] = tree.parts();
        std::vector<CandidateRow> all;
        int64_t next = 1;
        for (int batch = 0; batch < 12; ++batch) {
            std::vector<CandidateRow> rows;
            const int size = 1 + static_cast<int>(rng() % 20);
            for (int i = 0; i < size; ++i, ++next) {
                const int64_t parent =
                    next <= 3 ? 0 : 1 + static_cast<int64_t>(rng() % static_cast<unsigned>(next - 1));
                rows.push_back(makeRow(next, parent));
            }
            std::shuffle(rows.begin(), rows.end(), rng);
            all.insert(all.end(), rows.begin(), rows.end());
            population.appendRows(rows);
        }
        PopulationModel population2;
        population2.setRows(all);
        LineageModel rebuilt;
        rebuilt.setPopulation(&population2);
        QCOMPARE(shape(lineage), shape(rebuilt));
        QCOMPARE(lineage.rowCount(), 3);
    }
};

QTEST_MAIN(TestLineageModel)
#include "tst_lineage_model.moc"
