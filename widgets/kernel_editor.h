#pragma once
// The code editor for kernel programs: the one class that wraps QScintilla, so the rest of the workbench never
// depends on its API.

#include <QList>
#include <QString>
#include <QWidget>

class QAction;
class QsciScintilla;
class QsciLexerCPP;

namespace kerncast {

// A message tied to a 1-based line of the shown file (a parse, validation or compiler error).
struct EditorDiagnostic {
    int line = 0;
    QString message;
};

// Reads compiler messages of the form "file:line: message" (what the engine's compile logs hold), also with a column
// ("file:line:col: message") or in NVRTC's own "file(line): message" form. Lines that name no line of a file are
// skipped; when fileName is given, so are messages about other files (headers), compared by file name only.
QList<EditorDiagnostic> parseCompileLog(const QString& log, const QString& fileName = {});

// How a line of a side-by-side diff is marked: its background and a symbol in the margin.
enum class LineMark { Added, Removed, Changed, Filler };

class KernelEditor : public QWidget {
    Q_OBJECT
public:
    explicit KernelEditor(QWidget* parent = nullptr);
    ~KernelEditor() override;

    // Shows a new file. Clears diagnostics, the undo history and the modified flag.
    void setSource(const QString& text, const QString& fileName = {});
    QString source() const;
    QString fileName() const;

    // Read-only by default: the browser shows library files; editing is opted into.
    void setReadOnly(bool readOnly);
    bool isReadOnly() const;
    bool isModified() const;
    // Marks the text as changed by a person (a draft shown again) or not.
    void setModified(bool modified);

    // Marks each diagnostic's line in the margin and shows its message below the line. Lines outside the file are
    // ignored (a stale message must not point at the wrong code).
    void setDiagnostics(const QList<EditorDiagnostic>& diagnostics);
    void clearDiagnostics();
    // Compile errors, shown like diagnostics (marker, tinted line, message below it) and kept beside them: the
    // one does not clear the other. setSource() clears both.
    void setCompileErrors(const QList<EditorDiagnostic>& errors);
    // Parses a compile log (parseCompileLog, keeping messages about this editor's fileName() when it has one) and
    // shows its errors. Returns how many lines were marked.
    int setCompileLog(const QString& log);
    void clearCompileErrors();
    // 1-based lines that carry an error marker, ascending, read back from the editor itself.
    QList<int> errorLines() const;
    // The message shown below a 1-based line (diagnostics and compile errors, one per line of text).
    QString annotation(int line) const;

    // Marks 1-based lines for a diff. Lines outside the file are ignored.
    void markLines(const QList<int>& lines, LineMark mark);
    void clearLineMarks();
    // 1-based lines carrying a mark, ascending, read back from the editor.
    QList<int> markedLines(LineMark mark) const;
    // Replaces the line numbers in the margin with these labels, one per line (a diff shows each side's own line
    // numbers and leaves filler lines blank). An empty list brings the line numbers back.
    void setLineLabels(const QStringList& labels);

    // Scrolling, for keeping two editors side by side in step. Lines are 1-based; the offset is in pixels.
    int firstVisibleLine() const;
    void setFirstVisibleLine(int line);
    int horizontalOffset() const;
    void setHorizontalOffset(int pixels);

    // "Submit to search" (Ctrl+Return, and in the context menu): emits submitRequested with the current text.
    // Enabled while the editor is editable and holds text.
    QAction* submitAction() const { return m_submitAction; }

    int lineCount() const;
    // 1-based; scrolls the line into view and puts the cursor at its start.
    void goToLine(int line);
    int currentLine() const;

Q_SIGNALS:
    void sourceEdited();
    void submitRequested(const QString& source);
    void firstVisibleLineChanged(int line);
    void horizontalOffsetChanged(int pixels);

private:
    void updateLineNumberMargin();
    void updateSubmitAction();
    void showErrors();

    QList<EditorDiagnostic> m_diagnostics;
    QList<EditorDiagnostic> m_compileErrors;
    QAction* m_submitAction = nullptr;
    int m_markBackground[4] = {-1, -1, -1, -1};  // per LineMark
    int m_markSymbol[4] = {-1, -1, -1, -1};
    bool m_labelled = false;
    bool m_markedModified = false;  // setModified(true): QScintilla keeps no such state itself

    QsciScintilla* m_editor = nullptr;
    QsciLexerCPP* m_lexer = nullptr;
    QString m_fileName;
    int m_errorMarker = -1;
    int m_errorBackground = -1;
};

}  // namespace kerncast
