#pragma once
// The Problems dock: the problem library (resources/problems plus folders opened by hand) with a filter. Loads run
// off the GUI thread; a newer reload makes an older one's result stale. The selected problem is announced with
// problemShown(); the window shows its programs and details.

#include "app/gui/latest_result.h"
#include "widgets/problem_entry.h"

#include <QStringList>
#include <QWidget>

#include <string>
#include <vector>

class QLineEdit;
class QSettings;
class QSortFilterProxyModel;
class QTreeView;

namespace kerncast {

class ProblemListModel;

// What a library load hands back to the GUI thread: plain values only.
struct LibraryLoad {
    std::vector<ProblemEntry> entries;
    std::vector<std::string> failures;  // folders that could not be listed at all
};
LibraryLoad loadLibrary(const std::string& problemsRoot, const std::vector<std::string>& extraFolders);

class ProblemBrowser : public QWidget {
    Q_OBJECT
public:
    ProblemBrowser(QString resourcesDir, QWidget* parent = nullptr);

    ProblemListModel* model() const { return m_problems; }
    QTreeView* view() const { return m_view; }

    // Reloads the library in the background; loaded() follows (unless a newer reload started).
    void reload();
    // Adds a problem folder (or a folder of problem folders) and selects what it holds once loaded.
    void openFolder(const QString& dir);
    bool selectProblem(const QString& nameOrDir);
    QString selectedDir() const { return QString::fromStdString(m_shownDir); }
    const ProblemEntry* selectedEntry() const;
    bool isLoaded() const { return m_loaded; }

    // Kept in the settings: folders outside the library, and what to select after the first load.
    QStringList openedFolders() const { return m_openedFolders; }
    // The opened folders and the selected problem, kept across sessions.
    void readSettings(const QSettings& settings);
    void writeSettings(QSettings& settings) const;
    void setOpenedFolders(const QStringList& folders) { m_openedFolders = folders; }
    void setPendingSelection(const QString& dir) { m_pendingSelection = dir; }

Q_SIGNALS:
    void loadStarted(const QString& root);
    // count problems, `message` for the status bar ("12 problems loaded, 1 with errors").
    void loaded(int count, const QString& message);
    // The selected problem changed (nullptr: none).
    void problemShown(const kerncast::ProblemEntry* entry);

private:
    void show(const ProblemEntry* entry);

    QString m_resourcesDir;
    ProblemListModel* m_problems = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QTreeView* m_view = nullptr;
    QLineEdit* m_filter = nullptr;
    QStringList m_openedFolders;  // outside the library, kept across reloads
    QString m_pendingSelection;   // folder to select when the running load finishes
    std::string m_shownDir;
    bool m_loaded = false;
    LatestResult<LibraryLoad> m_load{this};
};

}  // namespace kerncast
