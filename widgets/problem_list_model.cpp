#include "widgets/problem_list_model.h"

#include <QApplication>
#include <QLocale>
#include <QStyle>

namespace kerncast {

namespace {

int seedCount(const ProblemEntry& e) {
    int n = 0;
    for (const auto& p : e.programs)
        n += p.kind == ProgramEntry::Kind::Seed ? 1 : 0;
    return n;
}

QString errorSummary(const ProblemEntry& e) {
    QStringList lines;
    for (const auto& err : e.errors)
        lines << QString::fromStdString(err.what());
    return lines.join(QLatin1Char('\n'));
}

}  // namespace

ProblemListModel::ProblemListModel(QObject* parent) : QAbstractTableModel(parent) {}

int ProblemListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

int ProblemListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ProblemListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& e = m_entries[static_cast<size_t>(index.row())];
    const auto* family = e.family();

    switch (role) {
    case DirRole:
        return QString::fromStdString(e.dir);
    case NameRole:
        return QString::fromStdString(e.name);
    case DescriptionRole:
        return QString::fromStdString(e.description);
    case ErrorCountRole:
        return static_cast<int>(e.errors.size());
    case ValidRole:
        return e.valid();
    case SortRole:
        switch (index.column()) {
        case NameColumn:
            return QString::fromStdString(e.name).toLower();
        case ProgramsColumn:
            return seedCount(e);
        case ConfigurationsColumn:
            return family ? static_cast<qlonglong>(family->configurations) : qlonglong(-2);
        case StatusColumn:
            return static_cast<int>(e.errors.size());
        }
        return {};
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return QString::fromStdString(e.name);
        case ProgramsColumn:
            return seedCount(e);
        case ConfigurationsColumn:
            if (!family)
                return tr("no family");
            if (family->configurations < 0)
                return tr("unparsed");
            return QLocale().toString(static_cast<qlonglong>(family->configurations));
        case StatusColumn:
            if (e.valid())
                return tr("valid");
            return e.errors.size() == 1 ? tr("1 error") : tr("%1 errors").arg(e.errors.size());
        }
        return {};
    case Qt::ToolTipRole:
        if (!e.valid())
            return errorSummary(e);
        return e.description.empty() ? QString::fromStdString(e.dir) : QString::fromStdString(e.description);
    case Qt::DecorationRole:
        if (index.column() == StatusColumn && qApp)
            return qApp->style()->standardIcon(e.valid() ? QStyle::SP_DialogApplyButton : QStyle::SP_MessageBoxWarning);
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == ProgramsColumn || index.column() == ConfigurationsColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    }
    return {};
}

QVariant ProblemListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == ConfigurationsColumn)
        return tr("Valid tunable configurations of the problem's family.cu");
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case NameColumn:
        return tr("Problem");
    case ProgramsColumn:
        return tr("Seeds");
    case ConfigurationsColumn:
        return tr("Family");
    case StatusColumn:
        return tr("Status");
    }
    return {};
}

void ProblemListModel::setEntries(std::vector<ProblemEntry> entries) {
    beginResetModel();
    m_entries = std::move(entries);
    endResetModel();
}

int ProblemListModel::addOrReplace(ProblemEntry entry) {
    const int existing = rowOfDir(QString::fromStdString(entry.dir));
    if (existing >= 0) {
        m_entries[static_cast<size_t>(existing)] = std::move(entry);
        Q_EMIT dataChanged(index(existing, 0), index(existing, ColumnCount - 1));
        return existing;
    }
    const int row = rowCount();
    beginInsertRows({}, row, row);
    m_entries.push_back(std::move(entry));
    endInsertRows();
    return row;
}

void ProblemListModel::clear() { setEntries({}); }

const ProblemEntry* ProblemListModel::entry(int row) const {
    if (row < 0 || row >= rowCount())
        return nullptr;
    return &m_entries[static_cast<size_t>(row)];
}

int ProblemListModel::rowOfDir(const QString& dir) const {
    const auto wanted = dir.toStdString();
    for (size_t i = 0; i < m_entries.size(); ++i)
        if (m_entries[i].dir == wanted)
            return static_cast<int>(i);
    return -1;
}

}  // namespace kerncast
