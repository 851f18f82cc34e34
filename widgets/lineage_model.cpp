#include "widgets/lineage_model.h"

#include "widgets/population_model.h"

#include <algorithm>
#include <unordered_map>

namespace kerncast {

LineageModel::LineageModel(QObject* parent) : QAbstractItemModel(parent) {}

void LineageModel::setPopulation(PopulationModel* population) {
    if (m_population)
        disconnect(m_population, nullptr, this, nullptr);
    m_population = population;
    if (population) {
        connect(population, &QAbstractItemModel::rowsInserted, this,
                [this](const QModelIndex& parent, int first, int last) {
            if (!parent.isValid())
                onRowsInserted(first, last);
        });
        connect(population, &QAbstractItemModel::dataChanged, this, &LineageModel::onDataChanged);
        // The population only appends; anything else it does is followed by building the tree again.
        connect(population, &QAbstractItemModel::modelReset, this, &LineageModel::rebuild);
        connect(population, &QAbstractItemModel::rowsRemoved, this, &LineageModel::rebuild);
        connect(population, &QAbstractItemModel::rowsMoved, this, &LineageModel::rebuild);
        connect(population, &QAbstractItemModel::layoutChanged, this, &LineageModel::rebuild);
        connect(population, &QObject::destroyed, this, [this] {
            m_population = nullptr;
            rebuild();
        });
    }
    rebuild();
}

int LineageModel::populationColumn(int column) {
    switch (column) {
    case GenerationColumn:
        return PopulationModel::GenerationColumn;
    case IdColumn:
        return PopulationModel::IdColumn;
    case MutatorColumn:
        return PopulationModel::MutatorColumn;
    case StatusColumn:
        return PopulationModel::StatusColumn;
    case SpeedupColumn:
        return PopulationModel::SpeedupColumn;
    }
    return -1;
}

QModelIndex LineageModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= ColumnCount || (parent.isValid() && parent.column() != 0))
        return {};
    const std::vector<int>& children =
        parent.isValid() ? m_nodes[static_cast<size_t>(parent.internalId())].children : m_roots;
    if (row >= static_cast<int>(children.size()))
        return {};
    return createIndex(row, column, static_cast<quintptr>(children[static_cast<size_t>(row)]));
}

QModelIndex LineageModel::parent(const QModelIndex& child) const {
    if (!child.isValid())
        return {};
    const int parentRow = m_nodes[static_cast<size_t>(child.internalId())].parent;
    return parentRow < 0 ? QModelIndex() : nodeIndex(parentRow);
}

int LineageModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid())
        return static_cast<int>(m_roots.size());
    if (parent.column() != 0)
        return 0;
    return static_cast<int>(m_nodes[static_cast<size_t>(parent.internalId())].children.size());
}

int LineageModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant LineageModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid) || !m_population)
        return {};
    return m_population->cellData(populationRow(index), populationColumn(index.column()), role);
}

QVariant LineageModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (!m_population)
        return {};
    return m_population->headerData(populationColumn(section), orientation, role);
}

QModelIndex LineageModel::indexOfId(int64_t id, int column) const {
    const int row = m_population ? m_population->rowOfId(id) : -1;
    return row < 0 || row >= static_cast<int>(m_nodes.size()) ? QModelIndex() : nodeIndex(row, column);
}

int LineageModel::populationRow(const QModelIndex& index) const {
    return index.isValid() ? static_cast<int>(index.internalId()) : -1;
}

QModelIndex LineageModel::nodeIndex(int row, int column) const {
    return createIndex(m_nodes[static_cast<size_t>(row)].position, column, static_cast<quintptr>(row));
}

void LineageModel::rebuild() {
    beginResetModel();
    m_nodes.clear();
    m_roots.clear();
    m_orphans.clear();
    const int rows = m_population ? m_population->rowCount() : 0;
    if (rows > 0)
        place(0, rows - 1, false);
    endResetModel();
}

void LineageModel::onRowsInserted(int first, int last) {
    if (first != static_cast<int>(m_nodes.size())) {
        rebuild();  // not an append: the rows below moved
        return;
    }
    // A first load is one reset rather than an insertion per parent.
    if (m_nodes.empty()) {
        rebuild();
        return;
    }
    place(first, last, true);
}

void LineageModel::onDataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight) {
    const int end = std::min(bottomRight.row(), static_cast<int>(m_nodes.size()) - 1);
    // Rows under different parents need a signal each. A span of many rows (a batch of scattered updates of a large
    // run) would be thousands of signals; one over the top level instead makes attached views repaint what they show.
    if (end - topLeft.row() + 1 > kMaxRowSignals && !m_roots.empty()) {
        Q_EMIT dataChanged(index(0, 0), index(static_cast<int>(m_roots.size()) - 1, ColumnCount - 1));
        return;
    }
    for (int row = topLeft.row(); row <= end; ++row)
        Q_EMIT dataChanged(nodeIndex(row, 0), nodeIndex(row, ColumnCount - 1));
}

