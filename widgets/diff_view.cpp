#include "widgets/diff_view.h"

#include "widgets/elided_label.h"
#include "widgets/kernel_editor.h"

#include <QAction>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHash>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QStackedWidget>
#include <QTextBlock>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

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

namespace {

// The inline text's line prefix: the left and right line numbers (4 wide each) and the sign, e.g. "  12   13 + ".
constexpr int kInlinePrefix = 12;

QString inlinePrefix(int leftLine, int rightLine, QChar sign) {
    const auto number = [](int line) { return line > 0 ? QString::number(line) : QString(); };
    return QStringLiteral("%1 %2 %3 ").arg(number(leftLine), 4).arg(number(rightLine), 4).arg(sign);
}

}  // namespace

QStringList splitWords(const QString& line) {
    QStringList words;
    const auto isWord = [](QChar c) { return c.isLetterOrNumber() || c == QLatin1Char('_'); };
    qsizetype i = 0;
    while (i < line.size()) {
        qsizetype j = i + 1;
        if (isWord(line[i]))
            while (j < line.size() && isWord(line[j]))
                ++j;
        else if (line[i].isSpace())
            while (j < line.size() && line[j].isSpace())
                ++j;
        words << line.mid(i, j - i);
        i = j;
    }
    return words;
}

WordDiff diffWords(const QString& left, const QString& right) {
    const QStringList a = splitWords(left);
    const QStringList b = splitWords(right);
    QHash<QString, int> ids;
    auto intern = [&ids](const QStringList& words) {
        std::vector<int> out;
        out.reserve(static_cast<size_t>(words.size()));
        for (const QString& w : words) {
            auto it = ids.constFind(w);
            if (it == ids.constEnd())
                it = ids.insert(w, static_cast<int>(ids.size()));
            out.push_back(*it);
        }
        return out;
    };
    const std::vector<int> ia = intern(a);
    const std::vector<int> ib = intern(b);
    dtl::Diff<int, std::vector<int>> diff(ia, ib);
    diff.compose();
    // Character offsets of each word.
    const auto offsets = [](const QStringList& words) {
        std::vector<int> out(static_cast<size_t>(words.size()) + 1, 0);
        for (qsizetype k = 0; k < words.size(); ++k)
            out[static_cast<size_t>(k) + 1] = out[static_cast<size_t>(k)] + static_cast<int>(words[k].size());
        return out;
    };
    const std::vector<int> oa = offsets(a), ob = offsets(b);
    const auto add = [](QList<WordSpan>& spans, int start, int length) {
        if (!spans.isEmpty() && spans.last().start + spans.last().length == start)
            spans.last().length += length;
        else
            spans.append({start, length});
    };
    WordDiff out;
    for (const auto& [element, info] : diff.getSes().getSequence()) {
        Q_UNUSED(element);
        if (info.type == dtl::SES_DELETE) {
            const auto k = static_cast<size_t>(info.beforeIdx - 1);
            add(out.removed, oa[k], oa[k + 1] - oa[k]);
        } else if (info.type == dtl::SES_ADD) {
            const auto k = static_cast<size_t>(info.afterIdx - 1);
            add(out.added, ob[k], ob[k + 1] - ob[k]);
        }
    }
    return out;
}

