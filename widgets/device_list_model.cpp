#include "widgets/device_list_model.h"

namespace kerncast {

namespace {

QString describeGpu(const DeviceFingerprint& f) {
    if (f.name.empty())
        return {};
    QStringList traits;
    if (f.cc_major > 0)
        traits << QStringLiteral("sm_%1%2").arg(f.cc_major).arg(f.cc_minor);
    if (f.sm_count > 0)
        traits << DeviceListModel::tr("%1 SMs").arg(f.sm_count);
    if (f.memory_bytes > 0)
        traits << QStringLiteral("%1 GiB").arg(static_cast<double>(f.memory_bytes) / (1024.0 * 1024 * 1024), 0, 'f', 0);
    const QString name = QString::fromStdString(f.name);
    return traits.isEmpty() ? name : QStringLiteral("%1 (%2)").arg(name, traits.join(QStringLiteral(", ")));
}

// list_devices() keeps a replay folder whose recordings do not load, to say why; it cannot measure.
bool usable(const DeviceListing& d) { return !d.id.empty() && d.note.rfind("unusable", 0) != 0; }

}  // namespace

DeviceListModel::DeviceListModel(QObject* parent) : QAbstractTableModel(parent) {}

int DeviceListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_devices.size());
}

int DeviceListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant DeviceListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& d = m_devices[static_cast<size_t>(index.row())];
    switch (role) {
    case IdRole:
        return QString::fromStdString(d.id);
    case KindRole:
        return QString::fromStdString(d.kind);
    case NoteRole:
        return QString::fromStdString(d.note);
    case UsableRole:
        return usable(d);
    case Qt::DisplayRole:
        switch (index.column()) {
        case IdColumn:
            return d.id.empty() ? tr("(none)") : QString::fromStdString(d.id);
        case KindColumn:
            return d.kind == "cuda"     ? tr("CUDA GPU")
                   : d.kind == "replay" ? tr("replay")
                                        : QString::fromStdString(d.kind);
        case GpuColumn:
            return describeGpu(d.fingerprint);
        case NoteColumn:
            return QString::fromStdString(d.note);
        }
        return {};
    case Qt::ToolTipRole: {
        QStringList lines;
        if (!d.fingerprint.uuid.empty())
            lines << tr("UUID: %1").arg(QString::fromStdString(d.fingerprint.uuid));
        if (d.fingerprint.driver_version > 0)
            lines << tr("Driver: %1, CUDA: %2").arg(d.fingerprint.driver_version).arg(d.fingerprint.cuda_version);
        if (!d.note.empty())
            lines << QString::fromStdString(d.note);
        return lines.join(QLatin1Char('\n'));
    }
    }
    return {};
}

QVariant DeviceListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case IdColumn:
        return tr("Device");
    case KindColumn:
        return tr("Kind");
    case GpuColumn:
        return tr("GPU");
    case NoteColumn:
        return tr("Note");
    }
    return {};
}

void DeviceListModel::setDevices(std::vector<DeviceListing> devices) {
    beginResetModel();
    m_devices = std::move(devices);
    endResetModel();
}

const DeviceListing* DeviceListModel::device(int row) const {
    if (row < 0 || row >= rowCount())
        return nullptr;
    return &m_devices[static_cast<size_t>(row)];
}

int DeviceListModel::rowOfId(const QString& id) const {
    const auto wanted = id.toStdString();
    for (size_t i = 0; i < m_devices.size(); ++i)
        if (m_devices[i].id == wanted)
            return static_cast<int>(i);
    return -1;
}

QString DeviceListModel::defaultDeviceId() const {
    for (const char* kind : {"cuda", "replay"})
        for (const auto& d : m_devices)
            if (d.kind == kind && usable(d))
                return QString::fromStdString(d.id);
    return {};
}

}  // namespace kerncast
