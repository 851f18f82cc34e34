#include "widgets/kernel_editor.h"

#include "tests/support/fixture_text.h"

#include <QAbstractScrollArea>
#include <QAction>
#include <QApplication>
#include <QContextMenuEvent>
#include <QMenu>
#include <QSignalSpy>
#include <QTest>

using namespace kerncast;

class TestKernelEditor : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void showsTheFileItWasGiven() {
        const QString text = test::fixtureText(QStringLiteral("problems/saxpy_fixture/family.cu"));
        QVERIFY2(!text.isEmpty(), "fixture problems/saxpy_fixture/family.cu is missing");
        KernelEditor editor;
        editor.setSource(text, QStringLiteral("family.cu"));
        QCOMPARE(editor.source(), text);
        QCOMPARE(editor.fileName(), QStringLiteral("family.cu"));
        QCOMPARE(editor.lineCount(), text.count(QLatin1Char('\n')) + 1);
        QVERIFY(!editor.isModified());
    }

    void readOnlyByDefaultIgnoresTyping() {
        KernelEditor editor;
        editor.setSource(QStringLiteral("__global__ void k() {}\n"));
        QVERIFY(editor.isReadOnly());
        QSignalSpy edited(&editor, &KernelEditor::sourceEdited);
        QTest::keyClicks(editor.focusProxy(), QStringLiteral("xyz"));
        QCOMPARE(editor.source(), QStringLiteral("__global__ void k() {}\n"));
        QCOMPARE(edited.count(), 0);
    }

    void editableAcceptsTypingAndReportsIt() {
        KernelEditor editor;
        editor.setSource(QStringLiteral("int a;\n"));
        editor.setReadOnly(false);
        QSignalSpy edited(&editor, &KernelEditor::sourceEdited);
        QTest::keyClicks(editor.focusProxy(), QStringLiteral("// x"));
        QVERIFY(editor.source().startsWith(QStringLiteral("// x")));
        QVERIFY(editor.isModified());
        QVERIFY(edited.count() > 0);
    }

    // A read-only editor must still show the next file (QScintilla itself refuses text on read-only documents).
    void newSourceReplacesTextWhileReadOnly() {
        KernelEditor editor;
        editor.setSource(QStringLiteral("first\n"));
        editor.setSource(QStringLiteral("second\n"));
        QCOMPARE(editor.source(), QStringLiteral("second\n"));
        QVERIFY(editor.isReadOnly());
    }

    void errorMarkers_data() {
        QTest::addColumn<QList<int>>("lines");
        QTest::addColumn<QList<int>>("marked");
        QTest::newRow("one") << QList<int>{2} << QList<int>{2};
        QTest::newRow("several, unordered") << QList<int>{5, 1, 3} << QList<int>{1, 3, 5};
        QTest::newRow("same line twice") << QList<int>{4, 4} << QList<int>{4};
        QTest::newRow("first and last line") << QList<int>{1, 6} << QList<int>{1, 6};
        QTest::newRow("outside the file is ignored") << QList<int>{0, -1, 7, 99} << QList<int>{};
    }
    void errorMarkers() {
        QFETCH(QList<int>, lines);
        QFETCH(QList<int>, marked);
        KernelEditor editor;
        editor.setSource(QStringLiteral("a\nb\nc\nd\ne\nf"));
        QCOMPARE(editor.lineCount(), 6);
        QList<EditorDiagnostic> diagnostics;
        for (int line : lines)
            diagnostics.append({line, QStringLiteral("expected something on line %1").arg(line)});
        editor.setDiagnostics(diagnostics);
        QCOMPARE(editor.errorLines(), marked);
    }

    void newFileClearsOldMarkers() {
        KernelEditor editor;
        editor.setSource(QStringLiteral("a\nb\nc\n"));
        editor.setDiagnostics({{2, QStringLiteral("bad")}});
        QCOMPARE(editor.errorLines(), QList<int>{2});
        editor.setSource(QStringLiteral("x\ny\nz\n"));
        QVERIFY(editor.errorLines().isEmpty());
        editor.setDiagnostics({{1, QStringLiteral("bad")}});
        editor.clearDiagnostics();
        QVERIFY(editor.errorLines().isEmpty());
    }

    void parsesCompileLogs_data() {
        QTest::addColumn<QString>("log");
        QTest::addColumn<QString>("fileName");
        QTest::addColumn<QList<int>>("lines");
        QTest::addColumn<QStringList>("messages");
        QTest::newRow("engine's format") << "kernel.cu:3: error: expected a \";\"\nkernel.cu:7: warning: unused x\n"
                                         << "kernel.cu" << QList<int>{3, 7}
                                         << QStringList{"error: expected a \";\"", "warning: unused x"};
        QTest::newRow("with a column") << "/tmp/k/kernel.cu:12:5: error: bad"
                                       << "kernel.cu" << QList<int>{12} << QStringList{"error: bad"};
        QTest::newRow("parentheses in the message")
            << "kernel.cu:9: error: too few arguments in call foo(2): x"
            << "kernel.cu" << QList<int>{9} << QStringList{"error: too few arguments in call foo(2): x"};
        QTest::newRow("nvrtc's own") << "kernel.cu(4): error: identifier \"x\" is undefined"
                                     << "kernel.cu" << QList<int>{4}
                                     << QStringList{"error: identifier \"x\" is undefined"};
        QTest::newRow("other files are left out") << "cub/block.cuh:88: error: in a header\nkernel.cu:2: error: here"
                                                  << "kernel.cu" << QList<int>{2} << QStringList{"error: here"};
        QTest::newRow("any file without a name") << "a.cu:1: x\nb.cu:2: y"
                                                 << "" << QList<int>{1, 2} << QStringList{"x", "y"};
        QTest::newRow("lines without a location") << "nvrtc: error: invalid option\n  ^\nkernel.cu:0: error: whole file"
                                                  << "kernel.cu" << QList<int>{} << QStringList{};
    }
    void parsesCompileLogs() {
        QFETCH(QString, log);
        QFETCH(QString, fileName);
        QFETCH(QList<int>, lines);
        QFETCH(QStringList, messages);
        const auto parsed = parseCompileLog(log, fileName);
        QList<int> gotLines;
        QStringList gotMessages;
        for (const auto& d : parsed) {
            gotLines << d.line;
            gotMessages << d.message;
        }
        QCOMPARE(gotLines, lines);
        QCOMPARE(gotMessages, messages);
    }

    // Compile errors sit on their lines beside validation errors; each can be cleared without the other.
    void compileErrorsAreAnnotated() {
        KernelEditor editor;
        editor.setSource(QStringLiteral("a\nb\nc\nd\n"), QStringLiteral("kernel.cu"));
        editor.setDiagnostics({{1, QStringLiteral("launch k: unknown argument 'z'")}});
        QCOMPARE(editor.setCompileLog(QStringLiteral("kernel.cu:3: error: expected a \";\"\n"
                                                     "kernel.cu:1: error: identifier \"z\" is undefined\n"
                                                     "kernel.cu:40: error: past the end\n")),
                 2);
        QCOMPARE(editor.errorLines(), (QList<int>{1, 3}));
        QCOMPARE(editor.annotation(3), QStringLiteral("error: expected a \";\""));
        QCOMPARE(editor.annotation(1),
                 QStringLiteral("launch k: unknown argument 'z'\nerror: identifier \"z\" is undefined"));
        QVERIFY(editor.annotation(2).isEmpty());
        editor.clearCompileErrors();
        QCOMPARE(editor.errorLines(), QList<int>{1});
        QCOMPARE(editor.annotation(1), QStringLiteral("launch k: unknown argument 'z'"));
        editor.setCompileErrors({{4, QStringLiteral("error: x")}});
        editor.clearDiagnostics();
        QCOMPARE(editor.errorLines(), QList<int>{4});
        editor.setSource(QStringLiteral("x\ny\nz\nw\n"), QStringLiteral("kernel.cu"));
        QVERIFY(editor.errorLines().isEmpty());
        QVERIFY(editor.annotation(4).isEmpty());
    }

    void lineMarksStayInsideTheFile() {
        KernelEditor editor;
        editor.setSource(QStringLiteral("a\nb\nc"));
        editor.markLines({0, 2, 3, 4}, LineMark::Added);
        editor.markLines({1}, LineMark::Removed);
        QCOMPARE(editor.markedLines(LineMark::Added), (QList<int>{2, 3}));
        QCOMPARE(editor.markedLines(LineMark::Removed), QList<int>{1});
        QVERIFY(editor.markedLines(LineMark::Changed).isEmpty());
        QVERIFY(editor.errorLines().isEmpty());
        editor.clearLineMarks();
        QVERIFY(editor.markedLines(LineMark::Added).isEmpty());
    }

    void submitsTheEditedSource() {
        KernelEditor editor;
        QSignalSpy submitted(&editor, &KernelEditor::submitRequested);
        QAction* submit = editor.submitAction();
        QVERIFY(submit);
        QVERIFY(!submit->text().isEmpty());
        QCOMPARE(submit->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_Return));
        editor.setSource(QStringLiteral("int a;\n"));
        QVERIFY(!submit->isEnabled());  // a library file is read-only
        submit->trigger();
        QCOMPARE(submitted.count(), 0);

        editor.setReadOnly(false);
        QVERIFY(submit->isEnabled());
        QTest::keyClicks(editor.focusProxy(), QStringLiteral("// mine "));
        submit->trigger();
        QCOMPARE(submitted.count(), 1);
        QCOMPARE(submitted[0][0].toString(), QStringLiteral("// mine int a;\n"));

        editor.setSource({});
        QVERIFY(!submit->isEnabled());  // nothing to submit
    }

    void contextMenuOffersSubmit() {
        KernelEditor editor;
        editor.resize(600, 300);
        editor.setSource(QStringLiteral("int a;\n"));
        editor.setReadOnly(false);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        auto* area = qobject_cast<QAbstractScrollArea*>(editor.focusProxy());
        QVERIFY(area);
        const QPoint at(300, 10);
        QContextMenuEvent event(QContextMenuEvent::Mouse, at, area->viewport()->mapToGlobal(at));
        QApplication::sendEvent(area->viewport(), &event);
        QMenu* menu = nullptr;
        for (QWidget* w : QApplication::topLevelWidgets())
            if (auto* m = qobject_cast<QMenu*>(w); m && m->isVisible())
                menu = m;
        QVERIFY(menu);
        QVERIFY(menu->actions().contains(editor.submitAction()));
        menu->close();
    }

    void goToLineMovesTheCursor_data() {
        QTest::addColumn<int>("requested");
        QTest::addColumn<int>("expected");
        QTest::newRow("inside") << 40 << 40;
        QTest::newRow("before the first line") << 0 << 1;
        QTest::newRow("past the end") << 1000 << 120;
    }
    void goToLineMovesTheCursor() {
        QFETCH(int, requested);
        QFETCH(int, expected);
        QStringList lines;
        for (int i = 0; i < 120; ++i)
            lines << QStringLiteral("// line %1").arg(i + 1);
        KernelEditor editor;
        editor.setSource(lines.join(QLatin1Char('\n')));
        editor.goToLine(requested);
        QCOMPARE(editor.currentLine(), expected);
    }
};

QTEST_MAIN(TestKernelEditor)
#include "tst_kernel_editor.moc"
