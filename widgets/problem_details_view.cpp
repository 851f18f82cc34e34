#include "widgets/problem_details_view.h"

#include <QLocale>
#include <QUrl>

#include <cmath>
#include <filesystem>

namespace kerncast {

namespace {

const QString kErrorScheme = QStringLiteral("kerncast-error");

QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

// 1234567890 -> "1.23 G" so that FLOP and byte counts of real problems stay readable.
QString engineering(double value, const QString& unit) {
    static const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
    int i = 0;
    while (std::abs(value) >= 1000.0 && i < 5) {
        value /= 1000.0;
        ++i;
    }
    return QStringLiteral("%1 %2%3").arg(QLocale().toString(value, 'f', i == 0 ? 0 : 2), QLatin1String(prefixes[i]),
                                         unit);
}

QString casesTable(const Problem& p) {
    const auto names = p.sizeNames();
    QString html = QStringLiteral("<table class='grid' cellspacing='0' cellpadding='3'><tr><th>%1</th>")
                       .arg(ProblemDetailsView::tr("Case"));
    for (const auto& n : names)
        html += QStringLiteral("<th>%1</th>").arg(esc(n));
    html += QStringLiteral("</tr>");
    auto row = [&](const QString& label, const Bindings& sizes) {
        html += QStringLiteral("<tr><td>%1</td>").arg(label);
        for (const auto& n : names) {
            const auto it = sizes.find(n);
            html += QStringLiteral("<td align='right'>%1</td>")
                        .arg(it == sizes.end() ? QStringLiteral("–")
                                               : QLocale().toString(static_cast<qlonglong>(it->second)));
        }
        html += QStringLiteral("</tr>");
    };
    row(QStringLiteral("<b>%1</b>").arg(ProblemDetailsView::tr("benchmark")), p.benchmark);
    for (size_t i = 0; i < p.correctness.size(); ++i)
        row(ProblemDetailsView::tr("correctness %1").arg(i + 1), p.correctness[i]);
    return html + QStringLiteral("</table>");
}

QString buffersTable(const Problem& p) {
    QString html =
        QStringLiteral("<table class='grid' cellspacing='0' cellpadding='3'><tr><th>%1</th><th>%2</th>"
                       "<th>%3</th><th>%4</th><th>%5</th></tr>")
            .arg(ProblemDetailsView::tr("Buffer"), ProblemDetailsView::tr("Type"), ProblemDetailsView::tr("Role"),
                 ProblemDetailsView::tr("Shape"), ProblemDetailsView::tr("Benchmark size"));
    for (const auto& b : p.buffers) {
        QStringList dims;
        for (const auto& d : b.shape)
            dims << esc(d.text());
        QString size;
        try {
            size = engineering(static_cast<double>(b.bytes(p.benchmark)), QStringLiteral("B"));
        } catch (const std::exception& e) {
            size = QStringLiteral("<span class='err'>%1</span>").arg(esc(e.what()));
        }
        html += QStringLiteral("<tr><td><code>%1</code></td><td>%2</td><td>%3</td><td><code>[%4]</code></td>"
                               "<td align='right'>%5</td></tr>")
                    .arg(esc(b.name), QLatin1String(to_string(b.dtype)), QLatin1String(to_string(b.role)),
                         dims.join(QStringLiteral(", ")), size);
    }
    for (const auto& s : p.scalars)
        html += QStringLiteral("<tr><td><code>%1</code></td><td>%2</td><td>%3</td><td>= %4</td><td></td></tr>")
                    .arg(esc(s.name), QLatin1String(to_string(s.dtype)), ProblemDetailsView::tr("scalar"),
                         QLocale().toString(s.value, 'g', 8));
    return html + QStringLiteral("</table>");
}

QString workSection(const Problem& p) {
    auto evaluate = [&](const Expr& e, const QString& unit, double* out) -> QString {
        if (e.empty())
            return ProblemDetailsView::tr("not given");
        try {
            *out = static_cast<double>(e.eval(p.benchmark));
            return QStringLiteral("%1 &nbsp;<span class='dim'><code>%2</code></span>")
                .arg(engineering(*out, unit), esc(e.text()));
        } catch (const std::exception& ex) {
            return QStringLiteral("<span class='err'>%1</span>").arg(esc(ex.what()));
        }
    };
    double flops = -1, bytes = -1;
    QString html = QStringLiteral("<table cellspacing='0' cellpadding='2'>");
    html += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>")
                .arg(ProblemDetailsView::tr("FLOPs"), evaluate(p.flops, QStringLiteral("FLOP"), &flops));
    html += QStringLiteral("<tr><td>%1</td><td>%2</td></tr>")
                .arg(ProblemDetailsView::tr("Bytes"), evaluate(p.bytes, QStringLiteral("B"), &bytes));
    if (flops >= 0 && bytes > 0)
        html += QStringLiteral("<tr><td>%1</td><td>%2 FLOP/B</td></tr>")
                    .arg(ProblemDetailsView::tr("Arithmetic intensity"), QLocale().toString(flops / bytes, 'g', 3));
    return html + QStringLiteral("</table>");
}

QString programsSection(const ProblemEntry& e) {
    QString html = QStringLiteral("<ul>");
    for (const auto& prog : e.programs) {
        const QString file = QString::fromStdString(std::filesystem::path(prog.path).filename().string());
        QString what;
        switch (prog.kind) {
        case ProgramEntry::Kind::Reference:
            what = ProblemDetailsView::tr("reference");
            break;
        case ProgramEntry::Kind::Seed:
            what = ProblemDetailsView::tr("seed");
            break;
        case ProgramEntry::Kind::Family: {
            QStringList tunables;
            for (const auto& t : prog.tunables)
                tunables << esc(t);
            const QString count = QLocale().toString(static_cast<qlonglong>(prog.configurations));
            if (prog.configurations >= 0 && tunables.isEmpty())
                what = ProblemDetailsView::tr("family: one configuration, no tunables");
            else if (prog.configurations >= 0)
                what = ProblemDetailsView::tr("family: %1 configurations over %2")
                           .arg(count, tunables.join(QStringLiteral(", ")));
            else
                what = ProblemDetailsView::tr("family (does not parse)");
            break;
        }
        }
        html += QStringLiteral("<li><code>%1</code> — %2</li>").arg(file.toHtmlEscaped(), what);
    }
    if (e.programs.empty())
        html += QStringLiteral("<li>%1</li>").arg(ProblemDetailsView::tr("no kernel programs found"));
    return html + QStringLiteral("</ul>");
}

}  // namespace

ProblemDetailsView::ProblemDetailsView(QWidget* parent) : QTextBrowser(parent) {
    setOpenLinks(false);
    setOpenExternalLinks(false);
    document()->setDefaultStyleSheet(
        QStringLiteral("h2 { margin-bottom: 2px; } h3 { margin-top: 12px; margin-bottom: 4px; }"
                       "table.grid th { background: #eceff4; text-align: left; border-bottom: 1px solid #c8ccd4; }"
                       "table.grid td { border-bottom: 1px solid #eceff4; }"
                       ".dim { color: #6b7280; } .err { color: #b71c1c; } .ok { color: #1b5e20; }"));
    connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        if (url.scheme() != kErrorScheme)
            return;
        bool ok = false;
        const int i = url.path().toInt(&ok);
        if (!ok || i < 0 || static_cast<size_t>(i) >= m_errorLocations.size())
            return;
        const auto& where = m_errorLocations[static_cast<size_t>(i)];
        Q_EMIT errorActivated(QString::fromStdString(where.file), where.line);
    });
    clearEntry();
}

