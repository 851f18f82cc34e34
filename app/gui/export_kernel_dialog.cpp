#include "app/gui/export_kernel_dialog.h"

#include "core/error.h"
#include "core/run_store.h"
#include "engine/cli/export_kernel.h"
#include "widgets/population_model.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFont>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace kerncast {

namespace {

// One size of a stored sweep, as far as the run file says it sensibly: a file written to fool the workbench (a
// candidate that is not a number, results that are not a list, sizes that are not an object) loses those parts only.
struct SweepResult {
    nlohmann::json sizes = nlohmann::json::object();  // name -> value
    std::string status;
    std::optional<double> speedup;  // only for "ok" with a positive number
};

std::vector<SweepResult> results_of(const nlohmann::json& payload) {
    std::vector<SweepResult> out;
    const auto results = payload.find("results");
    if (results == payload.end() || !results->is_array())
        return out;
    for (const auto& r : *results) {
        if (!r.is_object())
            continue;
        SweepResult result;
        const auto sizes = r.find("sizes");
        if (sizes == r.end() || !sizes->is_object() || sizes->empty())
            continue;  // a result at no size is none
        result.sizes = *sizes;
        if (const auto status = r.find("status"); status != r.end() && status->is_string())
            result.status = status->get<std::string>();
        const auto speedup = r.find("speedup");
        if (result.status == "ok" && speedup != r.end() && speedup->is_number() && speedup->get<double>() > 0)
            result.speedup = speedup->get<double>();
        out.push_back(std::move(result));
    }
    return out;
}

// The newest sweep of every candidate swept in a run (one "sweep" event per candidate and sweep) that holds a result.
std::map<int64_t, std::vector<SweepResult>> newest_sweeps(RunStore& store, int64_t runId) {
    std::map<int64_t, std::vector<SweepResult>> out;
    for (const RunEvent& e : store.events(runId, "sweep")) {
        if (!e.payload.is_object())
            continue;
        const auto candidate = e.payload.find("candidate");
        if (candidate == e.payload.end() || !candidate->is_number_integer())
            continue;
        std::vector<SweepResult> results = results_of(e.payload);
        if (!results.empty())  // a damaged event does not hide the sweep before it
            out[candidate->get<int64_t>()] = std::move(results);
    }
    return out;
}

std::string sizes_label(const nlohmann::json& sizes) {
    std::string out;
    for (const auto& [name, value] : sizes.items())
        out += (out.empty() ? "" : " ") + name + "=" + value.dump();
    return out;
}

// A cell that sorts by its speedup, failed and unswept cells below every measured one.
class SpeedupItem : public QTableWidgetItem {
public:
    SpeedupItem(const QString& text, double key) : QTableWidgetItem(text), m_key(key) {}
    bool operator<(const QTableWidgetItem& other) const override {
        const auto* o = dynamic_cast<const SpeedupItem*>(&other);
        return o ? m_key < o->m_key : QTableWidgetItem::operator<(other);
    }

private:
    double m_key;
};

// One sweep's results as plot points, against the size that varies: the first whose value is not the same in every
// result (its name in *sizeName).
std::vector<SweepPoint> points_of(const std::vector<SweepResult>& results, QString* sizeName) {
    std::string varying;
    for (const auto& [name, value] : results.front().sizes.items()) {
        for (const auto& r : results)
            if (r.sizes.value(name, nlohmann::json()) != value) {
                varying = name;
                break;
            }
        if (!varying.empty())
            break;
    }
    if (varying.empty())
        varying = results.front().sizes.begin().key();  // results_of() keeps only results with sizes
    *sizeName = QString::fromStdString(varying);
    std::vector<SweepPoint> points;
    for (const auto& r : results) {
        SweepPoint p;
        const auto size = r.sizes.find(varying);
        p.size = size != r.sizes.end() && size->is_number() ? size->get<double>() : 0;
        p.status = QString::fromStdString(r.status);
        p.speedup = r.speedup.value_or(0);
        points.push_back(p);
    }
    return points;
}

SweepRanking ranking_of(const std::map<int64_t, std::vector<SweepResult>>& sweeps) {
    SweepRanking out;
    std::map<std::string, size_t> column;
    for (const auto& [candidate, results] : sweeps)
        for (const auto& r : results)
            if (const std::string label = sizes_label(r.sizes); column.emplace(label, out.sizes.size()).second)
                out.sizes.push_back(label);
    for (const auto& [candidate, results] : sweeps) {
        SweepRanking::Row row;
        row.candidate = candidate;
        row.speedup.resize(out.sizes.size());
        row.status.resize(out.sizes.size());
        for (const auto& r : results) {
            const size_t at = column.at(sizes_label(r.sizes));
            row.status[at] = r.status.empty() ? "?" : r.status;
            row.speedup[at] = r.speedup;
        }
        out.rows.push_back(std::move(row));
    }
    return out;
}

}  // namespace