DiffView::DiffView(QWidget* parent) : QWidget(parent) {
    m_left = new KernelEditor(this);
    m_right = new KernelEditor(this);
    m_leftTitle = new ElidedLabel(this);
    m_leftTitle->setObjectName(QStringLiteral("diffLeftTitle"));
    m_rightTitle = new ElidedLabel(this);
    m_rightTitle->setObjectName(QStringLiteral("diffRightTitle"));
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("diffSummary"));
    for (QLabel* title : {static_cast<QLabel*>(m_leftTitle), static_cast<QLabel*>(m_rightTitle)})
        title->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_navigation = new QWidget(this);
    m_position = new QLabel(m_navigation);
    m_position->setObjectName(QStringLiteral("diffChangePosition"));

    // Jumping between changes and the inline mode: actions of this view (Alt+Up, Alt+Down while it has the focus),
    // so that they do not take keys from the window.
    m_previousAction = new QAction(tr("Previous Change"), this);
    m_previousAction->setObjectName(QStringLiteral("previousChangeAction"));
    m_previousAction->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
    m_previousAction->setToolTip(tr("Previous change (Alt+Up)"));
    m_nextAction = new QAction(tr("Next Change"), this);
    m_nextAction->setObjectName(QStringLiteral("nextChangeAction"));
    m_nextAction->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Down));
    m_nextAction->setToolTip(tr("Next change (Alt+Down)"));
    m_inlineAction = new QAction(tr("Inline"), this);
    m_inlineAction->setObjectName(QStringLiteral("inlineDiffAction"));
    m_inlineAction->setCheckable(true);
    m_inlineAction->setToolTip(tr("One text with each removed line above the line that replaced it and the changed "
                                  "words highlighted, instead of the two sides beside each other"));
    for (QAction* action : {m_previousAction, m_nextAction, m_inlineAction}) {
        action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        addAction(action);
    }
    connect(m_previousAction, &QAction::triggered, this, &DiffView::previousChange);
    connect(m_nextAction, &QAction::triggered, this, &DiffView::nextChange);
    connect(m_inlineAction, &QAction::toggled, this, &DiffView::setInline);
    const auto button = [this](QAction* action, Qt::ArrowType arrow) {
        auto* b = new QToolButton(m_navigation);
        b->setDefaultAction(action);
        b->setAutoRaise(true);
        if (arrow != Qt::NoArrow)
            b->setArrowType(arrow);
        return b;
    };

    // The titles with the summary between them; the navigation beside them, or under them on a narrow dock
    // (arrangeHeader), so that "+1 −1 lines" and "change 1 of 3" are never cut and a title is cut only with "…".
    auto* navigation = new QHBoxLayout(m_navigation);
    navigation->setContentsMargins(0, 0, 0, 0);
    navigation->addWidget(m_position, 1);
    navigation->addWidget(button(m_previousAction, Qt::UpArrow));
    navigation->addWidget(button(m_nextAction, Qt::DownArrow));
    navigation->addWidget(button(m_inlineAction, Qt::NoArrow));
    m_titleRow = new QHBoxLayout;
    m_titleRow->addWidget(m_leftTitle, 1);
    m_titleRow->addWidget(m_summary);
    m_titleRow->addWidget(m_rightTitle, 1);
    for (QWidget* title : {static_cast<QWidget*>(m_leftTitle), static_cast<QWidget*>(m_rightTitle)})
        title->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_navigationRow = new QHBoxLayout;
    m_navigationRow->addWidget(m_navigation);
    m_rightTitle->setAlignment(Qt::AlignRight | Qt::AlignVCenter);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_left);
    splitter->addWidget(m_right);
    splitter->setChildrenCollapsible(false);
    m_sideBySide = splitter;
    m_inline = new QPlainTextEdit(this);
    m_inline->setObjectName(QStringLiteral("inlineDiff"));
    m_inline->setReadOnly(true);
    m_inline->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_inline->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_inline->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_stack = new QStackedWidget(this);
    m_stack->addWidget(m_sideBySide);
    m_stack->addWidget(m_inline);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(m_titleRow);
    layout->addLayout(m_navigationRow);
    layout->addWidget(m_stack, 1);

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
    arrangeHeader();

    m_changeRows.clear();
    for (size_t i = 0; i < m_diff.rows.size(); ++i)
        if (m_diff.rows[i].kind != DiffKind::Same && (i == 0 || m_diff.rows[i - 1].kind == DiffKind::Same))
            m_changeRows.push_back(static_cast<int>(i));
    buildInline(leftLines, rightLines);
    // A diff opens at its first change: a one-line change at the end of a long kernel is in view at once.
    m_current = -1;
    if (!m_changeRows.empty())
        showChange(0);
    updateChangeLabel();
}

