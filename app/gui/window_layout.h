#pragma once
// Where the workbench window opens and how its docks are first laid out: the screen's free area; on a window smaller
// than 1500×900 docks are stacked as tabs so that every one stays usable (problems and devices beside run control, the
// plots beside the population). A saved layout replaces all of this.

#include <QRect>
#include <QSize>
#include <QString>

class QDockWidget;
class QMainWindow;
class QSettings;
class QWidget;

namespace kerncast {

// Below this window size the first layout stacks docks as tabs.
inline constexpr int kCompactLayoutWidth = 1500;
inline constexpr int kCompactLayoutHeight = 900;
// From this width on the population and the plots span the window's width under the editor and the inspector.
inline constexpr int kWideLayoutWidth = 1800;

// The size of a window without a saved geometry on a screen with this available area.
QSize initialWindowSize(const QRect& available);
// Resizes and centres the window on its screen (the offscreen platform's screen stands for none: full size there).
void placeOnScreen(QMainWindow* window);
// The saved geometry (else placeOnScreen) and dock layout; false when there was no saved layout to restore, so the
// default one applies once the window is shown.
bool restoreWindow(QMainWindow* window, const QSettings& settings);
void saveWindow(const QMainWindow* window, QSettings& settings);

// A dock holding `widget`; objectName keys its place in the saved layout.
QDockWidget* makeDock(QMainWindow* window, const QString& title, const QString& objectName, QWidget* widget);

struct WorkbenchDocks {
    QDockWidget* run;
    QDockWidget* problems;
    QDockWidget* devices;
    QDockWidget* population;
    QDockWidget* inspector;
    QDockWidget* diff;
    QDockWidget* details;
    QDockWidget* plots;
};
// Adds the docks where they belong: run control and problems/devices on the left, full height; the inspector with
// diff and details on the right; the population and the plots under the editor.
void addWorkbenchDocks(QMainWindow* window, const WorkbenchDocks& docks);
// Sizes them for the window as it is now (call once it is laid out), stacking as tabs on a small window.
void applyDefaultDockLayout(QMainWindow* window, const WorkbenchDocks& docks);

}  // namespace kerncast
