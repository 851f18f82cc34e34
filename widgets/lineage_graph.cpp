#include "widgets/lineage_graph.h"

#include "widgets/population_model.h"

#include <QHelpEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTimer>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace kerncast {

namespace {

constexpr int kMargin = 14;
constexpr int kHeader = 18;  // the generation numbers above the columns
constexpr int kRadius = 5;
constexpr int kMinColumnStep = 44;
constexpr int kMaxColumnStep = 120;
constexpr int kMinRowStep = 14;
constexpr int kMaxRowStep = 36;

const QColor kBestPath(230, 126, 34);
const QColor kCrossover(142, 68, 173);
const QColor kFaster(39, 174, 96);
const QColor kSlower(127, 140, 141);
const QColor kFailed(192, 57, 43);
const QColor kSuspect(241, 196, 15);

// The candidate a crossover took values from, as its label names it ("... (crossover with #12)").
qint64 crossoverMate(const QString& label) {
    static const QRegularExpression mate(QStringLiteral(R"(crossover with #(\d+))"));
    const QRegularExpressionMatch m = mate.match(label);
    return m.hasMatch() ? m.captured(1).toLongLong() : 0;
}

}  // namespace

LineageGraph::LineageGraph(QWidget* parent) : QAbstractScrollArea(parent) {
    setObjectName(QStringLiteral("lineageGraph"));
    viewport()->setMouseTracking(true);
    viewport()->setBackgroundRole(QPalette::Base);
    viewport()->setAutoFillBackground(true);
    m_relayout = new QTimer(this);
    m_relayout->setSingleShot(true);
    // Rows arrive in batches about 20 times a second while a search runs: lay out at most every quarter second.
    m_relayout->setInterval(250);
    connect(m_relayout, &QTimer::timeout, this, &LineageGraph::relayout);
}

void LineageGraph::setPopulation(PopulationModel* population) {
    if (m_population)
        disconnect(m_population, nullptr, this, nullptr);
    m_population = population;
    if (population) {
        connect(population, &QAbstractItemModel::modelReset, this, &LineageGraph::relayout);
        connect(population, &QAbstractItemModel::rowsInserted, this, &LineageGraph::scheduleRelayout);
        connect(population, &QAbstractItemModel::dataChanged, this, &LineageGraph::scheduleRelayout);
        connect(population, &QAbstractItemModel::layoutChanged, this, &LineageGraph::scheduleRelayout);
    }
    relayout();
}

void LineageGraph::scheduleRelayout() {
    if (!m_relayout->isActive())
        m_relayout->start();
}

