#include "app/gui/population_panel.h"

#include "app/gui/engine_bridge.h"
#include "widgets/lineage_graph.h"
#include "widgets/lineage_model.h"
#include "widgets/population_filter_proxy.h"
#include "widgets/population_model.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QMenu>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace kerncast {

PopulationPanel::PopulationPanel(QWidget* parent) : QWidget(parent) {
    m_population = new PopulationModel(this);
    m_proxy = new PopulationFilterProxy(this);
    m_proxy->setSourceModel(m_population);
    m_lineage = new LineageModel(this);
    m_lineage->setPopulation(m_population);
    m_resort = new QTimer(this);
    m_resort->setSingleShot(true);
    m_resort->setInterval(kLargeResortMs);
    connect(m_resort, &QTimer::timeout, this, [this] { m_proxy->sort(m_proxy->sortColumn(), m_proxy->sortOrder()); });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("populationFilter"));
    m_filter->setPlaceholderText(tr("Filter by id, label, mutator, status or hash"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &PopulationFilterProxy::setTextFilter);
    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    m_table = new QTableView(m_tabs);
    m_table->setObjectName(QStringLiteral("populationView"));
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    // A leaderboard: the fastest measured candidates first (unmeasured ones sort last).
    m_table->sortByColumn(PopulationModel::SpeedupColumn, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);
    // Fixed widths: sizing columns to their contents would scan every row of a large run.
    const int digit = m_table->fontMetrics().horizontalAdvance(QLatin1Char('0'));
    const std::pair<int, int> widths[] = {
        {PopulationModel::IdColumn, 6},        {PopulationModel::GenerationColumn, 4},
        {PopulationModel::ParentColumn, 6},    {PopulationModel::MutatorColumn, 11},
        {PopulationModel::StatusColumn, 11},   {PopulationModel::ForecastColumn, 14},
        {PopulationModel::SpeedupColumn, 8},   {PopulationModel::TimeColumn, 9},
        {PopulationModel::RegistersColumn, 6}, {PopulationModel::SharedMemoryColumn, 9}};
    // Wide enough for the header too: a translated title may be longer than the column's values.
    const QFontMetrics headerMetrics(m_table->horizontalHeader()->font());
    for (const auto& [column, chars] : widths) {
        const QString title = m_population->headerData(column, Qt::Horizontal).toString();
        m_table->setColumnWidth(column, std::max(digit * chars + 12, headerMetrics.horizontalAdvance(title) + 24));
    }
    // What a narrow dock should show first: the outcome and the forecast, then the lineage.
    auto* header = m_table->horizontalHeader();
    header->setSectionsMovable(true);
    for (int column : {PopulationModel::StatusColumn, PopulationModel::SpeedupColumn, PopulationModel::ForecastColumn})
        header->moveSection(header->visualIndex(column), header->visualIndex(PopulationModel::GenerationColumn));
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    m_lineageView = new QTreeView(m_tabs);
    m_lineageView->setObjectName(QStringLiteral("lineageView"));
    m_lineageView->setModel(m_lineage);
    m_lineageView->setUniformRowHeights(true);
    m_lineageView->setAlternatingRowColors(true);
    m_lineageGraph = new LineageGraph(m_tabs);
    m_lineageGraph->setPopulation(m_population);
    m_tabs->addTab(m_table, tr("Table"));
    m_tabs->addTab(m_lineageView, tr("Lineage"));
    m_tabs->addTab(m_lineageGraph, tr("Lineage Graph"));
    layout->addWidget(m_filter);
    layout->addWidget(m_tabs, 1);

    for (QAbstractItemView* view : std::initializer_list<QAbstractItemView*>{m_table, m_lineageView})
        connect(view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
                [this](const QModelIndex& current) {
            if (!m_selecting && current.isValid())
                Q_EMIT candidateClicked(current.data(PopulationModel::CandidateIdRole).toLongLong());
        });
    // A node picked in the graph is made current in the table and the tree too, as a row picked there is in the graph.
    connect(m_lineageGraph, &LineageGraph::candidateClicked, this, [this](qint64 id) {
        if (m_selecting)
            return;
        showCurrent(id);
        Q_EMIT candidateClicked(id);
    });
    connect(m_table, &QWidget::customContextMenuRequested, this, &PopulationPanel::showContextMenu);
}

void PopulationPanel::showContextMenu(const QPoint& pos) {
    const QModelIndex index = m_table->indexAt(pos);
    if (!index.isValid())
        return;
    QMenu menu(this);
    fillContextMenu(menu, index);
    menu.exec(m_table->viewport()->mapToGlobal(pos));
}