void DiffView::buildInline(const QStringList& leftLines, const QStringList& rightLines) {
    m_inlineChangeLines.clear();
    m_inline->clear();
    QTextCursor cursor(m_inline->document());
    const bool dark = palette().color(QPalette::Base).lightness() < 128;
    QTextBlockFormat plainBlock, removedBlock, addedBlock;
    removedBlock.setBackground(dark ? QColor(90, 40, 40) : QColor(255, 235, 233));
    addedBlock.setBackground(dark ? QColor(35, 80, 45) : QColor(230, 255, 237));
    QTextCharFormat plain, removedWord, addedWord;
    removedWord.setBackground(dark ? QColor(150, 50, 50) : QColor(255, 179, 173));
    addedWord.setBackground(dark ? QColor(40, 130, 60) : QColor(171, 242, 188));
    int line = 0;
    const auto addLine = [&](int leftLine, int rightLine, QChar sign, const QString& text,
                             const QTextBlockFormat& block, const QList<WordSpan>& spans,
                             const QTextCharFormat& spanFormat) {
        if (line == 0)
            cursor.setBlockFormat(block);
        else
            cursor.insertBlock(block, plain);
        cursor.insertText(inlinePrefix(leftLine, rightLine, sign), plain);
        int at = 0;
        for (const WordSpan& span : spans) {
            cursor.insertText(text.mid(at, span.start - at), plain);
            cursor.insertText(text.mid(span.start, span.length), spanFormat);
            at = span.start + span.length;
        }
        cursor.insertText(text.mid(at), plain);
        ++line;
    };
    for (size_t i = 0; i < m_diff.rows.size(); ++i) {
        const DiffRow& r = m_diff.rows[i];
        if (std::binary_search(m_changeRows.begin(), m_changeRows.end(), static_cast<int>(i)))
            m_inlineChangeLines.push_back(line);
        const QString left = r.leftLine > 0 ? leftLines[r.leftLine - 1] : QString();
        const QString right = r.rightLine > 0 ? rightLines[r.rightLine - 1] : QString();
        switch (r.kind) {
        case DiffKind::Same:
            addLine(r.leftLine, r.rightLine, QLatin1Char(' '), left, plainBlock, {}, plain);
            break;
        case DiffKind::Changed: {
            const WordDiff words = diffWords(left, right);
            addLine(r.leftLine, 0, QLatin1Char('-'), left, removedBlock, words.removed, removedWord);
            addLine(0, r.rightLine, QLatin1Char('+'), right, addedBlock, words.added, addedWord);
            break;
        }
        case DiffKind::Removed:
            addLine(r.leftLine, 0, QLatin1Char('-'), left, removedBlock, {}, plain);
            break;
        case DiffKind::Added:
            addLine(0, r.rightLine, QLatin1Char('+'), right, addedBlock, {}, plain);
            break;
        }
    }
}

bool DiffView::isInline() const { return m_stack->currentWidget() == m_inline; }

void DiffView::setInline(bool inlineMode) {
    if (m_inlineAction->isChecked() != inlineMode)
        m_inlineAction->setChecked(inlineMode);  // comes back here through toggled()
    m_stack->setCurrentWidget(inlineMode ? static_cast<QWidget*>(m_inline) : m_sideBySide);
    if (m_current >= 0)
        showChange(m_current);
}

int DiffView::changeRow(int change) const {
    return change >= 0 && change < changeCount() ? m_changeRows[static_cast<size_t>(change)] : -1;
}

int DiffView::inlineLineOfChange(int change) const {
    return change >= 0 && change < changeCount() ? m_inlineChangeLines[static_cast<size_t>(change)] : -1;
}

