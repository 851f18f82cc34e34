#include "app/gui/command_line.h"

#include "app/gui/translations.h"
#include "engine/cli/cli.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace kerncast {

CommandLine parse_command_line(const QStringList& arguments, QString* helpText) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QCoreApplication::translate("CommandLine", "Kerncast: forecast-guided evolutionary search over CUDA kernels."));
    const auto help = parser.addHelpOption();
    const auto version = parser.addVersionOption();
    const QCommandLineOption resources(
        QStringLiteral("resources"),
        QCoreApplication::translate("CommandLine", "Folder with problems/ and recordings/."), QStringLiteral("dir"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QCoreApplication::translate("CommandLine",
                                    "Save a PNG of the window once it shows results (the problems; with --run the "
                                    "opened run; with --demo the finished search), then quit (unless --quit-after "
                                    "is given)."),
        QStringLiteral("file"));
    const QCommandLineOption demo(
        QStringLiteral("demo"),
        QCoreApplication::translate("CommandLine", "Start the demo at once: a search over softmax on the replay device "
                                                   "with the local surrogate and selective gating."));
    const QCommandLineOption run(QStringLiteral("run"),
                                 QCoreApplication::translate("CommandLine", "Open a run file (a search or an "
                                                                            "evaluation)."),
                                 QStringLiteral("file"));
    const QCommandLineOption quitAfter(QStringLiteral("quit-after"),
                                       QCoreApplication::translate("CommandLine", "Quit after this many seconds."),
                                       QStringLiteral("seconds"));
    const QCommandLineOption language(
        QStringLiteral("language"),
        QCoreApplication::translate("CommandLine", "Language of the interface: de (German) or en (English); "
                                                   "default: the system's."),
        QStringLiteral("code"));
    parser.addOption(resources);
    parser.addOption(screenshot);
    parser.addOption(quitAfter);
    parser.addOption(demo);
    parser.addOption(run);
    parser.addOption(language);
    parser.addPositionalArgument(QStringLiteral("run-file"),
                                 QCoreApplication::translate("CommandLine", "A run file to open (as --run)."),
                                 QStringLiteral("[run-file]"));

    CommandLine result;
    if (!parser.parse(arguments)) {
        result.error = parser.errorText();
        return result;
    }
    // Before --help, so that the help can be given in that language.
    if (parser.isSet(language)) {
        bool ok = false;
        language_locale(parser.value(language), &ok);
        if (!ok) {
            result.error = QCoreApplication::translate("CommandLine", "--language needs a language code such as de "
                                                                      "or en, found '%1'")
                               .arg(parser.value(language));
            return result;
        }
        result.language = parser.value(language);
    }
    if (parser.isSet(help) || parser.isSet(version)) {
        result.helpShown = true;
        if (helpText)
            *helpText = parser.isSet(help) ? parser.helpText()
                                           : QCoreApplication::applicationName() + QLatin1Char(' ') +
                                                 QCoreApplication::applicationVersion() + QLatin1Char('\n');
        return result;
    }
    // `kerncast RUN_FILE` (how a file manager opens a run through the .desktop entry's Exec=kerncast %f) is --run.
    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1) {
        result.error = QCoreApplication::translate("CommandLine", "Unexpected argument: %1").arg(positional.at(1));
        return result;
    }
    if (!positional.isEmpty() && parser.isSet(run)) {
        result.error = QCoreApplication::translate("CommandLine", "Give the run file once: as an argument or with "
                                                                  "--run, not both");
        return result;
    }
    const QString runArgument = positional.isEmpty() ? parser.value(run) : positional.constFirst();

    result.resourcesDir =
        parser.isSet(resources) ? parser.value(resources) : QString::fromStdString(cli::resources_dir());
    result.resourcesDir = QDir::cleanPath(QFileInfo(result.resourcesDir).absoluteFilePath());
    if (!QFileInfo(result.resourcesDir).isDir()) {
        result.error =
            QCoreApplication::translate("CommandLine", "Resources folder not found: %1").arg(result.resourcesDir);
        return result;
    }
    result.screenshotFile = parser.value(screenshot);
    result.demo = parser.isSet(demo);
    if (!runArgument.isEmpty()) {
        result.runFile = QFileInfo(runArgument).absoluteFilePath();
        if (!QFileInfo(result.runFile).isFile()) {
            result.error = QCoreApplication::translate("CommandLine", "Run file not found: %1").arg(result.runFile);
            return result;
        }
    }
    if (result.demo && !result.runFile.isEmpty()) {
        result.error = QCoreApplication::translate("CommandLine", "--demo and --run cannot be combined: the demo "
                                                                  "starts a new run");
        return result;
    }
    if (parser.isSet(quitAfter)) {
        bool ok = false;
        result.quitAfterSeconds = parser.value(quitAfter).toDouble(&ok);
        if (!ok || result.quitAfterSeconds < 0) {
            result.error = QCoreApplication::translate("CommandLine", "--quit-after needs a number of seconds >= 0, "
                                                                      "found '%1'")
                               .arg(parser.value(quitAfter));
            return result;
        }
    }
    return result;
}

}  // namespace kerncast
