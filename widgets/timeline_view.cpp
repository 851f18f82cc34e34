#include "widgets/timeline_view.h"

#include <QHelpEvent>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QTextDocument>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace kerncast {

// The lanes themselves: painted from the spans the view last polled.
class TimelineLanes : public QWidget {
public:
    explicit TimelineLanes(QWidget* parent) : QWidget(parent) {
        setObjectName(QStringLiteral("timelineLanes"));
        setMinimumHeight(60);
        setMouseTracking(true);
    }

    // The spans recorded since the last call are added (a long search holds tens of thousands: a poll copies only
    // the new ones).
    void addSpans(std::vector<TimelineSpan> fresh, double wall_s) {
        m_wall = std::max(wall_s, 1e-3);
        for (TimelineSpan& s : fresh) {
            const QString lane = QString::fromStdString(s.lane);
            if (!m_lanes.contains(lane)) {
                m_lanes.push_back(lane);
                std::sort(m_lanes.begin() + 1, m_lanes.end());
            }
            m_spans.push_back(std::move(s));
        }
        setMinimumHeight(int(m_lanes.size()) * laneHeight() + 4);
        update();
    }

    const std::vector<TimelineSpan>& spans() const { return m_spans; }
    QStringList lanes() const { return m_lanes; }
    void clear() {
        m_spans.clear();
        m_lanes = QStringList{QStringLiteral("search")};
        update();
    }

    const TimelineSpan* spanAt(const QPoint& p) const {
        const int lane = (p.y() - 2) / laneHeight();
        if (lane < 0 || lane >= m_lanes.size() || p.x() < labelWidth())
            return nullptr;
        const double t = double(p.x() - labelWidth()) / std::max(1, width() - labelWidth()) * m_wall;
        const double slack = m_wall / std::max(1, width() - labelWidth());  // a pixel: short spans can be found
        const TimelineSpan* found = nullptr;
        for (const TimelineSpan& s : m_spans)
            if (laneName(s) == m_lanes[lane] && s.start_s - slack <= t && t <= s.end_s + slack)
                found = &s;
        return found;
    }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        p.fillRect(rect(), palette().base());
        const int x0 = labelWidth();
        const double scale = std::max(1, width() - x0) / m_wall;
        const int h = laneHeight();
        std::map<QString, int> row;
        for (int i = 0; i < m_lanes.size(); ++i) {
            row[m_lanes[i]] = i;
            const QRect label(2, 2 + i * h, x0 - 4, h);
            p.setPen(palette().text().color());
            p.drawText(label, Qt::AlignVCenter | Qt::AlignLeft,
                       fontMetrics().elidedText(laneLabel(m_lanes[i]), Qt::ElideMiddle, label.width()));
        }
        p.setPen(Qt::NoPen);
        for (const TimelineSpan& s : m_spans) {
            const auto r = row.find(laneName(s));
            if (r == row.end())
                continue;
            const int x = x0 + int(s.start_s * scale);
            const int w = std::max(1, int((s.end_s - s.start_s) * scale + 0.5));
            p.fillRect(QRect(x, 4 + r->second * h, w, h - 4), TimelineView::phaseColor(s.phase));
        }
    }

    bool event(QEvent* e) override {
        if (e->type() == QEvent::ToolTip) {
            auto* help = static_cast<QHelpEvent*>(e);
            if (const TimelineSpan* s = spanAt(help->pos())) {
                const QLocale locale;
                QString text =
                    TimelineView::tr("%1: %2 ms, batch %3")
                        .arg(TimelineView::phaseName(s->phase), locale.toString((s->end_s - s->start_s) * 1000, 'f', 1))
                        .arg(s->batch);
                if (s->candidate)
                    text += TimelineView::tr(", candidate #%1 (waited %2 ms for a worker)")
                                .arg(s->candidate)
                                .arg(locale.toString(s->queued_s * 1000, 'f', 0));
                QToolTip::showText(help->globalPos(), text, this);
            } else {
                QToolTip::hideText();
            }
            return true;
        }
        return QWidget::event(e);
    }

