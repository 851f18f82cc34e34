#include "widgets/parameter_plot.h"

#include "widgets/qcustomplot_include.h"

#include <QComboBox>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kerncast {

ParameterPlot::ParameterPlot(QWidget* parent) : PlotWidget(parent) {
    QCustomPlot* plot = customPlot();
    setTitleText(tr("Time per value of a tunable"));
    setAxisLabels(tr("Tunable value"), tr("Median time (µs)"));
    QCPAxis* x = mainAxisRect()->axis(QCPAxis::atBottom);
    QCPAxis* y = mainAxisRect()->axis(QCPAxis::atLeft);
    // Tunables are mostly powers of two, times span decades: both axes logarithmic.
    x->setScaleType(QCPAxis::stLogarithmic);
    auto xTicker = QSharedPointer<QCPAxisTickerLog>::create();
    xTicker->setLogBase(2);
    x->setTicker(xTicker);
    y->setScaleType(QCPAxis::stLogarithmic);
    y->setTicker(QSharedPointer<QCPAxisTickerLog>::create());

    m_forecast = plot->addGraph(x, y);
    m_forecast->setLineStyle(QCPGraph::lsNone);
    m_forecast->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, forecastColor(), 7));
    m_forecast->setName(tr("Forecast (expected time)"));
    m_measured = plot->addGraph(x, y);
    m_measured->setLineStyle(QCPGraph::lsNone);
    m_measured->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, measuredColor(), measuredColor(), 6));
    m_measured->setName(tr("Measured"));
    setPlaceholderText(tr("No family configurations with tunables in this run."));
    m_choice = new QComboBox(this);
    m_choice->setObjectName(QStringLiteral("tunableChooser"));
    m_choice->setToolTip(tr("The tunable on the horizontal axis"));
    m_choice->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    if (auto* box = qobject_cast<QVBoxLayout*>(layout()))
        box->insertWidget(0, m_choice, 0, Qt::AlignLeft);
    connect(m_choice, &QComboBox::currentTextChanged, this, [this](const QString& name) {
        if (!name.isEmpty() && name != m_tunable)
            setTunable(name);
    });
    showLegendBelow();
    setZoomable(true);
    update();
}

ParameterPlot::~ParameterPlot() = default;

void ParameterPlot::setRows(const std::vector<CandidateRow>& rows) {
    // Only what the plot draws is kept: a run of 100k candidates is refreshed while it runs.
    m_rows.clear();
    for (const CandidateRow& r : rows)
        if (!r.tunables.empty() || r.mutator == Mutator::Reference)
            m_rows.push_back(r);
    QStringList names;
    for (const CandidateRow& r : m_rows)
        for (const auto& [name, value] : r.tunables)
            if (!names.contains(QString::fromStdString(name)))
                names << QString::fromStdString(name);
    if (!names.contains(m_tunable))
        m_tunable = names.isEmpty() ? QString() : names.front();
    if (names != m_tunables) {
        m_tunables = names;
        const QSignalBlocker block(m_choice);
        m_choice->clear();
        m_choice->addItems(m_tunables);
        m_choice->setCurrentText(m_tunable);
        m_choice->setVisible(!m_tunables.isEmpty());
        Q_EMIT tunablesChanged(m_tunables);
    }
    update();
}

bool ParameterPlot::setTunable(const QString& name) {
    if (!m_tunables.contains(name))
        return false;
    m_tunable = name;
    {
        const QSignalBlocker block(m_choice);
        m_choice->setCurrentText(name);
    }
    resetView();
    update();
    return true;
}

void ParameterPlot::update() {
    // The reference's measured time turns a forecast speedup over the reference into a time.
    double referenceUs = 0;
    for (const CandidateRow& r : m_rows)
        if (r.mutator == Mutator::Reference && r.time_us)
            referenceUs = *r.time_us;
    QVector<double> mx, my, fx, fy;
    const std::string name = m_tunable.toStdString();
    for (const CandidateRow& r : m_rows) {
        const auto it = r.tunables.find(name);
        if (it == r.tunables.end() || it->second <= 0)
            continue;
        const double x = static_cast<double>(it->second);
        if (r.time_us && *r.time_us > 0) {
            mx << x;
            my << *r.time_us;
        }
        if (r.hasForecast() && referenceUs > 0 && r.anchor_speedup > 0) {
            fx << x;
            fy << referenceUs / (r.anchor_speedup * std::exp(r.expected_log_speedup));
        }
    }
    m_measured->setData(mx, my);
    m_forecast->setData(fx, fy);
    setHasData(!mx.isEmpty() || !fx.isEmpty());
    setTitleText(
        m_tunable.isEmpty()
            ? tr("Time per value of a tunable")
            : tr("Time per value of %1: %2 measured, %3 forecast").arg(m_tunable).arg(mx.size()).arg(fx.size()));
    mainAxisRect()->axis(QCPAxis::atBottom)->setLabel(m_tunable.isEmpty() ? tr("Tunable value") : m_tunable);
    fitViewUnlessMoved();
    replot();
}

void ParameterPlot::fitView() {
    double xlo = std::numeric_limits<double>::infinity(), xhi = 0, ylo = xlo, yhi = 0;
    for (const QCPGraph* graph : {m_measured, m_forecast})
        for (const QCPGraphData& d : *graph->data()) {
            xlo = std::min(xlo, d.key);
            xhi = std::max(xhi, d.key);
            ylo = std::min(ylo, d.value);
            yhi = std::max(yhi, d.value);
        }
    if (xhi <= 0) {
        xlo = 1;
        xhi = 1024;
        ylo = 1;
        yhi = 1000;
    }
    mainAxisRect()->axis(QCPAxis::atBottom)->setRange(xlo / 1.5, xhi * 1.5);
    mainAxisRect()->axis(QCPAxis::atLeft)->setRange(ylo / 1.3, yhi * 1.3);
}

}  // namespace kerncast
