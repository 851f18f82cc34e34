#pragma once
// The reliability diagram of a surrogate: per confidence bucket, how often its predicted bin was right (bars), how
// confident it was on average (markers), the diagonal where the two agree, and below it how many forecasts fell in
// each bucket (an accurate-looking bar over three forecasts means little). The title carries the ECE.
// Where the surrogate was more confident than right, a hatched gap bar stands on the accuracy bar up to its mean
// confidence: the markers sit near the diagonal by construction, so without the gap a forecaster that is never right
// (bars of height 0) would look perfectly calibrated.

#include "core/metrics.h"
#include "widgets/plot_widget.h"

#include <vector>

class QCPAxisRect;
class QCPBars;
class QCPGraph;
class QCPItemText;

namespace kerncast {

class ReliabilityPlot : public PlotWidget {
    Q_OBJECT
public:
    explicit ReliabilityPlot(QWidget* parent = nullptr);
    ~ReliabilityPlot() override;

    // The buckets as compute_metrics() makes them (10 of them over [0, 1]) and the expected calibration error.
    // Empty buckets draw no bar; no forecast at all shows the placeholder.
    void setBuckets(const std::vector<ReliabilityBucket>& buckets, double ece);
    // As setBuckets, with the set's accuracy and its majority-bin baseline in the title: a diagram that looks
    // calibrated says little when always naming the common bin would be as accurate.
    void setMetrics(const ForecastMetrics& metrics);
    void clear() { setBuckets({}, 0); }

    int64_t forecastCount() const { return m_forecastCount; }

    // The bars and markers, for tests: accuracy and mean confidence per non-empty bucket, counts per bucket.
    QCPBars* accuracyBars() const { return m_accuracy; }
    QCPGraph* confidenceMarkers() const { return m_confidence; }
    QCPBars* countBars() const { return m_counts; }
    // Over-confidence per non-empty bucket: mean confidence − accuracy where positive, else 0; stacked on the bars.
    QCPBars* gapBars() const { return m_gap; }

private:
    QCPAxisRect* m_countRect = nullptr;
    QCPBars* m_accuracy = nullptr;
    QCPBars* m_gap = nullptr;
    QCPGraph* m_confidence = nullptr;
    QCPGraph* m_diagonal = nullptr;
    QCPBars* m_counts = nullptr;
    std::vector<QCPItemText*> m_countLabels;
    int64_t m_forecastCount = 0;
};

}  // namespace kerncast
