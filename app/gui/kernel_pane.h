#pragma once
// The centre of the workbench: the kernel editor with a line above it that says what it shows, either one of the
// selected problem's programs (chosen in the program selector; validation errors marked on their lines) or a
// candidate of the run on show (editable while its search runs, for Submit to search).

#include "widgets/problem_entry.h"

#include <QStringList>
#include <QWidget>

#include <optional>
#include <string>

class QComboBox;
class QLabel;

namespace kerncast {

class ElidedLabel;
class KernelEditor;

class KernelPane : public QWidget {
    Q_OBJECT
public:
    explicit KernelPane(QWidget* parent = nullptr);

    KernelEditor* editor() const { return m_editor; }

    // Lists the problem's programs and shows the first (nullptr: nothing).
    void showProblem(const ProblemEntry* entry);
    QStringList programLabels() const;
    bool selectProgram(int index);
    int selectedProgram() const;
    // Opens the program file that an error names at its line; false when it is none of the problem's programs.
    bool showProgramError(const QString& file, int line);
    // A file by path (an error's file that is not a program of the problem).
    void showFile(const QString& file, int line);

    // A candidate: its title (rich text), its source under the name its compile log uses, and the log.
    void showCandidate(const QString& title, const QString& source, const QString& fileName, const QString& compileLog,
                       bool editable);
    bool showsCandidate() const;
    void setCandidateEditable(bool editable);

Q_SIGNALS:
    void submitRequested(const QString& source);

private:
    void showProgram(int index);
    void setCandidateMode(bool candidate, bool editable);

    QComboBox* m_programSelector = nullptr;
    ElidedLabel* m_programPath = nullptr;
    ElidedLabel* m_candidateTitle = nullptr;
    KernelEditor* m_editor = nullptr;
    std::optional<ProblemEntry> m_entry;  // a copy: the problem model replaces its entries on every reload
};

// Two paths name the same file (after resolving . and .. and links).
bool sameFile(const std::string& a, const std::string& b);

}  // namespace kerncast
