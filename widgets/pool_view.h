#pragma once
// The device panel's view of a search's measurement pool: the workers (host, GPU, state, measurements), the queue,
// and the last thing that happened to a worker (lost, retired). Hidden while the search measures without a pool.

#include "engine/worker/pool_status.h"

#include <QWidget>

class QLabel;
class QTreeView;

namespace kerncast {

class PoolModel;

class PoolView : public QWidget {
    Q_OBJECT
public:
    explicit PoolView(QWidget* parent = nullptr);

    // message: a worker lost or retired (may be empty).
    void showSnapshot(const PoolSnapshot& snapshot, const QString& message = {});
    void clear();

    PoolModel* model() const { return m_model; }
    QLabel* summaryLabel() const { return m_summary; }
    QLabel* messageLabel() const { return m_message; }

private:
    PoolModel* m_model = nullptr;
    QTreeView* m_view = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_message = nullptr;
};

}  // namespace kerncast