void LineageModel::place(int first, int last, bool announce) {
    m_nodes.resize(static_cast<size_t>(last) + 1);
    // The new rows grouped by parent (the top level counts as one), each group in row order. A group goes into the
    // tree in one insertion once its parent is there: first the groups under the top level and rows already in the
    // tree, then the groups under the rows those brought, and so on: one pass, whatever the depth of the tree.
    // Groups are linked lists over the batch, kept in slots: 0 for the top level, 1 + (row - first) for a parent in
    // the batch, further slots for parents already in the tree.
    const int count = last - first + 1;
    std::vector<int> head(static_cast<size_t>(count) + 1, -1), tail(head), next(static_cast<size_t>(count), -1);
    std::unordered_map<int, int> slotOfOldParent;
    std::vector<int> ready;  // parents whose group can go in (-1: the top level), in the order first seen
    auto slotOf = [&](int parentRow) {
        if (parentRow < 0)
            return 0;
        if (parentRow >= first)
            return 1 + parentRow - first;
        const auto found = slotOfOldParent.find(parentRow);
        return found == slotOfOldParent.end() ? -1 : found->second;
    };
    for (int row = first; row <= last; ++row) {
        const int64_t parentId = m_population->row(row).parent_id;
        int parentRow = parentId != 0 ? m_population->rowOfId(parentId) : -1;
        if (parentRow == row) {
            parentRow = -1;  // its own parent: a broken link, shown at the top level
        } else if (parentId != 0 && (parentRow < 0 || parentRow > last)) {
            m_orphans[parentId].push_back(row);  // its parent is not in the population yet
            parentRow = -1;
        }
        int slot = slotOf(parentRow);
        if (slot < 0) {
            slot = static_cast<int>(head.size());
            slotOfOldParent.emplace(parentRow, slot);
            head.push_back(-1);
            tail.push_back(-1);
        }
        const int member = row - first;
        if (head[static_cast<size_t>(slot)] < 0) {
            head[static_cast<size_t>(slot)] = member;
            if (parentRow < first)
                ready.push_back(parentRow);
        } else {
            next[static_cast<size_t>(tail[static_cast<size_t>(slot)])] = member;
        }
        tail[static_cast<size_t>(slot)] = member;
    }
    auto takeGroup = [&](int slot) {
        std::vector<int> rows;
        for (int m = head[static_cast<size_t>(slot)]; m >= 0; m = next[static_cast<size_t>(m)])
            rows.push_back(first + m);
        head[static_cast<size_t>(slot)] = -1;
        return rows;
    };
    int placed = 0;
    for (size_t i = 0; i < ready.size(); ++i) {
        const std::vector<int> rows = takeGroup(slotOf(ready[i]));
        insertGroup(ready[i], rows, announce);
        placed += static_cast<int>(rows.size());
        for (int row : rows) {
            if (head[static_cast<size_t>(slotOf(row))] >= 0)
                ready.push_back(row);
            adoptOrphansOf(row, announce);
        }
    }
    if (placed < count) {
        // What is left hangs off a cycle in the parent links, which no tree can show: it goes to the top level.
        std::vector<int> rest;
        for (int slot = 1; slot <= count; ++slot) {
            const std::vector<int> rows = takeGroup(slot);
            rest.insert(rest.end(), rows.begin(), rows.end());
        }
        std::sort(rest.begin(), rest.end());
        insertGroup(-1, rest, announce);
    }
}

void LineageModel::insertGroup(int parentRow, const std::vector<int>& rows, bool announce) {
    std::vector<int>& children = childrenOf(parentRow);
    const int start = static_cast<int>(children.size());
    if (announce)
        beginInsertRows(parentRow < 0 ? QModelIndex() : nodeIndex(parentRow), start,
                        start + static_cast<int>(rows.size()) - 1);
    for (int row : rows) {
        Node& node = m_nodes[static_cast<size_t>(row)];
        node.parent = parentRow;
        node.position = static_cast<int>(children.size());
        children.push_back(row);
    }
    if (announce)
        endInsertRows();
}

void LineageModel::adoptOrphansOf(int parentRow, bool announce) {
    if (m_orphans.isEmpty())
        return;
    const auto it = m_orphans.find(m_population->row(parentRow).id);
    if (it == m_orphans.end())
        return;
    const std::vector<int> orphans = std::move(it.value());
    m_orphans.erase(it);
    for (int row : orphans) {
        Node& node = m_nodes[static_cast<size_t>(row)];
        std::vector<int>& children = m_nodes[static_cast<size_t>(parentRow)].children;
        const int from = node.position;
        const int to = static_cast<int>(children.size());
        if (announce)
            beginMoveRows({}, from, from, nodeIndex(parentRow), to);
        m_roots.erase(m_roots.begin() + from);
        for (size_t i = static_cast<size_t>(from); i < m_roots.size(); ++i)
            m_nodes[static_cast<size_t>(m_roots[i])].position = static_cast<int>(i);
        node.parent = parentRow;
        node.position = to;
        children.push_back(row);
        if (announce)
            endMoveRows();
    }
}

}  // namespace kerncast
