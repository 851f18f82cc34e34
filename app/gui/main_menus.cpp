#include "app/gui/main_menus.h"

#include "app/gui/evaluate_dialog.h"
#include "app/gui/export_kernel_dialog.h"
#include "app/gui/main_window.h"
#include "app/gui/run_control_panel.h"
#include "app/gui/window_layout.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>

namespace kerncast {

QString runFileNameFilter() {
    // .kerncast and .kcrun are the names the desktop entry registers; .sqlite is what searches write by default.
    return MainWindow::tr("Run files (*.kerncast *.kcrun *.sqlite *.db);;All files (*)");
}

MainMenus createMainMenus(MainWindow* window, RunControlPanel* runControl, const WorkbenchDocks& docks,
                          const QString& resourcesDir) {
    MainMenus menus;
    QMenuBar* bar = window->menuBar();
    auto* file = bar->addMenu(MainWindow::tr("&File"));
    auto* openRunAction = file->addAction(MainWindow::tr("Open &Run..."), window, [window] {
        const QString path = QFileDialog::getOpenFileName(
            window, MainWindow::tr("Open Run"), QFileInfo(window->shownRunPath()).absolutePath(), runFileNameFilter());
        if (!path.isEmpty())
            window->openRun(path);
    });
    openRunAction->setShortcut(QKeySequence::Open);
    // The run files opened or started here, the newest first.
    auto* recent = file->addMenu(MainWindow::tr("Open Re&cent"));
    recent->setObjectName(QStringLiteral("recentRunsMenu"));
    QObject::connect(recent, &QMenu::aboutToShow, window, [window, recent] {
        recent->clear();
        const QStringList runs = window->recentRuns();
        for (const QString& path : runs)
            recent->addAction(QFileInfo(path).fileName(), window, [window, path] { window->openRun(path); })
                ->setToolTip(path);
        if (runs.isEmpty())
            recent->addAction(MainWindow::tr("(no runs yet)"))->setEnabled(false);
    });
    menus.evaluate = file->addAction(MainWindow::tr("&Evaluate Pair Set..."), window, [window, runControl] {
        EvaluateDialog dialog(runControl->surrogate(), runControl->endpoint(), runControl->model(), window);
        if (dialog.exec() == QDialog::Accepted && !dialog.options().pairs.empty())
            window->evaluatePairs(dialog.options());
    });
    // The candidate on show as code a project can use, beside its sweep across sizes; with none, a kernel file of
    // the selected problem.
    file->addAction(
            MainWindow::tr("E&xport Kernel..."), window,
            [window] {
        if (window->selectedCandidate() == 0 || window->shownRunPath().isEmpty()) {
            ExportKernelDialog(KernelFileExport{window->selectedProblemDir(), {}, {}}, window).exec();
            return;
        }
        ExportKernelDialog(window->shownRunPath(), window->selectedCandidate(), window).exec();
            })
        ->setObjectName(QStringLiteral("exportKernelAction"));
    file->addSeparator();
    auto* open = file->addAction(MainWindow::tr("Open &Problem Folder..."), window, [window] {
        const QString dir = QFileDialog::getExistingDirectory(window, MainWindow::tr("Open Problem Folder"),
                                                              window->selectedProblemDir());
        if (!dir.isEmpty())
            window->openProblemFolder(dir);
    });
    open->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    file->addAction(
            MainWindow::tr("Open &T1 Problem..."), window,
            [window] {
        const QString path = QFileDialog::getOpenFileName(window, MainWindow::tr("Open T1 Problem"), QString(),
                                                          MainWindow::tr("T1 problem files (*.json);;All files (*)"));
        if (!path.isEmpty())
            window->openT1Problem(path);
            })
        ->setObjectName(QStringLiteral("openT1ProblemAction"));
    file->addSeparator();
    file->addAction(MainWindow::tr("&Quit"), window, &QWidget::close)->setShortcut(QKeySequence::Quit);

    auto* run = bar->addMenu(MainWindow::tr("&Run"));
    for (QAction* a :
         {runControl->startAction(), runControl->pauseAction(), runControl->stepAction(), runControl->stopAction()})
        run->addAction(a);
    run->addSeparator();
    menus.resumeRun =
        run->addAction(MainWindow::tr("&Resume Opened Run"), window, [window] { window->resumeOpenedRun(); });
    menus.resumeRun->setObjectName(QStringLiteral("resumeRunAction"));
    menus.resumeRun->setEnabled(false);
    menus.resumeRun->setToolTip(MainWindow::tr("Continue the opened search in its run file"));

    auto* view = bar->addMenu(MainWindow::tr("&View"));
    // Not F5 (QKeySequence::Refresh): that is Start Search, as in a debugger; two actions on one key trigger neither.
    auto* reloadProblems = view->addAction(MainWindow::tr("&Reload Problems"), window, &MainWindow::reloadProblems);
    reloadProblems->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    reloadProblems->setObjectName(QStringLiteral("reloadProblemsAction"));
    view->addAction(MainWindow::tr("Reload &Devices"), window, &MainWindow::reloadDevices);
    view->addAction(MainWindow::tr("Reset &Layout"), window, &MainWindow::resetLayout)
        ->setObjectName(QStringLiteral("resetLayoutAction"));
    view->addSeparator();
    for (QDockWidget* dock : {docks.run, docks.problems, docks.devices, docks.population, docks.inspector, docks.diff,
                              docks.details, docks.plots})
        view->addAction(dock->toggleViewAction());

    auto* help = bar->addMenu(MainWindow::tr("&Help"));
    help->addAction(MainWindow::tr("&About Kerncast"), window, [window, resourcesDir] {
        QMessageBox::about(
            window, MainWindow::tr("About Kerncast"),
            MainWindow::tr(
                "<h3>Kerncast %1</h3><p>A workbench for forecast-guided evolutionary search over CUDA kernels: a "
                "surrogate forecasts each candidate's speedup as a distribution over speedup bins, and only the "
                "candidates it is unsure about are measured on the GPU.</p><p>Resources: <code>%2</code></p>")
                .arg(QCoreApplication::applicationVersion(), resourcesDir.toHtmlEscaped()));
    });
    help->addAction(MainWindow::tr("About &Qt"), qApp, &QApplication::aboutQt);
    return menus;
}

}  // namespace kerncast
