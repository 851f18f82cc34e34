#include "widgets/population_model.h"

#include "widgets/engine_text.h"

#include <QFont>
#include <QIcon>
#include <QLocale>
#include <QPainter>
#include <QPixmap>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kerncast {

namespace {

// A marker that does not rest on colour alone: a pin head for pinned, a crossed circle for banned.
QIcon steeringIcon(PopulationModel::Steering steering) {
    QPixmap pixmap(14, 14);
    pixmap.fill(Qt::transparent);
    QPainter p(&pixmap);
    p.setRenderHint(QPainter::Antialiasing);
    if (steering == PopulationModel::Steering::Pinned) {
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(0x1f, 0x6f, 0xd1));
        p.drawEllipse(QRectF(2, 1, 10, 10));
        p.setPen(QPen(QColor(0x1f, 0x6f, 0xd1), 2));
        p.drawLine(QPointF(7, 10), QPointF(7, 14));
    } else {
        p.setPen(QPen(QColor(0xc6, 0x28, 0x28), 2));
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(QRectF(2, 2, 10, 10));
        p.drawLine(QPointF(4, 4), QPointF(10, 10));
    }
    return QIcon(pixmap);
}

}  // namespace

PopulationModel::PopulationModel(QObject* parent) : QAbstractTableModel(parent) {}

PopulationModel::PopulationModel(const BinScheme& scheme, QObject* parent)
    : QAbstractTableModel(parent), m_rows(scheme) {}

// The proxy asks for two indexes per comparison while sorting; this skips the virtual rowCount()/columnCount() calls
// that QAbstractTableModel::index() makes.
QModelIndex PopulationModel::index(int row, int column, const QModelIndex& parent) const {
    if (parent.isValid() || row < 0 || column < 0 || row >= static_cast<int>(m_rows.size()) || column >= columnCount())
        return {};
    return createIndex(row, column);
}

int PopulationModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int PopulationModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount + static_cast<int>(m_tunableNames.size());
}

QString PopulationModel::tunableOf(int column) const {
    const int i = column - ColumnCount;
    return i >= 0 && i < m_tunableNames.size() ? m_tunableNames[i] : QString();
}

void PopulationModel::addTunableColumns(const std::vector<CandidateRow>& rows, bool announce) {
    QStringList added;
    for (const CandidateRow& r : rows)
        for (const auto& [name, value] : r.tunables) {
            const QString n = QString::fromStdString(name);
            if (!m_tunableNames.contains(n) && !added.contains(n))
                added << n;
        }
    if (added.isEmpty())
        return;
    const int first = columnCount();
    if (announce)
        beginInsertColumns({}, first, first + static_cast<int>(added.size()) - 1);
    m_tunableNames << added;
    if (announce)
        endInsertColumns();
}

double PopulationModel::sortKeyOf(const CandidateRow& row, int column) const {
    if (column < ColumnCount)
        return sortKey(row, column);
    const auto it = row.tunables.find(tunableOf(column).toStdString());
    return it == row.tunables.end() ? std::numeric_limits<double>::infinity() : static_cast<double>(it->second);
}

QVariant PopulationModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    return cellData(index.row(), index.column(), role);
}