RunSweeps read_sweeps(const std::string& runPath, int64_t candidateId) {
    RunStore store = RunStore::openReadOnly(runPath);
    const auto run = store.runOfCandidate(candidateId);
    if (!run)
        return {};
    const auto sweeps = newest_sweeps(store, *run);
    RunSweeps out;
    if (const auto found = sweeps.find(candidateId); found != sweeps.end())
        out.points = points_of(found->second, &out.sizeName);
    out.ranking = ranking_of(sweeps);
    return out;
}

ExportKernelDialog::ExportKernelDialog(const QString& runPath, qint64 candidateId, QWidget* parent)
    : QDialog(parent), m_runPath(runPath), m_candidate(candidateId) {
    setWindowTitle(tr("Export Kernel #%1").arg(candidateId));
    auto* layout = new QVBoxLayout(this);
    m_sweep = new SweepPlot(this);
    m_sweep->setObjectName(QStringLiteral("sweepPlot"));
    layout->addWidget(m_sweep, 1);
    m_ranking = new QTableWidget(this);
    m_ranking->setObjectName(QStringLiteral("sweepRanking"));
    m_ranking->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_ranking->setSelectionMode(QAbstractItemView::NoSelection);
    m_ranking->setFocusPolicy(Qt::NoFocus);
    m_ranking->verticalHeader()->hide();
    m_ranking->setToolTip(tr("The run's swept candidates (kerncast-cli sweep --run R --top K) and their speedup over "
                             "the reference at each size: click a size to rank them there"));
    auto* rankingLabel = new QLabel(tr("Swept candidates, ranked at a size (click its column):"), this);
    layout->addWidget(rankingLabel);
    layout->addWidget(m_ranking, 1);
    try {
        const RunSweeps sweeps = read_sweeps(runPath.toStdString(), candidateId);
        m_sweep->setSweep(sweeps.points, sweeps.sizeName);
        fillRanking(sweeps.ranking);
        m_ranking->setVisible(!sweeps.ranking.rows.empty());
        rankingLabel->setVisible(!sweeps.ranking.rows.empty());
    } catch (const std::exception& e) {
        const QString why = tr("The run's sweeps cannot be read: %1").arg(QString::fromUtf8(e.what()));
        m_sweep->setPlaceholderText(why);
        rankingLabel->setText(why);
        m_ranking->hide();
    }

    addExportForm(layout, QStringLiteral("kerncast-kernel-%1").arg(candidateId));
    resize(720, 720);
}

