#pragma once
// Side-by-side diff of two kernel programs (a candidate against its parent, or against the reference): two
// read-only kernel editors kept in step, with added, removed and changed lines marked and blank filler lines where
// one side has nothing, so that corresponding lines stay level.

#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

class QLabel;

namespace kerncast {

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

private:
    void syncVertical(KernelEditor* from, KernelEditor* to);

    KernelEditor* m_left = nullptr;
    KernelEditor* m_right = nullptr;
    QLabel* m_leftTitle = nullptr;
    QLabel* m_rightTitle = nullptr;
    QLabel* m_summary = nullptr;
    SourceDiff m_diff;
    bool m_syncing = false;
};

}  // namespace kerncast
