#pragma once
// The population as a family tree: each candidate under its parent, roots (reference, seeds) at the top. It shows
// the rows of a PopulationModel (one source of truth) and follows its insertions incrementally: a batch of new rows
// becomes one insertion per parent. A candidate whose parent is not in the population yet waits at the top level
// and moves under its parent when that arrives.

#include <QAbstractItemModel>
#include <QHash>
#include <QPointer>

#include <cstdint>
#include <vector>

namespace kerncast {

class PopulationModel;

class LineageModel : public QAbstractItemModel {
    Q_OBJECT
public:
    // The tree is drawn in the first column, indented by depth: a deep lineage pushes its text out of a narrow
    // column. So the first column is the generation (which the indentation shows anyway) and the id comes second,
    // where it is always in view.
    enum Column { GenerationColumn, IdColumn, MutatorColumn, StatusColumn, SpeedupColumn, ColumnCount };
    // Data roles are PopulationModel::Roles (CandidateIdRole, SortRole, StatusRole, ...).

    // A change of more population rows than this at once is announced as one change of the top level (see
    // onDataChanged).
    static constexpr int kMaxRowSignals = 256;

    explicit LineageModel(QObject* parent = nullptr);

    void setPopulation(PopulationModel* population);
    PopulationModel* population() const { return m_population; }

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    QModelIndex indexOfId(int64_t id, int column = 0) const;
    // The population row an index shows; -1 for an invalid index.
    int populationRow(const QModelIndex& index) const;
    // The PopulationModel column a lineage column shows.
    static int populationColumn(int column);

private:
    struct Node {
        int parent = -1;   // population row of the parent node; -1 at the top level
        int position = 0;  // row under the parent
        std::vector<int> children;
    };

    void rebuild();
    void onRowsInserted(int first, int last);
    void onDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight);
    // Places population rows [first, last] into the tree, one insertion per parent when announce is set.
    void place(int first, int last, bool announce);
    void insertGroup(int parentRow, const std::vector<int>& rows, bool announce);
    void adoptOrphansOf(int parentRow, bool announce);
    QModelIndex nodeIndex(int populationRow, int column = 0) const;
    std::vector<int>& childrenOf(int parentRow) { return parentRow < 0 ? m_roots : m_nodes[parentRow].children; }

    QPointer<PopulationModel> m_population;
    std::vector<Node> m_nodes;  // one per population row
    std::vector<int> m_roots;
    QHash<int64_t, std::vector<int>> m_orphans;  // missing parent id -> population rows waiting at the top level
};

}  // namespace kerncast
