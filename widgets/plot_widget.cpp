#include "widgets/plot_widget.h"

#include "widgets/qcustomplot_include.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontMetrics>
#include <QHelpEvent>
#include <QMenu>
#include <QMessageBox>
#include <QRegularExpression>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace kerncast {

namespace {

constexpr int kMaxExportSide = 20000;  // pixels; beyond this a raster export is a mistake, not a wish
constexpr QSize kDefaultExportSize{800, 600};

QFont withPointSize(QFont font, qreal points, bool bold = false) {
    font.setPointSizeF(points);
    font.setBold(bold);
    return font;
}

// A title that wraps onto more lines when the plot is narrower than the title, instead of running off both edges.
// It sits in the top row of the plot's layout, which spans the whole width.
class PlotTitle : public QCPTextElement {
public:
    PlotTitle(QCustomPlot* plot, const QFont& font) : QCPTextElement(plot, QString(), font) {
        setTextFlags(Qt::AlignCenter | Qt::TextWordWrap);
    }

protected:
    QSize minimumOuterSizeHint() const override { return {mMargins.left() + mMargins.right(), wrappedHeight()}; }
    QSize maximumOuterSizeHint() const override { return {QWIDGETSIZE_MAX, wrappedHeight()}; }

private:
    int wrappedHeight() const {
        if (mText.isEmpty())
            return mMargins.top() + mMargins.bottom();
        const int width = std::max(40, mParentPlot->viewport().width() - mMargins.left() - mMargins.right());
        return QFontMetrics(mFont).boundingRect(QRect(0, 0, width, 0), mTextFlags, mText).height() + mMargins.top() +
               mMargins.bottom();
    }
};

}  // namespace

PlotWidget::PlotWidget(QWidget* parent) : QWidget(parent) {
    m_plot = new QCustomPlot(this);
    m_plot->installEventFilter(this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    setFocusProxy(m_plot);
    connect(m_plot, &QCustomPlot::beforeReplot, this, &PlotWidget::fitAxisLabels);

    m_plot->setBackground(Qt::white);
    m_plot->setAntialiasedElements(QCP::aeNone);
    m_plot->setAntialiasedElement(QCP::aeLegend);
    // Large scatter plots stay responsive while dragged: drop antialiasing for the duration of the drag.
    m_plot->setNoAntialiasingOnDrag(true);
    m_plot->setPlottingHint(QCP::phCacheLabels, true);

    const QFont base = font();
    m_title = new PlotTitle(m_plot, withPointSize(base, base.pointSizeF() + 1.5, true));
    m_title->setTextColor(QColor(0x30, 0x30, 0x30));
    m_title->setMargins(QMargins(4, 6, 4, 0));
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_plot->plotLayout()->setRowSpacing(0);

    styleAxisRect(mainAxisRect());

    QCPLegend* legend = m_plot->legend;
    legend->setFont(withPointSize(base, base.pointSizeF() - 0.5));
    legend->setBrush(QColor(255, 255, 255, 220));
    legend->setBorderPen(QPen(QColor(0xc8, 0xc8, 0xc8)));
    legend->setIconSize(20, 14);
    legend->setRowSpacing(-2);
    legend->setVisible(false);

    m_placeholder = new QCPItemText(m_plot);
    m_placeholder->setClipToAxisRect(false);
    m_placeholder->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_placeholder->position->setAxisRect(mainAxisRect());
    m_placeholder->position->setCoords(0.5, 0.5);
    m_placeholder->setPositionAlignment(Qt::AlignCenter);
    m_placeholder->setFont(withPointSize(base, base.pointSizeF() + 2));
    m_placeholder->setColor(QColor(0x90, 0x90, 0x90));
    m_placeholder->setText(tr("No data yet"));
    m_placeholder->setSelectable(false);

    m_exportPngAction = new QAction(tr("Export as PNG…"), this);
    m_exportPdfAction = new QAction(tr("Export as PDF…"), this);
    m_resetViewAction = new QAction(tr("Reset View"), this);
    connect(m_exportPngAction, &QAction::triggered, this, [this] { exportWithDialog(false); });
    connect(m_exportPdfAction, &QAction::triggered, this, [this] { exportWithDialog(true); });
    connect(m_resetViewAction, &QAction::triggered, this, &PlotWidget::resetView);

    m_plot->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_plot, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        QMenu* menu = createContextMenu();
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(m_plot->mapToGlobal(pos));
    });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent*) {
        if (m_zoomable)
            resetView();
    });
    connect(m_plot, &QCustomPlot::mouseWheel, this, [this](QWheelEvent*) {
        if (m_zoomable)
            m_viewMovedByUser = true;
    });
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
        if (m_zoomable && event->buttons() != Qt::NoButton)
            m_viewMovedByUser = true;
    });
}

