#include "widgets/kernel_editor.h"

#include <QAction>
#include <QContextMenuEvent>
#include <QFileInfo>
#include <QFontDatabase>
#include <QMap>
#include <QMenu>
#include <QRegularExpression>
#include <QVBoxLayout>

// QScintilla's headers use the `signals` and `slots` keywords that QT_NO_KEYWORDS takes away; lend them for the
// duration of these includes only.
#define signals Q_SIGNALS
#define slots Q_SLOTS
#include <Qsci/qscilexercpp.h>
#include <Qsci/qsciscintilla.h>
#undef signals
#undef slots

namespace kerncast {

namespace {

// CUDA adds a handful of keywords to C++; the lexer's second keyword set is drawn like types so they stand out.
class CudaLexer : public QsciLexerCPP {
public:
    using QsciLexerCPP::QsciLexerCPP;
    const char* keywords(int set) const override {
        if (set == 2)
            return "__global__ __device__ __host__ __shared__ __constant__ __restrict__ __forceinline__ "
                   "__noinline__ __launch_bounds__ __syncthreads __syncwarp __shfl_sync __shfl_down_sync "
                   "__shfl_xor_sync __ldg threadIdx blockIdx blockDim gridDim warpSize "
                   "float2 float4 int2 int4 half half2 __half __half2 __nv_bfloat16 __nv_bfloat162 dim3";
        return QsciLexerCPP::keywords(set);
    }
};

// The standard context menu plus the editor's own actions (Submit to search).
class ScintillaWithActions : public QsciScintilla {
public:
    using QsciScintilla::QsciScintilla;

protected:
    void contextMenuEvent(QContextMenuEvent* event) override {
        if (!contextMenuNeeded(event->pos().x(), event->pos().y()))
            return;
        QMenu* menu = createStandardContextMenu();
        if (!menu)
            return;
        // The editor's own actions act on what was typed, so a read-only view (a library file, a diff) has none.
        const auto extra = parentWidget() && !isReadOnly() ? parentWidget()->actions() : QList<QAction*>{};
        if (!extra.isEmpty()) {
            menu->addSeparator();
            menu->addActions(extra);
        }
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(event->globalPos());
    }
};

constexpr int kAnnotationStyle = 200;  // past the lexer's styles

int markIndex(LineMark mark) { return static_cast<int>(mark); }

}  // namespace

QList<EditorDiagnostic> parseCompileLog(const QString& log, const QString& fileName) {
    // "file:line: message" or "file:line:col: message" (ours, gcc/clang style); "file(line): message" (NVRTC).
    static const QRegularExpression colon(QStringLiteral(R"(^([^:]+):(\d+):(?:\d+:)?\s*(.*)$)"));
    static const QRegularExpression paren(QStringLiteral(R"(^([^:()]+)\((\d+)\):\s*(.*)$)"));
    const QString wanted = QFileInfo(fileName).fileName();
    QList<EditorDiagnostic> out;
    for (const QString& raw : log.split(QLatin1Char('\n'))) {
        const QString line = raw.trimmed();
        auto match = colon.match(line);
        if (!match.hasMatch())
            match = paren.match(line);
        if (!match.hasMatch())
            continue;
        const int number = match.captured(2).toInt();
        if (number <= 0)
            continue;
        if (!wanted.isEmpty() && QFileInfo(match.captured(1)).fileName() != wanted)
            continue;
        out.append({number, match.captured(3)});
    }
    return out;
}

KernelEditor::KernelEditor(QWidget* parent) : QWidget(parent) {
    m_editor = new ScintillaWithActions(this);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_editor);
    setFocusProxy(m_editor);

    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    m_lexer = new CudaLexer(m_editor);
    m_lexer->setDefaultFont(mono);
    m_lexer->setFont(mono);
    // @kerncast launch-plan lines are comments to the compiler but the heart of the file to a reader.
    m_lexer->setColor(QColor(0x0b, 0x6e, 0x4f), QsciLexerCPP::CommentLine);
    m_lexer->setColor(QColor(0x6a, 0x1b, 0x9a), QsciLexerCPP::KeywordSet2);
    m_editor->setLexer(m_lexer);

