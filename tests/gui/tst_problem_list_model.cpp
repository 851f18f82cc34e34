#include "widgets/problem_list_model.h"

#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QTest>

using namespace kerncast;

namespace {

std::string fixture(const char* name) { return std::string(KERNCAST_TEST_DATA "/problems/") + name; }

ProblemEntry named(const std::string& name, int errors = 0, int seeds = 0) {
    ProblemEntry e;
    e.name = name;
    e.dir = "/problems/" + name;
    for (int i = 0; i < errors; ++i)
        e.errors.emplace_back(SourceLocation{e.dir + "/problem.json", i + 1}, "broken");
    for (int i = 0; i < seeds; ++i)
        e.programs.push_back(
            {ProgramEntry::Kind::Seed, e.dir + "/seeds/s" + std::to_string(i) + ".cu", "", true, -1, {}});
    return e;
}

QString display(const QAbstractItemModel& m, int row, int column) { return m.index(row, column).data().toString(); }

}  // namespace

class TestProblemListModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readsTheFixtureFolder() {
        const auto entry = read_problem_entry(fixture("saxpy_fixture"));
        QVERIFY2(entry.valid(), entry.errors.empty() ? "" : entry.errors.front().what());
        QCOMPARE(entry.name, std::string("saxpy"));
        QVERIFY(entry.problem.has_value());
        // reference, the two seeds in file order, then the family
        QCOMPARE(entry.programs.size(), size_t{4});
        QCOMPARE(entry.programs[0].kind, ProgramEntry::Kind::Reference);
        QVERIFY(entry.programs[1].path.ends_with("seeds/grid_stride.cu"));
        QVERIFY(entry.programs[2].path.ends_with("seeds/vec4.cu"));
        QCOMPARE(entry.programs[3].kind, ProgramEntry::Kind::Family);
        QVERIFY(entry.programs[0].source.find("@kerncast launch") != std::string::npos);
        // BLOCK in {64..1024} x ITEMS in {1,2,4,8} where BLOCK*ITEMS <= 2048: 4 + 4 + 4 + 3 + 2 = 17
        QCOMPARE(entry.family()->configurations, int64_t{17});

        ProblemListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEntries({entry});
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(display(model, 0, ProblemListModel::NameColumn), QStringLiteral("saxpy"));
        QCOMPARE(display(model, 0, ProblemListModel::ProgramsColumn), QStringLiteral("2"));
        QCOMPARE(display(model, 0, ProblemListModel::ConfigurationsColumn), QStringLiteral("17"));
        QCOMPARE(display(model, 0, ProblemListModel::StatusColumn), QStringLiteral("valid"));
        QCOMPARE(model.index(0, 0).data(ProblemListModel::DescriptionRole).toString(),
                 QStringLiteral("y = a * x + y over N floats"));
        QVERIFY(model.index(0, 0).data(ProblemListModel::ValidRole).toBool());
    }

    // A broken folder must still be listed, with its errors, so a user sees why it cannot be searched.
    void brokenFoldersAreListedWithTheirErrors_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("fileInError");
        QTest::newRow("bad dtype") << "bad_dtype"
                                   << "problem.json";
        QTest::newRow("bad json syntax") << "bad_json_syntax"
                                         << "problem.json";
        QTest::newRow("missing field") << "missing_field"
                                       << "problem.json";
        QTest::newRow("missing reference") << "missing_reference"
                                           << "";
        QTest::newRow("one correctness case") << "one_correctness_case"
                                              << "problem.json";
        QTest::newRow("unknown size in shape") << "unknown_size_in_shape"
                                               << "problem.json";
        QTest::newRow("family without configurations") << "family_without_configurations"
                                                       << "family.cu";
    }
    void brokenFoldersAreListedWithTheirErrors() {
        QFETCH(QString, folder);
        QFETCH(QString, fileInError);
        const auto entry = read_problem_entry(fixture(folder.toUtf8().constData()));
        QVERIFY(!entry.valid());
        if (!fileInError.isEmpty())
            QVERIFY2(QString::fromStdString(entry.errors.front().where().file).endsWith(fileInError),
                     entry.errors.front().what());

        ProblemListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEntries({entry});
        QCOMPARE(model.rowCount(), 1);
        QVERIFY(!model.index(0, 0).data(ProblemListModel::ValidRole).toBool());
        QCOMPARE(model.index(0, 0).data(ProblemListModel::ErrorCountRole).toInt(), int(entry.errors.size()));
        QVERIFY(display(model, 0, ProblemListModel::StatusColumn).contains(QStringLiteral("error")));
        // The tooltip carries the readable message, file and line included.
        QVERIFY(model.index(0, ProblemListModel::StatusColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QString::fromStdString(entry.errors.front().what())));
    }

    void reopeningAFolderReplacesItsRow() {
        ProblemListModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEntries({named("gemv"), named("saxpy")});
        QCOMPARE(model.addOrReplace(named("saxpy", 2)), 1);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(1, 0).data(ProblemListModel::ErrorCountRole).toInt(), 2);
        QCOMPARE(model.addOrReplace(named("softmax")), 2);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.rowOfDir(QStringLiteral("/problems/softmax")), 2);
        QCOMPARE(model.rowOfDir(QStringLiteral("/problems/nothing")), -1);
        QVERIFY(model.entry(3) == nullptr);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void sortsThroughAProxy_data() {
        QTest::addColumn<int>("column");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("by name, case-insensitive")
            << int(ProblemListModel::NameColumn) << QStringList{"Alpha", "beta", "gamma"};
        QTest::newRow("by seeds, numerically")
            << int(ProblemListModel::ProgramsColumn) << QStringList{"gamma", "Alpha", "beta"};
        QTest::newRow("by error count") << int(ProblemListModel::StatusColumn) << QStringList{"beta", "gamma", "Alpha"};
    }
    void sortsThroughAProxy() {
        QFETCH(int, column);
        QFETCH(QStringList, expected);
        ProblemListModel model;
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(ProblemListModel::SortRole);
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        // seeds 2 / 10 / 0 check that "10" sorts after "2"
        model.setEntries({named("beta", 0, 10), named("gamma", 1, 0), named("Alpha", 12, 2)});
        proxy.sort(column, Qt::AscendingOrder);
        QStringList names;
        for (int r = 0; r < proxy.rowCount(); ++r)
            names << proxy.index(r, 0).data(ProblemListModel::NameRole).toString();
        QCOMPARE(names, expected);
    }

    void headersNameEveryColumn() {
        ProblemListModel model;
        for (int c = 0; c < model.columnCount(); ++c)
            QVERIFY(!model.headerData(c, Qt::Horizontal).toString().isEmpty());
    }
};

QTEST_MAIN(TestProblemListModel)
#include "tst_problem_list_model.moc"
