#pragma once
// The population as a graph, as the evolution visualisers draw it: one column per generation, each candidate a node
// joined to its parent, a crossover also joined (dashed) to the candidate it took values from (the "crossover with
// #N" of its label), and the path from a root to the best measured candidate drawn heavier. Node colours are the
// outcome: measured faster or slower than the reference, failed, or not measured. A click on a node picks the
// candidate. It draws the rows of a PopulationModel (one source of truth), laid out again shortly after they change;
// only the nodes and edges in view are painted, so a run of 100k candidates scrolls smoothly.

#include <QAbstractScrollArea>
#include <QHash>
#include <QList>
#include <QPointer>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

class QPainter;
class QTimer;

namespace kerncast {

class PopulationModel;

class LineageGraph : public QAbstractScrollArea {
    Q_OBJECT
public:
    explicit LineageGraph(QWidget* parent = nullptr);

    void setPopulation(PopulationModel* population);

    // The candidate on show: ringed, and scrolled into view.
    void setSelected(qint64 candidateId);
    qint64 selected() const { return m_selected; }

    // Lays the graph out from the population now (it happens by itself shortly after the rows change).
    void relayout();

    // For tests and the status bar: what is drawn where.
    int generationCount() const { return m_generations; }
    int nodeCount() const { return static_cast<int>(m_nodes.size()); }
    // The candidate whose node is under a point of the viewport; 0 for none.
    qint64 candidateAt(const QPoint& viewportPos) const;
    // Where a candidate's node is drawn, in viewport coordinates (it may be scrolled out of view).
    std::optional<QPoint> nodeCenter(qint64 candidateId) const;
    // The generation (column) a candidate is drawn in; -1 when it is not drawn.
    int columnOf(qint64 candidateId) const;
    // The highlighted path, root first, best measured candidate last; empty before anything is measured.
    const QList<qint64>& bestPath() const { return m_bestPath; }
    // Crossover edges drawn: (the candidate it took values from, the crossover).
    const std::vector<std::pair<qint64, qint64>>& crossoverEdges() const { return m_crossovers; }
    // The band at the top of the viewport with the generation numbers, in viewport coordinates: it stays there
    // while the graph scrolls down (nodes pass under it) and scrolls sideways with the columns.
    QRect generationHeaderRect() const;
    // Where generation g's number is drawn, in viewport coordinates (its column's x, inside the band).
    QRect generationLabelRect(int generation) const;

Q_SIGNALS:
    void candidateClicked(qint64 candidateId);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool viewportEvent(QEvent* event) override;

private:
    struct Node {
        qint64 id = 0;
        int row = 0;  // population row
        int column = 0;
        int rank = 0;         // position within the column
        int parent = -1;      // index into m_nodes
        int mate = -1;        // a crossover's other parent, index into m_nodes
        bool onBest = false;  // on the path to the best
    };

    void scheduleRelayout();
    void updateScrollBars();
    // The spacing of columns and rows: spread over the viewport when the graph is small, fixed when it scrolls.
    void computeSpacing();
    QPoint contentPos(const Node& node) const;
    QPoint offset() const;
    int nodeIndexAt(const QPoint& viewportPos) const;
    QString toolTipFor(const Node& node) const;
    // The generation numbers over the columns, fixed at the top of the view (scrolled sideways only).
    void paintGenerationHeader(QPainter& p);
    // What the colours and lines mean, at the foot of the view (not scrolled).
    void paintLegend(QPainter& p);
    int legendHeight() const;

    QPointer<PopulationModel> m_population;
    QTimer* m_relayout = nullptr;
    std::vector<Node> m_nodes;
    QHash<qint64, int> m_index;               // candidate id -> index into m_nodes
    std::vector<std::vector<int>> m_columns;  // per generation: indices into m_nodes, by rank
    int m_generations = 0;
    int m_maxRank = 0;
    int m_columnStep = 64;
    int m_rowStep = 16;
    QList<qint64> m_bestPath;
    std::vector<std::pair<qint64, qint64>> m_crossovers;
    qint64 m_selected = 0;
    qint64 m_best = 0;
};

}  // namespace kerncast
