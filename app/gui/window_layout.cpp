#include "app/gui/window_layout.h"

#include <QDockWidget>
#include <QGuiApplication>
#include <QMainWindow>
#include <QScreen>
#include <QSettings>

#include <algorithm>

namespace kerncast {

QSize initialWindowSize(const QRect& available) {
    // A workbench with eight docks uses the screen it is given: a 1920×1080 screen shows the population's columns
    // beside the plots, and a laptop's 1280×720 does not leave the inspector, diff and plots off-screen.
    return available.size();
}

QDockWidget* makeDock(QMainWindow* window, const QString& title, const QString& objectName, QWidget* widget) {
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName(objectName);
    dock->setWidget(widget);
    return dock;
}

bool restoreWindow(QMainWindow* window, const QSettings& settings) {
    if (!window->restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
        placeOnScreen(window);
    return window->restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

void saveWindow(const QMainWindow* window, QSettings& settings) {
    settings.setValue(QStringLiteral("window/geometry"), window->saveGeometry());
    settings.setValue(QStringLiteral("window/state"), window->saveState());
}

void placeOnScreen(QMainWindow* window) {
    const QScreen* s = window->screen() ? window->screen() : QGuiApplication::primaryScreen();
    const bool offscreen = QGuiApplication::platformName() == QLatin1String("offscreen");
    const QRect available = s && !offscreen ? s->availableGeometry() : QRect(0, 0, 1920, 1200);
    const QSize size = initialWindowSize(available);
    window->resize(size);
    window->move(available.topLeft() +
                 QPoint((available.width() - size.width()) / 2, (available.height() - size.height()) / 2));
}

void addWorkbenchDocks(QMainWindow* window, const WorkbenchDocks& d) {
    window->setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    window->setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    window->addDockWidget(Qt::LeftDockWidgetArea, d.run);
    window->addDockWidget(Qt::LeftDockWidgetArea, d.problems);
    window->tabifyDockWidget(d.problems, d.devices);
    d.problems->raise();
    window->addDockWidget(Qt::RightDockWidgetArea, d.inspector);
    window->addDockWidget(Qt::RightDockWidgetArea, d.diff);
    window->tabifyDockWidget(d.diff, d.details);
    d.diff->raise();
    window->addDockWidget(Qt::BottomDockWidgetArea, d.population);
    window->addDockWidget(Qt::BottomDockWidgetArea, d.plots);
    window->splitDockWidget(d.population, d.plots, Qt::Horizontal);
}

void applyDefaultDockLayout(QMainWindow* window, const WorkbenchDocks& d) {
    const int w = window->width();
    const int h = window->height();
    const bool narrow = w < kCompactLayoutWidth;
    const bool low = h < kCompactLayoutHeight;
    // On a wide window the population and the plots run under the inspector too: every column of the table is in
    // view beside a plot of readable size.
    const bool wide = w >= kWideLayoutWidth;
    window->setCorner(Qt::BottomRightCorner, wide ? Qt::BottomDockWidgetArea : Qt::RightDockWidgetArea);
    if (low) {
        window->tabifyDockWidget(d.run, d.problems);
        window->tabifyDockWidget(d.run, d.devices);
        d.run->raise();
    }
    if (narrow) {
        window->tabifyDockWidget(d.population, d.plots);
        d.population->raise();
    }
    const int runWidth = std::clamp(w * 27 / 100, 340, 400);
    const int inspectorWidth = std::clamp(w * 26 / 100, 320, 440);
    window->resizeDocks({d.run, d.inspector}, {runWidth, inspectorWidth}, Qt::Horizontal);
    if (!low)
        window->resizeDocks({d.run, d.problems}, {h * 65 / 100, h * 30 / 100}, Qt::Vertical);
    // On a wide window the inspector and the diff share what the population leaves of the height (the diff's header
    // takes two lines on a dock this narrow; the inspector's forecast tab shrinks its bars first).
    if (wide)
        window->resizeDocks({d.inspector, d.diff}, {h * 35 / 100, h * 25 / 100}, Qt::Vertical);
    else
        window->resizeDocks({d.inspector, d.diff}, {h * 52 / 100, h * 44 / 100}, Qt::Vertical);
    // The population gets the larger share: its ten columns are what a person reads most.
    if (!narrow) {
        const int bottom = std::max(600, w - runWidth - (wide ? 0 : inspectorWidth));
        const int population = wide ? 62 : 56;
        window->resizeDocks({d.population, d.plots}, {bottom * population / 100, bottom * (100 - population) / 100},
                            Qt::Horizontal);
    }
    window->resizeDocks({d.population}, {h * (wide ? 38 : 42) / 100}, Qt::Vertical);
}

}  // namespace kerncast