private:
    int laneHeight() const { return fontMetrics().height() + 6; }
    int labelWidth() const { return std::min(140, width() / 4); }
    static QString laneName(const TimelineSpan& s) { return QString::fromStdString(s.lane); }
    static QString laneLabel(const QString& lane) {
        return lane == QLatin1String("search") ? TimelineView::tr("search thread") : lane;
    }

    std::vector<TimelineSpan> m_spans;
    QStringList m_lanes{QStringLiteral("search")};
    double m_wall = 1;
};

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("timelineView"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    auto* title = new QLabel(tr("<b>Where the time goes</b>"), this);
    title->setToolTip(tr("Each lane is the search thread or a worker; each bar a phase of the search or a part of a "
                         "measurement. kerncast-cli search --trace FILE writes the same timeline for Perfetto."));
    m_setup = new QLabel(this);
    m_setup->setObjectName(QStringLiteral("timelineSetup"));
    m_setup->setWordWrap(true);
    m_setup->hide();
    m_lanes = new TimelineLanes(this);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("timelineSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(title);
    layout->addWidget(m_setup);
    layout->addWidget(m_lanes);
    layout->addWidget(m_summary);
    m_timer = new QTimer(this);
    m_timer->setInterval(250);
    connect(m_timer, &QTimer::timeout, this, &TimelineView::poll);
    hide();
}

void TimelineView::setTimeline(std::shared_ptr<Timeline> timeline) {
    m_timeline = std::move(timeline);
    m_frozen = false;
    m_lanes->clear();
    m_setup->hide();
    if (!m_timeline) {
        m_timer->stop();
        hide();
        return;
    }
    show();
    refresh();
    m_timer->start();
}

void TimelineView::freeze() {
    if (m_timeline && !m_frozen)
        refresh();  // the search's end, even with the dock behind another tab
    m_frozen = true;
    m_timer->stop();
    m_setup->hide();
}

void TimelineView::showSetup(const QString& step) {
    m_setup->setText(tr("Setting up: %1").arg(step));
    m_setup->show();
}

QString TimelineView::phaseName(TimelinePhase phase) {
    using P = TimelinePhase;
    switch (phase) {
    case P::OpenDevice:
        return tr("starting workers");
    case P::BaseModel:
        return tr("base model");
    case P::Setup:
        return tr("opening the run");
    case P::Proposal:
        return tr("proposal");
    case P::Compile:
        return tr("static reports");
    case P::Forecast:
        return tr("forecasting");
    case P::Gating:
        return tr("gating");
    case P::Model:
        return tr("model updates");
    case P::Store:
        return tr("store writes");
    case P::Wait:
        return tr("waiting for measurements");
    case P::Measure:
        return tr("measuring");
    case P::Other:
        return tr("other");
    case P::WorkerCompile:
        return tr("compile");
    case P::WorkerVerify:
        return tr("verify");
    case P::WorkerTime:
        return tr("timing");
    case P::WorkerTrip:
        return tr("round trip");
    }
    return tr("other");
}

QColor TimelineView::phaseColor(TimelinePhase phase) {
    using P = TimelinePhase;
    switch (phase) {
    case P::OpenDevice:
    case P::BaseModel:
    case P::Setup:
        return QColor(150, 150, 150);
    case P::Proposal:
        return QColor(31, 119, 180);
    case P::Compile:
        return QColor(255, 127, 14);
    case P::Forecast:
        return QColor(148, 103, 189);
    case P::Gating:
        return QColor(140, 86, 75);
    case P::Model:
        return QColor(227, 119, 194);
    case P::Store:
        return QColor(188, 189, 34);
    case P::Wait:
        return QColor(220, 220, 220);
    case P::Measure:
    case P::WorkerTime:
        return QColor(44, 160, 44);
    case P::WorkerCompile:
        return QColor(255, 187, 120);
    case P::WorkerVerify:
        return QColor(23, 190, 207);
    case P::WorkerTrip:
        return QColor(127, 127, 127);
    case P::Other:
        return QColor(199, 199, 199);
    }
    return Qt::gray;
}

void TimelineView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    poll();  // it skipped the polls while hidden (the dock behind another tab)
}

