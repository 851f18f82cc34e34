#pragma once
// The device dock's view of a search's timeline (engine/timeline.h): a lane for the search thread and one per worker,
// each span coloured by its phase, the whole run scaled to the width; below, where the wall time went. Polled from
// the timeline (thread-safe) while the search runs; a tooltip names the span under the mouse.

#include "engine/timeline.h"

#include <QWidget>

#include <memory>
#include <vector>

class QLabel;
class QTimer;

namespace kerncast {

class TimelineLanes;

class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);

    // The running search's timeline (null: none, the view hides); polled while visible until freeze().
    void setTimeline(std::shared_ptr<Timeline> timeline);
    // The search ended: one last poll, then the view keeps what it shows.
    void freeze();
    // A set-up step before the first candidate (starting workers, training the forecaster), shown until it ends.
    void showSetup(const QString& step);

    QString summaryText() const;
    // For tests: the spans drawn and the lanes in their order.
    const std::vector<TimelineSpan>& spans() const;
    QStringList lanes() const;
    // The phase of the span drawn at a point of the lanes' area; empty where there is none.
    QString phaseAt(const QPoint& lanesPoint) const;
    QWidget* lanesWidget() const;

    static QString phaseName(TimelinePhase phase);
    static QColor phaseColor(TimelinePhase phase);

public Q_SLOTS:
    void poll();

protected:
    void showEvent(QShowEvent* event) override;

private:
    void refresh();  // the spans recorded since the last refresh, and the summary

private:
    std::shared_ptr<Timeline> m_timeline;
    TimelineLanes* m_lanes = nullptr;
    QLabel* m_setup = nullptr;
    QLabel* m_summary = nullptr;
    QTimer* m_timer = nullptr;
    bool m_frozen = false;
};

}  // namespace kerncast