QVariant PopulationModel::cellData(int rowIndex, int column, int role) const {
    if (rowIndex < 0 || rowIndex >= static_cast<int>(m_rows.size()))
        return {};
    const CandidateRow& r = row(rowIndex);
    switch (role) {
    case CandidateIdRole:
        return static_cast<qlonglong>(r.id);
    case SortRole:
        return sortKeyOf(r, column);
    case StatusRole:
        return r.status;
    case ParentIdRole:
        return static_cast<qlonglong>(r.parent_id);
    case GenerationRole:
        return r.generation;
    case MeasuredSpeedupRole:
        return r.measured_speedup ? QVariant(*r.measured_speedup) : QVariant();
    case PredictedBinRole:
        return r.predicted_bin;
    case ConfidenceRole:
        return r.confidence;
    case SourceHashRole:
        return r.source_hash;
    case LabelRole:
        return r.label;
    case SteeringRole:
        return static_cast<int>(steering(r.id));
    case Qt::DecorationRole:
        if (column == IdColumn && steering(r.id) != Steering::None)
            return steeringIcon(steering(r.id));
        return {};
    case Qt::FontRole:
        if (steering(r.id) == Steering::None)
            return {};
        {
            QFont font;
            font.setBold(steering(r.id) == Steering::Pinned);
            font.setStrikeOut(steering(r.id) == Steering::Banned && column == IdColumn);
            return font;
        }
    case Qt::BackgroundRole: {
        const QColor c = statusBackground(r.status);
        return c.isValid() ? QVariant(c) : QVariant();
    }
    case Qt::ForegroundRole: {
        const QColor c = statusForeground(r.status);
        return c.isValid() ? QVariant(c) : QVariant();
    }
    case Qt::TextAlignmentRole:
        if (column == MutatorColumn || column == StatusColumn)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignLeft | Qt::AlignVCenter));
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::ToolTipRole:
        switch (column) {
        case IdColumn: {
            QString tip = EngineText::message(r.label);
            if (steering(r.id) == Steering::Pinned)
                tip += QLatin1Char('\n') + tr("Pinned as a parent: the search expands it first.");
            else if (steering(r.id) == Steering::Banned)
                tip += QLatin1Char('\n') + tr("Banned as a parent: the search never expands it.");
            return tip;
        }
        case StatusColumn: {
            QString tip = statusText(r.status);
            if (r.decision)
                tip += QLatin1Char('\n') + tr("Gating: %1").arg(decisionText(*r.decision));
            if (!r.reason.isEmpty())
                tip += QLatin1Char('\n') + EngineText::message(r.reason);
            return tip;
        }
        case ForecastColumn:
            return forecastToolTip(r);
        case RegistersColumn:
            return r.registers > 0 ? tr("%n byte(s) of spill traffic", nullptr, r.spills) : QVariant();
        }
        return {};
    case Qt::DisplayRole: {
        const QLocale locale;
        if (column >= ColumnCount) {
            const auto it = r.tunables.find(tunableOf(column).toStdString());
            return it == r.tunables.end() ? QVariant() : QVariant(static_cast<qlonglong>(it->second));
        }
        switch (column) {
        case IdColumn:
            return static_cast<qlonglong>(r.id);
        case GenerationColumn:
            return r.generation;
        case ParentColumn:
            return r.parent_id > 0 ? QVariant(static_cast<qlonglong>(r.parent_id)) : QVariant();
        case MutatorColumn:
            return mutatorText(r.mutator);
        case StatusColumn:
            return statusText(r.status);
        case ForecastColumn:
            if (!r.hasForecast())
                return {};
            return tr("bin %1 (%2%)").arg(r.predicted_bin).arg(locale.toString(r.confidence * 100, 'f', 0));
        case SpeedupColumn:
            if (!r.measured_speedup)
                return {};
            return tr("%1×").arg(locale.toString(*r.measured_speedup, 'f', 2));
        case TimeColumn:
            if (!r.time_us)
                return {};
            if (*r.time_us < 1000)
                return tr("%1 µs").arg(locale.toString(*r.time_us, 'f', 1));
            return tr("%1 ms").arg(locale.toString(*r.time_us / 1000, 'f', 2));
        case RegistersColumn:
            return r.registers > 0 ? QVariant(r.registers) : QVariant();
        case SharedMemoryColumn:
            return r.registers > 0 ? QVariant(locale.formattedDataSize(r.smem_bytes)) : QVariant();
        }
        return {};
    }
    }
    return {};
}

QString PopulationModel::forecastToolTip(const CandidateRow& r) const {
    if (!r.hasForecast())
        return tr("No forecast yet");
    const QLocale locale;
    return tr("Predicted bin %1 with probability %2%\nExpected speedup %3× %4")
        .arg(EngineText::binLabel(scheme(), r.predicted_bin))
        .arg(locale.toString(r.confidence * 100, 'f', 1))
        .arg(locale.toString(std::exp(r.expected_log_speedup), 'f', 2))
        .arg(anchorText(r.anchor_id));
}

QVariant PopulationModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal)
        return {};
    if (section >= ColumnCount) {
        if (role == Qt::DisplayRole)
            return tunableOf(section);
        if (role == Qt::ToolTipRole)
            return tr("Tunable %1 of the family configuration").arg(tunableOf(section));
        return {};
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case ForecastColumn:
            return tr("The surrogate's most likely speedup bin and its probability");
        case SpeedupColumn:
            return tr("Measured speedup over the reference");
        case TimeColumn:
            return tr("Median time of the candidate's kernels");
        case RegistersColumn:
            return tr("Registers per thread of the kernel that uses the most");
        case SharedMemoryColumn:
            return tr("Static shared memory of the kernel that uses the most");
        }
        return {};
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case IdColumn:
        return tr("Id");
    case GenerationColumn:
        return tr("Gen.");
    case ParentColumn:
        return tr("Parent");
    case MutatorColumn:
        return tr("Mutator");
    case StatusColumn:
        return tr("Status");
    case ForecastColumn:
        return tr("Forecast");
    case SpeedupColumn:
        return tr("Speedup");
    case TimeColumn:
        return tr("Time");
    case RegistersColumn:
        return tr("Registers");
    case SharedMemoryColumn:
        return tr("Shared memory");
    }
    return {};
}

