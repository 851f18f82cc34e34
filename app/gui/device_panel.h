#pragma once
// The Device dock: every device this machine can measure on (CUDA GPUs and replay devices), the one in use, and what
// is known about it (fingerprint, measured DRAM bandwidth, the worker's state and queue). The list loads off the
// GUI thread; a newer reload makes an older one's result stale.

#include "app/gui/latest_result.h"
#include "engine/device.h"
#include "engine/search/search_events.h"

#include <QHash>
#include <QWidget>

#include <map>
#include <memory>
#include <string>
#include <vector>

class QLabel;
class QTreeView;

namespace kerncast {

class DeviceListModel;
class PoolView;
class TimelineView;
class Timeline;

// What a device load hands back to the GUI thread: plain values only.
struct DeviceLoad {
    std::vector<DeviceListing> devices;
    std::map<std::string, double> bandwidth;  // replay devices: measured DRAM GB/s from the recordings' headers
    std::string failure;
};
DeviceLoad loadDevices(const std::string& resourcesDir);

class DevicePanel : public QWidget {
    Q_OBJECT
public:
    DevicePanel(QString resourcesDir, QWidget* parent = nullptr);

    DeviceListModel* model() const { return m_devices; }
    QTreeView* view() const { return m_view; }

    void reload();
    bool isLoaded() const { return m_loaded; }

    // The device measurements go to: the saved choice when it is still listed, else the first CUDA GPU, else the
    // first replay device; empty when there is none.
    QString activeDeviceId() const { return m_active; }
    // False (and nothing changes) when the id is not listed.
    bool setActiveDevice(const QString& id);
    void setSavedDevice(const QString& id) { m_saved = id; }

    // The device of a running search (shown instead of the active one while it runs; empty: the active one), the
    // worker's state and the measurements waiting for it.
    void showWorker(const QString& runningDevice, const QString& workerState, int queueLength);
    QString detailsText() const;
    // A search's measurement pool, from its events: the workers, their state, the queue (hidden without a pool).
    void showPoolEvents(const std::vector<SearchEvent>& events);
    PoolView* poolView() const { return m_pool; }
    // The running search's timeline (null: none); frozen when the search ends. Set-up events are shown on it.
    void setTimeline(std::shared_ptr<Timeline> timeline);
    void freezeTimeline();
    TimelineView* timelineView() const { return m_timeline; }

Q_SIGNALS:
    void loaded(int count);
    void activeDeviceChanged(const QString& id);

private:
    void updateDetails();

    QString m_resourcesDir;
    DeviceListModel* m_devices = nullptr;
    QTreeView* m_view = nullptr;
    QLabel* m_note = nullptr;
    QLabel* m_details = nullptr;
    PoolView* m_pool = nullptr;
    TimelineView* m_timeline = nullptr;
    QHash<QString, double> m_bandwidth;  // device id -> measured DRAM GB/s (replay recordings' ceilings)
    QString m_active;
    QString m_saved;
    QString m_runningDevice;
    QString m_workerState;
    int m_queueLength = 0;
    bool m_loaded = false;
    LatestResult<DeviceLoad> m_load{this};
};

}  // namespace kerncast