ExportKernelDialog::ExportKernelDialog(const KernelFileExport& file, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Export Kernel File"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("A kernel program file with its tunables fixed, exported without a run (as "
                                "kerncast-cli export --problem P --kernel F --tunable NAME=V does)."),
                             this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout;
    auto pathRow = [this, form](QLineEdit* edit, const QString& label, bool folder) {
        auto* row = new QHBoxLayout;
        auto* browse = new QPushButton(tr("Browse..."), this);
        connect(browse, &QPushButton::clicked, this, [this, edit, label, folder] {
            const QString path = folder ? QFileDialog::getExistingDirectory(this, label, edit->text())
                                        : QFileDialog::getOpenFileName(this, label, edit->text(),
                                                                       tr("Kernel programs (*.cu);;All files (*)"));
            if (!path.isEmpty())
                edit->setText(path);
        });
        row->addWidget(edit, 1);
        row->addWidget(browse);
        form->addRow(label, row);
    };
    m_problem = new QLineEdit(file.problemDir, this);
    m_problem->setObjectName(QStringLiteral("exportProblem"));
    m_problem->setPlaceholderText(tr("a problem folder, or a problem's name in the library"));
    pathRow(m_problem, tr("Problem:"), true);
    m_kernel = new QLineEdit(file.kernel, this);
    m_kernel->setObjectName(QStringLiteral("exportKernelFile"));
    m_kernel->setPlaceholderText(tr("the kernel program (.cu)"));
    pathRow(m_kernel, tr("Kernel file:"), false);
    m_tunables = new QLineEdit(file.tunables, this);
    m_tunables->setObjectName(QStringLiteral("exportTunables"));
    m_tunables->setPlaceholderText(tr("NAME=VALUE for each tunable the program declares, e.g. BLOCK=256 ITEMS=4"));
    form->addRow(tr("Tunables:"), m_tunables);
    addExportForm(layout, QStringLiteral("kerncast-kernel"), form);
    layout->addStretch(1);
    resize(720, 360);
}

