#include "app/gui/export_kernel_dialog.h"

#include "core/error.h"
#include "core/run_store.h"
#include "engine/cli/export_kernel.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace kerncast {

std::vector<SweepPoint> candidate_sweep(const std::string& runPath, int64_t candidateId, QString* sizeName) {
    RunStore store = RunStore::openReadOnly(runPath);
    const auto run = store.runOfCandidate(candidateId);
    if (!run)
        return {};
    nlohmann::json results;
    for (const RunEvent& e : store.events(*run))
        if (e.kind == "sweep" && e.payload.value("candidate", int64_t{0}) == candidateId)
            results = e.payload.value("results", nlohmann::json::array());
    if (!results.is_array() || results.empty())
        return {};
    // The size that varies: the first whose value is not the same in every result.
    std::string varying;
    for (const auto& [name, value] : results.front().value("sizes", nlohmann::json::object()).items()) {
        for (const auto& r : results)
            if (r["sizes"].value(name, nlohmann::json()) != value) {
                varying = name;
                break;
            }
        if (!varying.empty())
            break;
    }
    if (varying.empty() && !results.front().value("sizes", nlohmann::json::object()).empty())
        varying = results.front()["sizes"].begin().key();
    if (sizeName)
        *sizeName = QString::fromStdString(varying);
    std::vector<SweepPoint> points;
    for (const auto& r : results) {
        SweepPoint p;
        const auto sizes = r.value("sizes", nlohmann::json::object());
        p.size = sizes.contains(varying) && sizes[varying].is_number() ? sizes[varying].get<double>() : 0;
        p.status = QString::fromStdString(r.value("status", std::string()));
        p.speedup = p.status == QLatin1String("ok") ? r.value("speedup", 0.0) : 0;
        points.push_back(p);
    }
    return points;
}

ExportKernelDialog::ExportKernelDialog(const QString& runPath, qint64 candidateId, QWidget* parent)
    : QDialog(parent), m_runPath(runPath), m_candidate(candidateId) {
    setWindowTitle(tr("Export Kernel #%1").arg(candidateId));
    auto* layout = new QVBoxLayout(this);
    m_sweep = new SweepPlot(this);
    m_sweep->setObjectName(QStringLiteral("sweepPlot"));
    layout->addWidget(m_sweep, 1);
    try {
        QString sizeName;
        const auto points = candidate_sweep(runPath.toStdString(), candidateId, &sizeName);
        m_sweep->setSweep(points, sizeName);
    } catch (const std::exception& e) {
        m_sweep->setPlaceholderText(tr("The run's sweeps cannot be read: %1").arg(QString::fromUtf8(e.what())));
    }

    auto* form = new QFormLayout;
    m_format = new QComboBox(this);
    m_format->setObjectName(QStringLiteral("exportFormat"));
    m_format->addItem(tr("CUDA unit (kernel, header with a launch function)"), QStringLiteral("cuda"));
    m_format->addItem(tr("PyTorch extension (and the CUDA unit, with a test script)"), QStringLiteral("torch"));
    form->addRow(tr("Format:"), m_format);
    auto* folderRow = new QHBoxLayout;
    m_folder = new QLineEdit(this);
    m_folder->setObjectName(QStringLiteral("exportFolder"));
    m_folder->setText(QDir::home().filePath(QStringLiteral("kerncast-kernel-%1").arg(candidateId)));
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
    resize(640, 560);
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
    args.run = m_runPath.toStdString();
    args.candidate = std::to_string(m_candidate);
    args.out = m_folder->text().trimmed().toStdString();
    args.name_space = m_namespace->text().trimmed().toStdString();
    try {
        if (args.out.empty())
            throw Error("choose a folder to export into");
        {
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