    m_editor->setUtf8(true);
    m_editor->setMarginType(0, QsciScintilla::NumberMargin);
    m_editor->setMarginsFont(mono);
    m_editor->setMarginLineNumbers(0, true);
    m_editor->setMarginType(1, QsciScintilla::SymbolMargin);
    m_editor->setMarginWidth(1, 16);
    m_editor->setMarginSensitivity(1, false);
    m_editor->setFolding(QsciScintilla::NoFoldStyle);
    m_editor->setIndentationsUseTabs(false);
    m_editor->setIndentationWidth(4);
    m_editor->setTabWidth(4);
    m_editor->setAutoIndent(true);
    m_editor->setBraceMatching(QsciScintilla::SloppyBraceMatch);
    m_editor->setCaretLineVisible(true);
    m_editor->setCaretLineBackgroundColor(QColor(0xf2, 0xf5, 0xfa));
    m_editor->setEdgeMode(QsciScintilla::EdgeLine);
    m_editor->setEdgeColumn(120);
    m_editor->setEdgeColor(QColor(0xe0, 0xe0, 0xe0));
    m_editor->setWrapMode(QsciScintilla::WrapNone);

    m_errorMarker = m_editor->markerDefine(QsciScintilla::Circle);
    m_editor->setMarkerBackgroundColor(QColor(0xd3, 0x2f, 0x2f), m_errorMarker);
    m_editor->setMarkerForegroundColor(QColor(0xb7, 0x1c, 0x1c), m_errorMarker);
    m_errorBackground = m_editor->markerDefine(QsciScintilla::Background);
    m_editor->setMarkerBackgroundColor(QColor(0xfd, 0xec, 0xea), m_errorBackground);
    // Only the symbol marker shows in the margin; the background one tints the line itself.
    m_editor->setMarginMarkerMask(1, 1 << m_errorMarker);
    m_editor->setMarginMarkerMask(0, 0);

    m_editor->SendScintilla(QsciScintillaBase::SCI_STYLESETFORE, kAnnotationStyle, QColor(0xb7, 0x1c, 0x1c));
    m_editor->SendScintilla(QsciScintillaBase::SCI_STYLESETBACK, kAnnotationStyle, QColor(0xfd, 0xec, 0xea));
    m_editor->setAnnotationDisplay(QsciScintilla::AnnotationBoxed);

    // Diff marks: a tinted line, and a symbol in the margin so that the kind does not rest on colour alone.
    const struct {
        LineMark mark;
        QColor background;
        char symbol;
    } marks[] = {
        {LineMark::Added, QColor(0xe6, 0xf4, 0xea), '+'},
        {LineMark::Removed, QColor(0xfd, 0xec, 0xea), '-'},
        {LineMark::Changed, QColor(0xff, 0xf4, 0xd6), '~'},
        {LineMark::Filler, QColor(0xee, 0xee, 0xee), ' '},
    };
    int symbolMask = 1 << m_errorMarker;
    for (const auto& m : marks) {
        const int i = markIndex(m.mark);
        m_markBackground[i] = m_editor->markerDefine(QsciScintilla::Background);
        m_editor->setMarkerBackgroundColor(m.background, m_markBackground[i]);
        m_markSymbol[i] = m_editor->markerDefine(m.symbol);
        m_editor->setMarkerForegroundColor(m.background.darker(250), m_markSymbol[i]);
        symbolMask |= 1 << m_markSymbol[i];
    }
    m_editor->setMarginMarkerMask(1, symbolMask);

    m_submitAction = new QAction(tr("Submit to search"), this);
    m_submitAction->setToolTip(tr("Add this kernel program to the running search as a hand-edited candidate"));
    m_submitAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
    m_submitAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(m_submitAction);
    connect(m_submitAction, &QAction::triggered, this, [this] {
        if (m_submitAction->isEnabled())
            Q_EMIT submitRequested(source());
    });

