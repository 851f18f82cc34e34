#pragma once
// One tunable against time, Kernel Tuner's dashboard view: every family configuration of the run at the value it
// gives the tunable, its measured median time as a filled point and, when it was forecast, the time its forecast
// expects (the reference time over the expected speedup) as a hollow one, so that a person sees which values are
// fast and where the surrogate expects them to be.

#include "widgets/candidate_row.h"
#include "widgets/plot_widget.h"

#include <QStringList>

#include <vector>

class QCPGraph;
class QComboBox;

namespace kerncast {

class ParameterPlot : public PlotWidget {
    Q_OBJECT
public:
    explicit ParameterPlot(QWidget* parent = nullptr);
    ~ParameterPlot() override;

    // The run's rows; the tunable shown stays when the rows still carry it, else the first one does.
    void setRows(const std::vector<CandidateRow>& rows);
    void clear() { setRows({}); }
    // The tunables the rows carry, in the order first seen.
    QStringList tunables() const { return m_tunables; }
    bool setTunable(const QString& name);
    QString tunable() const { return m_tunable; }

    QCPGraph* measuredGraph() const { return m_measured; }
    QCPGraph* forecastGraph() const { return m_forecast; }
    // The tunable chooser above the plot.
    QComboBox* chooser() const { return m_choice; }

Q_SIGNALS:
    // The tunables offered changed (new rows brought one, or a new run has others).
    void tunablesChanged(const QStringList& names);

protected:
    void fitView() override;

private:
    void update();

    std::vector<CandidateRow> m_rows;
    QStringList m_tunables;
    QString m_tunable;
    QCPGraph* m_measured = nullptr;
    QCPGraph* m_forecast = nullptr;
    QComboBox* m_choice = nullptr;
};

}  // namespace kerncast