void DiffView::showChange(int change) {
    if (m_changeRows.empty())
        return;
    m_current = std::clamp(change, 0, changeCount() - 1);
    // Side by side: the change a few lines below the top, both editors in step.
    const int firstLine = std::max(1, m_changeRows[static_cast<size_t>(m_current)] + 1 - 3);
    m_left->setFirstVisibleLine(firstLine);
    m_right->setFirstVisibleLine(firstLine);
    // Inline: the cursor on the change's first line, centred.
    const QTextBlock block =
        m_inline->document()->findBlockByNumber(m_inlineChangeLines[static_cast<size_t>(m_current)]);
    m_inline->setTextCursor(QTextCursor(block));
    m_inline->centerCursor();
    updateChangeLabel();
}

void DiffView::nextChange() { showChange(m_current < 0 ? 0 : m_current + 1); }

void DiffView::previousChange() { showChange(m_current < 0 ? 0 : m_current - 1); }

void DiffView::updateChangeLabel() {
    const bool any = !m_changeRows.empty();
    m_position->setText(any ? tr("change %1 of %2").arg(m_current + 1).arg(changeCount()) : QString());
    m_previousAction->setEnabled(any && m_current > 0);
    m_nextAction->setEnabled(any && m_current < changeCount() - 1);
    arrangeHeader();
}

bool DiffView::headerWrapped() const { return m_navigationRow->indexOf(m_navigation) >= 0; }

void DiffView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    arrangeHeader();
}

void DiffView::arrangeHeader() {
    if (!m_titleRow)
        return;  // still being built
    // What one line would need: both titles whole, the summary and the navigation at their preferred widths.
    const int spacing = std::max(0, m_titleRow->spacing());
    const int leftWhole = m_leftTitle->sizeHint().width();
    const int rightWhole = m_rightTitle->sizeHint().width();
    const int fixed = m_summary->sizeHint().width() + 2 * spacing;
    const int navigation = m_navigation->sizeHint().width() + spacing;
    const QMargins margins = layout()->contentsMargins();
    const int available = width() - margins.left() - margins.right();
    const bool wrap = leftWhole + rightWhole + fixed + navigation > available;
    if (wrap != headerWrapped()) {
        (wrap ? m_titleRow : m_navigationRow)->removeWidget(m_navigation);
        (wrap ? m_navigationRow : m_titleRow)->addWidget(m_navigation);
    }
    // The titles share what is left: the shorter is whole while it takes at most half, the longer is shortened
    // ("#5 parent" stays whole beside a long family label). The titles ignore their size hints, so the layout
    // follows these stretch factors exactly.
    const int space = std::max(2, available - fixed - (wrap ? 0 : navigation));
    const int left = std::clamp(std::min(leftWhole, std::max(space / 2, space - rightWhole)), 1, space - 1);
    m_titleRow->setStretchFactor(m_leftTitle, left);
    m_titleRow->setStretchFactor(m_rightTitle, space - left);
}

QList<WordSpan> DiffView::inlineHighlights(int line) const {
    QList<WordSpan> spans;
    const QTextBlock block = m_inline->document()->findBlockByNumber(line);
    for (auto it = block.begin(); !it.atEnd(); ++it) {
        const QTextFragment f = it.fragment();
        if (f.isValid() && f.charFormat().background().style() != Qt::NoBrush)
            spans.append({f.position() - block.position() - kInlinePrefix, f.length()});
    }
    return spans;
}

void DiffView::clear() {
    m_diff = {};
    m_changeRows.clear();
    m_inlineChangeLines.clear();
    m_current = -1;
    m_inline->clear();
    updateChangeLabel();
    m_left->setSource({});
    m_right->setSource({});
    m_leftTitle->clear();
    m_rightTitle->clear();
    m_summary->clear();
    arrangeHeader();
}

QString DiffView::summary() const {
    if (m_diff.identical())
        return m_diff.rows.empty() ? QString() : tr("identical");
    return tr("+%1 −%2 lines").arg(m_diff.added).arg(m_diff.removed);
}

}  // namespace kerncast
