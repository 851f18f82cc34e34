#include "widgets/forecast_scatter_plot.h"

#include "widgets/candidate_row.h"
#include "widgets/plot_tickers.h"
#include "widgets/qcustomplot_include.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

namespace kerncast {

namespace {

// Viridis from its yellow-green end to its dark end: confident forecasts are dark and stand out on white, unsure
// ones are light but still visible (the palest stop is not the map's pure yellow).
QCPColorGradient confidenceGradient(int levels) {
    QCPColorGradient gradient;
    gradient.setColorStopAt(0.0, QColor(0xb5, 0xde, 0x2b));
    gradient.setColorStopAt(0.25, QColor(0x4a, 0xc1, 0x6d));
    gradient.setColorStopAt(0.5, QColor(0x1f, 0x9e, 0x89));
    gradient.setColorStopAt(0.75, QColor(0x31, 0x68, 0x8e));
    gradient.setColorStopAt(1.0, QColor(0x44, 0x01, 0x54));
    gradient.setLevelCount(levels);
    return gradient;
}

// Dense clouds need small dots to show their structure; a few hundred points are easier to see and hit when larger.
double dotSize(size_t points) {
    if (points <= 2000)
        return 6;
    if (points <= 20000)
        return 5;
    return 4;
}

// Qt's BYTE_MUL: every channel of a packed ARGB pixel times a/255.
inline QRgb byteMul(QRgb x, uint a) {
    uint t = (x & 0xff00ff) * a;
    t = ((t + ((t >> 8) & 0xff00ff) + 0x800080) >> 8) & 0xff00ff;
    x = ((x >> 8) & 0xff00ff) * a;
    x = (x + ((x >> 8) & 0xff00ff) + 0x800080) & 0xff00ff00;
    return x | t;
}

}  // namespace

// Many dots, drawn fast: each replot stamps every dot into one image at the target's pixel density and draws that
// image once. QCPGraph issues one QPainter ellipse per point, which takes most of a second for 100k points.
class ConfidenceCloud : public QCPAbstractPlottable {
public:
    struct Dot {
        double key = 0;
        double value = 0;
        QRgb color = 0;  // opaque
    };

    ConfidenceCloud(QCPAxis* keyAxis, QCPAxis* valueAxis) : QCPAbstractPlottable(keyAxis, valueAxis) {
        setSelectable(QCP::stNone);
    }

    // Drawn in order: later dots lie on top.
    void setDots(std::vector<Dot> dots) { m_dots = std::move(dots); }
    const std::vector<Dot>& dots() const { return m_dots; }
    void setDiameter(double pixels) { m_diameter = pixels; }

    // Clicks are resolved by the scatter plot (nearest point within a radius), not by QCustomPlot's selection.
    double selectTest(const QPointF&, bool, QVariant*) const override { return -1; }

    QCPRange getKeyRange(bool& foundRange, QCP::SignDomain inSignDomain) const override {
        return extent(
            foundRange, inSignDomain, [](const Dot& d) { return d.key; }, QCPRange());
    }
    QCPRange getValueRange(bool& foundRange, QCP::SignDomain inSignDomain, const QCPRange& inKeyRange) const override {
        return extent(
            foundRange, inSignDomain, [](const Dot& d) { return d.value; }, inKeyRange);
    }

protected:
    void draw(QCPPainter* painter) override;
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override {
        const QColor color = m_dots.empty() ? QColor(Qt::gray) : QColor::fromRgb(m_dots.back().color);
        painter->setPen(Qt::NoPen);
        painter->setBrush(color);
        const double d = std::min({m_diameter, rect.width(), rect.height()});
        painter->drawEllipse(QRectF(0, 0, d, d).translated(rect.center() - QPointF(d / 2, d / 2)));
    }

private:
    template<typename Coordinate>
    QCPRange extent(bool& found, QCP::SignDomain domain, Coordinate coordinate, const QCPRange& inKeyRange) const {
        const bool restrictKeys = inKeyRange != QCPRange();
        QCPRange range;
        found = false;
        for (const Dot& d : m_dots) {
            const double c = coordinate(d);
            if ((domain == QCP::sdNegative && c >= 0) || (domain == QCP::sdPositive && c <= 0))
                continue;
            if (restrictKeys && !inKeyRange.contains(d.key))
                continue;
            if (!found) {
                range = QCPRange(c, c);
                found = true;
            } else {
                range.expand(c);
            }
        }
        return range;
    }

