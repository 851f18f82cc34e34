#include "widgets/measurement_panel.h"

#include "widgets/population_model.h"

#include <QLocale>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace kerncast {

namespace {

QString row(const QString& name, const QString& value) {
    return QStringLiteral("<tr><td style='padding-right:12px'>%1</td><td>%2</td></tr>").arg(name, value);
}

}  // namespace

MeasurementPanel::MeasurementPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_view = new QTextBrowser(this);
    m_view->setObjectName(QStringLiteral("measurementText"));
    m_view->setOpenLinks(false);
    layout->addWidget(m_view);
    clear();
}

void MeasurementPanel::clear() { m_view->setHtml(tr("<i>Not measured yet.</i>")); }

QString MeasurementPanel::text() const { return m_view->toPlainText(); }

void MeasurementPanel::setMeasurement(const std::optional<Measurement>& measurement,
                                      const std::vector<StaticReport>& kernels) {
    const QLocale locale;
    const auto us = [&](double v) { return tr("%1 µs").arg(locale.toString(v, 'f', 2)); };
    QString html;
    if (!measurement) {
        html += tr("<i>Not measured yet.</i>");
    } else {
        const Measurement& m = *measurement;
        html += QStringLiteral("<table>");
        QString status = PopulationModel::statusText(QString::fromLatin1(to_string(m.status)));
        if (!m.reason.empty())
            status += QStringLiteral(": ") + QString::fromStdString(m.reason).toHtmlEscaped();
        html += row(tr("Outcome"), status);
        if (m.candidate) {
            const TimingStats& t = *m.candidate;
            html +=
                row(tr("Median"), tr("%1 (95% CI %2 – %3)").arg(us(t.median_us), us(t.ci_low_us), us(t.ci_high_us)));
            html += row(tr("Spread"), tr("p10 %1, p90 %2, mean %3, relative standard error %4%")
                                          .arg(us(t.p10_us), us(t.p90_us), us(t.mean_us))
                                          .arg(locale.toString(t.rel_std_error * 100, 'f', 2)));
            QStringList samples;
            for (double s : t.samples_us)
                samples << locale.toString(s, 'f', 2);
            html += row(tr("Samples (%n)", nullptr, t.n), samples.join(QStringLiteral(", ")));
            if (t.events_median_us > 0)
                html += row(tr("CUDA events"), tr("median %1 (cross-check)").arg(us(t.events_median_us)));
        }
        if (m.reference)
            html += row(tr("Reference"), us(m.reference->median_us));
        if (m.speedup > 0)
            html += row(tr("Speedup"), tr("%1× over the reference").arg(locale.toString(m.speedup, 'f', 3)));
        if (m.roofline_floor_us > 0 && m.candidate && m.candidate->median_us > 0)
            html += row(tr("Roofline"),
                        tr("floor %1: the median reaches %2% of the roofline")
                            .arg(us(m.roofline_floor_us))
                            .arg(locale.toString(100 * m.roofline_floor_us / m.candidate->median_us, 'f', 1)));
        if (m.seeds_checked > 0)
            html += row(tr("Correctness"),
                        tr("%n seed(s) checked, largest error %1 absolute, %2 relative", nullptr, m.seeds_checked)
                            .arg(locale.toString(m.max_abs_error, 'g', 3), locale.toString(m.max_rel_error, 'g', 3)));
        if (m.reverified)
            html += row(tr("Guard"), tr("verified again (a speedup above 10×)"));
        html += row(tr("Device"), QStringLiteral("%1 (%2)%3")
                                      .arg(QString::fromStdString(m.device.name).toHtmlEscaped(),
                                           QString::fromStdString(m.device_kind).toHtmlEscaped(),
                                           m.worker.empty() ? QString()
                                                            : QStringLiteral(", ") +
                                                                  QString::fromStdString(m.worker).toHtmlEscaped()));
        if (m.clocks_before.sm_clock_mhz > 0)
            html += row(tr("Clocks"), tr("SM %1 → %2 MHz, memory %3 MHz, %4 → %5 °C")
                                          .arg(m.clocks_before.sm_clock_mhz)
                                          .arg(m.clocks_after.sm_clock_mhz)
                                          .arg(m.clocks_before.mem_clock_mhz)
                                          .arg(m.clocks_before.temperature_c)
                                          .arg(m.clocks_after.temperature_c));
        html +=
            row(tr("Time taken"), tr("compile %1 ms, verify %2 ms, benchmark %3 ms")
                                      .arg(locale.toString(m.compile_ms, 'f', 0), locale.toString(m.verify_ms, 'f', 0),
                                           locale.toString(m.time_ms, 'f', 0)));
        html += QStringLiteral("</table>");
    }
    if (!kernels.empty()) {
        html += QStringLiteral("<p><b>%1</b></p><table>").arg(tr("Static report"));
        for (const StaticReport& k : kernels)
            html += row(QStringLiteral("<code>%1</code>").arg(QString::fromStdString(k.kernel).toHtmlEscaped()),
                        tr("%1 registers, %2 B shared, %3 B stack, spills %4 B stored / %5 B loaded")
                            .arg(k.registers)
                            .arg(k.shared_bytes)
                            .arg(k.stack_bytes)
                            .arg(k.spill_store_bytes)
                            .arg(k.spill_load_bytes));
        html += QStringLiteral("</table>");
    }
    m_view->setHtml(html);
}

}  // namespace kerncast
