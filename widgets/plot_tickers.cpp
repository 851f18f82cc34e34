#include "widgets/plot_tickers.h"

#include <QCoreApplication>

#include <cmath>

namespace kerncast {

namespace {

const double kLn2 = std::log(2.0);

// A tick step in doublings from 1, 2, 3, 4, 5, 10, 20, … so that labels stay a round number of doublings apart.
int niceDoublings(double raw) {
    static const int steps[] = {1, 2, 3, 4, 5, 10};
    for (int s : steps)
        if (raw <= s)
            return s;
    return 10 * niceDoublings(raw / 10);
}

// The number of a speedup without the "×".
QString speedupNumber(double speedup, const QLocale& locale) {
    const double doublings = std::log2(speedup);
    const double whole = std::round(doublings);
    if (whole <= -4 && std::abs(doublings - whole) < 1e-6)
        return QStringLiteral("1/") + locale.toString(std::exp2(-whole), 'f', 0);
    if (speedup >= 100)
        return locale.toString(std::round(speedup), 'f', 0);
    return locale.toString(speedup, 'g', 3);
}

}  // namespace

// These helpers are not QObjects: their strings are translated in the plots' context.
QString formatSpeedup(double speedup, const QLocale& locale) {
    if (!std::isfinite(speedup) || speedup <= 0)
        return QStringLiteral("–");
    return QCoreApplication::translate("kerncast::PlotWidget", "×%1", "A speedup factor on a plot, e.g. ×2 or ×0.5")
        .arg(speedupNumber(speedup, locale));
}

QString formatSpeedupRange(double lower, double upper, const QLocale& locale) {
    if (!(lower > 0))
        return QCoreApplication::translate("kerncast::PlotWidget", "≤ %1", "A bin holding every speedup up to a factor")
            .arg(formatSpeedup(upper, locale));
    if (!std::isfinite(upper))
        return QCoreApplication::translate("kerncast::PlotWidget", "> %1", "A bin holding every speedup above a factor")
            .arg(formatSpeedup(lower, locale));
    return QCoreApplication::translate("kerncast::PlotWidget", "%1–%2", "A bin's range of speedups, e.g. ×0.5–0.71")
        .arg(formatSpeedup(lower, locale), speedupNumber(upper, locale));
}

QString formatCount(int64_t count, const QLocale& locale) {
    const double n = static_cast<double>(count);
    if (count < 1000)
        return locale.toString(static_cast<qlonglong>(count));
    if (count < 1000000)
        return QCoreApplication::translate("kerncast::PlotWidget", "%1k", "Thousands, e.g. 1.2k")
            .arg(locale.toString(n / 1e3, 'f', count < 10000 ? 1 : 0));
    return QCoreApplication::translate("kerncast::PlotWidget", "%1M", "Millions, e.g. 3.4M")
        .arg(locale.toString(n / 1e6, 'f', count < 10000000 ? 1 : 0));
}

double SpeedupTicker::getTickStep(const QCPRange& range) {
    if (m_scale == Scale::Linear)
        return QCPAxisTicker::getTickStep(range);
    const double doublings = range.size() / kLn2;
    // Below about three doublings powers of two leave too few ticks; nice linear speedups (1, 1.2, 1.4 …) read better.
    m_powersOfTwo = doublings >= 2.5;
    if (m_powersOfTwo) {
        m_doublingsPerTick = niceDoublings(doublings / std::max(1, tickCount()));
        return m_doublingsPerTick * kLn2;
    }
    return 0;  // unused: createTickVector works in speedups
}

int SpeedupTicker::getSubTickCount(double tickStep) {
    if (m_scale == Scale::Linear)
        return QCPAxisTicker::getSubTickCount(tickStep);
    // One sub-tick halfway in log space is ×√2 (the gf-v2 bin edges 0.71 and 1.41); otherwise one per doubling.
    if (!m_powersOfTwo)
        return 0;
    return m_doublingsPerTick == 1 ? 1 : (m_doublingsPerTick <= 5 ? m_doublingsPerTick - 1 : 0);
}

QString SpeedupTicker::getTickLabel(double tick, const QLocale& locale, QChar, int) {
    return formatSpeedup(m_scale == Scale::Log ? std::exp(tick) : tick, locale);
}

QVector<double> SpeedupTicker::createTickVector(double tickStep, const QCPRange& range) {
    if (m_scale == Scale::Linear)
        return QCPAxisTicker::createTickVector(tickStep, range);
    QVector<double> ticks;
    if (m_powersOfTwo) {
        const int step = m_doublingsPerTick;
        // One tick beyond each end so that sub-ticks reach the axis ends.
        const int first = static_cast<int>(std::floor(range.lower / kLn2 / step)) * step;
        const int last = static_cast<int>(std::ceil(range.upper / kLn2 / step)) * step;
        for (int k = first; k <= last; k += step)
            ticks.append(k * kLn2);
        return ticks;
    }
    const QCPRange speedups(std::exp(range.lower), std::exp(range.upper));
    const QVector<double> linear = QCPAxisTicker::createTickVector(QCPAxisTicker::getTickStep(speedups), speedups);
    for (double s : linear)
        if (s > 0)
            ticks.append(std::log(s));
    return ticks;
}

QString PercentTicker::getTickLabel(double tick, const QLocale& locale, QChar, int) {
    return QCoreApplication::translate("kerncast::PlotWidget", "%1%", "A share on a plot axis, e.g. 40%")
        .arg(locale.toString(tick * 100, 'f', 0));
}

}  // namespace kerncast