void LineageGraph::relayout() {
    m_relayout->stop();
    m_nodes.clear();
    m_index.clear();
    m_columns.clear();
    m_bestPath.clear();
    m_crossovers.clear();
    m_generations = 0;
    m_maxRank = 0;
    m_best = 0;
    const std::vector<CandidateRow> empty;
    const std::vector<CandidateRow>& rows = m_population ? m_population->rows() : empty;

    // Columns by generation; within a column, children sit in the order of their parents, so that edges cross
    // as little as a simple layout can make them.
    std::vector<std::vector<int>>& columns = m_columns;
    m_nodes.reserve(rows.size());
    for (size_t r = 0; r < rows.size(); ++r) {
        const int column = std::max(0, rows[r].generation);
        if (static_cast<size_t>(column) >= columns.size())
            columns.resize(static_cast<size_t>(column) + 1);
        Node node;
        node.id = rows[r].id;
        node.row = static_cast<int>(r);
        node.column = column;
        m_index.insert(node.id, static_cast<int>(m_nodes.size()));
        columns[static_cast<size_t>(column)].push_back(static_cast<int>(m_nodes.size()));
        m_nodes.push_back(node);
    }
    for (Node& node : m_nodes) {
        const CandidateRow& row = rows[static_cast<size_t>(node.row)];
        node.parent = row.parent_id ? m_index.value(row.parent_id, -1) : -1;
        if (const qint64 mate = crossoverMate(row.label); mate && mate != row.parent_id) {
            node.mate = m_index.value(mate, -1);
            if (node.mate >= 0)
                m_crossovers.emplace_back(mate, node.id);
        }
    }
    for (std::vector<int>& column : columns) {
        const auto parentKey = [this](int i) {
            const Node& n = m_nodes[static_cast<size_t>(i)];
            // A parent drawn in an earlier column has its rank already; any other sorts after those.
            if (n.parent >= 0 && m_nodes[static_cast<size_t>(n.parent)].column < n.column)
                return std::pair<int, int>(0, m_nodes[static_cast<size_t>(n.parent)].rank);
            return std::pair<int, int>(1, 0);
        };
        std::stable_sort(column.begin(), column.end(), [&](int a, int b) {
            const auto ka = parentKey(a), kb = parentKey(b);
            return ka != kb ? ka < kb : m_nodes[static_cast<size_t>(a)].id < m_nodes[static_cast<size_t>(b)].id;
        });
        for (size_t k = 0; k < column.size(); ++k)
            m_nodes[static_cast<size_t>(column[k])].rank = static_cast<int>(k);
        m_maxRank = std::max(m_maxRank, static_cast<int>(column.size()) - 1);
    }
    m_generations = static_cast<int>(columns.size());

    // The best measured candidate (a suspect result is not one) and its ancestry.
    double best = 0;
    int bestNode = -1;
    for (size_t i = 0; i < m_nodes.size(); ++i) {
        const CandidateRow& row = rows[static_cast<size_t>(m_nodes[i].row)];
        if (row.status == QLatin1String(candidate_status::Ok) && row.measured_speedup && *row.measured_speedup > best) {
            best = *row.measured_speedup;
            bestNode = static_cast<int>(i);
        }
    }
    for (int i = bestNode, steps = 0; i >= 0 && steps <= static_cast<int>(m_nodes.size()); ++steps) {
        m_nodes[static_cast<size_t>(i)].onBest = true;
        m_bestPath.prepend(m_nodes[static_cast<size_t>(i)].id);
        i = m_nodes[static_cast<size_t>(i)].parent;
    }
    m_best = bestNode >= 0 ? m_nodes[static_cast<size_t>(bestNode)].id : 0;
    computeSpacing();
    updateScrollBars();
    viewport()->update();
}

void LineageGraph::computeSpacing() {
    const QSize area = viewport()->size();
    const int columns = std::max(1, m_generations);
    const int rows = m_maxRank + 1;
    m_columnStep = std::clamp((area.width() - 2 * kMargin) / columns, kMinColumnStep, kMaxColumnStep);
    m_rowStep = std::clamp((area.height() - 2 * kMargin - kHeader - legendHeight()) / std::max(1, rows), kMinRowStep,
                           kMaxRowStep);
}

void LineageGraph::updateScrollBars() {
    const QSize area = viewport()->size();
    const int width = 2 * kMargin + std::max(0, m_generations - 1) * m_columnStep;
    const int height = 2 * kMargin + kHeader + m_maxRank * m_rowStep + legendHeight();
    horizontalScrollBar()->setRange(0, std::max(0, width - area.width()));
    horizontalScrollBar()->setPageStep(area.width());
    verticalScrollBar()->setRange(0, std::max(0, height - area.height()));
    verticalScrollBar()->setPageStep(area.height());
    verticalScrollBar()->setSingleStep(m_rowStep);
    horizontalScrollBar()->setSingleStep(m_columnStep);
}

void LineageGraph::resizeEvent(QResizeEvent* event) {
    QAbstractScrollArea::resizeEvent(event);
    computeSpacing();
    updateScrollBars();
}

int LineageGraph::legendHeight() const {
    // Room for the legend's lines below the last row (up to three on a narrow dock).
    return 3 * (fontMetrics().height() + 2) + 6;
}

QPoint LineageGraph::contentPos(const Node& node) const {
    return {kMargin + node.column * m_columnStep, kMargin + kHeader + node.rank * m_rowStep};
}

QPoint LineageGraph::offset() const { return {horizontalScrollBar()->value(), verticalScrollBar()->value()}; }

