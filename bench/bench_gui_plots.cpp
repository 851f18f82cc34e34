// Replot cost of the workbench plots on synthetic runs: 100k forecast-vs-measured points (the target is a replot
// under 100 ms), a reliability diagram, a long risk-coverage curve, search progress and one forecast distribution.
// Replots are forced synchronously (rpImmediateRefresh, then the event loop) on widgets shown at a fixed size.
//   QT_QPA_PLATFORM=offscreen kerncast-bench-gui-plots [--points 100000] [--repeats 10] [--size 1000x700]
//                                                      [--save-png DIR]
// --save-png also writes PNGs of each plot with the synthetic data (scatter.png, reliability.png, … at 720x500 and
// *-small.png at 440x320) to DIR.

#include "widgets/forecast_distribution_plot.h"
#include "widgets/forecast_scatter_plot.h"
#include "widgets/qcustomplot_include.h"
#include "widgets/reliability_plot.h"
#include "widgets/risk_coverage_plot.h"
#include "widgets/search_progress_plot.h"

#include <QApplication>
#include <QDir>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace kerncast;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Timing {
    double median = 0, min = 0, max = 0;
};

// Runs f `repeats` times (after one warm-up) and summarises the wall time of each run; setup, when given, runs
// untimed before each.
Timing timeIt(int repeats, const std::function<void()>& f, const std::function<void()>& setup = {}) {
    std::vector<double> ms;
    for (int i = 0; i <= repeats; ++i) {
        if (setup)
            setup();
        const auto start = Clock::now();
        f();
        if (i > 0)
            ms.push_back(msSince(start));
    }
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], ms.front(), ms.back()};
}

void showAt(PlotWidget& plot, int width, int height) {
    plot.resize(width, height);
    plot.show();
    QApplication::processEvents();
}

// A forced synchronous replot and repaint.
void replotNow(PlotWidget& plot) {
    plot.customPlot()->replot(QCustomPlot::rpImmediateRefresh);
    QApplication::processEvents();
}

// Setting data replots at once (rpQueuedRefresh) and queues the repaint: the event loop paints it.
void paint() { QApplication::processEvents(); }

void printRow(const char* plot, long long items, const char* operation, const Timing& t) {
    std::printf("%-22s %9lld  %-34s %9.2f %9.2f %9.2f\n", plot, items, operation, t.median, t.min, t.max);
}

// Two rows: setting a plot's data (which replots at once and queues the paint, painted here), then a forced replot.
void timeSetAndReplot(const char* name, long long items, const char* setting, PlotWidget& plot, int repeats,
                      const std::function<void()>& set) {
    printRow(name, items, setting, timeIt(repeats, [&] {
                 set();
                 paint();
             }));
    printRow(name, items, "replot (rpImmediateRefresh)", timeIt(repeats, [&] { replotNow(plot); }));
}

// A run's candidates: most land near the reference, a tail is fast; confident forecasts sit closer to the truth,
// and the surrogate is a little optimistic.
std::vector<ForecastPoint> syntheticPoints(int n, std::mt19937& rng, int64_t firstId = 1) {
    std::normal_distribution<double> slow(-0.25, 0.45), fast(0.7, 0.35), noise(0, 1);
    std::uniform_real_distribution<double> uniform(0, 1);
    std::vector<ForecastPoint> points;
    points.reserve(n);
    for (int i = 0; i < n; ++i) {
        const double measured = uniform(rng) < 0.8 ? slow(rng) : fast(rng);
        const double confidence = 0.125 + 0.875 * std::pow(uniform(rng), 0.8);
        const double spread = 0.08 + 0.7 * (1 - confidence);
        points.push_back({firstId + i, measured + 0.1 + spread * noise(rng), measured, confidence});
    }
    return points;
}

// Forecasts with a confidence and whether their predicted bin was right; slightly overconfident.
struct Outcome {
    double confidence;
    bool correct;
};

std::vector<Outcome> syntheticOutcomes(int n, std::mt19937& rng) {
    std::uniform_real_distribution<double> uniform(0, 1);
    std::vector<Outcome> outcomes;
    for (int i = 0; i < n; ++i) {
        const double c = 0.125 + 0.875 * std::pow(uniform(rng), 0.7);
        outcomes.push_back({c, uniform(rng) < std::pow(c, 1.25)});
    }
    return outcomes;
}

