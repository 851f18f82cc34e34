#pragma once
// The base of every plot in the workbench and the one class that owns a QCustomPlot: common styling, a title, axis
// labels, a "no data yet" placeholder, PNG/PDF export (also from the context menu) and optional zoom and drag.
// Derived plots set whole arrays and call replot(), which redraws now and repaints on the next event-loop pass.

#include <QColor>
#include <QString>
#include <QWidget>

class QAction;
class QCPAxisRect;
class QCPItemText;
class QCPLegend;
class QCPTextElement;
class QCustomPlot;
class QMenu;

namespace kerncast {

class PlotWidget : public QWidget {
    Q_OBJECT
public:
    explicit PlotWidget(QWidget* parent = nullptr);
    ~PlotWidget() override;

    // Derived plots put their figures in the title ("ECE = 0.043"): a title set from outside lasts until their next
    // update.
    void setTitle(const QString& title);
    QString title() const;
    void setAxisLabels(const QString& xLabel, const QString& yLabel);

    // Shown in the middle of the plot while it has no data ("No data yet" unless changed).
    void setPlaceholderText(const QString& text);
    QString placeholderText() const;
    bool isPlaceholderVisible() const;

    // Writes the plot as a PNG laid out at width x height; scale multiplies the pixel density (2: a sharp image of
    // the same layout at twice the pixels). On failure returns false and, when error is given, says why in words a
    // user can act on (missing folder, read-only folder, invalid size, encoder failure).
    bool exportPng(const QString& path, int width, int height, QString* error = nullptr, double scale = 1.0);
    // Writes the plot as a vector PDF, by default at the widget's size (800 x 600 when it has not been laid out).
    bool exportPdf(const QString& path, QString* error = nullptr, int width = 0, int height = 0);

    // The context menu: Export as PNG…, Export as PDF… and, for zoomable plots, Reset View. The caller owns it.
    QMenu* createContextMenu();

    // The wrapped plot, for the plot classes and their tests.
    QCustomPlot* customPlot() const { return m_plot; }
    // An axis label too long for its axis ends in "…": the whole label is the tooltip over its side of the plot
    // (left of the axis rect for the y axis, below it for the x axis). Empty where no label was cut.
    QString axisLabelToolTipAt(const QPoint& plotPos) const;
    bool eventFilter(QObject* watched, QEvent* event) override;

    QSize sizeHint() const override { return {520, 380}; }
    QSize minimumSizeHint() const override { return {240, 180}; }

public Q_SLOTS:
    // Back to the full extent of the data (what double-click does on a zoomable plot).
    void resetView();

protected:
    // The title without a replot, for derived plots that replot right after.
    void setTitleText(const QString& title);
    // Derived plots say whether they have data; the placeholder shows while they do not.
    void setHasData(bool hasData);
    // Redraws into the plot's buffer now and repaints the widget on the next event-loop pass (rpQueuedRefresh).
    void replot();
    // Drag and wheel zoom on both axes of the main axis rect, double-click calls resetView().
    void setZoomable(bool zoomable);
    // The axis ranges that show all data; called by resetView().
    virtual void fitView() {}
    // Fits the view to new data unless the user has zoomed or dragged since the last reset (new points must not
    // yank away the region someone is looking at).
    void fitViewUnlessMoved();

    QCPAxisRect* mainAxisRect() const;
    // Applies the common look to an axis rect a derived plot adds (fonts, grid, pens).
    static void styleAxisRect(QCPAxisRect* rect);
    // Puts the legend inside the main axis rect at the given corner (Qt::AlignTop | Qt::AlignLeft etc.).
    void showLegend(Qt::Alignment corner);
    // The legend in a row of its own under the plot, its entries side by side: it never covers data.
    void showLegendBelow();
    // Keeps the tick labels of the main axis rect's bottom and left axes apart: before each replot their tick
    // counts follow the axis lengths (about one label per `pixelsPerTick`), at least 3, at most maxTicks.
    void spaceTicksByLength(int pixelsPerTickX, int pixelsPerTickY, int maxTicks);

    // Colours shared by the plots, so that "forecast", "measured" and "reference" look the same everywhere.
    static QColor forecastColor();
    static QColor measuredColor();
    static QColor referenceColor();
    static QColor mutedColor();

private:
    void exportWithDialog(bool pdf);
    bool checkTarget(const QString& path, QString* error) const;
    // Before each replot: an axis label longer than its axis ("Gemessene Beschleunigung gegenüber demselben Anker"
    // on a short y axis) is broken onto two lines, so that it is read whole instead of running off the plot.
    void fitAxisLabels();

    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPItemText* m_placeholder = nullptr;
    QAction* m_exportPngAction = nullptr;
    QAction* m_exportPdfAction = nullptr;
    QAction* m_resetViewAction = nullptr;
    QString m_lastExportDir;
    QString m_xLabel;  // the main axis rect's labels as set, and as fitAxisLabels shows them
    QString m_yLabel;
    QString m_xShown;
    QString m_yShown;
    bool m_zoomable = false;
    bool m_viewMovedByUser = false;
};

}  // namespace kerncast