void ProblemDetailsView::setEntry(const ProblemEntry& entry) {
    m_errorLocations.clear();
    for (const auto& e : entry.errors)
        m_errorLocations.push_back(e.where());
    setHtml(toHtml(entry));
}

void ProblemDetailsView::clearEntry() {
    m_errorLocations.clear();
    setHtml(QStringLiteral("<p class='dim'>%1</p>").arg(tr("Select a problem to see its sizes, buffers and work.")));
}

namespace {

QString recordedSection(const ProblemEntry& e) {
    auto us = [](double v) { return v > 0 ? QString::number(v, 'f', 1) : QStringLiteral("–"); };
    QString html = QStringLiteral("<table class='grid' cellspacing='0' cellpadding='3'><tr><th>%1</th><th>%2</th>"
                                  "<th>%3</th><th>%4</th><th>%5</th></tr>")
                       .arg(ProblemDetailsView::tr("Device"), ProblemDetailsView::tr("Programs"),
                            ProblemDetailsView::tr("Reference µs"), ProblemDetailsView::tr("Best µs"),
                            ProblemDetailsView::tr("PyTorch µs"));
    for (const auto& r : e.recorded) {
        if (!r.error.empty()) {
            html += QStringLiteral("<tr><td>%1</td><td colspan='4' class='err'>%2</td></tr>")
                        .arg(esc(r.device), esc(r.error));
            continue;
        }
        QString best = us(r.best_us);
        if (r.best_us > 0 && r.reference_us > 0)
            best += QStringLiteral(" (%1×)").arg(QString::number(r.reference_us / r.best_us, 'f', 2));
        const QString programs = r.failed ? ProblemDetailsView::tr("%1 (%2 not ok)").arg(r.measured).arg(r.failed)
                                          : QString::number(r.measured);
        html +=
            QStringLiteral("<tr><td>%1</td><td align='right'>%2</td><td align='right'>%3</td><td align='right'>%4</td>"
                           "<td align='right'>%5</td></tr>")
                .arg(esc(r.device), programs, us(r.reference_us), best, us(r.pytorch_eager_us));
        if (!r.best_label.empty())
            html += QStringLiteral("<tr><td colspan='5' class='dim'>%1 <code>%2</code></td></tr>")
                        .arg(ProblemDetailsView::tr("fastest:"), esc(r.best_label));
    }
    return html + QStringLiteral("</table>");
}

}  // namespace

