#pragma once
// The workbench's menu bar (File, Run, View, Help). Its actions call the main window's public slots; the two whose
// enabled state follows the run are handed back.

#include <QString>

class QAction;

namespace kerncast {

class MainWindow;
class RunControlPanel;
struct WorkbenchDocks;

struct MainMenus {
    QAction* evaluate = nullptr;   // File › Evaluate Pair Set (disabled while an evaluation runs)
    QAction* resumeRun = nullptr;  // Run › Resume Opened Run (enabled for an opened search with its configuration)
};
// The Open Run dialog's name filter: every extension a run file may have.
QString runFileNameFilter();
MainMenus createMainMenus(MainWindow* window, RunControlPanel* runControl, const WorkbenchDocks& docks,
                          const QString& resourcesDir);

}  // namespace kerncast