void PopulationModel::setRows(std::vector<CandidateRow> rows) {
    beginResetModel();
    m_tunableNames.clear();
    addTunableColumns(rows, false);
    m_rows.assign(std::move(rows));
    endResetModel();
}

void PopulationModel::appendRows(std::vector<CandidateRow> rows) {
    // Rows are large and a batch can be 100k of them: they are moved once, into the table, and only split when some
    // are already listed.
    const bool anyKnown =
        std::any_of(rows.begin(), rows.end(), [this](const CandidateRow& r) { return rowOfId(r.id) >= 0; });
    if (!anyKnown) {
        insertRows(std::move(rows));
        return;
    }
    std::vector<CandidateRow> fresh;
    std::vector<CandidateRow> known;
    for (CandidateRow& r : rows)
        (rowOfId(r.id) >= 0 ? known : fresh).push_back(std::move(r));
    insertRows(std::move(fresh));
    updateRows(std::move(known));
}

void PopulationModel::updateRows(std::vector<CandidateRow> rows) {
    std::vector<int> changed;
    std::vector<CandidateRow> fresh;
    for (CandidateRow& r : rows) {
        if (rowOfId(r.id) >= 0)
            changed.push_back(m_rows.upsert(std::move(r)));
        else
            fresh.push_back(std::move(r));
    }
    announceChanged(std::move(changed));
    insertRows(std::move(fresh));
}

int PopulationModel::applyEvents(const std::vector<SearchEvent>& events) {
    std::vector<int> changed;
    CandidateRowSet fresh(scheme());
    for (const SearchEvent& e : events) {
        if (m_runId != 0 && e.run_id != m_runId)
            continue;
        const int64_t id = e.candidate_id != 0 ? e.candidate_id : (e.candidate ? e.candidate->id : 0);
        if (rowOfId(id) >= 0) {
            if (m_rows.applyToExisting(e))
                changed.push_back(rowOfId(id));
        } else {
            fresh.apply(e);
        }
    }
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    const int count = static_cast<int>(changed.size() + fresh.size());
    announceChanged(std::move(changed));
    insertRows(fresh.takeRows());
    return count;
}

void PopulationModel::clear() {
    m_steering.clear();
    setRows({});
}

void PopulationModel::setSteering(int64_t id, Steering steering) {
    if (steering == Steering::None)
        m_steering.remove(id);
    else
        m_steering.insert(id, steering);
    const QModelIndex index = indexOfId(id, IdColumn);
    if (index.isValid())
        Q_EMIT dataChanged(index, index.siblingAtColumn(columnCount() - 1));
}

QModelIndex PopulationModel::indexOfId(int64_t id, int column) const {
    const int r = rowOfId(id);
    return r < 0 ? QModelIndex() : index(r, column);
}

void PopulationModel::insertRows(std::vector<CandidateRow> rows) {
    // Ids repeated within the batch collapse into one row (the last one wins).
    QSet<int64_t> ids;
    ids.reserve(static_cast<qsizetype>(rows.size()));
    for (const CandidateRow& r : rows)
        ids.insert(r.id);
    if (ids.size() != static_cast<qsizetype>(rows.size())) {
        CandidateRowSet unique(scheme());
        for (CandidateRow& r : rows)
            unique.upsert(std::move(r));
        rows = unique.takeRows();
    }
    if (rows.empty())
        return;
    addTunableColumns(rows, true);
    const int first = static_cast<int>(m_rows.size());
    beginInsertRows({}, first, first + static_cast<int>(rows.size()) - 1);
    m_rows.appendNew(std::move(rows));
    endInsertRows();
}

void PopulationModel::announceChanged(std::vector<int> changedRows) {
    std::sort(changedRows.begin(), changedRows.end());
    changedRows.erase(std::unique(changedRows.begin(), changedRows.end()), changedRows.end());
    std::vector<std::pair<int, int>> ranges;
    for (size_t i = 0; i < changedRows.size();) {
        size_t j = i;
        while (j + 1 < changedRows.size() && changedRows[j + 1] == changedRows[j] + 1)
            ++j;
        ranges.emplace_back(changedRows[i], changedRows[j]);
        i = j + 1;
    }
    // A sorted proxy rebuilds its whole mapping for every dataChanged it hears; past a few dozen scattered ranges,
    // one signal over the span (which it re-sorts once) is cheaper than one per range.
    if (ranges.size() > kMaxChangedRanges)
        ranges = {{ranges.front().first, ranges.back().second}};
    for (const auto& [first, last] : ranges)
        Q_EMIT dataChanged(index(first, 0), index(last, ColumnCount - 1));
}

