#include "widgets/population_filter_proxy.h"
#include "widgets/population_model.h"

#include <QAbstractItemModelTester>
#include <QColor>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>

#include <limits>
#include <random>

using namespace kerncast;

namespace {

CandidateRow makeRow(int64_t id, const QString& status = QStringLiteral("proposed"), std::optional<double> speedup = {},
                     int64_t parent = 0) {
    CandidateRow r;
    r.id = id;
    r.run_id = 1;
    r.parent_id = parent;
    r.generation = parent ? 1 : 0;
    r.mutator = parent ? Mutator::LlmRewrite : Mutator::Seed;
    r.label = QStringLiteral("candidate %1").arg(id);
    r.status = status;
    r.measured_speedup = speedup;
    if (speedup)
        r.time_us = 100.0 / *speedup;
    r.source_hash = QString::number(static_cast<qulonglong>(id) * 2654435761ULL, 16);
    return r;
}

std::vector<CandidateRow> someRows() {
    CandidateRow forecast = makeRow(4, QStringLiteral("trusted"), {}, 1);
    forecast.predicted_bin = 6;
    forecast.confidence = 0.62;
    forecast.registers = 72;
    forecast.smem_bytes = 4096;
    return {makeRow(1, QStringLiteral("ok"), 1.0),          makeRow(2, QStringLiteral("ok"), 2.5, 1),
            makeRow(3, QStringLiteral("incorrect"), {}, 1), forecast,
            makeRow(5, QStringLiteral("discarded"), {}, 2), makeRow(6, QStringLiteral("ok"), 0.8, 2)};
}

QList<qlonglong> idsInOrder(const QAbstractItemModel& m) {
    QList<qlonglong> ids;
    for (int r = 0; r < m.rowCount(); ++r)
        ids << m.index(r, 0).data(PopulationModel::CandidateIdRole).toLongLong();
    return ids;
}

SearchEvent measuredEvent(int64_t runId, int64_t id, double speedup) {
    SearchEvent e;
    e.kind = SearchEvent::Kind::Measured;
    e.run_id = runId;
    e.candidate_id = id;
    Measurement m;
    m.status = Status::Ok;
    m.speedup = speedup;
    e.measurement = m;
    e.speedup = speedup;
    return e;
}

SearchEvent proposedEvent(int64_t runId, int64_t id, int64_t parent) {
    SearchEvent e;
    e.kind = SearchEvent::Kind::CandidateProposed;
    e.run_id = runId;
    Candidate c;
    c.id = id;
    c.parent_id = parent;
    c.generation = 1;
    c.mutator = Mutator::Parametric;
    c.label = "family BLOCK=128";
    e.candidate = c;
    return e;
}

// someRows() in a table behind its proxy, both checked by QAbstractItemModelTester throughout.
struct ProxiedTable {
    PopulationModel model;
    PopulationFilterProxy proxy;
    QAbstractItemModelTester modelTester{&model, QAbstractItemModelTester::FailureReportingMode::QtTest};
    QAbstractItemModelTester proxyTester{&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest};
    ProxiedTable() {
        proxy.setSourceModel(&model);
        model.setRows(someRows());
    }
    std::pair<PopulationModel&, PopulationFilterProxy&> parts() { return {model, proxy}; }
};

}  // namespace

class TestPopulationModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QLocale::setDefault(QLocale::c()); }

    // The tunables of family configurations are columns after the fixed ones (Kernel Tuner's dashboard view): one
    // per name, added as rows bring new ones, headed by the name, sortable, empty for candidates without them.
    void tunablesAreColumns() {
        PopulationModel model;
        PopulationFilterProxy proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(PopulationModel::SortRole);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        CandidateRow a = makeRow(1, QStringLiteral("ok"), 1.0);
        a.tunables = {{"BLOCK", 256}, {"VEC", 4}};
        CandidateRow b = makeRow(2, QStringLiteral("ok"), 2.0);
        b.tunables = {{"BLOCK", 128}, {"VEC", 2}};
        model.setRows({a, makeRow(3), b});
        QCOMPARE(model.columnCount(), PopulationModel::ColumnCount + 2);
        QCOMPARE(model.tunableNames(), (QStringList{QStringLiteral("BLOCK"), QStringLiteral("VEC")}));
        const int block = PopulationModel::ColumnCount;
        QCOMPARE(model.headerData(block, Qt::Horizontal).toString(), QStringLiteral("BLOCK"));
        QCOMPARE(model.index(0, block).data().toLongLong(), 256);
        QVERIFY(!model.index(1, block).data().isValid());
        proxy.sort(block, Qt::AscendingOrder);
        QCOMPARE(idsInOrder(proxy), (QList<qlonglong>{2, 1, 3}));

        // A row with a tunable not seen yet adds its column.
        QSignalSpy inserted(&model, &QAbstractItemModel::columnsInserted);
        CandidateRow c = makeRow(4, QStringLiteral("ok"), 3.0);
        c.tunables = {{"BLOCK", 512}, {"ITEMS", 8}};
        model.appendRows({c});
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(model.columnCount(), PopulationModel::ColumnCount + 3);
        QCOMPARE(model.headerData(PopulationModel::ColumnCount + 2, Qt::Horizontal).toString(),
                 QStringLiteral("ITEMS"));
        QCOMPARE(model.index(3, PopulationModel::ColumnCount + 2).data().toLongLong(), 8);
        // The table stays sorted as it was when a new tunable adds its column (a leaderboard by speedup).
        proxy.sort(PopulationModel::SpeedupColumn, Qt::DescendingOrder);
        CandidateRow d = makeRow(5, QStringLiteral("ok"), 2.5);
        d.tunables = {{"UNROLL", 2}};
        model.appendRows({d});
        QCOMPARE(proxy.sortColumn(), int(PopulationModel::SpeedupColumn));
        QCOMPARE(idsInOrder(proxy), (QList<qlonglong>{4, 5, 2, 1, 3}));
        model.clear();
        QCOMPARE(model.columnCount(), int(PopulationModel::ColumnCount));
    }

    void appendsInOneBatch() {
        PopulationModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.appendRows(someRows());
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(inserted[0][1].toInt(), 0);
        QCOMPARE(inserted[0][2].toInt(), 5);
        QCOMPARE(model.rowCount(), 6);
        model.appendRows({makeRow(7), makeRow(8), makeRow(7, QStringLiteral("ok"), 3.0)});
        QCOMPARE(inserted.count(), 2);
        QCOMPARE(inserted[1][1].toInt(), 6);
        QCOMPARE(inserted[1][2].toInt(), 7);  // the repeated id 7 is one row, the later version
        QCOMPARE(model.rowCount(), 8);
        QCOMPARE(model.index(6, PopulationModel::StatusColumn).data(PopulationModel::StatusRole).toString(),
                 QStringLiteral("ok"));
        QCOMPARE(model.rowOfId(8), 7);
        QCOMPARE(model.rowOfId(99), -1);
        QCOMPARE(model.indexOfId(2).row(), 1);
        QVERIFY(!model.indexOfId(99).isValid());
        // A whole table with an id twice keeps one row, the later version, in the place of the first.
        model.setRows({makeRow(1), makeRow(2), makeRow(1, QStringLiteral("ok"), 2.0)});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.row(0).status, QStringLiteral("ok"));
        QCOMPARE(model.rowOfId(2), 1);
    }

    // An id that is already listed updates its row: the table never shows a candidate twice.
    void appendingAKnownIdUpdatesIt() {
        PopulationModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRows(someRows());
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.appendRows({makeRow(3, QStringLiteral("ok"), 1.5, 1)});
        QCOMPARE(inserted.count(), 0);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(model.rowCount(), 6);
        QCOMPARE(model.row(2).measured_speedup, std::optional<double>(1.5));
    }

    void updatesAnnounceRanges() {
        PopulationModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        std::vector<CandidateRow> rows;
        for (int id = 1; id <= 10; ++id)
            rows.push_back(makeRow(id));
        model.setRows(rows);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        // ids 9, 2, 3, 4 and an unknown 11: rows 1..3 and 8 change, 11 is appended.
        model.updateRows({makeRow(9, QStringLiteral("ok"), 2.0), makeRow(3, QStringLiteral("queued")),
                          makeRow(2, QStringLiteral("trusted")), makeRow(11), makeRow(4, QStringLiteral("forecast"))});
        QCOMPARE(changed.count(), 2);
        const auto range = [&](int i) {
            return std::pair(changed[i][0].value<QModelIndex>(), changed[i][1].value<QModelIndex>());
        };
        QCOMPARE(range(0).first.row(), 1);
        QCOMPARE(range(0).second.row(), 3);
        QCOMPARE(range(0).first.column(), 0);
        QCOMPARE(range(0).second.column(), PopulationModel::ColumnCount - 1);
        QCOMPARE(range(1).first.row(), 8);
        QCOMPARE(range(1).second.row(), 8);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(model.rowCount(), 11);
        QCOMPARE(model.row(8).status, QStringLiteral("ok"));
        QCOMPARE(model.row(10).id, int64_t{11});
    }

    // Many scattered changes are announced as one span, so that a sorted proxy re-sorts once rather than per range.
    void manyScatteredChangesAreOneSpan() {
        PopulationModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        std::vector<CandidateRow> rows;
        for (int id = 1; id <= 400; ++id)
            rows.push_back(makeRow(id));
        model.setRows(rows);
        std::vector<CandidateRow> updates;
        for (int id = 5; id <= 400; id += 3)
            updates.push_back(makeRow(id, QStringLiteral("ok"), 1.0 + id / 100.0));
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.updateRows(updates);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed[0][0].value<QModelIndex>().row(), 4);
        QCOMPARE(changed[0][1].value<QModelIndex>().row(), 397);
        QCOMPARE(model.row(397).measured_speedup, std::optional<double>(4.98));
    }

    void eventsUpdateOrInsertAndStaleRunsAreDropped() {
        PopulationModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRows(someRows());
        model.setRunId(1);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        const int count =
            model.applyEvents({proposedEvent(1, 20, 2), measuredEvent(1, 4, 3.0), proposedEvent(1, 21, 20),
                               measuredEvent(1, 20, 1.1), measuredEvent(2, 5, 9.0), proposedEvent(2, 30, 1)});
        QCOMPARE(count, 3);
        QCOMPARE(inserted.count(), 1);  // 20 and 21 together
        QCOMPARE(inserted[0][1].toInt(), 6);
        QCOMPARE(inserted[0][2].toInt(), 7);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(model.row(model.rowOfId(4)).measured_speedup, std::optional<double>(3.0));
        QCOMPARE(model.row(model.rowOfId(20)).status, QStringLiteral("ok"));
        QCOMPARE(model.row(model.rowOfId(21)).parent_id, int64_t{20});
        QCOMPARE(model.row(model.rowOfId(5)).status, QStringLiteral("discarded"));  // run 2 is not shown
        QCOMPARE(model.rowOfId(30), -1);
    }

    void cellsShowTheRow_data() {
        QTest::addColumn<int>("row");
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("text");
        QTest::newRow("id") << 1 << int(PopulationModel::IdColumn) << "2";
        QTest::newRow("root has no parent") << 0 << int(PopulationModel::ParentColumn) << "";
        QTest::newRow("parent") << 4 << int(PopulationModel::ParentColumn) << "2";
        QTest::newRow("mutator") << 1 << int(PopulationModel::MutatorColumn) << "LLM rewrite";
        QTest::newRow("status") << 2 << int(PopulationModel::StatusColumn) << "incorrect";
        QTest::newRow("forecast") << 3 << int(PopulationModel::ForecastColumn) << "bin 6 (62%)";
        QTest::newRow("no forecast") << 0 << int(PopulationModel::ForecastColumn) << "";
        QTest::newRow("speedup") << 1 << int(PopulationModel::SpeedupColumn) << "2.50×";
        QTest::newRow("not measured") << 3 << int(PopulationModel::SpeedupColumn) << "";
        QTest::newRow("time") << 1 << int(PopulationModel::TimeColumn) << "40.0 µs";
        QTest::newRow("registers") << 3 << int(PopulationModel::RegistersColumn) << "72";
        QTest::newRow("shared memory") << 3 << int(PopulationModel::SharedMemoryColumn) << "4.00 KiB";
    }
    void cellsShowTheRow() {
        QFETCH(int, row);
        QFETCH(int, column);
        QFETCH(QString, text);
        PopulationModel model;
        model.setRows(someRows());
        QCOMPARE(model.index(row, column).data().toString(), text);
        QVERIFY(!model.headerData(column, Qt::Horizontal).toString().isEmpty());
    }

    void statusColours() {
        PopulationModel model;
        model.setRows(someRows());
        const auto background = [&](int row) { return model.index(row, 0).data(Qt::BackgroundRole).value<QColor>(); };
        const auto foreground = [&](int row) { return model.index(row, 0).data(Qt::ForegroundRole).value<QColor>(); };
        QVERIFY(background(0).isValid());
        QCOMPARE(background(0), background(1));                          // ok and ok
        QVERIFY(background(0) != background(2));                         // ok and incorrect
        QVERIFY(background(2) != background(3));                         // incorrect and trusted
        QVERIFY(!model.index(4, 0).data(Qt::BackgroundRole).isValid());  // discarded: no tint...
        QVERIFY(foreground(4).isValid());                                // ...but greyed out
        QVERIFY(foreground(4).lightness() > 100);
        QVERIFY(!model.index(0, 0).data(Qt::ForegroundRole).isValid());
        // the failure's reason is in the status tool tip
        auto rows = someRows();
        rows[2].reason = QStringLiteral("output 17 differs");
        model.setRows(rows);
        QVERIFY(model.index(2, PopulationModel::StatusColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("output 17 differs")));
    }

    void sortsThroughTheProxy_data() {
        QTest::addColumn<int>("column");
        QTest::addColumn<int>("order");
        QTest::addColumn<QList<qlonglong>>("ids");
        QTest::newRow("speedup, best first, unmeasured last")
            << int(PopulationModel::SpeedupColumn) << int(Qt::DescendingOrder) << QList<qlonglong>{2, 1, 6, 3, 4, 5};
        QTest::newRow("time, fastest first, unmeasured last")
            << int(PopulationModel::TimeColumn) << int(Qt::AscendingOrder) << QList<qlonglong>{2, 1, 6, 3, 4, 5};
        QTest::newRow("forecast, most likely fastest first")
            << int(PopulationModel::ForecastColumn) << int(Qt::DescendingOrder) << QList<qlonglong>{4, 1, 2, 3, 5, 6};
        QTest::newRow("parent") << int(PopulationModel::ParentColumn) << int(Qt::AscendingOrder)
                                << QList<qlonglong>{1, 2, 3, 4, 5, 6};
        QTest::newRow("status, pipeline order")
            << int(PopulationModel::StatusColumn) << int(Qt::AscendingOrder) << QList<qlonglong>{4, 5, 1, 2, 3, 6};
    }
    void sortsThroughTheProxy() {
        QFETCH(int, column);
        QFETCH(int, order);
        QFETCH(QList<qlonglong>, ids);
        ProxiedTable table;
        auto [model, proxy] = table.parts();
        proxy.sort(column, static_cast<Qt::SortOrder>(order));
        QCOMPARE(idsInOrder(proxy), ids);
    }

    // The proxy's direct comparison must give exactly the order that sorting by SortRole gives.
    void fastSortAgreesWithSortRole() {
        std::mt19937 rng(7);
        std::uniform_real_distribution<double> speed(0.1, 8.0);
        const QStringList statuses = candidateStatuses();
        std::vector<CandidateRow> rows;
        for (int id = 1; id <= 500; ++id) {
            CandidateRow r = makeRow(id, statuses[static_cast<int>(rng() % statuses.size())]);
            if (rng() % 3 == 0) {
                r.measured_speedup = std::round(speed(rng) * 4) / 4;  // ties on purpose
                r.time_us = 50 / *r.measured_speedup;
            }
            r.predicted_bin = static_cast<int>(rng() % 9);
            r.confidence = (rng() % 100) / 100.0;
            r.registers = static_cast<int>(rng() % 128);
            r.generation = static_cast<int>(rng() % 5);
            rows.push_back(r);
        }
        PopulationModel model;
        model.setRows(rows);
        PopulationFilterProxy fast;
        fast.setSourceModel(&model);
        QSortFilterProxyModel plain;
        plain.setSourceModel(&model);
        plain.setSortRole(PopulationModel::SortRole);
        for (int column = 0; column < PopulationModel::ColumnCount; ++column) {
            for (Qt::SortOrder order : {Qt::AscendingOrder, Qt::DescendingOrder}) {
                fast.sort(column, order);
                plain.sort(column, order);
                QCOMPARE(idsInOrder(fast), idsInOrder(plain));
            }
        }
    }

    void resortsWhenAMeasurementArrives() {
        ProxiedTable table;
        auto [model, proxy] = table.parts();
        proxy.sort(PopulationModel::SpeedupColumn, Qt::DescendingOrder);
        model.updateRows({makeRow(5, QStringLiteral("ok"), 9.0, 2)});
        QCOMPARE(idsInOrder(proxy).first(), 5);
        model.appendRows({makeRow(40, QStringLiteral("ok"), 4.0)});
        QCOMPARE(idsInOrder(proxy).mid(0, 2), (QList<qlonglong>{5, 40}));
        model.applyEvents({measuredEvent(1, 3, 5.0)});
        QCOMPARE(idsInOrder(proxy).mid(0, 3), (QList<qlonglong>{5, 3, 40}));
        // A new run in the same table is sorted by the same column.
        std::vector<CandidateRow> other{makeRow(1, QStringLiteral("ok"), 0.5), makeRow(2),
                                        makeRow(3, QStringLiteral("ok"), 3.0)};
        model.setRows(other);
        QCOMPARE(idsInOrder(proxy), (QList<qlonglong>{3, 1, 2}));
    }

    void filters_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("statuses");
        QTest::addColumn<bool>("measuredOnly");
        QTest::addColumn<QList<qlonglong>>("ids");
        const QStringList all;
        QTest::newRow("none") << "" << all << false << QList<qlonglong>{1, 2, 3, 4, 5, 6};
        QTest::newRow("id") << "4" << all << false << QList<qlonglong>{4};
        QTest::newRow("#id") << "#6" << all << false << QList<qlonglong>{6};
        QTest::newRow("label") << "CANDIDATE 5" << all << false << QList<qlonglong>{5};
        QTest::newRow("mutator") << "llm" << all << false << QList<qlonglong>{2, 3, 4, 5, 6};
        QTest::newRow("status text") << "trust" << all << false << QList<qlonglong>{4};
        QTest::newRow("hash prefix") << makeRow(3).source_hash.left(6) << all << false << QList<qlonglong>{3};
        QTest::newRow("spaces ignored") << "  #2 " << all << false << QList<qlonglong>{2};
        QTest::newRow("status set") << "" << QStringList{"ok", "incorrect"} << false << QList<qlonglong>{1, 2, 3, 6};
        QTest::newRow("measured only") << "" << all << true << QList<qlonglong>{1, 2, 3, 6};
        QTest::newRow("measured and ok, of seed 2") << "llm" << QStringList{"ok"} << true << QList<qlonglong>{2, 6};
        QTest::newRow("nothing") << "no such thing" << all << false << QList<qlonglong>{};
    }
    void filters() {
        QFETCH(QString, text);
        QFETCH(QStringList, statuses);
        QFETCH(bool, measuredOnly);
        QFETCH(QList<qlonglong>, ids);
        ProxiedTable table;
        auto [model, proxy] = table.parts();
        proxy.setTextFilter(text);
        proxy.setStatusFilter(statuses);
        proxy.setMeasuredOnly(measuredOnly);
        QCOMPARE(idsInOrder(proxy), ids);
        // Clearing every filter brings every row back.
        proxy.setTextFilter({});
        proxy.setStatusFilter({});
        proxy.setMeasuredOnly(false);
        QCOMPARE(proxy.rowCount(), 6);
    }

    // Past kResetAbove rows a filter change resets the proxy; what it shows must be the same as filtering row by row.
    void largeTablesFilterByReset() {
        PopulationModel model;
        PopulationFilterProxy proxy;
        proxy.setSourceModel(&model);
        std::vector<CandidateRow> rows;
        const int n = PopulationFilterProxy::kResetAbove + 500;
        for (int id = 1; id <= n; ++id)
            rows.push_back(id % 4 == 0 ? makeRow(id, QStringLiteral("ok"), 1.0 + (id * 37 % 1000) / 100.0)
                                       : makeRow(id, QStringLiteral("trusted")));
        model.setRows(rows);
        proxy.sort(PopulationModel::SpeedupColumn, Qt::DescendingOrder);
        QSignalSpy reset(&proxy, &QAbstractItemModel::modelReset);
        proxy.setMeasuredOnly(true);
        QCOMPARE(reset.count(), 1);
        QCOMPARE(proxy.rowCount(), n / 4);
        double previous = std::numeric_limits<double>::infinity();
        for (int r = 0; r < proxy.rowCount(); ++r) {
            const double speedup = proxy.index(r, 0).data(PopulationModel::MeasuredSpeedupRole).toDouble();
            QVERIFY(speedup <= previous);
            previous = speedup;
        }
        proxy.setTextFilter(QStringLiteral("#%1").arg(n));
        QCOMPARE(idsInOrder(proxy), QList<qlonglong>{n});
        proxy.setTextFilter({});
        proxy.setMeasuredOnly(false);
        QCOMPARE(proxy.rowCount(), n);
    }

    void filteredRowsFollowUpdates() {
        ProxiedTable table;
        auto [model, proxy] = table.parts();
        proxy.setMeasuredOnly(true);
        QCOMPARE(proxy.rowCount(), 4);
        model.updateRows({makeRow(4, QStringLiteral("ok"), 1.3, 1)});
        QCOMPARE(proxy.rowCount(), 5);
        model.clear();
        QCOMPARE(proxy.rowCount(), 0);
    }
};

QTEST_MAIN(TestPopulationModel)
#include "tst_population_model.moc"
