#pragma once
// The device panel's pool table: one row per worker of a search's measurement pool (where it runs, its GPU, what
// it is doing, how much it measured), from the pool snapshots the search reports; the queue and the total below it.

#include "engine/worker/pool_status.h"

#include <QAbstractTableModel>
#include <QString>

#include <vector>

namespace kerncast {

class PoolModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { WorkerColumn, HostColumn, DeviceColumn, GpuColumn, StateColumn, MeasuredColumn, ColumnCount };
    enum Roles {
        StateRole = Qt::UserRole + 1,  // QString: idle, busy, restarting, retired, starting
        CandidateRole,                 // qlonglong: the candidate being measured (0: none)
        NoteRole,                      // QString: why it was retired, its last loss
    };

    explicit PoolModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Rows keep their place when the workers are the same; a different pool resets the table.
    void setSnapshot(const PoolSnapshot& snapshot);
    void clear();
    // "Queue: 3 · in flight: 4 · measured: 17", or empty without a pool.
    QString summary() const;

private:
    std::vector<PoolWorkerStatus> m_workers;
    PoolSnapshot m_totals;
};

}  // namespace kerncast
