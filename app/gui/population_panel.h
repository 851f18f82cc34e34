#pragma once
// The Population dock: every candidate of the run on show in a sortable, filterable table (a leaderboard: the
// fastest first), as a lineage tree and as a lineage graph, all over one PopulationModel. A click on a row is announced
// with candidateClicked(); the context menu asks for steering (pin, ban, measure) through signals.

#include "engine/search/search_events.h"

#include <QWidget>

#include <vector>

class QLineEdit;
class QMenu;
class QModelIndex;
class QTabWidget;
class QTableView;
class QTimer;
class QTreeView;

namespace kerncast {

class EngineBridge;
class LineageGraph;
class LineageModel;
class PopulationFilterProxy;
class PopulationModel;

class PopulationPanel : public QWidget {
    Q_OBJECT
public:
    // Above this many candidates a running search does not re-sort the table on every change, but every
    // kLargeResortMs (a re-sort of 100k rows takes tens of milliseconds).
    static constexpr int kLiveSortLimit = 20000;
    static constexpr int kLargeResortMs = 3000;

    explicit PopulationPanel(QWidget* parent = nullptr);

    PopulationModel* model() const { return m_population; }
    PopulationFilterProxy* proxy() const { return m_proxy; }
    LineageModel* lineage() const { return m_lineage; }
    QTableView* tableView() const { return m_table; }
    QTreeView* lineageView() const { return m_lineageView; }
    LineageGraph* lineageGraph() const { return m_lineageGraph; }
    QTabWidget* tabs() const { return m_tabs; }

    void clear();
    // New rows and changes of a running search; a large table keeps its order while they stream in and is re-sorted
    // every few seconds instead.
    void applyEvents(const std::vector<SearchEvent>& events);
    bool isLarge() const;
    // Shows a candidate as current in the table and the tree (without announcing a click); false when unknown.
    bool showCurrent(qint64 candidateId);
    // Whether the context menu's steering entries are enabled (a live search runs).
    void setSteerable(bool steerable) { m_steerable = steerable; }
    // Pin, ban and measure requests go to this bridge.
    void bindTo(EngineBridge* bridge);
    // Whether a suspect result can be accepted or rejected (a run is shown, live or opened).
    void setReviewable(bool reviewable) { m_reviewable = reviewable; }
    // The candidate on show in the editor, diff and inspector: the context menu compares another one with it.
    void setShownCandidate(qint64 candidateId) { m_shown = candidateId; }
    // Pins, bans, unpins or unbans a candidate as a parent: the request goes to the search, the row shows it and
    // the status bar says it (what the context menu does).
    void steer(qint64 candidateId, int steering);
    // The context menu of a row (an index of the table's proxy): steering, measuring, reviewing.
    void fillContextMenu(QMenu& menu, const QModelIndex& index);

Q_SIGNALS:
    // A person picked a row in the table or the tree.
    void candidateClicked(qint64 candidateId);
    void pinRequested(qint64 candidateId);
    void banRequested(qint64 candidateId);
    void unpinRequested(qint64 candidateId);
    void unbanRequested(qint64 candidateId);
    // What a steering request did, for the status bar.
    void message(const QString& text, int timeoutMs);
    void measureRequested(qint64 candidateId);
    // Diff this candidate against the one on show (any two, not only a child and its parent).
    void compareRequested(qint64 candidateId);
    // A person's verdict on a suspect result.
    void reviewRequested(qint64 candidateId, bool accept);

private:
    void showContextMenu(const QPoint& pos);

    PopulationModel* m_population = nullptr;
    PopulationFilterProxy* m_proxy = nullptr;
    LineageModel* m_lineage = nullptr;
    QLineEdit* m_filter = nullptr;
    QTabWidget* m_tabs = nullptr;
    QTableView* m_table = nullptr;
    QTreeView* m_lineageView = nullptr;
    LineageGraph* m_lineageGraph = nullptr;
    QTimer* m_resort = nullptr;
    bool m_selecting = false;
    bool m_steerable = false;
    bool m_reviewable = false;
    qint64 m_shown = 0;
};

}  // namespace kerncast
