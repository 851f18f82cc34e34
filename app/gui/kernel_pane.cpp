#include "app/gui/kernel_pane.h"

#include "widgets/elided_label.h"
#include "widgets/kernel_editor.h"

#include <QComboBox>
#include <QFile>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <filesystem>

namespace kerncast {

bool sameFile(const std::string& a, const std::string& b) {
    if (a == b)
        return true;
    std::error_code ec1, ec2;
    const auto ca = std::filesystem::weakly_canonical(a, ec1);
    const auto cb = std::filesystem::weakly_canonical(b, ec2);
    return !ec1 && !ec2 && ca == cb;
}

namespace {

QString programLabel(const ProgramEntry& p, const std::string& problemDir) {
    const QString rel = QString::fromStdString(std::filesystem::path(p.path).lexically_relative(problemDir).string());
    switch (p.kind) {
    case ProgramEntry::Kind::Reference:
        return KernelPane::tr("%1 (reference)").arg(rel);
    case ProgramEntry::Kind::Seed:
        return KernelPane::tr("%1 (seed)").arg(rel);
    case ProgramEntry::Kind::Family:
        if (p.configurations >= 0)
            return KernelPane::tr("%1 (family, %2 configurations)")
                .arg(rel, QLocale().toString(static_cast<qlonglong>(p.configurations)));
        return KernelPane::tr("%1 (family)").arg(rel);
    }
    return rel;
}

}  // namespace

KernelPane::KernelPane(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 0);
    layout->setSpacing(4);
    auto* programRow = new QHBoxLayout;
    auto* programLabelWidget = new QLabel(tr("&Program:"), this);
    m_programSelector = new QComboBox(this);
    m_programSelector->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_programSelector->setMinimumContentsLength(28);
    // While a candidate of the run is on show, no library program is selected: the box says so.
    m_programSelector->setPlaceholderText(tr("(candidate of the run)"));
    programLabelWidget->setBuddy(m_programSelector);
    m_programPath = new ElidedLabel(this, Qt::ElideMiddle);
    m_programPath->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_programPath->setStyleSheet(QStringLiteral("color: palette(mid);"));
    m_candidateTitle = new ElidedLabel(this);
    m_candidateTitle->setObjectName(QStringLiteral("candidateTitle"));
    m_candidateTitle->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_candidateTitle->hide();
    // Long labels and paths must not widen the window: they end in "…" where space ends, whole in their tool tips.
    m_candidateTitle->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_programPath->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    programRow->addWidget(programLabelWidget);
    programRow->addWidget(m_programSelector);
    programRow->addWidget(m_candidateTitle, 1);
    programRow->addSpacing(8);
    programRow->addWidget(m_programPath, 1);
    layout->addLayout(programRow);
    m_editor = new KernelEditor(this);
    layout->addWidget(m_editor, 1);
    connect(m_programSelector, &QComboBox::currentIndexChanged, this, [this](int index) { showProgram(index); });
    connect(m_editor, &KernelEditor::submitRequested, this, &KernelPane::submitRequested);
}

void KernelPane::showProblem(const ProblemEntry* entry) {
    m_entry.reset();
    if (entry)
        m_entry = *entry;
    {
        const QSignalBlocker block(m_programSelector);
        m_programSelector->clear();
        if (entry)
            for (const auto& p : entry->programs)
                m_programSelector->addItem(programLabel(p, entry->dir));
    }
    if (!entry) {
        setCandidateMode(false, false);
        m_editor->setSource({});
        m_programPath->clear();
        return;
    }
    m_programSelector->setCurrentIndex(entry->programs.empty() ? -1 : 0);
    showProgram(m_programSelector->currentIndex());
}

QStringList KernelPane::programLabels() const {
    QStringList labels;
    for (int i = 0; i < m_programSelector->count(); ++i)
        labels << m_programSelector->itemText(i);
    return labels;
}

bool KernelPane::selectProgram(int index) {
    if (index < 0 || index >= m_programSelector->count())
        return false;
    if (m_programSelector->currentIndex() == index)
        showProgram(index);  // back from a candidate to the same program
    else
        m_programSelector->setCurrentIndex(index);
    return true;
}

int KernelPane::selectedProgram() const { return m_programSelector->currentIndex(); }

void KernelPane::setCandidateMode(bool candidate, bool editable) {
    m_candidateTitle->setVisible(candidate);
    m_programPath->setVisible(!candidate);
    if (candidate) {
        const QSignalBlocker blocker(m_programSelector);
        m_programSelector->setCurrentIndex(-1);
    }
    // A candidate of a running search can be edited and submitted as a new child; library files are read-only.
    m_editor->setReadOnly(!(candidate && editable));
}

bool KernelPane::showsCandidate() const { return !m_candidateTitle->isHidden(); }

void KernelPane::setCandidateEditable(bool editable) {
    if (showsCandidate())
        setCandidateMode(true, editable);
}

void KernelPane::showProgram(int index) {
    setCandidateMode(false, false);
    if (!m_entry || index < 0 || static_cast<size_t>(index) >= m_entry->programs.size()) {
        m_editor->setSource({});
        m_programPath->setText(m_entry ? tr("This problem has no kernel programs.") : QString());
        return;
    }
    const auto& program = m_entry->programs[static_cast<size_t>(index)];
    const QString path = QString::fromStdString(program.path);
    m_editor->setSource(QString::fromStdString(program.source), path);
    m_programPath->setText(path);
    QList<EditorDiagnostic> diagnostics;
    for (const auto& e : m_entry->errors)
        if (e.where().line > 0 && sameFile(e.where().file, program.path))
            diagnostics.append({e.where().line, QString::fromStdString(e.what())});
    m_editor->setDiagnostics(diagnostics);
    if (!diagnostics.isEmpty())
        m_editor->goToLine(diagnostics.front().line);
}

bool KernelPane::showProgramError(const QString& file, int line) {
    if (!m_entry)
        return false;
    for (size_t i = 0; i < m_entry->programs.size(); ++i) {
        if (sameFile(m_entry->programs[i].path, file.toStdString())) {
            selectProgram(static_cast<int>(i));
            if (line > 0)
                m_editor->goToLine(line);
            m_editor->setFocus();
            return true;
        }
    }
    return false;
}

void KernelPane::showFile(const QString& file, int line) {
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly))
        return;
    setCandidateMode(false, false);
    m_editor->setSource(QString::fromUtf8(f.readAll()), file);
    m_programPath->setText(file);
    if (line > 0)
        m_editor->goToLine(line);
}

void KernelPane::showCandidate(const QString& title, const QString& source, const QString& fileName,
                               const QString& compileLog, bool editable) {
    m_candidateTitle->setText(title);
    setCandidateMode(true, editable);
    m_editor->setSource(source, fileName);
    // A compile error is shown where it is: on its line, scrolled into view.
    if (!compileLog.isEmpty() && m_editor->setCompileLog(compileLog) > 0)
        m_editor->goToLine(m_editor->errorLines().front());
}

}  // namespace kerncast
