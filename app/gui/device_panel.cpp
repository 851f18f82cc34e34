#include "app/gui/device_panel.h"

#include "engine/replay/replay_device.h"
#include "widgets/device_list_model.h"
#include "widgets/pool_view.h"
#include "widgets/timeline_view.h"

#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QScrollArea>
#include <QTreeView>
#include <QVBoxLayout>

#include <filesystem>

namespace kerncast {

DeviceLoad loadDevices(const std::string& resources) {
    DeviceLoad load;
    try {
        load.devices = list_devices(resources);
        for (const auto& d : load.devices) {
            if (d.kind != "replay")
                continue;
            try {
                const std::string slug = d.id.substr(d.id.find(':') + 1);
                ReplayDevice replay((std::filesystem::path(resources) / "recordings" / slug).string());
                if (replay.header().ceilings.dram_gbps > 0)
                    load.bandwidth[d.id] = replay.header().ceilings.dram_gbps;
            } catch (const std::exception&) {
                // a recording without ceilings: the bandwidth is shown as unknown
            }
        }
    } catch (const std::exception& e) {
        load.failure = e.what();
    }
    return load;
}

DevicePanel::DevicePanel(QString resourcesDir, QWidget* parent)
    : QWidget(parent), m_resourcesDir(std::move(resourcesDir)) {
    m_devices = new DeviceListModel(this);
    // The list, the details, the pool and the timeline scroll together in a low dock rather than squeeze a text.
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("deviceScroll"));
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* content = new QWidget(scroll);
    auto* layout = new QVBoxLayout(content);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    scroll->setWidget(content);
    outer->addWidget(scroll);
    m_view = new QTreeView(this);
    // A machine lists a few devices: the list takes their rows, the details and the timeline the rest.
    m_view->setMinimumHeight(4 * (m_view->fontMetrics().height() + 4));
    m_view->setMaximumHeight(7 * (m_view->fontMetrics().height() + 4));
    m_view->setObjectName(QStringLiteral("deviceView"));
    m_view->setModel(m_devices);
    m_view->setRootIsDecorated(false);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(true);
    m_view->header()->setStretchLastSection(true);
    m_view->setToolTip(tr("Double-click a device to measure on it."));
    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    m_note->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_note->hide();
    m_details = new QLabel(this);
    m_details->setObjectName(QStringLiteral("deviceDetails"));
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    layout->addWidget(m_view);
    layout->addWidget(m_note);
    layout->addWidget(m_details);
    m_pool = new PoolView(this);
    layout->addWidget(m_pool, 1);
    m_timeline = new TimelineView(this);
    layout->addWidget(m_timeline);
    layout->addStretch(1);
    connect(m_view, &QTreeView::activated, this, [this](const QModelIndex& index) {
        if (index.data(DeviceListModel::UsableRole).toBool())
            setActiveDevice(index.data(DeviceListModel::IdRole).toString());
    });
    m_workerState = tr("idle");
    updateDetails();
}

void DevicePanel::reload() {
    const std::string resources = m_resourcesDir.toStdString();
    m_load.start([resources] { return loadDevices(resources); },
                 [this](DeviceLoad load) {
        m_devices->setDevices(std::move(load.devices));
        m_bandwidth.clear();
        for (const auto& [id, gbps] : load.bandwidth)
            m_bandwidth.insert(QString::fromStdString(id), gbps);
        m_view->resizeColumnToContents(DeviceListModel::IdColumn);
        m_view->resizeColumnToContents(DeviceListModel::KindColumn);
        m_view->resizeColumnToContents(DeviceListModel::GpuColumn);
        // A row that cannot measure carries the reason in a note too long for a table cell: spell it out below.
        QStringList notes;
        bool replay = false;
        for (int r = 0; r < m_devices->rowCount(); ++r) {
            const auto index = m_devices->index(r, 0);
            const bool cuda = index.data(DeviceListModel::KindRole).toString() == QLatin1String("cuda");
            replay = replay || index.data(DeviceListModel::KindRole).toString() == QLatin1String("replay");
            if (!index.data(DeviceListModel::UsableRole).toBool())
                notes << QStringLiteral("%1: %2").arg(cuda ? tr("No CUDA device")
                                                           : index.data(DeviceListModel::IdRole).toString(),
                                                      index.data(DeviceListModel::NoteRole).toString());
        }
        if (!load.failure.empty())
            notes << tr("Could not list devices: %1").arg(QString::fromStdString(load.failure));
        if (!replay)
            notes << tr("No recordings for the replay device under %1.")
                         .arg(QDir(m_resourcesDir).filePath(QStringLiteral("recordings")));
        m_note->setText(notes.join(QLatin1Char('\n')));
        m_note->setVisible(!m_note->text().isEmpty());

        const QString keep = m_active.isEmpty() ? m_saved : m_active;
        const int keepRow = m_devices->rowOfId(keep);
        if (!keep.isEmpty() && keepRow >= 0 && m_devices->index(keepRow, 0).data(DeviceListModel::UsableRole).toBool())
            m_active = keep;
        else
            m_active = m_devices->defaultDeviceId();
        m_loaded = true;
        updateDetails();
        Q_EMIT activeDeviceChanged(m_active);
        Q_EMIT loaded(m_devices->rowCount());
    });
}