void ExportKernelDialog::addExportForm(QVBoxLayout* layout, const QString& folderName, QFormLayout* form) {
    if (!form)
        form = new QFormLayout;
    m_format = new QComboBox(this);
    m_format->setObjectName(QStringLiteral("exportFormat"));
    m_format->addItem(tr("CUDA unit (kernel, header with a launch function)"), QStringLiteral("cuda"));
    m_format->addItem(tr("PyTorch extension (and the CUDA unit, with a test script)"), QStringLiteral("torch"));
    form->addRow(tr("Format:"), m_format);
    auto* folderRow = new QHBoxLayout;
    m_folder = new QLineEdit(this);
    m_folder->setObjectName(QStringLiteral("exportFolder"));
    m_folder->setText(QDir::home().filePath(folderName));
    auto* browse = new QPushButton(tr("Browse..."), this);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Export Into"), m_folder->text());
        if (!dir.isEmpty())
            m_folder->setText(dir);
    });
    folderRow->addWidget(m_folder, 1);
    folderRow->addWidget(browse);
    form->addRow(tr("Folder:"), folderRow);
    m_namespace = new QLineEdit(this);
    m_namespace->setObjectName(QStringLiteral("exportNamespace"));
    m_namespace->setPlaceholderText(tr("kerncast_<problem>"));
    m_namespace->setToolTip(tr("The C++ namespace of the unit, so that several exported kernels compile into one "
                               "program"));
    form->addRow(tr("Namespace:"), m_namespace);
    layout->addLayout(form);
    m_result = new QLabel(this);
    m_result->setObjectName(QStringLiteral("exportResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_result);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    auto* exportButton = buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
    exportButton->setObjectName(QStringLiteral("exportButton"));
    connect(exportButton, &QPushButton::clicked, this, [this] { exportKernel(); });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

void ExportKernelDialog::fillRanking(const SweepRanking& table) {
    QStringList headers{tr("Candidate")};
    for (const auto& size : table.sizes)
        headers << QString::fromStdString(size);
    m_ranking->setColumnCount(headers.size());
    m_ranking->setHorizontalHeaderLabels(headers);
    m_ranking->setRowCount(static_cast<int>(table.rows.size()));
    for (size_t c = 0; c < table.sizes.size(); ++c) {
        double best = 0;
        for (const auto& row : table.rows)
            best = std::max(best, row.speedup[c].value_or(0));
        for (size_t r = 0; r < table.rows.size(); ++r) {
            const auto& row = table.rows[r];
            const QString text = row.speedup[c] ? QStringLiteral("%1×").arg(*row.speedup[c], 0, 'f', 3)
                                 : row.status[c].empty()
                                     ? QStringLiteral("–")
                                     : PopulationModel::statusText(QString::fromStdString(row.status[c]));
            // Failed sizes sort below every measured one, sizes not swept below those.
            auto* item = new SpeedupItem(text, row.speedup[c].value_or(row.status[c].empty() ? -2.0 : -1.0));
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (row.speedup[c] && *row.speedup[c] == best) {
                QFont bold = item->font();
                bold.setBold(true);
                item->setFont(bold);
            }
            m_ranking->setItem(static_cast<int>(r), static_cast<int>(c) + 1, item);
        }
    }
    for (size_t r = 0; r < table.rows.size(); ++r) {
        const int64_t id = table.rows[r].candidate;
        auto* item = new SpeedupItem(id == m_candidate ? tr("#%1 (this one)").arg(id) : QStringLiteral("#%1").arg(id),
                                     -static_cast<double>(id));
        m_ranking->setItem(static_cast<int>(r), 0, item);
    }
    m_ranking->setSortingEnabled(true);
    m_ranking->horizontalHeader()->setSortIndicatorShown(true);
    if (!table.sizes.empty())
        rankAt(static_cast<int>(table.sizes.size()) - 1);
    m_ranking->resizeColumnsToContents();
}

void ExportKernelDialog::rankAt(int sizeIndex) {
    if (m_ranking && sizeIndex >= 0 && sizeIndex + 1 < m_ranking->columnCount())
        m_ranking->sortByColumn(sizeIndex + 1, Qt::DescendingOrder);
}

void ExportKernelDialog::setFolder(const QString& folder) { m_folder->setText(folder); }

void ExportKernelDialog::setFormat(const QString& format) {
    const int index = m_format->findData(format);
    if (index >= 0)
        m_format->setCurrentIndex(index);
}

bool ExportKernelDialog::exportKernel(QString* error) {
    cli::KernelExportArgs args;
    args.format = m_format->currentData().toString().toStdString();
    args.out = m_folder->text().trimmed().toStdString();
    args.name_space = m_namespace->text().trimmed().toStdString();
    try {
        if (args.out.empty())
            throw Error("choose a folder to export into");
        if (m_kernel) {  // a kernel file without a run
            args.problem = m_problem->text().trimmed().toStdString();
            args.kernel = m_kernel->text().trimmed().toStdString();
            if (args.problem.empty())
                throw Error("choose the problem the kernel computes");
            if (args.kernel.empty())
                throw Error("choose a kernel program file");
            // NAME=VALUE items apart by spaces or commas.
            for (const QString& item :
                 m_tunables->text().split(QRegularExpression(QStringLiteral("[\\s,]+")), Qt::SkipEmptyParts))
                args.tunables.push_back(item.toStdString());
        } else {
            args.run = m_runPath.toStdString();
            args.candidate = std::to_string(m_candidate);
            RunStore store = RunStore::openReadOnly(args.run);
            args.run_id = store.runOfCandidate(m_candidate).value_or(0);
        }
        const nlohmann::json summary = cli::export_kernel(args);
        m_result->setText(tr("Wrote %n file(s) into %1: build with nvcc as its README.md says.", nullptr,
                             static_cast<int>(summary["files"].size()))
                              .arg(QString::fromStdString(args.out)));
        return true;
    } catch (const std::exception& e) {
        const QString why = QString::fromUtf8(e.what());
        m_result->setText(tr("Not exported: %1").arg(why));
        if (error)
            *error = why;
        return false;
    }
}

}  // namespace kerncast
