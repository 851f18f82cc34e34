#pragma once
// One candidate's forecast: the distribution over the speedup bins with the measured bin marked, the confidence
// scores, the expected speedup, what the device measured, the surrogate's reasoning and prompt, and a button to have
// it measured anyway. Each is a tab under the candidate's title, so that none lies below the fold of a low dock.

#include "core/bins.h"
#include "core/forecast.h"
#include "core/run_store.h"
#include "widgets/candidate_row.h"

#include <QList>
#include <QStringList>
#include <QWidget>

#include <optional>

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;

namespace kerncast {

class MeasurementPanel;

// Bars of a distribution over the bins, drawn with QPainter. A plot class may replace it; its API stays.
class BinDistributionWidget : public QWidget {
    Q_OBJECT
public:
    explicit BinDistributionWidget(QWidget* parent = nullptr);

    // probabilities: one per bin (bin 1 first). measuredBin: 1..n marks the bin the measurement fell in; 0 marks
    // none. schemeNames: the bins' names, shown in tool tips.
    void setDistribution(const QList<double>& probabilities, int measuredBin, const QStringList& schemeNames);
    void clear();

    QList<double> probabilities() const { return m_probabilities; }
    int measuredBin() const { return m_measuredBin; }
    // The most probable bin (ties to the lower one), 0 when empty.
    int predictedBin() const;
    // Geometry of bin b (1-based) in widget coordinates: its whole column, and the bar drawn in it.
    QRectF columnRect(int bin) const;
    QRectF barRect(int bin) const;
    // Bin under a point, 0 for none.
    int binAt(const QPointF& point) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

    static QColor barColor();
    static QColor predictedBarColor();
    static QColor measuredColumnColor();

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    QRectF plotArea() const;

    QList<double> m_probabilities;
    QStringList m_names;
    int m_measuredBin = 0;
};

class ForecastInspector : public QWidget {
    Q_OBJECT
public:
    explicit ForecastInspector(QWidget* parent = nullptr);

    // The scheme that names the bins and places a measured speedup in one (gf-v2 by default).
    void setScheme(const BinScheme& scheme);

    // Shows a candidate. forecast supplies the reasoning and the exact scores; without it they are worked out from
    // the row's probabilities. prompt is the text the surrogate was sent, where it is known.
    void setCandidate(const CandidateRow& row, const std::optional<Forecast>& forecast = std::nullopt,
                      const QString& prompt = {});
    void clear();
    // The candidate's calls to language models (forecasts and the mutation that wrote it), in order: the "Model
    // calls" tab lists each with its outcome, tokens, cost, latency, reply and reasoning. The prompt tab shows the
    // last forecast call's prompt when setCandidate had none; a forecast the model deferred says so in the status.
    // Call after setCandidate.
    void setLlmCalls(const std::vector<LlmCall>& calls);

    int64_t candidateId() const { return m_candidateId; }
    // The Measurement tab: what the device said about the candidate (its caller fills it from the run file).
    MeasurementPanel* measurementPanel() const { return m_measurement; }
    // The tabs under the title: Forecast (the distribution and its scores), Measurement, Reasoning, Prompt and
    // Model calls.
    QTabWidget* tabs() const { return m_tabs; }
    BinDistributionWidget* distribution() const { return m_distribution; }

Q_SIGNALS:
    void forceMeasureRequested(qint64 candidateId);

private:
    BinScheme m_scheme = BinScheme::gfV2();
    int64_t m_candidateId = 0;

    QLabel* m_title = nullptr;
    QLabel* m_status = nullptr;
    BinDistributionWidget* m_distribution = nullptr;
    QLabel* m_predicted = nullptr;
    QLabel* m_maxProbability = nullptr;
    QLabel* m_entropyConfidence = nullptr;
    QLabel* m_top2Margin = nullptr;
    QLabel* m_expectedSpeedup = nullptr;
    QLabel* m_measured = nullptr;
    QTabWidget* m_tabs = nullptr;
    QPlainTextEdit* m_reasoning = nullptr;
    QPlainTextEdit* m_prompt = nullptr;
    QPlainTextEdit* m_calls = nullptr;
    MeasurementPanel* m_measurement = nullptr;
    QPushButton* m_measureButton = nullptr;
};

}  // namespace kerncast