    std::vector<Dot> m_dots;
    double m_diameter = 5;
};

void ConfidenceCloud::draw(QCPPainter* painter) {
    const QCPAxis* x = mKeyAxis.data();
    const QCPAxis* y = mValueAxis.data();
    const QRect clip = clipRect();
    if (m_dots.empty() || !x || !y || clip.isEmpty())
        return;
    // A scaled PNG export or a high-dpi screen gets a sharp image; so does a PDF, where the image is embedded.
    double density = std::abs(painter->transform().m11()) * painter->device()->devicePixelRatioF();
    if (painter->paintEngine() && painter->paintEngine()->type() == QPaintEngine::Pdf)
        density = std::max(density, 3.0);
    density = std::clamp(density, 1.0, 8.0);
    const int width = static_cast<int>(std::ceil(clip.width() * density));
    const int height = static_cast<int>(std::ceil(clip.height() * density));
    QImage image(width, height, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);

    // One dot's coverage, antialiased at its rim.
    const double diameter = m_diameter * density;
    const int n = static_cast<int>(std::ceil(diameter)) + 1;
    const double centre = (n - 1) / 2.0;
    std::vector<uint8_t> mask(static_cast<size_t>(n) * n);
    for (int row = 0; row < n; ++row)
        for (int col = 0; col < n; ++col) {
            const double edge = diameter / 2 - std::hypot(row - centre, col - centre) + 0.5;
            mask[row * n + col] = static_cast<uint8_t>(std::lround(255 * std::clamp(edge, 0.0, 1.0)));
        }

    uchar* bits = image.bits();
    const qsizetype stride = image.bytesPerLine();
    const double left = clip.left(), top = clip.top();
    for (const Dot& dot : m_dots) {
        const long ox = std::lround((x->coordToPixel(dot.key) - left) * density - centre);
        const long oy = std::lround((y->coordToPixel(dot.value) - top) * density - centre);
        if (ox >= width || oy >= height || ox + n <= 0 || oy + n <= 0)
            continue;
        const int rowBegin = static_cast<int>(std::max(0L, -oy)),
                  rowEnd = static_cast<int>(std::min<long>(n, height - oy));
        const int colBegin = static_cast<int>(std::max(0L, -ox)),
                  colEnd = static_cast<int>(std::min<long>(n, width - ox));
        for (int row = rowBegin; row < rowEnd; ++row) {
            auto* line = reinterpret_cast<QRgb*>(bits + (oy + row) * stride) + ox;
            const uint8_t* coverage = mask.data() + row * n;
            for (int col = colBegin; col < colEnd; ++col) {
                const uint a = coverage[col];
                if (a == 255)
                    line[col] = dot.color;
                else if (a != 0)
                    line[col] = byteMul(dot.color, a) + byteMul(line[col], 255 - a);
            }
        }
    }
    painter->drawImage(QRectF(clip), image, QRectF(image.rect()));
}

ForecastScatterPlot::ForecastScatterPlot(QWidget* parent) : PlotWidget(parent) {
    QCustomPlot* plot = customPlot();
    setTitleText(tr("Forecast vs measured speedup"));
    // A forecast is of S against its anchor (the parent, or the reference); both axes are that S.
    setAxisLabels(tr("Expected speedup vs anchor (forecast)"), tr("Measured speedup vs the same anchor"));
    QCPAxisRect* rect = mainAxisRect();
    for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
        axis->setTicker(QSharedPointer<SpeedupTicker>::create(SpeedupTicker::Scale::Log));
        // ×1 is the reference kernel: its grid line is the one that matters most.
        axis->grid()->setZeroLinePen(QPen(QColor(0xa8, 0xa8, 0xa8), 0));
    }

    // Drawn first, so it lies under the points.
    m_diagonal = new QCPItemStraightLine(plot);
    m_diagonal->point1->setCoords(0, 0);
    m_diagonal->point2->setCoords(1, 1);
    const QPen diagonalPen(referenceColor(), 1.2, Qt::DashLine);
    m_diagonal->setPen(diagonalPen);
    m_diagonal->setSelectable(false);
    // Items have no legend entry of their own; an empty graph with the same pen stands for the diagonal.
    QCPGraph* diagonalKey = plot->addGraph();
    diagonalKey->setPen(diagonalPen);
    diagonalKey->setName(tr("Forecast = measured"));