std::vector<ReliabilityBucket> bucketsOf(const std::vector<Outcome>& outcomes, double* ece) {
    std::vector<ReliabilityBucket> buckets(10);
    for (int i = 0; i < 10; ++i) {
        buckets[i].lower = i / 10.0;
        buckets[i].upper = (i + 1) / 10.0;
    }
    for (const Outcome& o : outcomes) {
        ReliabilityBucket& b = buckets[std::clamp(static_cast<int>(std::ceil(o.confidence * 10)) - 1, 0, 9)];
        ++b.count;
        b.accuracy += o.correct;
        b.mean_confidence += o.confidence;
    }
    *ece = 0;
    for (ReliabilityBucket& b : buckets) {
        if (b.count == 0)
            continue;
        b.accuracy /= static_cast<double>(b.count);
        b.mean_confidence /= static_cast<double>(b.count);
        *ece += static_cast<double>(b.count) / static_cast<double>(outcomes.size()) *
                std::abs(b.accuracy - b.mean_confidence);
    }
    return buckets;
}

std::vector<RiskCoveragePoint> riskCoverageOf(std::vector<Outcome> outcomes, double* aurc) {
    std::sort(outcomes.begin(), outcomes.end(),
              [](const Outcome& a, const Outcome& b) { return a.confidence > b.confidence; });
    std::vector<RiskCoveragePoint> curve;
    const double n = static_cast<double>(outcomes.size());
    int wrong = 0;
    *aurc = 0;
    for (size_t k = 0; k < outcomes.size(); ++k) {
        wrong += !outcomes[k].correct;
        const double risk = wrong / static_cast<double>(k + 1);
        *aurc += risk / n;
        curve.push_back({outcomes[k].confidence, (k + 1) / n, risk});
    }
    return curve;
}

