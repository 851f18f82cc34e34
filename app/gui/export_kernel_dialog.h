#pragma once
// File › Export Kernel…: the candidate on show as code a project can use (export --format cuda|torch, see README
// "Using a kernel you found"), beside how it held across sizes: the plot of the run's sweeps of it.

#include "widgets/sweep_plot.h"

#include <QDialog>
#include <QString>

#include <cstdint>
#include <string>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;

namespace kerncast {

// The newest sweep of a candidate stored in a run (kerncast-cli sweep --run: a "sweep" event): one point per size,
// against the size that varies (its name in *sizeName). Empty when the run holds none; throws Error when the run
// cannot be read.
std::vector<SweepPoint> candidate_sweep(const std::string& runPath, int64_t candidateId, QString* sizeName);

class ExportKernelDialog : public QDialog {
    Q_OBJECT
public:
    ExportKernelDialog(const QString& runPath, qint64 candidateId, QWidget* parent = nullptr);

    void setFolder(const QString& folder);
    // "cuda" or "torch".
    void setFormat(const QString& format);
    // Writes the unit into the folder; false with the reason in *error (also shown in the dialog).
    bool exportKernel(QString* error = nullptr);

    SweepPlot* sweepPlot() const { return m_sweep; }

private:
    QString m_runPath;
    qint64 m_candidate = 0;
    SweepPlot* m_sweep = nullptr;
    QComboBox* m_format = nullptr;
    QLineEdit* m_folder = nullptr;
    QLineEdit* m_namespace = nullptr;
    QLabel* m_result = nullptr;
};

}  // namespace kerncast