void TimelineView::poll() {
    // Nothing to draw while hidden; a frozen view keeps the search's end (a later summary would count time after it).
    if (m_timeline && isVisible() && !m_frozen)
        refresh();
}

void TimelineView::refresh() {
    const TimelineSummary s = m_timeline->summary();
    m_lanes->addSpans(m_timeline->spansFrom(m_lanes->spans().size()), s.wall_s);
    const QLocale locale;
    QStringList parts;
    std::vector<std::pair<double, TimelinePhase>> phases;
    for (const auto& [phase, seconds] : s.search_s)
        phases.push_back({seconds, phase});
    std::sort(phases.begin(), phases.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    // Each phase named with a square of its colour: the summary is the lanes' legend.
    const auto swatch = [](TimelinePhase phase) {
        return QStringLiteral("<span style=\"color:%1\">&#9632;</span>&nbsp;").arg(phaseColor(phase).name());
    };
    for (size_t i = 0; i < phases.size() && parts.size() < 4; ++i)
        if (s.wall_s > 0 && phases[i].first / s.wall_s >= 0.01)
            parts << swatch(phases[i].second) +
                         tr("%1 %2%").arg(phaseName(phases[i].second)).arg(qRound(100 * phases[i].first / s.wall_s));
    QString text = tr("%1 s, %2 measurements (%3 per second). Search thread: %4.")
                       .arg(locale.toString(s.wall_s, 'f', 1))
                       .arg(s.measurements)
                       .arg(locale.toString(s.throughput(), 'f', 2), parts.join(QStringLiteral(", ")));
    if (!s.workers.empty()) {
        text += QLatin1Char(' ') + tr("Workers (%1) busy %2% of the time; a measurement waited %3 ms for a worker.")
                                       .arg(s.workers.size())
                                       .arg(qRound(100 * s.workerUtilisation()))
                                       .arg(locale.toString(s.mean_queued_s * 1000, 'f', 0));
        QStringList worker_parts;
        for (TimelinePhase p : {TimelinePhase::WorkerVerify, TimelinePhase::WorkerTime, TimelinePhase::WorkerCompile,
                                TimelinePhase::WorkerTrip})
            worker_parts << swatch(p) + phaseName(p);
        text += QLatin1Char(' ') + worker_parts.join(QStringLiteral(", "));
    }
    if (s.compiles.compiled > 0) {
        const QString where = s.compiles.helpers > 0 ? tr("in %n compile helper process(es)", nullptr,
                                                          static_cast<int>(s.compiles.helpers))
                                                     : tr("in the engine's process");
        text += QLatin1Char(' ') + tr("Compiles: %1 with NVRTC %2, %3 found compiled already.")
                                       .arg(s.compiles.compiled)
                                       .arg(where)
                                       .arg(s.compiles.found);
    }
    m_summary->setText(text);
    if (s.measurements > 0 || !s.workers.empty())
        m_setup->hide();
}

QString TimelineView::summaryText() const {
    QTextDocument doc;
    doc.setHtml(m_summary->text());
    return doc.toPlainText();
}
const std::vector<TimelineSpan>& TimelineView::spans() const { return m_lanes->spans(); }
QStringList TimelineView::lanes() const { return m_lanes->lanes(); }
QWidget* TimelineView::lanesWidget() const { return m_lanes; }

QString TimelineView::phaseAt(const QPoint& lanesPoint) const {
    const TimelineSpan* s = m_lanes->spanAt(lanesPoint);
    return s ? phaseName(s->phase) : QString();
}

}  // namespace kerncast
