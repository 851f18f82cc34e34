#pragma once
// Diff of two kernel programs (a candidate against its parent, or against the reference, or any two). Side by side:
// two read-only kernel editors kept in step, with added, removed and changed lines marked and blank filler lines
// where one side has nothing, so that corresponding lines stay level. Inline: one text, each removed line above the
// line that replaced it, the words that differ within a changed line highlighted. Either way the view opens at the
// first change, and Previous/Next Change (Alt+Up, Alt+Down) jump from one run of changed lines to the next.

#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

class QAction;
class QBoxLayout;
class QLabel;
class QPlainTextEdit;
class QStackedWidget;
class QToolButton;

namespace kerncast {

class ElidedLabel;
class KernelEditor;

enum class DiffKind { Same, Changed, Added, Removed };

// One aligned row: the 1-based line on each side, 0 where that side has a filler line.
struct DiffRow {
    DiffKind kind = DiffKind::Same;
    int leftLine = 0;
    int rightLine = 0;
    bool operator==(const DiffRow&) const = default;
};

struct SourceDiff {
    std::vector<DiffRow> rows;
    int added = 0;    // lines of the right side that are not in the left (a changed line counts here and below)
    int removed = 0;  // lines of the left side that are not in the right
    bool identical() const { return added == 0 && removed == 0; }
};

// A text's lines: a trailing newline does not start another line, and "\r\n" counts as one line break.
QStringList splitSourceLines(const QString& text);
// A shortest edit script between the line lists (dtl), aligned for side-by-side display: within each run of edits
// removed lines are paired with added lines as changed rows, in order; the rest are removed or added rows.
SourceDiff diffLines(const QStringList& left, const QStringList& right);

// Characters of a line that a word-level diff marks: `length` characters from `start`.
struct WordSpan {
    int start = 0;
    int length = 0;
    bool operator==(const WordSpan&) const = default;
};
struct WordDiff {
    QList<WordSpan> removed;  // in the left line
    QList<WordSpan> added;    // in the right line
};
// A line's words: identifiers and numbers, runs of white space, and every other character on its own.
QStringList splitWords(const QString& line);
// The words of a changed line pair that differ (a shortest edit script over splitWords), adjacent ones merged.
WordDiff diffWords(const QString& left, const QString& right);

class DiffView : public QWidget {
    Q_OBJECT
public:
    explicit DiffView(QWidget* parent = nullptr);

    // Shows the diff of two sources; the titles name each side (e.g. "#12 parent", "#40 LLM rewrite").
    void setSources(const QString& left, const QString& right, const QString& leftTitle = {},
                    const QString& rightTitle = {});
    void clear();

    const SourceDiff& diff() const { return m_diff; }
    // "+3 −2 lines", or that the sources are identical.
    QString summary() const;

    KernelEditor* leftEditor() const { return m_left; }
    KernelEditor* rightEditor() const { return m_right; }

    // One text with the removed lines above the added ones, or the two sides beside each other.
    void setInline(bool inlineMode);
    bool isInline() const;
    QPlainTextEdit* inlineView() const { return m_inline; }
    QAction* inlineAction() const { return m_inlineAction; }
    QAction* nextChangeAction() const { return m_nextAction; }
    QAction* previousChangeAction() const { return m_previousAction; }

    // Runs of changed lines ("changes"): how many, which one was jumped to last (-1: none), and where each starts.
    int changeCount() const { return static_cast<int>(m_changeRows.size()); }
    int currentChange() const { return m_current; }
    // The 0-based diff row that starts a change, and the 0-based line of the inline text that shows it.
    int changeRow(int change) const;
    int inlineLineOfChange(int change) const;
    // Scrolls both modes to a change (clamped to the first and last) and makes it current.
    void showChange(int change);
    void nextChange();
    void previousChange();

    // The inline text's marked character ranges of one 0-based line (word-level highlights), for tests.
    QList<WordSpan> inlineHighlights(int line) const;

    // The titles over the two sides: shortened with "…" on a narrow dock, the whole title in their tool tips.
    ElidedLabel* leftTitleLabel() const { return m_leftTitle; }
    ElidedLabel* rightTitleLabel() const { return m_rightTitle; }
    // Whether the change position and its buttons sit on a line of their own under the titles (a narrow dock).
    bool headerWrapped() const;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    // The navigation joins the titles' line when both fit whole beside it, else it takes a line of its own.
    void arrangeHeader();
    void syncVertical(KernelEditor* from, KernelEditor* to);
    void buildInline(const QStringList& leftLines, const QStringList& rightLines);
    void updateChangeLabel();

    KernelEditor* m_left = nullptr;
    KernelEditor* m_right = nullptr;
    ElidedLabel* m_leftTitle = nullptr;
    ElidedLabel* m_rightTitle = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_position = nullptr;
    QWidget* m_navigation = nullptr;  // the change position, Previous, Next and Inline
    QBoxLayout* m_titleRow = nullptr;
    QBoxLayout* m_navigationRow = nullptr;
    QStackedWidget* m_stack = nullptr;
    QWidget* m_sideBySide = nullptr;
    QPlainTextEdit* m_inline = nullptr;
    QAction* m_inlineAction = nullptr;
    QAction* m_nextAction = nullptr;
    QAction* m_previousAction = nullptr;
    SourceDiff m_diff;
    std::vector<int> m_changeRows;         // first diff row of each change
    std::vector<int> m_inlineChangeLines;  // first inline line of each change
    int m_current = -1;
    bool m_syncing = false;
};

}  // namespace kerncast
