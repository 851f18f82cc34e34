#include "widgets/population_filter_proxy.h"

#include "widgets/population_model.h"

namespace kerncast {

PopulationFilterProxy::PopulationFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(PopulationModel::SortRole);
}

void PopulationFilterProxy::setSourceModel(QAbstractItemModel* model) {
    if (m_population)
        disconnect(m_population, nullptr, this, nullptr);
    m_population = qobject_cast<const PopulationModel*>(model);
    m_keys.clear();
    m_keyColumn = -1;
    if (m_population) {
        // Connected before QSortFilterProxyModel connects its own handlers, and slots run in connection order: the
        // keys are current by the time it sorts new or changed rows.
        connect(m_population, &QAbstractItemModel::modelReset, this, [this] { updateKeys(0, -1); });
        connect(m_population, &QAbstractItemModel::rowsInserted, this,
                [this](const QModelIndex&, int first, int last) { updateKeys(first, last); });
        connect(m_population, &QAbstractItemModel::dataChanged, this,
                [this](const QModelIndex& topLeft, const QModelIndex& bottomRight) {
            updateKeys(topLeft.row(), bottomRight.row());
        });
        connect(m_population, &QObject::destroyed, this, [this] {
            m_population = nullptr;
            m_keyColumn = -1;
        });
    }
    QSortFilterProxyModel::setSourceModel(model);
    // A new tunable's column (PopulationModel::tunableNames) makes QSortFilterProxyModel forget its sort: sorted
    // again by the same column, after its own handler (connected above, so this one runs later).
    if (m_population)
        connect(m_population, &QAbstractItemModel::columnsInserted, this, [this] {
            if (m_keyColumn >= 0)
                sort(m_keyColumn, m_keyOrder);
        });
}

void PopulationFilterProxy::sort(int column, Qt::SortOrder order) {
    m_keyOrder = order;
    if (m_population && column >= 0 && column != m_keyColumn) {
        m_keyColumn = column;
        updateKeys(0, -1);
    }
    QSortFilterProxyModel::sort(column, order);
}

void PopulationFilterProxy::updateKeys(int first, int last) {
    if (m_keyColumn < 0 || !m_population)
        return;
    const auto& rows = m_population->rows();
    if (last < 0) {  // every row
        m_keys.resize(rows.size());
        first = 0;
        last = static_cast<int>(rows.size()) - 1;
    }
    if (m_keys.size() < rows.size())
        m_keys.resize(rows.size());
    for (int row = first; row <= last; ++row)
        m_keys[static_cast<size_t>(row)] = m_population->sortKeyOf(rows[static_cast<size_t>(row)], m_keyColumn);
}

void PopulationFilterProxy::changeFilter(const std::function<void()>& change) {
    if (sourceModel() && sourceModel()->rowCount() > kResetAbove) {
        beginResetModel();  // QSortFilterProxyModel drops its mapping on its own reset and rebuilds it on demand
        change();
        endResetModel();
    } else {
        change();
        invalidateRowsFilter();
    }
}

void PopulationFilterProxy::setTextFilter(const QString& text) {
    const QString trimmed = text.trimmed();
    if (trimmed == m_text)
        return;
    changeFilter([&] {
        m_text = trimmed;
        m_textMutators.clear();
        m_textStatuses.clear();
        if (m_text.isEmpty())
            return;
        for (Mutator m : {Mutator::Seed, Mutator::Reference, Mutator::Parametric, Mutator::LlmRewrite, Mutator::LlmDiff,
                          Mutator::Human, Mutator::Imported})
            if (PopulationModel::mutatorText(m).contains(m_text, Qt::CaseInsensitive) ||
                QString::fromLatin1(to_string(m)).contains(m_text, Qt::CaseInsensitive))
                m_textMutators << static_cast<int>(m);
        for (const QString& status : candidateStatuses())
            if (status.contains(m_text, Qt::CaseInsensitive) ||
                PopulationModel::statusText(status).contains(m_text, Qt::CaseInsensitive))
                m_textStatuses << status;
    });
}

void PopulationFilterProxy::setStatusFilter(const QStringList& statuses) {
    if (statuses != m_statuses)
        changeFilter([&] { m_statuses = statuses; });
}

void PopulationFilterProxy::setMeasuredOnly(bool measuredOnly) {
    if (measuredOnly != m_measuredOnly)
        changeFilter([&] { m_measuredOnly = measuredOnly; });
}

bool PopulationFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (m_text.isEmpty() && m_statuses.isEmpty() && !m_measuredOnly)
        return true;
    if (!m_population)
        return QSortFilterProxyModel::filterAcceptsRow(sourceRow, sourceParent);
    const CandidateRow& row = m_population->row(sourceRow);
    if (m_measuredOnly && !row.isMeasured())
        return false;
    if (!m_statuses.isEmpty() && !m_statuses.contains(row.status))
        return false;
    if (m_text.isEmpty())
        return true;
    bool isNumber = false;
    const qlonglong id = QString(m_text).remove(QLatin1Char('#')).toLongLong(&isNumber);
    if (isNumber && id == row.id)
        return true;
    return m_textMutators.contains(static_cast<int>(row.mutator)) || m_textStatuses.contains(row.status) ||
           row.label.contains(m_text, Qt::CaseInsensitive) || row.source_hash.startsWith(m_text, Qt::CaseInsensitive);
}

bool PopulationFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    if (!m_population || sortRole() != PopulationModel::SortRole)
        return QSortFilterProxyModel::lessThan(left, right);
    const auto l = static_cast<size_t>(left.row());
    const auto r = static_cast<size_t>(right.row());
    if (left.column() == m_keyColumn && l < m_keys.size() && r < m_keys.size())
        return m_keys[l] < m_keys[r];
    return m_population->lessThan(left.row(), right.row(), left.column());
}

}  // namespace kerncast
