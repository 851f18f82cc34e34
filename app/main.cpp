#include "app/gui/command_line.h"
#include "app/gui/main_window.h"
#include "app/gui/translations.h"

#include <QApplication>
#include <QIcon>
#include <QLocale>
#include <QTimer>

#include <cstdio>

namespace {

// Without a display Qt aborts with a message about platform plugins. Answer --help and take screenshots on the
// offscreen platform instead, and otherwise say how to run.
bool prepareHeadless(int argc, char** argv) {
    if (!qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
        !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        return true;
    bool windowless = false;
    for (int i = 1; i < argc; ++i) {
        const QByteArray arg(argv[i]);
        if (arg == "-platform")
            return true;
        windowless = windowless || arg == "--screenshot" || arg.startsWith("--screenshot=") || arg == "--help" ||
                     arg == "-h" || arg == "--version" || arg == "-v";
    }
    if (windowless) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
        return true;
    }
    std::fputs("kerncast: no display (DISPLAY and WAYLAND_DISPLAY are unset).\n"
               "  Run it on a desktop or with ssh -X, or save a screenshot instead:\n"
               "    kerncast --screenshot kerncast.png\n"
               "  kerncast-cli needs no display.\n",
               stderr);
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    if (!prepareHeadless(argc, argv))
        return 1;
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Kerncast"));
    QApplication::setApplicationName(QStringLiteral("kerncast"));
    QApplication::setApplicationDisplayName(QStringLiteral("Kerncast"));
    QApplication::setApplicationVersion(QStringLiteral(KERNCAST_VERSION));

    // The system's language first, so that --help speaks it; then the one --language names, if any.
    kerncast::install_translations(QLocale());
    QString helpText;
    auto options = kerncast::parse_command_line(QApplication::arguments(), &helpText);
    if (!options.language.isEmpty()) {
        kerncast::install_translations(kerncast::language_locale(options.language, nullptr));
        options = kerncast::parse_command_line(QApplication::arguments(), &helpText);
    }
    if (options.helpShown) {
        std::fputs(qPrintable(helpText), stdout);
        return 0;
    }
    if (!options.error.isEmpty()) {
        std::fprintf(stderr, "kerncast: %s\n", qPrintable(options.error));
        return 2;
    }

    const bool scripted = !options.screenshotFile.isEmpty() || options.quitAfterSeconds >= 0;
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/kerncast-256.png")));
    kerncast::MainWindow window({options.resourcesDir, !scripted});
    window.show();

    int exitCode = 0;
    bool shot = false;
    // Saves the window once (after one more turn of the event loop, so that views lay out what just arrived).
    const auto takeScreenshot = [&](bool thenQuit) {
        if (shot || options.screenshotFile.isEmpty())
            return;
        shot = true;
        if (!window.grab().save(options.screenshotFile, "PNG")) {
            std::fprintf(stderr, "kerncast: could not write %s\n", qPrintable(options.screenshotFile));
            exitCode = 1;
        } else {
            std::fprintf(stderr, "kerncast: saved %s\n", qPrintable(options.screenshotFile));
        }
        if (thenQuit || exitCode)
            window.close();
    };
    const auto screenshotSoon = [&] {
        QTimer::singleShot(500, &window, [&] { takeScreenshot(options.quitAfterSeconds < 0); });
    };
    if (options.demo) {
        window.startDemo();
        // The picture is of the finished search; failing shows the error in the window, which is pictured too.
        QObject::connect(&window, &kerncast::MainWindow::searchEnded, &window, screenshotSoon);
    } else if (!options.runFile.isEmpty()) {
        QObject::connect(&window, &kerncast::MainWindow::ready, &window, [&] { window.openRun(options.runFile); });
        QObject::connect(&window, &kerncast::MainWindow::runLoaded, &window, screenshotSoon);
        QObject::connect(&window, &kerncast::MainWindow::errorShown, &window, screenshotSoon);
    } else {
        QObject::connect(&window, &kerncast::MainWindow::ready, &window, screenshotSoon);
    }
    if (options.quitAfterSeconds >= 0)
        QTimer::singleShot(static_cast<int>(options.quitAfterSeconds * 1000), &window, [&] {
            takeScreenshot(false);  // what there is by then, if the results did not come in time
            window.close();         // stops a running search first; the application quits with its last window
        });

    const int rc = app.exec();
    return exitCode ? exitCode : rc;
}