double PopulationModel::sortKey(const CandidateRow& r, int column) {
    switch (column) {
    case IdColumn:
        return static_cast<double>(r.id);
    case GenerationColumn:
        return r.generation;
    case ParentColumn:
        return static_cast<double>(r.parent_id);
    case MutatorColumn:
        return static_cast<double>(r.mutator);
    case StatusColumn:
        return candidateStatusStage(r.status);
    case ForecastColumn:
        // Bin first, then the probability (which is at most 1) within a bin.
        return r.hasForecast() ? 2.0 * r.predicted_bin + r.confidence : -1.0;
    case SpeedupColumn:
        return r.measured_speedup ? *r.measured_speedup : -1.0;
    case TimeColumn:
        return r.time_us ? *r.time_us : std::numeric_limits<double>::infinity();
    case RegistersColumn:
        return r.registers;
    case SharedMemoryColumn:
        return r.smem_bytes;
    }
    return 0;
}

bool PopulationModel::lessThan(int leftRow, int rightRow, int column) const {
    return sortKeyOf(row(leftRow), column) < sortKeyOf(row(rightRow), column);
}

QString PopulationModel::statusText(const QString& status) {
    static const char* const names[][2] = {
        {candidate_status::Proposed, QT_TR_NOOP("proposed")},
        {candidate_status::Forecast, QT_TR_NOOP("forecast")},
        {candidate_status::Trusted, QT_TR_NOOP("trusted")},
        {candidate_status::Discarded, QT_TR_NOOP("discarded")},
        {candidate_status::Queued, QT_TR_NOOP("queued")},
        {candidate_status::Measuring, QT_TR_NOOP("measuring")},
        {"ok", QT_TR_NOOP("ok")},
        {"suspect", QT_TR_NOOP("suspect")},
        {"compile_error", QT_TR_NOOP("compile error")},
        {"launch_error", QT_TR_NOOP("launch error")},
        {"incorrect", QT_TR_NOOP("incorrect")},
        {"timeout", QT_TR_NOOP("timeout")},
        {"crashed", QT_TR_NOOP("crashed")},
        {"not_recorded", QT_TR_NOOP("not recorded")},
    };
    for (const auto& n : names)
        if (status == QLatin1String(n[0]))
            return tr(n[1]);
    return status;  // a stage this build does not know yet: its stable name is still readable
}

QString PopulationModel::mutatorText(Mutator mutator) {
    switch (mutator) {
    case Mutator::Seed:
        return tr("seed");
    case Mutator::Reference:
        return tr("reference");
    case Mutator::Parametric:
        return tr("parametric");
    case Mutator::LlmRewrite:
        return tr("LLM rewrite");
    case Mutator::LlmDiff:
        return tr("LLM diff");
    case Mutator::Human:
        return tr("edited by hand");
    case Mutator::Imported:
        return tr("imported pair");
    }
    return {};
}

QString PopulationModel::decisionText(GatingDecision decision) {
    switch (decision) {
    case GatingDecision::Measure:
        return tr("measure");
    case GatingDecision::Trust:
        return tr("trust the forecast");
    case GatingDecision::Audit:
        return tr("audit (measure a trusted forecast)");
    case GatingDecision::Discard:
        return tr("discard");
    case GatingDecision::Forced:
        return tr("measurement requested by hand");
    }
    return {};
}

QColor PopulationModel::statusBackground(const QString& status) {
    if (status == QLatin1String("ok"))
        return QColor(0xe6, 0xf4, 0xea);
    if (status == QLatin1String("suspect"))
        return QColor(0xff, 0xf0, 0xd6);
    if (isFailureStatus(status))
        return QColor(0xfd, 0xec, 0xea);
    if (status == QLatin1String(candidate_status::Trusted))
        return QColor(0xe8, 0xf0, 0xfe);
    if (status == QLatin1String(candidate_status::Queued) || status == QLatin1String(candidate_status::Measuring))
        return QColor(0xff, 0xfb, 0xe6);
    return {};
}

QColor PopulationModel::statusForeground(const QString& status) {
    if (status == QLatin1String(candidate_status::Discarded) || status == QLatin1String("not_recorded"))
        return QColor(0x80, 0x80, 0x80);
    if (isFailureStatus(status))
        return QColor(0xb7, 0x1c, 0x1c);
    return {};
}

}  // namespace kerncast
