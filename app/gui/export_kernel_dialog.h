#pragma once
// File › Export Kernel…: the candidate on show as code a project can use (export --format cuda|torch, see README
// "Using a kernel you found"), beside how it held across sizes: the plot of the run's sweeps of it, and the run's
// swept candidates ranked at any size that was swept (kerncast-cli sweep --run R --top K).

#include "widgets/sweep_plot.h"

#include <QDialog>
#include <QString>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QTableWidget;
class QVBoxLayout;

namespace kerncast {

// Every candidate swept in a run, each by its newest sweep: the sizes met (in the order first met, as "M=1024 N=4096")
// and each candidate's speedup over the reference at each (none where it was not measured there or failed, with the
// status saying which).
struct SweepRanking {
    struct Row {
        int64_t candidate = 0;
        std::vector<std::optional<double>> speedup;  // one per size
        std::vector<std::string> status;             // one per size: "ok", "incorrect", ... ("" not swept there)
    };
    std::vector<std::string> sizes;
    std::vector<Row> rows;  // in candidate order
};

// What the dialog shows of a run's sweeps (kerncast-cli sweep --run: "sweep" events), read from the run file once: the
// candidate's newest sweep, one point per size against the size that varies (named by sizeName; empty when the run
// holds none), and the ranking of every swept candidate.
struct RunSweeps {
    std::vector<SweepPoint> points;
    QString sizeName;
    SweepRanking ranking;
};
// Throws Error when the run cannot be read.
RunSweeps read_sweeps(const std::string& runPath, int64_t candidateId);

// A kernel program file to export without a run: the problem it computes, the file, its tunables ("NAME=V ...").
struct KernelFileExport {
    QString problemDir;
    QString kernel;
    QString tunables;
};

class ExportKernelDialog : public QDialog {
    Q_OBJECT
public:
    // A run's candidate, beside its sweeps.
    ExportKernelDialog(const QString& runPath, qint64 candidateId, QWidget* parent = nullptr);
    // A kernel file with its tunables, no run needed (the fields start from `file`).
    explicit ExportKernelDialog(const KernelFileExport& file, QWidget* parent = nullptr);

    void setFolder(const QString& folder);
    // "cuda" or "torch".
    void setFormat(const QString& format);
    // Writes the unit into the folder; false with the reason in *error (also shown in the dialog).
    bool exportKernel(QString* error = nullptr);

    SweepPlot* sweepPlot() const { return m_sweep; }  // none in kernel-file mode, nor ranking()
    // The swept candidates (rows) at each swept size (columns after the first): click a size to rank them there.
    QTableWidget* ranking() const { return m_ranking; }
    // Ranks the swept candidates at size column `sizeIndex` (0: the first size), fastest first.
    void rankAt(int sizeIndex);

private:
    // Format, folder and namespace (rows added to `form` when given), the result line and the buttons.
    void addExportForm(QVBoxLayout* layout, const QString& folderName, QFormLayout* form = nullptr);
    void fillRanking(const SweepRanking& table);

    QString m_runPath;
    qint64 m_candidate = 0;
    SweepPlot* m_sweep = nullptr;
    QTableWidget* m_ranking = nullptr;
    QComboBox* m_format = nullptr;
    QLineEdit* m_folder = nullptr;
    QLineEdit* m_namespace = nullptr;
    QLineEdit* m_problem = nullptr;  // kernel-file mode only, with m_kernel and m_tunables
    QLineEdit* m_kernel = nullptr;
    QLineEdit* m_tunables = nullptr;
    QLabel* m_result = nullptr;
};

}  // namespace kerncast