    connect(m_editor, &QsciScintilla::textChanged, this, [this] {
        updateLineNumberMargin();
        updateSubmitAction();
        if (!m_editor->isReadOnly())
            Q_EMIT sourceEdited();
    });
    // Scintilla moves its scroll bars with their signals blocked; it reports scrolling (by any means) here, once
    // the view has been redrawn.
    connect(m_editor, &QsciScintillaBase::SCN_UPDATEUI, this, [this](int updated) {
        if (updated & QsciScintillaBase::SC_UPDATE_V_SCROLL)
            Q_EMIT firstVisibleLineChanged(firstVisibleLine());
        if (updated & QsciScintillaBase::SC_UPDATE_H_SCROLL)
            Q_EMIT horizontalOffsetChanged(horizontalOffset());
    });

    setReadOnly(true);
    updateLineNumberMargin();
}

KernelEditor::~KernelEditor() = default;

void KernelEditor::setSource(const QString& text, const QString& fileName) {
    m_fileName = fileName;
    m_diagnostics.clear();
    m_compileErrors.clear();
    showErrors();
    clearLineMarks();
    setLineLabels({});
    const bool readOnly = m_editor->isReadOnly();
    // QScintilla refuses setText() on a read-only document.
    m_editor->setReadOnly(false);
    {
        const QSignalBlocker block(m_editor);
        m_editor->setText(text);
    }
    m_editor->setReadOnly(readOnly);
    m_editor->SendScintilla(QsciScintillaBase::SCI_EMPTYUNDOBUFFER);
    m_editor->setModified(false);
    m_markedModified = false;
    m_editor->setCursorPosition(0, 0);
    updateLineNumberMargin();
    updateSubmitAction();
}

QString KernelEditor::source() const { return m_editor->text(); }

QString KernelEditor::fileName() const { return m_fileName; }

void KernelEditor::setReadOnly(bool readOnly) {
    m_editor->setReadOnly(readOnly);
    m_editor->setCaretLineVisible(!readOnly);
    updateSubmitAction();
}

bool KernelEditor::isReadOnly() const { return m_editor->isReadOnly(); }

bool KernelEditor::isModified() const { return m_markedModified || m_editor->isModified(); }

void KernelEditor::setModified(bool modified) {
    // QScintilla can only clear its modified state: a draft shown again is marked here.
    m_markedModified = modified;
    if (!modified)
        m_editor->setModified(false);
}

void KernelEditor::setDiagnostics(const QList<EditorDiagnostic>& diagnostics) {
    m_diagnostics = diagnostics;
    showErrors();
}

void KernelEditor::clearDiagnostics() {
    m_diagnostics.clear();
    showErrors();
}

void KernelEditor::setCompileErrors(const QList<EditorDiagnostic>& errors) {
    m_compileErrors = errors;
    showErrors();
}

int KernelEditor::setCompileLog(const QString& log) {
    setCompileErrors(parseCompileLog(log, m_fileName));
    return static_cast<int>(errorLines().size());
}

void KernelEditor::clearCompileErrors() {
    m_compileErrors.clear();
    showErrors();
}

void KernelEditor::showErrors() {
    m_editor->markerDeleteAll(m_errorMarker);
    m_editor->markerDeleteAll(m_errorBackground);
    m_editor->clearAnnotations();
    QMap<int, QStringList> messages;
    for (const QList<EditorDiagnostic>* list : {&m_diagnostics, &m_compileErrors})
        for (const auto& d : *list)
            if (d.line >= 1 && d.line <= lineCount())
                messages[d.line] << d.message;
    for (auto it = messages.cbegin(); it != messages.cend(); ++it) {
        const int line = it.key() - 1;
        m_editor->markerAdd(line, m_errorMarker);
        m_editor->markerAdd(line, m_errorBackground);
        m_editor->annotate(line, it.value().join(QLatin1Char('\n')), kAnnotationStyle);
    }
}

