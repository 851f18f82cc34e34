#pragma once
// Forecast against outcome, one point per measured candidate: the surrogate's expected log-speedup (x) against the
// measured log-speedup (y), coloured by the forecast's confidence, with the y = x diagonal where a perfect forecast
// would sit. Built for whole runs: 100k points replot in well under 100 ms, because the points are stamped into one
// image per replot (ConfidenceCloud) rather than drawn one QPainter ellipse at a time.

#include "widgets/plot_widget.h"

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

class QCPAbstractPlottable;
class QCPColorScale;
class QCPGraph;
class QCPItemStraightLine;
class QMouseEvent;

namespace kerncast {

class ConfidenceCloud;

struct ForecastPoint {
    int64_t candidate_id = 0;
    double expected_log = 0;  // natural-log speedup the forecast expects
    double measured_log = 0;  // natural-log speedup measured on the device
    double confidence = 0;    // 0..1 (clamped)
    int64_t anchor_id = 0;    // what the forecast was against: the parent's candidate id, 0 for the reference
};

class ForecastScatterPlot : public PlotWidget {
    Q_OBJECT
public:
    // Confidence is drawn in this many discrete colour levels; the colour scale shows the same levels.
    static constexpr int kConfidenceLevels = 20;
    // A click selects the nearest point within this many pixels.
    static constexpr double kClickRadius = 6.0;

    explicit ForecastScatterPlot(QWidget* parent = nullptr);
    ~ForecastScatterPlot() override;

    // Replaces all points. Points whose coordinates are not finite (a failed measurement) are left out; a repeated
    // candidate id keeps its last point.
    void setPoints(const std::vector<ForecastPoint>& points);
    // Adds points; a candidate already shown is moved to its new position.
    void appendPoints(const std::vector<ForecastPoint>& points);
    void clear();

    // Points shown (after leaving out non-finite ones and repeats).
    int pointCount() const { return static_cast<int>(m_points.size()); }
    // The plottable that draws them (its key and value ranges are the points' extent), for tests.
    QCPAbstractPlottable* cloud() const;
    bool contains(int64_t candidateId) const { return m_indexById.count(candidateId) != 0; }

    // Rings one candidate's point; an id that is not shown (or 0) clears the ring.
    void setSelected(int64_t candidateId);
    int64_t selectedId() const { return m_selectedId; }

    // The candidate whose point is nearest to a pixel position of customPlot(), within maxDistance pixels; 0 when
    // none is.
    int64_t candidateAt(const QPointF& pixel, double maxDistance = kClickRadius) const;
    // Where a candidate's point is drawn, in pixels of customPlot(); (-1, -1) when it is not shown.
    QPointF pixelOf(int64_t candidateId) const;

Q_SIGNALS:
    // A point was clicked (not dragged): the candidate it stands for.
    void candidateClicked(qint64 candidateId);

protected:
    void fitView() override;

private:
    void insertPoints(const std::vector<ForecastPoint>& points);
    void rebuildCloud();
    void updateSelectionMarker();
    static int levelOf(double confidence);

    std::vector<ForecastPoint> m_points;  // arrival order, repeats replaced
    std::vector<uint32_t> m_byExpected;   // indices into m_points sorted by expected_log (for hit tests)
    std::unordered_map<int64_t, uint32_t> m_indexById;
    ConfidenceCloud* m_cloud = nullptr;
    std::array<QRgb, kConfidenceLevels> m_levelColors{};
    QCPGraph* m_selectionGraph = nullptr;
    QCPItemStraightLine* m_diagonal = nullptr;
    QCPColorScale* m_colorScale = nullptr;
    int64_t m_selectedId = 0;
    QPoint m_pressPos{-1, -1};
};

}  // namespace kerncast