bool DevicePanel::setActiveDevice(const QString& id) {
    if (m_devices->rowOfId(id) < 0)
        return false;
    m_active = id;
    updateDetails();
    Q_EMIT activeDeviceChanged(id);
    return true;
}

void DevicePanel::showWorker(const QString& runningDevice, const QString& workerState, int queueLength) {
    m_runningDevice = runningDevice;
    m_workerState = workerState;
    m_queueLength = queueLength;
    updateDetails();
}

QString DevicePanel::detailsText() const { return m_details->text(); }

void DevicePanel::updateDetails() {
    m_view->clearSelection();
    for (int r = 0; !m_active.isEmpty() && r < m_devices->rowCount(); ++r) {
        if (m_devices->index(r, 0).data(DeviceListModel::IdRole).toString() == m_active) {
            m_view->setCurrentIndex(m_devices->index(r, 0));
            break;
        }
    }
    const QString id = m_runningDevice.isEmpty() ? m_active : m_runningDevice;
    const DeviceListing* d = m_devices->device(m_devices->rowOfId(id));
    QStringList lines;
    const QLocale locale;
    if (!d) {
        lines << tr("<b>No device selected.</b>");
    } else {
        const DeviceFingerprint& f = d->fingerprint;
        lines << tr("<b>%1</b> (%2)")
                     .arg(QString::fromStdString(f.name.empty() ? d->id : f.name).toHtmlEscaped(),
                          QString::fromStdString(d->id).toHtmlEscaped());
        if (f.cc_major > 0)
            lines << tr("Compute capability %1.%2, %3 SMs").arg(f.cc_major).arg(f.cc_minor).arg(f.sm_count);
        if (f.memory_bytes > 0 || f.l2_bytes > 0)
            lines << tr("Memory %1, L2 %2")
                         .arg(locale.formattedDataSize(f.memory_bytes), locale.formattedDataSize(f.l2_bytes));
        if (f.driver_version > 0)
            lines << tr("Driver %1, CUDA %2").arg(f.driver_version).arg(f.cuda_version);
        if (f.sm_clock_mhz > 0)
            lines << tr("Clocks up to %1 MHz (SM), %2 MHz (memory)").arg(f.sm_clock_mhz).arg(f.mem_clock_mhz);
        if (f.power_limit_mw > 0)
            lines << tr("Power limit %1 W").arg(locale.toString(f.power_limit_mw / 1000.0, 'g', 7));
        if (!f.uuid.empty())
            lines << tr("UUID %1").arg(QString::fromStdString(f.uuid).toHtmlEscaped());
        const auto bw = m_bandwidth.constFind(id);
        lines << (bw != m_bandwidth.constEnd()
                      ? tr("Measured DRAM bandwidth: %1 GB/s").arg(locale.toString(*bw, 'f', 0))
                      : tr("Measured DRAM bandwidth: not measured yet"));
    }
    lines << tr("Worker: %1").arg(m_workerState);
    lines << tr("Queue: %n candidate(s) waiting for the device", nullptr, m_queueLength);
    m_details->setText(lines.join(QStringLiteral("<br>")));
}

void DevicePanel::showPoolEvents(const std::vector<SearchEvent>& events) {
    for (const SearchEvent& e : events) {
        if (e.kind == SearchEvent::Kind::RunStarted)
            m_pool->clear();  // the new search's pool reports itself with its first batch
        else if (e.kind == SearchEvent::Kind::Pool && e.pool)
            m_pool->showSnapshot(*e.pool, QString::fromStdString(e.message));
        else if (e.kind == SearchEvent::Kind::Setup)
            m_timeline->showSetup(QString::fromStdString(e.message));
    }
}

void DevicePanel::setTimeline(std::shared_ptr<Timeline> timeline) { m_timeline->setTimeline(std::move(timeline)); }

void DevicePanel::freezeTimeline() { m_timeline->freeze(); }

}  // namespace kerncast