std::optional<QPoint> LineageGraph::nodeCenter(qint64 candidateId) const {
    const auto it = m_index.constFind(candidateId);
    if (it == m_index.constEnd())
        return std::nullopt;
    return contentPos(m_nodes[static_cast<size_t>(*it)]) - offset();
}

int LineageGraph::columnOf(qint64 candidateId) const {
    const auto it = m_index.constFind(candidateId);
    return it == m_index.constEnd() ? -1 : m_nodes[static_cast<size_t>(*it)].column;
}

int LineageGraph::nodeIndexAt(const QPoint& viewportPos) const {
    if (generationHeaderRect().contains(viewportPos))
        return -1;  // a node scrolled under the generation numbers is hidden there
    const QPoint p = viewportPos + offset();
    const int column = static_cast<int>(std::lround(double(p.x() - kMargin) / m_columnStep));
    const int rank = static_cast<int>(std::lround(double(p.y() - kMargin - kHeader) / m_rowStep));
    if (column < 0 || column >= m_generations || rank < 0 ||
        rank >= static_cast<int>(m_columns[static_cast<size_t>(column)].size()))
        return -1;
    const int i = m_columns[static_cast<size_t>(column)][static_cast<size_t>(rank)];
    return (contentPos(m_nodes[static_cast<size_t>(i)]) - p).manhattanLength() <= 2 * (kRadius + 3) ? i : -1;
}

qint64 LineageGraph::candidateAt(const QPoint& viewportPos) const {
    const int i = nodeIndexAt(viewportPos);
    return i < 0 ? 0 : m_nodes[static_cast<size_t>(i)].id;
}

void LineageGraph::setSelected(qint64 candidateId) {
    m_selected = candidateId;
    if (m_relayout->isActive() && !m_index.contains(candidateId))
        relayout();
    if (const auto at = nodeCenter(candidateId)) {
        // Scrolled into view below the generation numbers, with a row and a column to spare.
        const QRect area =
            viewport()->rect().adjusted(m_columnStep, kHeader + m_rowStep, -m_columnStep, -m_rowStep - legendHeight());
        if (!area.contains(*at)) {
            const QPoint content = *at + offset();
            horizontalScrollBar()->setValue(content.x() - viewport()->width() / 2);
            verticalScrollBar()->setValue(content.y() - viewport()->height() / 2);
        }
    }
    viewport()->update();
}

void LineageGraph::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton)
        return QAbstractScrollArea::mousePressEvent(event);
    if (const qint64 id = candidateAt(event->position().toPoint())) {
        setSelected(id);
        Q_EMIT candidateClicked(id);
    }
}

QString LineageGraph::toolTipFor(const Node& node) const {
    const CandidateRow& row = m_population->row(node.row);
    QString text = tr("#%1 · generation %2 · %3 · %4")
                       .arg(row.id)
                       .arg(row.generation)
                       .arg(PopulationModel::mutatorText(row.mutator), PopulationModel::statusText(row.status));
    if (row.measured_speedup)
        text +=
            QStringLiteral(" · ") + tr("%1× over the reference").arg(QLocale().toString(*row.measured_speedup, 'f', 3));
    if (node.mate >= 0)
        text += QLatin1Char('\n') +
                tr("crossover of #%1 and #%2").arg(row.parent_id).arg(m_nodes[static_cast<size_t>(node.mate)].id);
    if (node.id == m_best)
        text += QLatin1Char('\n') + tr("the best measured candidate");
    else if (node.onBest)
        text += QLatin1Char('\n') + tr("an ancestor of the best measured candidate");
    return text;
}