    QCPColorGradient gradient = confidenceGradient(kConfidenceLevels);  // color() is not const
    for (int level = 0; level < kConfidenceLevels; ++level)
        m_levelColors[level] = gradient.color((level + 0.5) / kConfidenceLevels, QCPRange(0, 1)) | 0xff000000u;
    m_cloud = new ConfidenceCloud(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    m_cloud->setName(tr("Candidates"));
    m_cloud->removeFromLegend();

    m_selectionGraph = plot->addGraph();
    m_selectionGraph->setLineStyle(QCPGraph::lsNone);
    m_selectionGraph->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(measuredColor(), 2.4), Qt::NoBrush, 13));
    m_selectionGraph->setSelectable(QCP::stNone);
    m_selectionGraph->setName(tr("Selected candidate"));
    m_selectionGraph->removeFromLegend();

    // The axis rect and the colour scale share a row of their own, so that the title above spans both.
    auto* body = new QCPLayoutGrid;
    plot->plotLayout()->take(rect);
    plot->plotLayout()->addElement(1, 0, body);
    body->addElement(0, 0, rect);
    m_colorScale = new QCPColorScale(plot);
    body->addElement(0, 1, m_colorScale);
    m_colorScale->setType(QCPAxis::atRight);
    m_colorScale->setGradient(gradient);
    m_colorScale->setDataRange(QCPRange(0, 1));
    m_colorScale->setBarWidth(10);
    m_colorScale->setRangeDrag(false);
    m_colorScale->setRangeZoom(false);
    m_colorScale->axis()->setLabel(tr("Confidence"));
    m_colorScale->axis()->setTicker(QSharedPointer<PercentTicker>::create());
    styleAxisRect(m_colorScale->axis()->axisRect());
    // The scale belongs to the points: keep it close to them (the edge of the widget is the scale's, not the plot's).
    rect->setMinimumMargins(QMargins(15, 15, 8, 15));
    m_colorScale->setMinimumMargins(QMargins(0, 15, 8, 15));
    auto* margins = new QCPMarginGroup(plot);
    rect->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    m_colorScale->setMarginGroup(QCP::msTop | QCP::msBottom, margins);

    // Under the plot: inside, the legend would cover points in whatever corner it sat (wrong forecasts fill the
    // corners). A run spans about ten doublings: a label every one or two, fewer on a narrow plot so that labels
    // never run into each other.
    showLegendBelow();
    spaceTicksByLength(64, 36, 7);
    // The colour scale's percentages one every 30 pixels at most: on a low plot (1280×720) they ran into each other.
    connect(plot, &QCustomPlot::beforeReplot, this, [this] {
        const int count = std::clamp(m_colorScale->axis()->axisRect()->height() / 30, 1, 5);
        if (m_colorScale->axis()->ticker()->tickCount() != count)
            m_colorScale->axis()->ticker()->setTickCount(count);
    });
    setZoomable(true);

    connect(plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) { m_pressPos = event->pos(); });
    connect(plot, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* event) {
        // A drag that ends on a point is a drag, not a click.
        if (event->button() != Qt::LeftButton || (event->pos() - m_pressPos).manhattanLength() > 3)
            return;
        const int64_t id = candidateAt(event->pos());
        if (id == 0)
            return;
        setSelected(id);
        Q_EMIT candidateClicked(id);
    });

    fitView();
    setHasData(false);
}

ForecastScatterPlot::~ForecastScatterPlot() = default;

int ForecastScatterPlot::levelOf(double confidence) {
    return std::clamp(static_cast<int>(confidence * kConfidenceLevels), 0, kConfidenceLevels - 1);
}

void ForecastScatterPlot::setPoints(const std::vector<ForecastPoint>& points) {
    m_points.clear();
    m_byExpected.clear();
    m_indexById.clear();
    insertPoints(points);
    rebuildCloud();
    fitView();
    replot();
}

void ForecastScatterPlot::appendPoints(const std::vector<ForecastPoint>& points) {
    insertPoints(points);
    rebuildCloud();
    fitViewUnlessMoved();
    replot();
}

void ForecastScatterPlot::clear() { setPoints({}); }

void ForecastScatterPlot::insertPoints(const std::vector<ForecastPoint>& points) {
    const size_t before = m_points.size();
    m_points.reserve(before + points.size());
    m_indexById.reserve(before + points.size());
    bool moved = false;
    for (ForecastPoint p : points) {
        if (!std::isfinite(p.expected_log) || !std::isfinite(p.measured_log))
            continue;
        p.confidence = std::isfinite(p.confidence) ? std::clamp(p.confidence, 0.0, 1.0) : 0.0;
        const auto [it, inserted] = m_indexById.try_emplace(p.candidate_id, static_cast<uint32_t>(m_points.size()));
        if (inserted) {
            m_points.push_back(p);
        } else {
            m_points[it->second] = p;
            moved = moved || it->second < before;
        }
    }
    const auto byExpected = [this](uint32_t a, uint32_t b) {
        return m_points[a].expected_log < m_points[b].expected_log;
    };
    if (moved) {
        m_byExpected.resize(m_points.size());
        std::iota(m_byExpected.begin(), m_byExpected.end(), 0u);
        std::sort(m_byExpected.begin(), m_byExpected.end(), byExpected);
        return;
    }
    // Only new points: sort them and merge them into the existing order (linear, not a full sort).
    const auto middle = static_cast<std::ptrdiff_t>(m_byExpected.size());
    for (size_t i = before; i < m_points.size(); ++i)
        m_byExpected.push_back(static_cast<uint32_t>(i));
    std::sort(m_byExpected.begin() + middle, m_byExpected.end(), byExpected);
    std::inplace_merge(m_byExpected.begin(), m_byExpected.begin() + middle, m_byExpected.end(), byExpected);
}

