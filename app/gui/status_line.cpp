#include "app/gui/status_line.h"

#include <QLabel>
#include <QProgressBar>
#include <QStatusBar>

namespace kerncast {

StatusLine::StatusLine(QStatusBar* bar)
    : QObject(bar), m_run(new QLabel(bar)), m_device(new QLabel(tr("Device: looking for devices..."), bar)),
      m_surrogate(new QLabel(bar)), m_busy(new QProgressBar(bar)) {
    m_run->setObjectName(QStringLiteral("runStatus"));
    m_busy->setObjectName(QStringLiteral("busyIndicator"));
    m_busy->setMaximumWidth(160);
    m_busy->setTextVisible(false);
    hideBusy();
    for (QWidget* w : std::initializer_list<QWidget*>{m_busy, m_run, m_device, m_surrogate})
        bar->addPermanentWidget(w);
}

void StatusLine::setRun(const QString& stateText, const QString& path) {
    m_run->setText(tr("Run: %1").arg(stateText));
    m_run->setToolTip(path);
}

void StatusLine::setDevice(const QString& id) {
    m_device->setText(id.isEmpty() ? tr("Device: none") : tr("Device: %1").arg(id));
}

void StatusLine::setSurrogate(const QString& surrogate, const QString& model) {
    if (surrogate == QLatin1String("llm"))
        m_surrogate->setText(model.isEmpty() ? tr("Surrogate: LLM (no model set)")
                                             : tr("Surrogate: LLM %1").arg(model));
    else if (surrogate == QLatin1String("none"))
        m_surrogate->setText(tr("Surrogate: none (measure everything)"));
    else
        m_surrogate->setText(tr("Surrogate: local"));
}

QString StatusLine::surrogateText() const { return m_surrogate->text(); }

void StatusLine::showBusy() { m_busy->show(); }

void StatusLine::showProgress(int done, int total) {
    m_busy->setRange(0, total);
    m_busy->setValue(done);
    m_busy->show();
}

void StatusLine::hideBusy() {
    m_busy->hide();
    m_busy->setRange(0, 0);  // an indicator that moves without a known end, the next time it shows
}

}  // namespace kerncast
