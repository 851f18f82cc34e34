#include "app/gui/window_layout.h"

#include <QDockWidget>
#include <QGuiApplication>
#include <QMainWindow>
#include <QScreen>
#include <QSettings>

#include <algorithm>

namespace kerncast {

QSize initialWindowSize(const QRect& available) {
    // A laptop's 1280×720 must not leave the inspector, diff and plots off-screen.
    const QSize preferred(1680, 1050);
    if (available.width() >= preferred.width() + 40 && available.height() >= preferred.height() + 40)
        return preferred;
    return available.size().boundedTo(preferred);
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
    if (low) {
        window->tabifyDockWidget(d.run, d.problems);
        window->tabifyDockWidget(d.run, d.devices);
        d.run->raise();
    }
    if (narrow) {
        window->tabifyDockWidget(d.population, d.plots);
        d.population->raise();
    }
    window->resizeDocks({d.run, d.inspector}, {std::clamp(w * 27 / 100, 340, 400), std::clamp(w * 26 / 100, 320, 440)},
                        Qt::Horizontal);
    if (!low)
        window->resizeDocks({d.run, d.problems}, {h * 65 / 100, h * 30 / 100}, Qt::Vertical);
    window->resizeDocks({d.inspector, d.diff}, {h * 52 / 100, h * 44 / 100}, Qt::Vertical);
    if (!narrow)
        window->resizeDocks({d.population, d.plots}, {400, 460}, Qt::Horizontal);
    window->resizeDocks({d.population}, {h * 42 / 100}, Qt::Vertical);
}

}  // namespace kerncast
