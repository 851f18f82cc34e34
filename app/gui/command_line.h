#pragma once
// The kerncast GUI's command line, parsed into a plain value so that it can be tested without starting a window.

#include <QString>
#include <QStringList>

namespace kerncast {

struct CommandLine {
    QString resourcesDir;          // --resources DIR; defaults to the resources the build knows about
    QString screenshotFile;        // --screenshot FILE: save a PNG of the window once it shows results (see main.cpp)
    bool demo = false;             // --demo: start the embedded demo search at once
    QString runFile;               // --run FILE: open a run file (a search or an evaluation)
    double quitAfterSeconds = -1;  // --quit-after SECONDS; < 0: run until the user quits
    QString language;              // --language CODE ("de", "en"); empty: the system's locale
    QString error;                 // non-empty when the arguments are unusable; what to print before exiting with 2
    bool helpShown = false;        // --help/--version were answered; exit 0 without a window
};

// `arguments` as QCoreApplication::arguments() gives them (program name first). Needs a QCoreApplication for the
// application name and version shown by --help/--version.
CommandLine parse_command_line(const QStringList& arguments, QString* helpText = nullptr);

}  // namespace kerncast