void PopulationPanel::fillContextMenu(QMenu& menu, const QModelIndex& index) {
    const qint64 id = index.data(PopulationModel::CandidateIdRole).toLongLong();
    using Steering = PopulationModel::Steering;
    const Steering steering = m_population->steering(id);
    auto* pin = menu.addAction(steering == Steering::Pinned ? tr("Unpin as Parent") : tr("Pin as Parent"), this,
                               [this, id, steering] {
        steer(id, static_cast<int>(steering == Steering::Pinned ? Steering::None : Steering::Pinned));
    });
    pin->setObjectName(QStringLiteral("pinAction"));
    pin->setEnabled(m_steerable);
    auto* ban = menu.addAction(steering == Steering::Banned ? tr("Unban as Parent") : tr("Ban as Parent"), this,
                               [this, id, steering] {
        steer(id, static_cast<int>(steering == Steering::Banned ? Steering::None : Steering::Banned));
    });
    ban->setObjectName(QStringLiteral("banAction"));
    ban->setEnabled(m_steerable);
    auto* compare = menu.addAction(m_shown && m_shown != id ? tr("Compare with #%1").arg(m_shown)
                                                            : tr("Compare with the Shown Candidate"),
                                   this, [this, id] { Q_EMIT compareRequested(id); });
    compare->setObjectName(QStringLiteral("compareAction"));
    compare->setEnabled(m_shown && m_shown != id);
    menu.addAction(tr("Measure on the Device"), this, [this, id] { Q_EMIT measureRequested(id); })
        ->setEnabled(
            m_steerable &&
            !index.siblingAtColumn(PopulationModel::StatusColumn).data(PopulationModel::MeasuredSpeedupRole).isValid());
    const bool suspect = index.data(PopulationModel::StatusRole).toString() == QLatin1String("suspect");
    for (const bool accept : {true, false})
        menu.addAction(accept ? tr("Accept Suspect Result") : tr("Reject Suspect Result"), this,
                       [this, id, accept] { Q_EMIT reviewRequested(id, accept); })
            ->setEnabled(suspect && m_reviewable);
}

void PopulationPanel::steer(qint64 id, int steering) {
    using Steering = PopulationModel::Steering;
    const Steering before = m_population->steering(id);
    const auto after = static_cast<Steering>(steering);
    if (before == after)
        return;
    if (before == Steering::Pinned)
        Q_EMIT unpinRequested(id);
    else if (before == Steering::Banned)
        Q_EMIT unbanRequested(id);
    if (after == Steering::Pinned)
        Q_EMIT pinRequested(id);
    else if (after == Steering::Banned)
        Q_EMIT banRequested(id);
    m_population->setSteering(id, after);
    Q_EMIT message(
        after == Steering::Pinned    ? tr("Candidate #%1 pinned as a parent: the search expands it first").arg(id)
        : after == Steering::Banned  ? tr("Candidate #%1 banned as a parent: the search never expands it").arg(id)
        : before == Steering::Pinned ? tr("Candidate #%1 unpinned: the search chooses its parents again").arg(id)
                                     : tr("Candidate #%1 unbanned: it can be a parent again").arg(id),
        8000);
}

void PopulationPanel::clear() {
    m_resort->stop();
    m_proxy->setDynamicSortFilter(true);
    m_population->clear();
    m_population->setRunId(0);
}

bool PopulationPanel::isLarge() const { return m_population->rowCount() > kLiveSortLimit; }

void PopulationPanel::applyEvents(const std::vector<SearchEvent>& events) {
    m_population->applyEvents(events);
    // A sorted proxy re-sorts a large table on every change it hears; past a size the table keeps its order while
    // the events stream in and is re-sorted every few seconds instead.
    const bool large = isLarge();
    if (m_proxy->dynamicSortFilter() == large)
        m_proxy->setDynamicSortFilter(!large);
    if (large && !m_resort->isActive())
        m_resort->start();
}

bool PopulationPanel::showCurrent(qint64 candidateId) {
    const QModelIndex source = m_population->indexOfId(candidateId);
    if (!source.isValid())
        return false;
    m_selecting = true;
    const QModelIndex proxied = m_proxy->mapFromSource(source);
    if (proxied.isValid()) {
        m_table->setCurrentIndex(proxied);
        m_table->scrollTo(proxied);
    }
    const QModelIndex tree = m_lineage->indexOfId(candidateId);
    if (tree.isValid())
        m_lineageView->setCurrentIndex(tree);
    m_lineageGraph->setSelected(candidateId);
    m_selecting = false;
    return true;
}

void PopulationPanel::bindTo(EngineBridge* bridge) {
    connect(this, &PopulationPanel::pinRequested, bridge, &EngineBridge::pin);
    connect(this, &PopulationPanel::banRequested, bridge, &EngineBridge::ban);
    connect(this, &PopulationPanel::unpinRequested, bridge, &EngineBridge::unpin);
    connect(this, &PopulationPanel::unbanRequested, bridge, &EngineBridge::unban);
    connect(this, &PopulationPanel::measureRequested, bridge, &EngineBridge::forceMeasure);
}

}  // namespace kerncast