bool LineageGraph::viewportEvent(QEvent* event) {
    if (event->type() == QEvent::ToolTip && m_population) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int i = nodeIndexAt(help->pos());
        if (i >= 0)
            QToolTip::showText(help->globalPos(), toolTipFor(m_nodes[static_cast<size_t>(i)]), viewport());
        else
            QToolTip::hideText();
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

void LineageGraph::paintEvent(QPaintEvent*) {
    QPainter p(viewport());
    p.setRenderHint(QPainter::Antialiasing);
    const QPoint shift = offset();
    const QRect visible =
        viewport()->rect().translated(shift).adjusted(-kRadius * 3, -kRadius * 3, kRadius * 3, kRadius * 3);
    p.translate(-shift);
    const QPalette& pal = palette();
    if (m_nodes.empty() || !m_population) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(viewport()->rect().translated(shift), Qt::AlignCenter | Qt::TextWordWrap,
                   tr("No candidates yet: the lineage graph draws each generation as a column once a search runs or "
                      "a run is opened."));
        return;
    }

    const std::vector<CandidateRow>& rows = m_population->rows();
    const auto inView = [&](const QPoint& a, const QPoint& b) {
        return QRect(a, b).normalized().adjusted(-1, -1, 1, 1).intersects(visible);
    };
    // Edges first, the best path last among them so that it stays on top.
    const QColor edge = pal.color(QPalette::Mid);
    p.setPen(QPen(edge, 1));
    for (const Node& n : m_nodes)
        if (n.parent >= 0 && !(n.onBest && m_nodes[static_cast<size_t>(n.parent)].onBest)) {
            const QPoint a = contentPos(m_nodes[static_cast<size_t>(n.parent)]), b = contentPos(n);
            if (inView(a, b))
                p.drawLine(a, b);
        }
    p.setPen(QPen(kCrossover, 1.2, Qt::DashLine));
    for (const Node& n : m_nodes)
        if (n.mate >= 0) {
            const QPoint a = contentPos(m_nodes[static_cast<size_t>(n.mate)]), b = contentPos(n);
            if (inView(a, b))
                p.drawLine(a, b);
        }
    p.setPen(QPen(kBestPath, 3, Qt::SolidLine, Qt::RoundCap));
    for (const Node& n : m_nodes)
        if (n.onBest && n.parent >= 0)
            p.drawLine(contentPos(m_nodes[static_cast<size_t>(n.parent)]), contentPos(n));

    for (const Node& n : m_nodes) {
        const QPoint c = contentPos(n);
        if (!visible.contains(c))
            continue;
        const CandidateRow& row = rows[static_cast<size_t>(n.row)];
        QColor fill;
        if (row.status == QLatin1String("suspect"))
            fill = kSuspect;
        else if (row.measured_speedup)
            fill = *row.measured_speedup > 1 ? kFaster : kSlower;
        else if (isFailureStatus(row.status))
            fill = kFailed;
        const bool measured = fill.isValid();
        p.setPen(QPen(measured ? fill.darker(140) : pal.color(QPalette::Dark), 1));
        p.setBrush(measured ? QBrush(fill) : pal.brush(QPalette::Base));
        const int r = n.id == m_best ? kRadius + 2 : kRadius;
        if (row.mutator == Mutator::Reference || row.mutator == Mutator::Seed)
            p.drawRect(QRect(c - QPoint(r, r), QSize(2 * r, 2 * r)));
        else
            p.drawEllipse(c, r, r);
        if (n.onBest) {
            p.setPen(QPen(kBestPath, 2));
            p.setBrush(Qt::NoBrush);
            p.drawEllipse(c, r + 2, r + 2);
        }
        if (n.id == m_selected) {
            p.setPen(QPen(pal.color(QPalette::Highlight), 2));
            p.setBrush(Qt::NoBrush);
            p.drawEllipse(c, r + 5, r + 5);
        }
    }
    p.resetTransform();
    // Over the nodes, so that the numbers stay readable however far the graph is scrolled down.
    paintGenerationHeader(p);
    paintLegend(p);
}

QRect LineageGraph::generationHeaderRect() const { return QRect(0, 0, viewport()->width(), kHeader); }

QRect LineageGraph::generationLabelRect(int generation) const {
    const int x = kMargin + generation * m_columnStep - horizontalScrollBar()->value();
    const int w = fontMetrics().horizontalAdvance(QString::number(generation)) + 4;
    return QRect(x - w / 2, 1, w, kHeader - 2);
}

