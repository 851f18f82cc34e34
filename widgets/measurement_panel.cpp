#include "widgets/measurement_panel.h"

#include "widgets/population_model.h"

#include <QLocale>
#include <QRegularExpression>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <optional>

namespace kerncast {

namespace {

QString row(const QString& name, const QString& value) {
    return QStringLiteral("<tr><td style='padding-right:12px'>%1</td><td>%2</td></tr>").arg(name, value);
}

QString describeSizes(const Bindings& sizes) {
    QStringList parts;
    for (const auto& [name, value] : sizes)
        parts << QStringLiteral("%1=%2").arg(QString::fromStdString(name)).arg(value);
    return parts.join(QStringLiteral(", "));
}

// Where the worker's verification stopped. It checks every correctness case on seeds 1..n in order, then the
// benchmark case on seed 1, and stops at the first failure, which its reason names: "correctness case 2 (N=4099),
// seed 3: ..." (engine/worker). case_ 0 is the benchmark case.
struct StoppedAt {
    int case_ = 0;
    int seed = 0;
};

std::optional<StoppedAt> stoppedAt(const std::string& reason) {
    static const QRegularExpression where(
        QStringLiteral(R"((?:correctness case (\d+)|benchmark case) \(.*?\), seed (\d+))"));
    const QRegularExpressionMatch m = where.match(QString::fromStdString(reason));
    if (!m.hasMatch())
        return std::nullopt;
    return StoppedAt{m.captured(1).isEmpty() ? 0 : m.captured(1).toInt(), m.captured(2).toInt()};
}

}  // namespace

QString MeasurementPanel::verdictsHtml(const Measurement& m, const Problem& problem) {
    const int cases = static_cast<int>(problem.correctness.size());
    const std::optional<StoppedAt> stop =
        m.seeds_checked <= 0 && is_failure(m.status) ? stoppedAt(m.reason) : std::nullopt;
    // Everything passed when seeds were counted (the worker counts them once every case has passed; a failure
    // after timing, or the re-verification, is the outcome above).
    if (m.seeds_checked <= 0 && !stop)
        return {};
    const int seeds = m.seeds_checked;
    const auto seedRange = [&](int last) { return last == 1 ? tr("seed 1") : tr("seeds 1–%1").arg(last); };
    QString html = QStringLiteral("<p><b>%1</b></p><table>").arg(tr("Verdicts per case and seed"));
    const auto verdict = [&](int case_) -> QString {
        // case_: 1..cases for the correctness cases, 0 for the benchmark case (checked on seed 1).
        const int order = case_ == 0 ? cases + 1 : case_;
        if (!stop)
            return case_ == 0 ? tr("passed on seed 1") : tr("passed on %1").arg(seedRange(seeds));
        const int stopOrder = stop->case_ == 0 ? cases + 1 : stop->case_;
        if (order < stopOrder)
            return case_ == 0 ? tr("passed on seed 1") : tr("passed on every seed");
        if (order > stopOrder)
            return QStringLiteral("<span style='color:gray'>%1</span>")
                .arg(tr("not run (the worker stops at the "
                        "first failure)"));
        const QString failed =
            QStringLiteral("<span style='color:#c0392b'><b>%1</b></span>").arg(tr("failed on seed %1").arg(stop->seed));
        return stop->seed > 1 ? tr("%1 after passing %2").arg(failed, seedRange(stop->seed - 1)) : failed;
    };
    for (int c = 1; c <= cases; ++c)
        html +=
            row(tr("Correctness case %1 (%2)").arg(c).arg(describeSizes(problem.correctness[c - 1]).toHtmlEscaped()),
                verdict(c));
    html += row(tr("Benchmark case (%1)").arg(describeSizes(problem.benchmark).toHtmlEscaped()), verdict(0));
    html += QStringLiteral("</table><p><i>%1</i></p>")
                .arg(tr("The run file holds the largest error over all cases and seeds (above), not each case's."));
    return html;
}

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
                                      const std::vector<StaticReport>& kernels, const Problem* problem) {
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
        if (problem && m.candidate && m.candidate->median_us > 0) {
            // Rates at the benchmark sizes, where the times were taken: the problem's bytes and flops over the median.
            const auto rate = [&](const Expr& amount, const TimingStats* timing) -> std::optional<double> {
                if (amount.empty() || !timing || !(timing->median_us > 0))
                    return std::nullopt;
                try {
                    // An amount of 0 is one the problem does not know (an imported T1 problem states no flops).
                    const auto value = static_cast<double>(amount.eval(problem->benchmark));
                    if (!(value > 0))
                        return std::nullopt;
                    return value / (timing->median_us * 1e3);
                } catch (const std::exception&) {
                    return std::nullopt;
                }
            };
            const TimingStats* ref = m.reference ? &*m.reference : nullptr;
            const auto rateText = [&](const Expr& amount, const QString& unit, const QString& none) {
                const auto mine = rate(amount, &*m.candidate);
                if (!mine)
                    return none;
                QString text = QStringLiteral("%1 %2").arg(locale.toString(*mine, 'f', 1), unit);
                if (const auto theirs = rate(amount, ref))
                    text +=
                        QStringLiteral(" ") + tr("(the reference %1 %2)").arg(locale.toString(*theirs, 'f', 1), unit);
                return text;
            };
            html += row(tr("Memory throughput"),
                        rateText(problem->bytes, tr("GB/s"), tr("— (the problem states no bytes moved)")));
            html += row(tr("Arithmetic"),
                        rateText(problem->flops, tr("GFLOP/s"), tr("— (the problem states no floating-point work)")));
            html += row(tr("At sizes"), describeSizes(problem->benchmark).toHtmlEscaped());
        }
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
        if (problem)
            html += verdictsHtml(m, *problem);
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