QString ProblemDetailsView::toHtml(const ProblemEntry& e) {
    QString html = QStringLiteral("<h2>%1</h2>").arg(esc(e.name));
    if (!e.description.empty())
        html += QStringLiteral("<p>%1</p>").arg(esc(e.description));
    html += QStringLiteral("<p class='dim'>%1</p>").arg(esc(e.dir));

    if (!e.errors.empty()) {
        html +=
            QStringLiteral("<h3 class='err'>%1</h3><ul>")
                .arg(e.errors.size() == 1 ? tr("1 validation error") : tr("%1 validation errors").arg(e.errors.size()));
        for (size_t i = 0; i < e.errors.size(); ++i)
            html +=
                QStringLiteral("<li><a href='%1:%2'>%3</a></li>").arg(kErrorScheme).arg(i).arg(esc(e.errors[i].what()));
        html += QStringLiteral("</ul>");
    }

    if (e.problem) {
        const auto& p = *e.problem;
        html += QStringLiteral("<h3>%1</h3>").arg(tr("Sizes")) + casesTable(p);
        html += QStringLiteral("<h3>%1</h3>").arg(tr("Buffers")) + buffersTable(p);
        html += QStringLiteral("<h3>%1</h3>").arg(tr("Work at the benchmark case")) + workSection(p);
        html += QStringLiteral("<h3>%1</h3><p>rtol %2, atol %3%4</p>")
                    .arg(tr("Tolerance"), QString::number(p.tolerance.rtol), QString::number(p.tolerance.atol),
                         p.tolerance.scale_atol_by_rms ? tr(" × RMS of the reference output") : QString());
    }
    html += QStringLiteral("<h3>%1</h3>").arg(tr("Kernel programs")) + programsSection(e);
    if (!e.recorded.empty())
        html += QStringLiteral("<h3>%1</h3>").arg(tr("Recorded measurements")) + recordedSection(e);
    return html;
}

}  // namespace kerncast
