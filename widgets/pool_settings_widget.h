#pragma once
// Run control's pool settings: more devices besides the one chosen above (cuda:1, cuda:all, replay:<recordings>,
// each optionally @ssh:HOST or @slurm), worker processes per device, how workers start (local, ssh:HOST,
// slurm[:srun options]), whether GPU models may mix, whether the search overlaps its batches and the rounds it
// measures in. What `kerncast-cli search --device … --workers … --launcher … --overlap --round` takes.

#include "engine/worker/measurement_pool.h"

#include <QSettings>
#include <QWidget>

class QCheckBox;
class QLineEdit;
class QSpinBox;

namespace kerncast {

class PoolSettingsWidget : public QWidget {
    Q_OBJECT
public:
    explicit PoolSettingsWidget(QWidget* parent = nullptr);

    // The pool for a search on `device` (and the extra devices); an empty device list when there is no pool.
    PoolConfig poolConfig(const QString& device) const;

    void readSettings(const QSettings& settings);
    void writeSettings(QSettings& settings) const;

    QLineEdit* extraDevicesEdit() const { return m_extra; }
    QSpinBox* workersSpin() const { return m_workers; }
    QLineEdit* launcherEdit() const { return m_launcher; }
    QCheckBox* allowMixedCheck() const { return m_allowMixed; }
    // SearchConfig::overlap: the next batch is chosen while the last one is measured.
    bool overlapBatches() const;
    QCheckBox* overlapCheck() const { return m_overlap; }
    // SearchConfig::round: each batch is topped up to a multiple of it.
    int measureRound() const;
    QSpinBox* roundSpin() const { return m_round; }

private:
    QLineEdit* m_extra = nullptr;
    QSpinBox* m_workers = nullptr;
    QSpinBox* m_round = nullptr;
    QLineEdit* m_launcher = nullptr;
    QCheckBox* m_allowMixed = nullptr;
    QCheckBox* m_overlap = nullptr;
};

}  // namespace kerncast