QList<int> KernelEditor::errorLines() const {
    QList<int> lines;
    for (int line = m_editor->markerFindNext(0, 1u << m_errorMarker); line >= 0;
         line = m_editor->markerFindNext(line + 1, 1u << m_errorMarker))
        lines << line + 1;
    return lines;
}

QString KernelEditor::annotation(int line) const {
    return line >= 1 && line <= lineCount() ? m_editor->annotation(line - 1) : QString();
}

void KernelEditor::markLines(const QList<int>& lines, LineMark mark) {
    const int i = markIndex(mark);
    for (int line : lines) {
        if (line < 1 || line > lineCount())
            continue;
        m_editor->markerAdd(line - 1, m_markBackground[i]);
        m_editor->markerAdd(line - 1, m_markSymbol[i]);
    }
}

void KernelEditor::clearLineMarks() {
    for (int i = 0; i < 4; ++i) {
        m_editor->markerDeleteAll(m_markBackground[i]);
        m_editor->markerDeleteAll(m_markSymbol[i]);
    }
}

QList<int> KernelEditor::markedLines(LineMark mark) const {
    const unsigned mask = 1u << m_markBackground[markIndex(mark)];
    QList<int> lines;
    for (int line = m_editor->markerFindNext(0, mask); line >= 0; line = m_editor->markerFindNext(line + 1, mask))
        lines << line + 1;
    return lines;
}

void KernelEditor::setLineLabels(const QStringList& labels) {
    m_labelled = !labels.isEmpty();
    if (!m_labelled) {
        m_editor->clearMarginText();
        m_editor->setMarginType(0, QsciScintilla::NumberMargin);
        m_editor->setMarginLineNumbers(0, true);
        return;
    }
    m_editor->setMarginType(0, QsciScintilla::TextMarginRightJustified);
    m_editor->clearMarginText();
    const int lines = std::min(static_cast<int>(labels.size()), lineCount());
    for (int line = 0; line < lines; ++line)
        if (!labels[line].isEmpty())
            m_editor->setMarginText(line, labels[line], QsciScintillaBase::STYLE_LINENUMBER);
}

int KernelEditor::firstVisibleLine() const {
    const auto visible = m_editor->firstVisibleLine();
    return static_cast<int>(m_editor->SendScintilla(QsciScintillaBase::SCI_DOCLINEFROMVISIBLE, visible)) + 1;
}

void KernelEditor::setFirstVisibleLine(int line) {
    const int target = qBound(1, line, qMax(1, lineCount())) - 1;
    m_editor->setFirstVisibleLine(
        static_cast<int>(m_editor->SendScintilla(QsciScintillaBase::SCI_VISIBLEFROMDOCLINE, target)));
}

int KernelEditor::horizontalOffset() const {
    return static_cast<int>(m_editor->SendScintilla(QsciScintillaBase::SCI_GETXOFFSET));
}

void KernelEditor::setHorizontalOffset(int pixels) {
    m_editor->SendScintilla(QsciScintillaBase::SCI_SETXOFFSET, qMax(0, pixels));
}

int KernelEditor::lineCount() const { return m_editor->lines(); }

void KernelEditor::goToLine(int line) {
    const int target = qBound(1, line, qMax(1, lineCount())) - 1;
    m_editor->setCursorPosition(target, 0);
    m_editor->ensureLineVisible(target);
    // Leave a little context above an error line rather than pinning it to the top edge.
    m_editor->setFirstVisibleLine(qMax(0, target - 3));
}

int KernelEditor::currentLine() const {
    int line = 0, index = 0;
    m_editor->getCursorPosition(&line, &index);
    return line + 1;
}

void KernelEditor::updateSubmitAction() {
    m_submitAction->setEnabled(!m_editor->isReadOnly() && !m_editor->text().trimmed().isEmpty());
}

void KernelEditor::updateLineNumberMargin() {
    const QString widest = QString(QString::number(qMax(lineCount(), 99)).size() + 1, QLatin1Char('9'));
    m_editor->setMarginWidth(0, widest);
}

}  // namespace kerncast
