#pragma once
// Sorting and filtering of the population table: a text filter, a set of statuses, "measured only". Over a
// PopulationModel it reads rows directly instead of through QVariant, and sorts by keys worked out once per row
// (PopulationModel::sortKey) rather than once per comparison: that is what keeps a sort of 100k rows fast.

#include <QSortFilterProxyModel>
#include <QStringList>

#include <functional>
#include <vector>

namespace kerncast {

class PopulationModel;

class PopulationFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit PopulationFilterProxy(QObject* parent = nullptr);

    void setSourceModel(QAbstractItemModel* model) override;
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

    // Above this many rows a filter change resets the proxy (views lose their selection) instead of removing and
    // inserting rows range by range, which QSortFilterProxyModel does one range at a time: quadratic in a sorted
    // view, where the rows that go are scattered.
    static constexpr int kResetAbove = 10000;

    // Keeps rows where the text equals the id, or is contained (ignoring case) in the label, the mutator, the status
    // or the source hash. Surrounding spaces are ignored; empty keeps every row.
    void setTextFilter(const QString& text);
    QString textFilter() const { return m_text; }
    // Stable status names ("ok", "trusted", ...); empty keeps every status.
    void setStatusFilter(const QStringList& statuses);
    QStringList statusFilter() const { return m_statuses; }
    // Keeps only rows with a device outcome (ok, failures, suspect, not_recorded).
    void setMeasuredOnly(bool measuredOnly);
    bool measuredOnly() const { return m_measuredOnly; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

private:
    void updateKeys(int first, int last);
    void changeFilter(const std::function<void()>& change);

    const PopulationModel* m_population = nullptr;
    // Sort keys of the sort column, one per source row; m_keyColumn -1 when none are kept.
    std::vector<double> m_keys;
    int m_keyColumn = -1;
    Qt::SortOrder m_keyOrder = Qt::AscendingOrder;
    QString m_text;
    // What the text matches among the few mutators and statuses, worked out once per filter text rather than per row.
    QList<int> m_textMutators;
    QStringList m_textStatuses;
    QStringList m_statuses;
    bool m_measuredOnly = false;
};

}  // namespace kerncast
