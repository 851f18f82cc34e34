#pragma once
// Axis tickers shared by the plots: speedups labelled as "×0.5", "×1", "×2" (in log space or linear) and shares
// labelled as percentages.

#include "widgets/qcustomplot_include.h"

#include <QLocale>
#include <QString>

#include <cstdint>

namespace kerncast {

// The upper end of an axis that shows a share up to 100%: just over 1, so that the 100% tick (computed as 5 × 0.2)
// is not trimmed as lying outside the range.
inline constexpr double kFullShare = 1 + 1e-9;

// "×2", "×0.5", "×1.41", "×0.125", "×1/16" (powers of two below 1/8 as fractions), "×1,024" in the locale's digits.
QString formatSpeedup(double speedup, const QLocale& locale = QLocale());
// A bin's range, compact enough for an axis label: "×0.5–0.71", "≤ ×0.25" (lower 0), "> ×4" (upper infinite).
QString formatSpeedupRange(double lower, double upper, const QLocale& locale = QLocale());

// A count short enough for a bar label: "523", "1.2k", "12k", "3.4M".
QString formatCount(int64_t count, const QLocale& locale = QLocale());

class SpeedupTicker : public QCPAxisTicker {
public:
    enum class Scale {
        Log,     // axis coordinates are natural-log speedups; ticks sit on speedups
        Linear,  // axis coordinates are speedups
    };
    explicit SpeedupTicker(Scale scale) : m_scale(scale) {}

protected:
    double getTickStep(const QCPRange& range) override;
    int getSubTickCount(double tickStep) override;
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override;
    QVector<double> createTickVector(double tickStep, const QCPRange& range) override;

private:
    Scale m_scale;
    // Log scale: wide ranges tick on powers of two (every m_doublingsPerTick-th), narrow ones on nice linear speedups.
    bool m_powersOfTwo = true;
    int m_doublingsPerTick = 1;
};

// Coordinates in [0, 1] labelled "0%" … "100%".
class PercentTicker : public QCPAxisTicker {
protected:
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override;
};

}  // namespace kerncast