void LineageGraph::paintGenerationHeader(QPainter& p) {
    const QPalette& pal = palette();
    const QRect band = generationHeaderRect();
    p.fillRect(band, pal.color(QPalette::Base));
    p.setPen(pal.color(QPalette::Midlight));
    p.drawLine(band.bottomLeft(), band.bottomRight());
    // Every generation's number while they fit, else every few.
    p.setPen(pal.color(QPalette::PlaceholderText));
    const int labelEvery = std::max(1, (p.fontMetrics().horizontalAdvance(QStringLiteral("000")) + 8) / m_columnStep +
                                           (m_columnStep < 30 ? 1 : 0));
    for (int g = 0; g < m_generations; g += labelEvery) {
        const QRect label = generationLabelRect(g);
        if (label.right() < 0 || label.left() > band.right())
            continue;
        p.drawText(label, Qt::AlignHCenter | Qt::AlignVCenter, QString::number(g));
    }
}

void LineageGraph::paintLegend(QPainter& p) {
    enum class Sample { Line, Dashed, Dot, Hollow, Square };
    struct Item {
        Sample sample;
        QColor colour;
        QString text;
    };
    const QPalette& pal = palette();
    const Item items[] = {
        {Sample::Line, kBestPath, tr("path to the best")},
        {Sample::Dashed, kCrossover, tr("crossover")},
        {Sample::Dot, kFaster, tr("faster than the reference")},
        {Sample::Dot, kSlower, tr("slower")},
        {Sample::Dot, kFailed, tr("failed")},
        {Sample::Hollow, pal.color(QPalette::Dark), tr("not measured")},
        {Sample::Square, pal.color(QPalette::Dark), tr("reference or seed")},
    };
    // Laid out in as many lines as the width needs, from the bottom left.
    const QFontMetrics fm = p.fontMetrics();
    const int sampleWidth = 18, gap = 12, lineHeight = fm.height() + 2;
    std::vector<std::vector<const Item*>> lines(1);
    int x = 0;
    for (const Item& item : items) {
        const int w = sampleWidth + 4 + fm.horizontalAdvance(item.text);
        if (x > 0 && x + w > viewport()->width() - 2 * kMargin) {
            lines.emplace_back();
            x = 0;
        }
        lines.back().push_back(&item);
        x += w + gap;
    }
    const int top = viewport()->height() - static_cast<int>(lines.size()) * lineHeight - 4;
    QColor back = pal.color(QPalette::Base);
    back.setAlpha(220);
    p.fillRect(QRect(0, top - 2, viewport()->width(), viewport()->height() - top + 2), back);
    int y = top;
    for (const auto& line : lines) {
        x = kMargin;
        for (const Item* item : line) {
            const int mid = y + lineHeight / 2;
            switch (item->sample) {
            case Sample::Line:
                p.setPen(QPen(item->colour, 3, Qt::SolidLine, Qt::RoundCap));
                p.drawLine(x + 2, mid, x + sampleWidth - 2, mid);
                break;
            case Sample::Dashed:
                p.setPen(QPen(item->colour, 1.2, Qt::DashLine));
                p.drawLine(x + 2, mid, x + sampleWidth - 2, mid);
                break;
            case Sample::Dot:
            case Sample::Hollow:
                p.setPen(QPen(item->sample == Sample::Dot ? item->colour.darker(140) : item->colour, 1));
                p.setBrush(item->sample == Sample::Dot ? QBrush(item->colour) : pal.brush(QPalette::Base));
                p.drawEllipse(QPoint(x + sampleWidth / 2, mid), kRadius, kRadius);
                break;
            case Sample::Square:
                p.setPen(QPen(item->colour, 1));
                p.setBrush(pal.brush(QPalette::Base));
                p.drawRect(QRect(x + sampleWidth / 2 - kRadius, mid - kRadius, 2 * kRadius, 2 * kRadius));
                break;
            }
            p.setPen(pal.color(QPalette::Text));
            const int textWidth = fm.horizontalAdvance(item->text);
            p.drawText(QRect(x + sampleWidth + 4, y, textWidth + 2, lineHeight), Qt::AlignVCenter, item->text);
            x += sampleWidth + 4 + textWidth + gap;
        }
        y += lineHeight;
    }
}

}  // namespace kerncast