PlotWidget::~PlotWidget() = default;

void PlotWidget::setTitle(const QString& title) {
    setTitleText(title);
    replot();
}

void PlotWidget::setTitleText(const QString& title) { m_title->setText(title); }

QString PlotWidget::title() const { return m_title->text(); }

void PlotWidget::setAxisLabels(const QString& xLabel, const QString& yLabel) {
    mainAxisRect()->axis(QCPAxis::atBottom)->setLabel(xLabel);
    mainAxisRect()->axis(QCPAxis::atLeft)->setLabel(yLabel);
    fitAxisLabels();
    replot();
}

namespace {

// The label on one line when it fits `length`, else on two or three lines of about equal width, broken at spaces;
// a label that three lines do not hold is one line ending in "…".
QString fitLabel(const QString& label, const QFont& font, int length) {
    const QFontMetrics fm(font);
    if (length <= 0 || fm.horizontalAdvance(label) <= length)
        return label;
    const QStringList words = label.split(QLatin1Char(' '));
    const auto part = [&](qsizetype from, qsizetype to) { return words.mid(from, to - from).join(QLatin1Char(' ')); };
    QStringList best;
    int bestWidth = std::numeric_limits<int>::max();
    const auto consider = [&](const QStringList& lines) {
        int widest = 0;
        for (const QString& line : lines)
            widest = std::max(widest, fm.horizontalAdvance(line));
        if (widest <= length && widest < bestWidth) {
            bestWidth = widest;
            best = lines;
        }
    };
    const qsizetype n = words.size();
    for (qsizetype a = 1; a < n; ++a)
        consider({part(0, a), part(a, n)});
    if (best.isEmpty())
        for (qsizetype a = 1; a < n; ++a)
            for (qsizetype b = a + 1; b < n; ++b)
                consider({part(0, a), part(a, b), part(b, n)});
    return best.isEmpty() ? fm.elidedText(label, Qt::ElideRight, length) : best.join(QLatin1Char('\n'));
}

}  // namespace

void PlotWidget::fitAxisLabels() {
    const auto fit = [](QCPAxis* axis, QString& whole, QString& shown, int length) {
        if (axis->label() != shown)
            whole = axis->label();  // set since the last fit (by setAxisLabels or a derived plot)
        shown = fitLabel(whole, axis->labelFont(), length);
        axis->setLabel(shown);
    };
    QCPAxis* x = mainAxisRect()->axis(QCPAxis::atBottom);
    QCPAxis* y = mainAxisRect()->axis(QCPAxis::atLeft);
    // Until the plot is on screen its axis rect has no real size: the labels stay whole.
    if (!m_plot->isVisible()) {
        fit(x, m_xLabel, m_xShown, 0);
        fit(y, m_yLabel, m_yShown, 0);
        return;
    }
    // The axes' lengths depend on the labels (a label on two lines takes room from the other axis): lay the plot out,
    // fit, and once more with the fitted labels. The replot lays it out again as it stands then.
    for (int pass = 0; pass < 2; ++pass) {
        for (const auto phase :
             {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout})
            m_plot->plotLayout()->update(phase);
        // A label is centred on its axis and may reach into the empty corners beside it, as far as the narrower
        // margin at either end.
        const QRect inner = mainAxisRect()->rect();
        const QMargins margins = mainAxisRect()->margins();
        // Above the axis the y label may also reach into the title's row while the (centred) title leaves its left
        // end free.
        int above = margins.top();
        const QRect title = m_title->outerRect();
        const int titleText = QFontMetrics(m_title->font()).horizontalAdvance(m_title->text());
        if (m_title->visible() && title.bottom() <= inner.top() && (title.width() - titleText) / 2 > margins.left())
            above = inner.top() - title.top();
        fit(x, m_xLabel, m_xShown, inner.width() + 2 * std::min(margins.left(), margins.right()));
        fit(y, m_yLabel, m_yShown, inner.height() + 2 * std::min(above, margins.bottom()));
    }
}

QString PlotWidget::axisLabelToolTipAt(const QPoint& plotPos) const {
    const QRect inner = mainAxisRect()->rect();
    const auto cut = [](const QString& shown, const QString& whole) {
        return shown != whole && shown.endsWith(QStringLiteral("…"));
    };
    if (plotPos.x() < inner.left() && plotPos.y() >= inner.top() && plotPos.y() <= inner.bottom() &&
        cut(m_yShown, m_yLabel))
        return m_yLabel;
    if (plotPos.y() > inner.bottom() && plotPos.x() >= inner.left() && plotPos.x() <= inner.right() &&
        cut(m_xShown, m_xLabel))
        return m_xLabel;
    return {};
}

