#include "widgets/pool_view.h"

#include "widgets/pool_model.h"

#include <QHeaderView>
#include <QLabel>
#include <QTreeView>
#include <QVBoxLayout>

namespace kerncast {

PoolView::PoolView(QWidget* parent) : QWidget(parent), m_model(new PoolModel(this)) {
    setObjectName(QStringLiteral("poolView"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    auto* title = new QLabel(tr("<b>Measurement pool</b>"), this);
    m_view = new QTreeView(this);
    m_view->setModel(m_model);
    m_view->setRootIsDecorated(false);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->header()->setStretchLastSection(true);
    m_summary = new QLabel(this);
    m_message = new QLabel(this);
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(title);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_summary);
    layout->addWidget(m_message);
    m_message->hide();
    hide();
}

void PoolView::showSnapshot(const PoolSnapshot& snapshot, const QString& message) {
    const bool first = m_model->rowCount() == 0;
    m_model->setSnapshot(snapshot);
    if (first)
        for (int c = 0; c < PoolModel::ColumnCount - 1; ++c)
            m_view->resizeColumnToContents(c);
    m_summary->setText(m_model->summary());
    if (!message.isEmpty()) {
        m_message->setText(message);
        m_message->show();
    }
    setVisible(!snapshot.workers.empty());
}

void PoolView::clear() {
    m_model->clear();
    m_summary->clear();
    m_message->clear();
    m_message->hide();
    hide();
}

}  // namespace kerncast
