#include "widgets/diff_view.h"

#include "widgets/kernel_editor.h"

#include <QHBoxLayout>
#include <QHash>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include <dtl/dtl.hpp>

namespace kerncast {

QStringList splitSourceLines(const QString& text) {
    if (text.isEmpty())
        return {};
    QString normalized = text;
    normalized.replace(QLatin1String("\r\n"), QLatin1String("\n"));
    QStringList lines = normalized.split(QLatin1Char('\n'));
    if (normalized.endsWith(QLatin1Char('\n')))
        lines.removeLast();
    return lines;
}

SourceDiff diffLines(const QStringList& left, const QStringList& right) {
    // dtl compares elements many times over; compare small integers (one per distinct line) instead of strings.
    QHash<QString, int> ids;
    auto intern = [&ids](const QStringList& lines) {
        std::vector<int> out;
        out.reserve(static_cast<size_t>(lines.size()));
        for (const QString& line : lines) {
            auto it = ids.constFind(line);
            if (it == ids.constEnd())
                it = ids.insert(line, static_cast<int>(ids.size()));
            out.push_back(*it);
        }
        return out;
    };
    const std::vector<int> a = intern(left);
    const std::vector<int> b = intern(right);

    dtl::Diff<int, std::vector<int>> diff(a, b);
    diff.compose();

    SourceDiff out;
    std::vector<int> removed;  // 1-based left lines of the current run of edits
    std::vector<int> added;    // 1-based right lines
    auto flush = [&] {
        const size_t paired = std::min(removed.size(), added.size());
        for (size_t i = 0; i < paired; ++i)
            out.rows.push_back({DiffKind::Changed, removed[i], added[i]});
        for (size_t i = paired; i < removed.size(); ++i)
            out.rows.push_back({DiffKind::Removed, removed[i], 0});
        for (size_t i = paired; i < added.size(); ++i)
            out.rows.push_back({DiffKind::Added, 0, added[i]});
        out.removed += static_cast<int>(removed.size());
        out.added += static_cast<int>(added.size());
        removed.clear();
        added.clear();
    };
    for (const auto& [element, info] : diff.getSes().getSequence()) {
        Q_UNUSED(element);
        switch (info.type) {
        case dtl::SES_COMMON:
            flush();
            out.rows.push_back({DiffKind::Same, static_cast<int>(info.beforeIdx), static_cast<int>(info.afterIdx)});
            break;
        case dtl::SES_DELETE:
            removed.push_back(static_cast<int>(info.beforeIdx));
            break;
        case dtl::SES_ADD:
            added.push_back(static_cast<int>(info.afterIdx));
            break;
        }
    }
    flush();
    return out;
}

DiffView::DiffView(QWidget* parent) : QWidget(parent) {
    m_left = new KernelEditor(this);
    m_right = new KernelEditor(this);
    m_leftTitle = new QLabel(this);
    m_rightTitle = new QLabel(this);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("diffSummary"));
    for (QLabel* title : {m_leftTitle, m_rightTitle})
        title->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* header = new QHBoxLayout;
    header->addWidget(m_leftTitle, 1);
    header->addWidget(m_summary);
    header->addWidget(m_rightTitle, 1);
    m_rightTitle->setAlignment(Qt::AlignRight | Qt::AlignVCenter);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_left);
    splitter->addWidget(m_right);
    splitter->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(header);
    layout->addWidget(splitter, 1);

    connect(m_left, &KernelEditor::firstVisibleLineChanged, this, [this] { syncVertical(m_left, m_right); });
    connect(m_right, &KernelEditor::firstVisibleLineChanged, this, [this] { syncVertical(m_right, m_left); });
    connect(m_left, &KernelEditor::horizontalOffsetChanged, m_right, &KernelEditor::setHorizontalOffset);
    connect(m_right, &KernelEditor::horizontalOffsetChanged, m_left, &KernelEditor::setHorizontalOffset);
    clear();
}

void DiffView::syncVertical(KernelEditor* from, KernelEditor* to) {
    if (m_syncing)
        return;
    m_syncing = true;
    to->setFirstVisibleLine(from->firstVisibleLine());
    m_syncing = false;
}

void DiffView::setSources(const QString& left, const QString& right, const QString& leftTitle,
                          const QString& rightTitle) {
    const QStringList leftLines = splitSourceLines(left);
    const QStringList rightLines = splitSourceLines(right);
    m_diff = diffLines(leftLines, rightLines);

    // Both editors get one line per aligned row; a filler line is blank and has no line number.
    QStringList leftText, rightText, leftLabels, rightLabels;
    QList<int> leftMarks[4], rightMarks[4];
    auto mark = [](QList<int>* marks, LineMark kind, int row) { marks[static_cast<int>(kind)] << row; };
    for (size_t i = 0; i < m_diff.rows.size(); ++i) {
        const DiffRow& r = m_diff.rows[i];
        const int row = static_cast<int>(i) + 1;
        leftText << (r.leftLine > 0 ? leftLines[r.leftLine - 1] : QString());
        rightText << (r.rightLine > 0 ? rightLines[r.rightLine - 1] : QString());
        leftLabels << (r.leftLine > 0 ? QString::number(r.leftLine) : QString());
        rightLabels << (r.rightLine > 0 ? QString::number(r.rightLine) : QString());
        switch (r.kind) {
        case DiffKind::Same:
            break;
        case DiffKind::Changed:
            mark(leftMarks, LineMark::Changed, row);
            mark(rightMarks, LineMark::Changed, row);
            break;
        case DiffKind::Removed:
            mark(leftMarks, LineMark::Removed, row);
            mark(rightMarks, LineMark::Filler, row);
            break;
        case DiffKind::Added:
            mark(leftMarks, LineMark::Filler, row);
            mark(rightMarks, LineMark::Added, row);
            break;
        }
    }
    m_left->setSource(leftText.join(QLatin1Char('\n')));
    m_right->setSource(rightText.join(QLatin1Char('\n')));
    m_left->setLineLabels(leftLabels);
    m_right->setLineLabels(rightLabels);
    for (LineMark kind : {LineMark::Added, LineMark::Removed, LineMark::Changed, LineMark::Filler}) {
        m_left->markLines(leftMarks[static_cast<int>(kind)], kind);
        m_right->markLines(rightMarks[static_cast<int>(kind)], kind);
    }
    m_leftTitle->setText(leftTitle);
    m_rightTitle->setText(rightTitle);
    m_summary->setText(summary());
}

void DiffView::clear() {
    m_diff = {};
    m_left->setSource({});
    m_right->setSource({});
    m_leftTitle->clear();
    m_rightTitle->clear();
    m_summary->clear();
}

QString DiffView::summary() const {
    if (m_diff.identical())
        return m_diff.rows.empty() ? QString() : tr("identical");
    return tr("+%1 −%2 lines").arg(m_diff.added).arg(m_diff.removed);
}

}  // namespace kerncast
