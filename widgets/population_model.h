#pragma once
// The population table: one row per candidate of a run, kept current by batches of rows or search events. Rows never
// move once inserted (sorting and filtering happen in PopulationFilterProxy), so a row index stays valid and the id ->
// row lookup is a hash.

#include "widgets/candidate_row.h"

#include <QAbstractTableModel>
#include <QColor>
#include <QHash>
#include <QStringList>

#include <vector>

namespace kerncast {

class PopulationModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        IdColumn,
        GenerationColumn,
        ParentColumn,
        MutatorColumn,
        StatusColumn,
        ForecastColumn,  // predicted bin and its probability
        SpeedupColumn,   // measured
        TimeColumn,      // measured median
        RegistersColumn,
        SharedMemoryColumn,
        ColumnCount
    };
    enum Roles {
        CandidateIdRole = Qt::UserRole + 1,  // qlonglong
        SortRole,                            // double: see sortKey()
        StatusRole,                          // QString: the stable status name ("ok", "trusted", ...)
        ParentIdRole,                        // qlonglong, 0 for roots
        GenerationRole,                      // int
        MeasuredSpeedupRole,                 // double; invalid when there is none
        PredictedBinRole,                    // int, 0 without a forecast
        ConfidenceRole,                      // double, max probability of the forecast
        SourceHashRole,                      // QString
        LabelRole,                           // QString
        SteeringRole,                        // int: Steering (pinned or banned as a parent by a person)
    };
    // What a person asked of a candidate as a parent; shown on its row (a marker, a tool tip).
    enum class Steering { None, Pinned, Banned };

    explicit PopulationModel(QObject* parent = nullptr);
    explicit PopulationModel(const BinScheme& scheme, QObject* parent = nullptr);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Replaces every row (a run was opened).
    void setRows(std::vector<CandidateRow> rows);
    // Appends in one insertion; a row whose id is already present updates that row instead.
    void appendRows(std::vector<CandidateRow> rows);
    // Replaces rows by id, announcing the changes as ranges of consecutive rows; unknown ids are appended.
    void updateRows(std::vector<CandidateRow> rows);
    // Applies a batch of events: rows named by them are updated in place or appended together at the end. Events of
    // another run than runId() (when that is set) are dropped as stale. Returns how many rows changed or appeared.
    int applyEvents(const std::vector<SearchEvent>& events);
    void clear();
    void setSteering(int64_t id, Steering steering);
    Steering steering(int64_t id) const { return m_steering.value(id, Steering::None); }

    // 0 accepts events of any run.
    void setRunId(int64_t runId) { m_runId = runId; }
    int64_t runId() const { return m_runId; }
    const BinScheme& scheme() const { return m_rows.scheme(); }

    const std::vector<CandidateRow>& rows() const { return m_rows.rows(); }
    const CandidateRow& row(int index) const { return m_rows[static_cast<size_t>(index)]; }
    // -1 when no row has this candidate id.
    int rowOfId(int64_t id) const { return m_rows.indexOf(id); }
    QModelIndex indexOfId(int64_t id, int column = 0) const;

    // What a cell shows for a role; the lineage model shares it.
    QVariant cellData(int row, int column, int role) const;
    // The number a column sorts by. Missing values sort last in each column's natural order: no speedup is below
    // every speedup (best first when descending), no time is above every time (fastest first when ascending).
    static double sortKey(const CandidateRow& row, int column);
    // The same for every column, the tunables' included (a candidate without the tunable sorts after the others).
    double sortKeyOf(const CandidateRow& row, int column) const;
    // One column per tunable of the run's family configurations, after the fixed ones, in the order first seen
    // (Kernel Tuner's view: every configuration's parameters beside its time). Their headers are the names.
    const QStringList& tunableNames() const { return m_tunableNames; }
    // The tunable a column shows, or "" for a fixed column.
    QString tunableOf(int column) const;
    // Compares two rows for the proxy's fast path, without going through QVariant.
    bool lessThan(int leftRow, int rightRow, int column) const;

    static QString statusText(const QString& status);
    static QString mutatorText(Mutator mutator);
    static QString decisionText(GatingDecision decision);
    // Invalid colours mean "the view's default".
    static QColor statusBackground(const QString& status);
    static QColor statusForeground(const QString& status);

    // More ranges of changed rows than this are announced as one dataChanged over their span.
    static constexpr size_t kMaxChangedRanges = 128;

private:
    void insertRows(std::vector<CandidateRow> rows);
    void announceChanged(std::vector<int> changedRows);
    QString forecastToolTip(const CandidateRow& row) const;

    CandidateRowSet m_rows;
    int64_t m_runId = 0;
    QHash<qint64, Steering> m_steering;
    QStringList m_tunableNames;
    // Appends a column for each tunable of `rows` not shown yet (inside a reset: without announcing it).
    void addTunableColumns(const std::vector<CandidateRow>& rows, bool announce);
};

}  // namespace kerncast