// Best-so-far after each measurement of a search whose candidates get better slowly; `skill` scales the gains.
std::vector<ProgressPoint> syntheticProgress(int measurements, double skill, std::mt19937& rng) {
    std::lognormal_distribution<double> speedup(-0.2, 0.35);
    std::vector<ProgressPoint> points;
    double best = 0;
    for (int m = 1; m <= measurements; ++m) {
        const double s = speedup(rng) * (1 + skill * std::log1p(m / 40.0));
        if (s > best) {
            best = s;
            points.push_back({m, best});
        }
    }
    return points;
}

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    int points = 100000, repeats = 10, width = 1000, height = 700;
    QString pngDir;
    for (int i = 1; i < argc; ++i) {
        const bool hasValue = i + 1 < argc;
        if (!std::strcmp(argv[i], "--points") && hasValue) {
            points = std::atoi(argv[++i]);
        } else if (!std::strcmp(argv[i], "--repeats") && hasValue) {
            repeats = std::max(1, std::atoi(argv[++i]));
        } else if (!std::strcmp(argv[i], "--size") && hasValue &&
                   std::sscanf(argv[i + 1], "%dx%d", &width, &height) == 2) {
            ++i;
        } else if (!std::strcmp(argv[i], "--save-png") && hasValue) {
            pngDir = QString::fromLocal8Bit(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: %s [--points N] [--repeats R] [--size WxH] [--save-png DIR]\n", argv[0]);
            return 2;
        }
    }
    if (points < 1000) {
        std::fprintf(stderr, "--points must be at least 1000 (the append test adds 1%% of them)\n");
        return 2;
    }
    QApplication app(argc, argv);
    std::mt19937 rng(20240611);

    std::printf("Qt %s, QCustomPlot %s, platform %s, plots %dx%d, median of %d runs\n\n", qVersion(),
                QCUSTOMPLOT_VERSION_STR, qPrintable(QApplication::platformName()), width, height, repeats);
    std::printf("%-22s %9s  %-34s %9s %9s %9s\n", "plot", "items", "operation", "median ms", "min ms", "max ms");

    const std::vector<ForecastPoint> cloud = syntheticPoints(points, rng);
    const int appended = points / 100;
    const std::vector<ForecastPoint> more = syntheticPoints(appended, rng, points + 1);
    ForecastScatterPlot scatter;
    showAt(scatter, width, height);
    timeSetAndReplot("forecast scatter", points, "setPoints (replot + paint)", scatter, repeats,
                     [&] { scatter.setPoints(cloud); });
    // Each run appends the same 1% to the full cloud: the reset before it is not timed.
    printRow("forecast scatter", appended, "appendPoints (replot + paint)",
             timeIt(
                 repeats,
                 [&] {
        scatter.appendPoints(more);
        paint();
                 },
                 [&] { scatter.setPoints(cloud); }));
    const QPointF target = scatter.pixelOf(cloud[points / 2].candidate_id);
    printRow("forecast scatter", points, "candidateAt (click hit test)", timeIt(repeats, [&] {
                 if (scatter.candidateAt(target) == 0)
                     std::fprintf(stderr, "hit test missed\n");
             }));
    scatter.setSelected(cloud[points / 2].candidate_id);

    const std::vector<Outcome> outcomes = syntheticOutcomes(5000, rng);
    double ece = 0, aurc = 0;
    const std::vector<ReliabilityBucket> buckets = bucketsOf(outcomes, &ece);
    const std::vector<RiskCoveragePoint> curve = riskCoverageOf(outcomes, &aurc);
    ReliabilityPlot reliability;
    showAt(reliability, width, height);
    timeSetAndReplot("reliability", static_cast<long long>(buckets.size()), "setBuckets (replot + paint)", reliability,
                     repeats, [&] { reliability.setBuckets(buckets, ece); });
    RiskCoveragePlot risk;
    showAt(risk, width, height);
    timeSetAndReplot("risk-coverage", static_cast<long long>(curve.size()), "setCurve (replot + paint)", risk, repeats,
                     [&] { risk.setCurve(curve, aurc); });

    const std::vector<ProgressPoint> run = syntheticProgress(400, 1.2, rng);
    const std::vector<ProgressPoint> baseline = syntheticProgress(1000, 0.5, rng);
    SearchProgressPlot progress;
    showAt(progress, width, height);
    printRow("search progress", static_cast<long long>(run.size() + baseline.size()),
             "setProgress + setBaseline + paint", timeIt(repeats, [&] {
                 progress.setProgress(run, 400);
                 progress.setBaseline(baseline, 1000);
                 paint();
             }));

    const Forecast forecast = Forecast::fromRaw({0.01, 0.02, 0.05, 0.12, 0.38, 0.27, 0.12, 0.03});
    ForecastDistributionPlot distribution;
    showAt(distribution, width, height);
    printRow("forecast distribution", kBinCount, "setForecast + setMeasured + paint", timeIt(repeats, [&] {
                 distribution.setForecast(forecast, BinScheme::gfV2());
                 distribution.setMeasuredSpeedup(1.73);
                 paint();
             }));

    if (!pngDir.isEmpty()) {
        if (!QDir().mkpath(pngDir)) {
            std::fprintf(stderr, "cannot create %s\n", qPrintable(pngDir));
            return 1;
        }
        ForecastScatterPlot few;  // a run's worth of points, where single dots and the selection ring show
        few.setPoints(syntheticPoints(600, rng));
        few.setSelected(42);
        const std::pair<PlotWidget*, const char*> plots[] = {
            {&scatter, "scatter-100k.png"}, {&few, "scatter.png"},       {&reliability, "reliability.png"},
            {&risk, "risk-coverage.png"},   {&progress, "progress.png"}, {&distribution, "distribution.png"},
        };
        std::printf("\n");
        for (const auto& [plot, name] : plots) {
            // A plot in a roomy panel, and squeezed into a small dock: labels must stay readable in both.
            for (const QSize size : {QSize(720, 500), QSize(440, 320)}) {
                QString file = QString::fromLatin1(name);
                if (size.width() < 720)
                    file.replace(QStringLiteral(".png"), QStringLiteral("-small.png"));
                const QString path = QDir(pngDir).filePath(file);
                QString error;
                if (!plot->exportPng(path, size.width(), size.height(), &error)) {
                    std::fprintf(stderr, "%s\n", qPrintable(error));
                    return 1;
                }
                std::printf("wrote %s\n", qPrintable(path));
            }
        }
    }
    return 0;
}
