#pragma once
// One forecast as the surrogate gave it: the probability of each of the 8 speedup bins of its scheme, the predicted
// bin emphasised, and, once the candidate is measured, the bin the measured speedup fell in marked beside it.

#include "core/bins.h"
#include "core/forecast.h"
#include "widgets/plot_widget.h"

#include <optional>

class QCPBars;
class QCPGraph;

namespace kerncast {

class ForecastDistributionPlot : public PlotWidget {
    Q_OBJECT
public:
    explicit ForecastDistributionPlot(QWidget* parent = nullptr);
    ~ForecastDistributionPlot() override;

    // Shows the forecast's probabilities over the scheme's bins; its predicted_bin is the emphasised one.
    void setForecast(const Forecast& forecast, const BinScheme& scheme);
    // Marks the bin of a measured speedup. A speedup that is not positive and finite (a failed candidate) has no
    // bin: the legend says it failed.
    void setMeasuredSpeedup(double speedup);
    void clearMeasured();
    void clear();

    int predictedBin() const { return m_predictedBin; }
    int measuredBin() const { return m_measuredBin; }  // 0 when none or failed
    // The bin tick labels shown under the bars ("minor\nspeedup\n×1–1.41" …), for tests.
    QStringList binLabels() const;

    QCPBars* otherBars() const { return m_others; }
    QCPBars* predictedBars() const { return m_predicted; }
    QCPGraph* measuredMarker() const { return m_measuredMarker; }

private:
    void update();

    std::optional<BinScheme> m_scheme;
    std::array<double, kBinCount> m_probabilities{};
    bool m_hasForecast = false;
    int m_predictedBin = 0;
    std::optional<double> m_measuredSpeedup;
    int m_measuredBin = 0;

    QCPBars* m_others = nullptr;
    QCPBars* m_predicted = nullptr;
    QCPBars* m_measuredOutline = nullptr;
    QCPGraph* m_measuredMarker = nullptr;
};

}  // namespace kerncast
