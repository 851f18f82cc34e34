#include "app/gui/problem_browser.h"

#include "widgets/problem_list_model.h"

#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <filesystem>

namespace kerncast {

LibraryLoad loadLibrary(const std::string& problemsRoot, const std::vector<std::string>& extraFolders) {
    LibraryLoad load;
    auto add = [&](const std::string& root) {
        try {
            for (auto& e : read_problem_entries(root)) {
                const bool known = std::any_of(load.entries.begin(), load.entries.end(),
                                               [&](const ProblemEntry& k) { return k.dir == e.dir; });
                if (!known)
                    load.entries.push_back(std::move(e));
            }
        } catch (const std::exception& ex) {
            load.failures.push_back(root + ": " + ex.what());
        }
    };
    if (std::filesystem::is_directory(problemsRoot))
        add(problemsRoot);
    else
        load.failures.push_back(problemsRoot + ": no such folder");
    for (const auto& f : extraFolders)
        add(f);
    return load;
}

ProblemBrowser::ProblemBrowser(QString resourcesDir, QWidget* parent)
    : QWidget(parent), m_resourcesDir(std::move(resourcesDir)) {
    m_problems = new ProblemListModel(this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    m_filter = new QLineEdit(this);
    m_filter->setPlaceholderText(tr("Filter problems"));
    m_filter->setClearButtonEnabled(true);
    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_problems);
    m_proxy->setSortRole(ProblemListModel::SortRole);
    m_proxy->setFilterKeyColumn(ProblemListModel::NameColumn);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    m_view = new QTreeView(this);
    m_view->setObjectName(QStringLiteral("problemView"));
    m_view->setModel(m_proxy);
    m_view->setRootIsDecorated(false);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(ProblemListModel::NameColumn, Qt::AscendingOrder);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->header()->setStretchLastSection(false);
    m_view->header()->setSectionResizeMode(ProblemListModel::NameColumn, QHeaderView::Stretch);
    for (int c = ProblemListModel::ProgramsColumn; c < ProblemListModel::ColumnCount; ++c)
        m_view->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    layout->addWidget(m_filter);
    layout->addWidget(m_view, 1);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
        const auto source = m_proxy->mapToSource(current);
        show(source.isValid() ? m_problems->entry(source.row()) : nullptr);
    });
}

void ProblemBrowser::reload() {
    if (m_pendingSelection.isEmpty())
        m_pendingSelection = selectedDir();
    // Captured by value: the job never touches the window.
    const std::string root = QDir(m_resourcesDir).filePath(QStringLiteral("problems")).toStdString();
    std::vector<std::string> extra;
    for (const auto& f : m_openedFolders)
        extra.push_back(f.toStdString());
    Q_EMIT loadStarted(QString::fromStdString(root));
    m_load.start([root, extra] { return loadLibrary(root, extra); },
                 [this](LibraryLoad load) {
        const int count = static_cast<int>(load.entries.size());
        m_problems->setEntries(std::move(load.entries));
        int invalid = 0;
        for (int r = 0; r < m_problems->rowCount(); ++r)
            invalid += m_problems->entry(r)->valid() ? 0 : 1;
        QString message = invalid ? tr("%1 problems loaded, %2 with errors").arg(count).arg(invalid)
                                  : tr("%1 problems loaded").arg(count);
        if (!load.failures.empty())
            message += QStringLiteral(" — ") + QString::fromStdString(load.failures.front());
        const QString wanted = std::exchange(m_pendingSelection, QString());
        if (wanted.isEmpty() || !selectProblem(wanted)) {
            if (m_proxy->rowCount() > 0)
                m_view->setCurrentIndex(m_proxy->index(0, 0));
            else
                show(nullptr);
        }
        m_loaded = true;
        Q_EMIT loaded(count, message);
    });
}

void ProblemBrowser::openFolder(const QString& dir) {
    const QString clean = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
    const QString library = QDir::cleanPath(QDir(m_resourcesDir).absoluteFilePath(QStringLiteral("problems")));
    if (!clean.startsWith(library + QLatin1Char('/')) && !m_openedFolders.contains(clean))
        m_openedFolders << clean;
    m_pendingSelection = clean;
    reload();
}

bool ProblemBrowser::selectProblem(const QString& nameOrDir) {
    for (int r = 0; r < m_problems->rowCount(); ++r) {
        const auto index = m_problems->index(r, 0);
        if (index.data(ProblemListModel::DirRole).toString() == nameOrDir ||
            index.data(ProblemListModel::NameRole).toString() == nameOrDir) {
            const auto proxied = m_proxy->mapFromSource(index);
            if (!proxied.isValid())
                return false;  // filtered out
            m_view->setCurrentIndex(proxied);
            m_view->scrollTo(proxied);
            return true;
        }
    }
    return false;
}

const ProblemEntry* ProblemBrowser::selectedEntry() const {
    return m_problems->entry(m_problems->rowOfDir(selectedDir()));
}

void ProblemBrowser::show(const ProblemEntry* entry) {
    m_shownDir = entry ? entry->dir : std::string();
    Q_EMIT problemShown(entry);
}

void ProblemBrowser::readSettings(const QSettings& settings) {
    setOpenedFolders(settings.value(QStringLiteral("problems/opened")).toStringList());
    setPendingSelection(settings.value(QStringLiteral("problems/selected")).toString());
}

void ProblemBrowser::writeSettings(QSettings& settings) const {
    settings.setValue(QStringLiteral("problems/opened"), openedFolders());
    settings.setValue(QStringLiteral("problems/selected"), selectedDir());
}

}  // namespace kerncast