bool PlotWidget::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_plot && event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString tip = axisLabelToolTipAt(help->pos());
        if (!tip.isEmpty()) {
            QToolTip::showText(help->globalPos(), tip, m_plot);
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void PlotWidget::setPlaceholderText(const QString& text) {
    m_placeholder->setText(text);
    replot();
}

QString PlotWidget::placeholderText() const { return m_placeholder->text(); }

bool PlotWidget::isPlaceholderVisible() const { return m_placeholder->visible(); }

void PlotWidget::setHasData(bool hasData) { m_placeholder->setVisible(!hasData); }

void PlotWidget::replot() { m_plot->replot(QCustomPlot::rpQueuedRefresh); }

void PlotWidget::setZoomable(bool zoomable) {
    m_zoomable = zoomable;
    m_plot->setInteraction(QCP::iRangeDrag, zoomable);
    m_plot->setInteraction(QCP::iRangeZoom, zoomable);
}

void PlotWidget::resetView() {
    m_viewMovedByUser = false;
    fitView();
    replot();
}

void PlotWidget::fitViewUnlessMoved() {
    if (!m_viewMovedByUser)
        fitView();
}

QCPAxisRect* PlotWidget::mainAxisRect() const { return m_plot->axisRect(0); }

void PlotWidget::styleAxisRect(QCPAxisRect* rect) {
    // QCustomPlot drops a tick label that would cross the widget's edge: keep room for the last one ("100%").
    rect->setMinimumMargins(QMargins(15, 15, 20, 15));  // QCustomPlot's 15, and 20 on the right
    const QColor axisColor(0x70, 0x70, 0x70);
    const QColor gridColor(0xe4, 0xe4, 0xe4);
    for (QCPAxis* axis : rect->axes()) {
        axis->setBasePen(QPen(axisColor));
        axis->setTickPen(QPen(axisColor));
        axis->setSubTickPen(QPen(axisColor));
        axis->setTickLabelColor(QColor(0x40, 0x40, 0x40));
        axis->setLabelColor(QColor(0x30, 0x30, 0x30));
        axis->setTickLengthIn(0);
        axis->setTickLengthOut(4);
        axis->setSubTickLengthIn(0);
        axis->setSubTickLengthOut(2);
        axis->grid()->setPen(QPen(gridColor, 0, Qt::SolidLine));
        axis->grid()->setSubGridVisible(false);
        axis->grid()->setZeroLinePen(Qt::NoPen);
        axis->setPadding(4);
        axis->setLabelPadding(4);
    }
}

void PlotWidget::showLegend(Qt::Alignment corner) {
    m_plot->legend->setVisible(true);
    mainAxisRect()->insetLayout()->setInsetAlignment(0, corner);
}

void PlotWidget::showLegendBelow() {
    QCPLegend* legend = m_plot->legend;
    legend->setVisible(true);
    if (legend->layout() == m_plot->plotLayout())
        return;
    if (auto* inset = qobject_cast<QCPLayoutInset*>(legend->layout()))
        inset->take(legend);
    m_plot->plotLayout()->simplify();
    const int row = m_plot->plotLayout()->rowCount();
    m_plot->plotLayout()->addElement(row, 0, legend);
    m_plot->plotLayout()->setRowStretchFactor(row, 0.001);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(0);
    legend->setBorderPen(Qt::NoPen);
    legend->setMargins(QMargins(4, 0, 4, 4));
    legend->setMaximumSize(QWIDGETSIZE_MAX, legend->minimumOuterSizeHint().height());
}

void PlotWidget::spaceTicksByLength(int pixelsPerTickX, int pixelsPerTickY, int maxTicks) {
    connect(m_plot, &QCustomPlot::beforeReplot, this, [this, pixelsPerTickX, pixelsPerTickY, maxTicks] {
        QCPAxisRect* rect = mainAxisRect();
        const auto fit = [maxTicks](QCPAxis* axis, int length, int perTick) {
            const int count = std::clamp(length / std::max(1, perTick), 3, maxTicks);
            if (axis->ticker()->tickCount() != count)
                axis->ticker()->setTickCount(count);
        };
        fit(rect->axis(QCPAxis::atBottom), rect->width(), pixelsPerTickX);
        fit(rect->axis(QCPAxis::atLeft), rect->height(), pixelsPerTickY);
    });
}

QColor PlotWidget::forecastColor() { return {0x2f, 0x6f, 0xb3}; }

QColor PlotWidget::measuredColor() { return {0xe0, 0x6c, 0x00}; }

QColor PlotWidget::referenceColor() { return {0x80, 0x80, 0x80}; }

QColor PlotWidget::mutedColor() { return {0xb4, 0xc8, 0xdc}; }

QMenu* PlotWidget::createContextMenu() {
    auto* menu = new QMenu(this);
    menu->addAction(m_exportPngAction);
    menu->addAction(m_exportPdfAction);
    if (m_zoomable) {
        menu->addSeparator();
        menu->addAction(m_resetViewAction);
    }
    return menu;
}

bool PlotWidget::checkTarget(const QString& path, QString* error) const {
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    if (path.isEmpty())
        return fail(tr("No file name was given for the export."));
    const QFileInfo file(path);
    if (file.isDir())
        return fail(tr("Cannot save the plot to %1: it is a folder. Choose a file name.").arg(path));
    const QFileInfo folder(file.absolutePath());
    if (!folder.isDir())
        return fail(tr("Cannot save the plot to %1: the folder %2 does not exist.")
                        .arg(path, QDir::toNativeSeparators(folder.filePath())));
    if (!folder.isWritable())
        return fail(tr("Cannot save the plot to %1: the folder %2 is not writable.")
                        .arg(path, QDir::toNativeSeparators(folder.filePath())));
    if (file.exists() && !file.isWritable())
        return fail(tr("Cannot save the plot to %1: the file exists and is read-only.").arg(path));
    return true;
}

bool PlotWidget::exportPng(const QString& path, int width, int height, QString* error, double scale) {
    if (!checkTarget(path, error))
        return false;
    const bool validScale = scale >= 0.25 && scale <= 8;
    if (width < 1 || height < 1 || width * scale > kMaxExportSide || height * scale > kMaxExportSide || !validScale) {
        if (error)
            *error = tr("Cannot save the plot to %1: %2 × %3 pixels is not a valid size (each side must be 1 to %4).")
                         .arg(path)
                         .arg(qRound(width * scale))
                         .arg(qRound(height * scale))
                         .arg(kMaxExportSide);
        return false;
    }
    if (!m_plot->savePng(path, width, height, scale) || QFileInfo(path).size() == 0) {
        if (error)
            *error = tr("Cannot save the plot to %1: writing the PNG image failed (is the disk full?).").arg(path);
        return false;
    }
    return true;
}

bool PlotWidget::exportPdf(const QString& path, QString* error, int width, int height) {
    if (!checkTarget(path, error))
        return false;
    if (width <= 0 || height <= 0) {
        // A widget that was never laid out still has Qt's placeholder geometry; a PDF of that would be a thumbnail.
        const bool laidOut = testAttribute(Qt::WA_WState_Visible) || testAttribute(Qt::WA_Resized);
        const QSize size = laidOut && m_plot->width() >= 100 ? m_plot->size() : kDefaultExportSize;
        width = size.width();
        height = size.height();
    }
    if (!m_plot->savePdf(path, width, height, QCP::epNoCosmetic, QCoreApplication::applicationName(), title()) ||
        QFileInfo(path).size() == 0) {
        if (error)
            *error = tr("Cannot save the plot to %1: writing the PDF failed (is the disk full?).").arg(path);
        return false;
    }
    return true;
}

void PlotWidget::exportWithDialog(bool pdf) {
    const QString suffix = pdf ? QStringLiteral("pdf") : QStringLiteral("png");
    QString base = title().section(QLatin1Char('('), 0, 0).simplified();  // "Reliability (ECE = …)" -> "Reliability"
    base.replace(QRegularExpression(QStringLiteral("[^\\w-]+")), QStringLiteral("-"));
    if (base.isEmpty())
        base = QStringLiteral("plot");
    const QString dir = m_lastExportDir.isEmpty() ? QDir::homePath() : m_lastExportDir;
    QString path = QFileDialog::getSaveFileName(this, pdf ? tr("Export Plot as PDF") : tr("Export Plot as PNG"),
                                                dir + QLatin1Char('/') + base.toLower() + QLatin1Char('.') + suffix,
                                                pdf ? tr("PDF documents (*.pdf)") : tr("PNG images (*.png)"));
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += QLatin1Char('.') + suffix;
    m_lastExportDir = QFileInfo(path).absolutePath();
    QString error;
    // The PNG keeps the on-screen layout at twice the pixel density so that it stays sharp in documents and slides.
    const bool ok = pdf ? exportPdf(path, &error) : exportPng(path, m_plot->width(), m_plot->height(), &error, 2.0);
    if (!ok)
        QMessageBox::warning(this, tr("Export Failed"), error);
}

}  // namespace kerncast
