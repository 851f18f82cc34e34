#include "widgets/pool_model.h"

#include <QBrush>
#include <QColor>
#include <QLocale>

namespace kerncast {

PoolModel::PoolModel(QObject* parent) : QAbstractTableModel(parent) {}

int PoolModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_workers.size());
}

int PoolModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant PoolModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case WorkerColumn:
        return tr("Worker");
    case HostColumn:
        return tr("Host");
    case DeviceColumn:
        return tr("Device");
    case GpuColumn:
        return tr("GPU");
    case StateColumn:
        return tr("State");
    case MeasuredColumn:
        return tr("Measured");
    default:
        return {};
    }
}

namespace {

QString state_text(const PoolWorkerStatus& w) {
    if (w.state == "busy")
        return w.candidate ? PoolModel::tr("measuring #%1").arg(w.candidate) : PoolModel::tr("measuring");
    if (w.state == "idle")
        return PoolModel::tr("idle");
    if (w.state == "restarting")
        return PoolModel::tr("restarting");
    if (w.state == "retired")
        return PoolModel::tr("retired");
    if (w.state == "starting")
        return PoolModel::tr("starting");
    return QString::fromStdString(w.state);
}

}  // namespace

QVariant PoolModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const PoolWorkerStatus& w = m_workers[static_cast<size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case WorkerColumn:
            return w.index;
        case HostColumn:
            return QString::fromStdString(w.host);
        case DeviceColumn:
            return QString::fromStdString(w.device);
        case GpuColumn:
            return QString::fromStdString(w.gpu);
        case StateColumn:
            return state_text(w);
        case MeasuredColumn:
            return QLocale().toString(static_cast<qlonglong>(w.measured));
        default:
            return {};
        }
    case Qt::ToolTipRole:
        return w.note.empty() ? QVariant() : QVariant(QString::fromStdString(w.note));
    case Qt::ForegroundRole:
        if (index.column() == StateColumn && w.state == "retired")
            return QBrush(QColor(0xc6, 0x28, 0x28));
        return {};
    case StateRole:
        return QString::fromStdString(w.state);
    case CandidateRole:
        return static_cast<qlonglong>(w.candidate);
    case NoteRole:
        return QString::fromStdString(w.note);
    default:
        return {};
    }
}

void PoolModel::setSnapshot(const PoolSnapshot& snapshot) {
    m_totals = snapshot;
    bool same = snapshot.workers.size() == m_workers.size();
    for (size_t i = 0; same && i < m_workers.size(); ++i)
        same = m_workers[i].index == snapshot.workers[i].index && m_workers[i].device == snapshot.workers[i].device &&
               m_workers[i].host == snapshot.workers[i].host;
    if (!same) {
        beginResetModel();
        m_workers = snapshot.workers;
        endResetModel();
        return;
    }
    m_workers = snapshot.workers;
    if (!m_workers.empty())
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

void PoolModel::clear() {
    beginResetModel();
    m_workers.clear();
    m_totals = PoolSnapshot{};
    endResetModel();
}

QString PoolModel::summary() const {
    if (m_workers.empty())
        return {};
    const QLocale locale;
    return tr("Queue: %1 · in flight: %2 · measured: %3")
        .arg(locale.toString(static_cast<qlonglong>(m_totals.queued)),
             locale.toString(static_cast<qlonglong>(m_totals.in_flight)),
             locale.toString(static_cast<qlonglong>(m_totals.done)));
}

}  // namespace kerncast
