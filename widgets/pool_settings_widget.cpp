#include "widgets/pool_settings_widget.h"

#include "core/error.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QSpinBox>

namespace kerncast {

PoolSettingsWidget::PoolSettingsWidget(QWidget* parent) : QWidget(parent) {
    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    m_extra = new QLineEdit(this);
    m_extra->setObjectName(QStringLiteral("poolExtraDevices"));
    m_extra->setPlaceholderText(tr("e.g. cuda:1, cuda:all@ssh:gpu-b"));
    m_extra->setToolTip(tr("More devices for the same search, separated by commas: cuda:N, cuda:all or "
                           "replay:<recordings>, each optionally followed by @ssh:HOST or @slurm."));
    m_extra->setClearButtonEnabled(true);
    m_workers = new QSpinBox(this);
    m_workers->setObjectName(QStringLiteral("poolWorkers"));
    m_workers->setRange(1, 256);
    m_workers->setToolTip(tr("Worker processes per device; a gated batch is measured on all of them at once."));
    m_round = new QSpinBox(this);
    m_round->setObjectName(QStringLiteral("poolRound"));
    m_round->setRange(1, 1024);
    m_round->setToolTip(tr("Each batch is topped up to a multiple of this with the candidates gating passed over, "
                           "the most promising first (never past the budget), so that this many workers measure "
                           "full rounds. A search setting: the same search with any number of workers; 1: batches "
                           "as gating chose them."));
    m_launcher = new QLineEdit(this);
    m_launcher->setObjectName(QStringLiteral("poolLauncher"));
    m_launcher->setPlaceholderText(tr("local, ssh:HOST or slurm[:srun options]"));
    m_launcher->setToolTip(tr("How workers start: here, over ssh on HOST, or as Slurm job steps (srun) inside "
                              "your allocation."));
    m_allowMixed = new QCheckBox(tr("Allow different GPU models"), this);
    m_allowMixed->setObjectName(QStringLiteral("poolAllowMixed"));
    form->addRow(tr("More devices:"), m_extra);
    form->addRow(tr("Workers per device:"), m_workers);
    form->addRow(tr("Measure in rounds of:"), m_round);
    form->addRow(tr("Launcher:"), m_launcher);
    m_overlap = new QCheckBox(tr("Choose the next batch while one is measured"), this);
    m_overlap->setObjectName(QStringLiteral("poolOverlap"));
    m_overlap->setToolTip(tr("Keeps the workers busy: forecasting and retraining overlap the measurements. The "
                             "search learns from a batch once twice a round of measurements is queued behind it; a "
                             "seed still gives the same search with any number of workers."));
    form->addRow(m_allowMixed);
    form->addRow(m_overlap);
}

bool PoolSettingsWidget::overlapBatches() const { return m_overlap->isChecked(); }

int PoolSettingsWidget::measureRound() const { return m_round->value(); }

PoolConfig PoolSettingsWidget::poolConfig(const QString& device) const {
    PoolConfig c;
    c.workers = m_workers->value();
    c.launcher =
        m_launcher->text().trimmed().isEmpty() ? std::string("local") : m_launcher->text().trimmed().toStdString();
    c.allow_mixed = m_allowMixed->isChecked();
    if (!device.isEmpty())
        c.devices.push_back(device.toStdString());
    for (const QString& d : m_extra->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
        if (!d.trimmed().isEmpty())
            c.devices.push_back(d.trimmed().toStdString());
    try {
        if (!pool_requested(c))
            return PoolConfig{};
    } catch (const Error&) {
        // a launcher that does not parse: the search refuses it with the accepted forms, as the CLI does
    }
    return c;
}

void PoolSettingsWidget::readSettings(const QSettings& s) {
    m_extra->setText(s.value(QStringLiteral("run/poolExtraDevices")).toString());
    m_workers->setValue(s.value(QStringLiteral("run/poolWorkers"), 1).toInt());
    m_launcher->setText(s.value(QStringLiteral("run/poolLauncher")).toString());
    m_allowMixed->setChecked(s.value(QStringLiteral("run/poolAllowMixed"), false).toBool());
    m_overlap->setChecked(s.value(QStringLiteral("run/poolOverlap"), false).toBool());
    m_round->setValue(s.value(QStringLiteral("run/poolRound"), 1).toInt());
}

void PoolSettingsWidget::writeSettings(QSettings& s) const {
    s.setValue(QStringLiteral("run/poolExtraDevices"), m_extra->text());
    s.setValue(QStringLiteral("run/poolWorkers"), m_workers->value());
    s.setValue(QStringLiteral("run/poolLauncher"), m_launcher->text());
    s.setValue(QStringLiteral("run/poolAllowMixed"), m_allowMixed->isChecked());
    s.setValue(QStringLiteral("run/poolOverlap"), m_overlap->isChecked());
    s.setValue(QStringLiteral("run/poolRound"), m_round->value());
}

}  // namespace kerncast