QCPAbstractPlottable* ForecastScatterPlot::cloud() const { return m_cloud; }

void ForecastScatterPlot::rebuildCloud() {
    // Counting sort by confidence level: unsure points first, so the confident ones are drawn on top.
    std::array<size_t, kConfidenceLevels + 1> start{};
    for (const ForecastPoint& p : m_points)
        ++start[levelOf(p.confidence) + 1];
    for (int level = 0; level < kConfidenceLevels; ++level)
        start[level + 1] += start[level];
    std::vector<ConfidenceCloud::Dot> dots(m_points.size());
    for (const ForecastPoint& p : m_points) {
        const int level = levelOf(p.confidence);
        dots[start[level]++] = {p.expected_log, p.measured_log, m_levelColors[level]};
    }
    m_cloud->setDots(std::move(dots));
    m_cloud->setDiameter(dotSize(m_points.size()));
    setHasData(!m_points.empty());
    updateSelectionMarker();
}

void ForecastScatterPlot::fitView() {
    double lo = 0, hi = 0;  // ×1 is always in view: it is the reference
    for (const ForecastPoint& p : m_points) {
        lo = std::min({lo, p.expected_log, p.measured_log});
        hi = std::max({hi, p.expected_log, p.measured_log});
    }
    // At least ×0.5 … ×2, and a margin so that the outermost dots are not cut by the axes.
    const double minimumHalfSpan = std::log(2.0);
    lo = std::min(lo, -minimumHalfSpan);
    hi = std::max(hi, minimumHalfSpan);
    const double margin = 0.05 * (hi - lo);
    // Both axes get the same range so that the diagonal reads as "forecast = measured" at a glance.
    const QCPRange range(lo - margin, hi + margin);
    mainAxisRect()->axis(QCPAxis::atBottom)->setRange(range);
    mainAxisRect()->axis(QCPAxis::atLeft)->setRange(range);
}

void ForecastScatterPlot::setSelected(int64_t candidateId) {
    m_selectedId = contains(candidateId) ? candidateId : 0;
    updateSelectionMarker();
    replot();
}

void ForecastScatterPlot::updateSelectionMarker() {
    const auto it = m_indexById.find(m_selectedId);
    if (it == m_indexById.end()) {
        m_selectedId = 0;
        m_selectionGraph->data()->clear();
        m_selectionGraph->removeFromLegend();
        return;
    }
    const ForecastPoint& p = m_points[it->second];
    m_selectionGraph->setData(QVector<double>{p.expected_log}, QVector<double>{p.measured_log}, true);
    m_selectionGraph->setName(tr("Selected candidate (%1)").arg(anchorText(p.anchor_id)));
    m_selectionGraph->addToLegend();
}

int64_t ForecastScatterPlot::candidateAt(const QPointF& pixel, double maxDistance) const {
    if (m_points.empty() || !mainAxisRect()->rect().contains(pixel.toPoint()))
        return 0;
    const QCPAxis* x = mainAxisRect()->axis(QCPAxis::atBottom);
    const QCPAxis* y = mainAxisRect()->axis(QCPAxis::atLeft);
    const double a = x->pixelToCoord(pixel.x() - maxDistance);
    const double b = x->pixelToCoord(pixel.x() + maxDistance);
    const double lo = std::min(a, b), hi = std::max(a, b);
    // Only points within maxDistance horizontally can be near: a binary search finds them among all points.
    auto it = std::lower_bound(m_byExpected.begin(), m_byExpected.end(), lo,
                               [this](uint32_t index, double key) { return m_points[index].expected_log < key; });
    int64_t best = 0;
    double bestDistance = maxDistance * maxDistance;
    for (; it != m_byExpected.end() && m_points[*it].expected_log <= hi; ++it) {
        const ForecastPoint& p = m_points[*it];
        const double dx = x->coordToPixel(p.expected_log) - pixel.x();
        const double dy = y->coordToPixel(p.measured_log) - pixel.y();
        const double d = dx * dx + dy * dy;
        if (d <= bestDistance) {
            bestDistance = d;
            best = p.candidate_id;
        }
    }
    return best;
}

QPointF ForecastScatterPlot::pixelOf(int64_t candidateId) const {
    const auto it = m_indexById.find(candidateId);
    if (it == m_indexById.end())
        return {-1, -1};
    const ForecastPoint& p = m_points[it->second];
    return {mainAxisRect()->axis(QCPAxis::atBottom)->coordToPixel(p.expected_log),
            mainAxisRect()->axis(QCPAxis::atLeft)->coordToPixel(p.measured_log)};
}

}  // namespace kerncast
