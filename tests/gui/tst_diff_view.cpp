#include "app/gui/translations.h"
#include "widgets/diff_view.h"
#include "widgets/elided_label.h"
#include "widgets/kernel_editor.h"

#include "tests/support/fixture_text.h"

#include <QAction>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScopeGuard>
#include <QTest>
#include <QTextBlock>
#include <QToolButton>

using namespace kerncast;

namespace {

// Rows written compactly: "=1,1" same, "~2,2" changed, "-3,0" removed, "+0,3" added.
QStringList describe(const SourceDiff& diff) {
    QStringList out;
    for (const DiffRow& r : diff.rows) {
        const char* kind = r.kind == DiffKind::Same      ? "="
                           : r.kind == DiffKind::Changed ? "~"
                           : r.kind == DiffKind::Removed ? "-"
                                                         : "+";
        out << QStringLiteral("%1%2,%3").arg(QLatin1String(kind)).arg(r.leftLine).arg(r.rightLine);
    }
    return out;
}

QStringList lines(const char* text) { return QString::fromLatin1(text).split(QLatin1Char(' '), Qt::SkipEmptyParts); }

}  // namespace

class TestDiffView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void splitsLines_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("empty") << "" << QStringList{};
        QTest::newRow("no final newline") << "a\nb" << QStringList{"a", "b"};
        QTest::newRow("final newline") << "a\nb\n" << QStringList{"a", "b"};
        QTest::newRow("crlf") << "a\r\nb\r\n" << QStringList{"a", "b"};
        QTest::newRow("blank lines kept") << "a\n\nb\n" << QStringList{"a", "", "b"};
    }
    void splitsLines() {
        QFETCH(QString, text);
        QFETCH(QStringList, expected);
        QCOMPARE(splitSourceLines(text), expected);
    }

    void alignsLines_data() {
        QTest::addColumn<QStringList>("left");
        QTest::addColumn<QStringList>("right");
        QTest::addColumn<QStringList>("rows");
        QTest::addColumn<int>("added");
        QTest::addColumn<int>("removed");
        QTest::newRow("identical") << lines("a b c") << lines("a b c") << QStringList{"=1,1", "=2,2", "=3,3"} << 0 << 0;
        QTest::newRow("one changed") << lines("a b c") << lines("a X c") << QStringList{"=1,1", "~2,2", "=3,3"} << 1
                                     << 1;
        QTest::newRow("one added") << lines("a c") << lines("a b c") << QStringList{"=1,1", "+0,2", "=2,3"} << 1 << 0;
        QTest::newRow("one removed") << lines("a b c") << lines("a c") << QStringList{"=1,1", "-2,0", "=3,2"} << 0 << 1;
        QTest::newRow("two replaced by three")
            << lines("a b c d") << lines("a X Y Z d") << QStringList{"=1,1", "~2,2", "~3,3", "+0,4", "=4,5"} << 3 << 2;
        QTest::newRow("three replaced by one")
            << lines("a b c d e") << lines("a X e") << QStringList{"=1,1", "~2,2", "-3,0", "-4,0", "=5,3"} << 1 << 3;
        QTest::newRow("left empty") << QStringList{} << lines("a b") << QStringList{"+0,1", "+0,2"} << 2 << 0;
        QTest::newRow("right empty") << lines("a b") << QStringList{} << QStringList{"-1,0", "-2,0"} << 0 << 2;
        QTest::newRow("both empty") << QStringList{} << QStringList{} << QStringList{} << 0 << 0;
        QTest::newRow("edits at both ends")
            << lines("a b c") << lines("b c d") << QStringList{"-1,0", "=2,1", "=3,2", "+0,3"} << 1 << 1;
        QTest::newRow("repeated lines") << lines("} } x }") << lines("} x } }")
                                        << QStringList{"=1,1", "-2,0", "=3,2", "=4,3", "+0,4"} << 1 << 1;
    }
    void alignsLines() {
        QFETCH(QStringList, left);
        QFETCH(QStringList, right);
        QFETCH(QStringList, rows);
        QFETCH(int, added);
        QFETCH(int, removed);
        const SourceDiff diff = diffLines(left, right);
        QCOMPARE(describe(diff), rows);
        QCOMPARE(diff.added, added);
        QCOMPARE(diff.removed, removed);
        // Every line of each side appears exactly once, in order.
        QList<int> l, r;
        for (const DiffRow& row : diff.rows) {
            if (row.leftLine)
                l << row.leftLine;
            if (row.rightLine)
                r << row.rightLine;
        }
        QCOMPARE(l.size(), left.size());
        QCOMPARE(r.size(), right.size());
        for (int i = 0; i < l.size(); ++i)
            QCOMPARE(l[i], i + 1);
        for (int i = 0; i < r.size(); ++i)
            QCOMPARE(r[i], i + 1);
    }

    // A seed against the family it became: what a user sees when comparing a candidate with its parent.
    void marksBothEditors() {
        const QString seed = test::fixtureText(QStringLiteral("problems/saxpy_fixture/seeds/grid_stride.cu"));
        QVERIFY(!seed.isEmpty());
        QStringList edited = splitSourceLines(seed);
        edited.insert(1, QStringLiteral("// tuned by hand"));
        edited.insert(2, QStringLiteral("// second note"));
        edited[edited.size() - 2] = edited[edited.size() - 2] + QStringLiteral("  // changed");
        edited.removeAt(0);

        DiffView view;
        view.setSources(seed, edited.join(QLatin1Char('\n')) + QLatin1Char('\n'), QStringLiteral("parent #3"),
                        QStringLiteral("child #9"));
        const SourceDiff& diff = view.diff();
        QCOMPARE(diff.added, 3);
        QCOMPARE(diff.removed, 2);
        QCOMPARE(view.summary(), QStringLiteral("+3 −2 lines"));
        QCOMPARE(view.findChild<QLabel*>(QStringLiteral("diffSummary"))->text(), view.summary());

        KernelEditor* left = view.leftEditor();
        KernelEditor* right = view.rightEditor();
        QVERIFY(left->isReadOnly());
        QVERIFY(right->isReadOnly());
        QCOMPARE(left->lineCount(), static_cast<int>(diff.rows.size()));
        QCOMPARE(right->lineCount(), static_cast<int>(diff.rows.size()));

        QList<int> changed, leftOnly, rightOnly;
        for (size_t i = 0; i < diff.rows.size(); ++i) {
            const int row = static_cast<int>(i) + 1;
            switch (diff.rows[i].kind) {
            case DiffKind::Changed:
                changed << row;
                break;
            case DiffKind::Removed:
                leftOnly << row;
                break;
            case DiffKind::Added:
                rightOnly << row;
                break;
            case DiffKind::Same:
                break;
            }
        }
        QCOMPARE(changed.size() * 2 + leftOnly.size() + rightOnly.size(), 5);
        QCOMPARE(left->markedLines(LineMark::Changed), changed);
        QCOMPARE(right->markedLines(LineMark::Changed), changed);
        QCOMPARE(left->markedLines(LineMark::Removed), leftOnly);
        QCOMPARE(right->markedLines(LineMark::Filler), leftOnly);
        QCOMPARE(right->markedLines(LineMark::Added), rightOnly);
        QCOMPARE(left->markedLines(LineMark::Filler), rightOnly);
        QVERIFY(left->markedLines(LineMark::Added).isEmpty());
        QVERIFY(right->markedLines(LineMark::Removed).isEmpty());

        // Aligned rows hold each side's own text; fillers are blank.
        const QStringList leftRows = left->source().split(QLatin1Char('\n'));
        const QStringList rightRows = right->source().split(QLatin1Char('\n'));
        for (size_t i = 0; i < diff.rows.size(); ++i) {
            const DiffRow& r = diff.rows[i];
            QCOMPARE(leftRows[static_cast<int>(i)], r.leftLine ? splitSourceLines(seed)[r.leftLine - 1] : QString());
            QCOMPARE(rightRows[static_cast<int>(i)], r.rightLine ? edited[r.rightLine - 1] : QString());
        }

        // Identical sources say so and mark nothing.
        view.setSources(seed, seed);
        QCOMPARE(view.summary(), QStringLiteral("identical"));
        for (LineMark m : {LineMark::Added, LineMark::Removed, LineMark::Changed, LineMark::Filler})
            QVERIFY(left->markedLines(m).isEmpty() && right->markedLines(m).isEmpty());
    }

    void scrollsBothSidesTogether() {
        QStringList a, b;
        for (int i = 1; i <= 300; ++i) {
            a << QStringLiteral("int line_%1 = %1;").arg(i);
            b << (i % 50 == 0 ? QStringLiteral("float line_%1 = %1.0f;").arg(i) : a.last());
        }
        DiffView view;
        view.resize(900, 300);
        view.setSources(a.join(QLatin1Char('\n')), b.join(QLatin1Char('\n')));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.leftEditor()->setFirstVisibleLine(120);
        QCOMPARE(view.leftEditor()->firstVisibleLine(), 120);
        QTRY_COMPARE(view.rightEditor()->firstVisibleLine(), 120);
        view.rightEditor()->setFirstVisibleLine(40);
        QTRY_COMPARE(view.leftEditor()->firstVisibleLine(), 40);

        QStringList wide = a;
        wide[5] += QString(400, QLatin1Char('x'));
        view.setSources(wide.join(QLatin1Char('\n')), b.join(QLatin1Char('\n')));
        view.leftEditor()->setHorizontalOffset(250);
        QCOMPARE(view.leftEditor()->horizontalOffset(), 250);
        QTRY_COMPARE(view.rightEditor()->horizontalOffset(), 250);
    }

    // Within a changed line the words that differ are marked, not the whole line.
    void marksTheWordsThatDiffer_data() {
        QTest::addColumn<QString>("left");
        QTest::addColumn<QString>("right");
        QTest::addColumn<QList<WordSpan>>("removed");
        QTest::addColumn<QList<WordSpan>>("added");
        QTest::newRow("operator") << "int x = a + b;"
                                  << "int x = a * b;" << QList<WordSpan>{{10, 1}} << QList<WordSpan>{{10, 1}};
        QTest::newRow("identifier, not its letters")
            << "float4 v = x[i];"
            << "float2 v = x[i];" << QList<WordSpan>{{0, 6}} << QList<WordSpan>{{0, 6}};
        QTest::newRow("words added") << "y[i] = a * x[i];"
                                     << "y[i] = a * x[i] + y[i];" << QList<WordSpan>{} << QList<WordSpan>{{15, 7}};
        QTest::newRow("adjacent words merge") << "return a;"
                                              << "return b.c;" << QList<WordSpan>{{7, 1}} << QList<WordSpan>{{7, 3}};
    }
    void marksTheWordsThatDiffer() {
        QFETCH(QString, left);
        QFETCH(QString, right);
        QFETCH(QList<WordSpan>, removed);
        QFETCH(QList<WordSpan>, added);
        const WordDiff d = diffWords(left, right);
        QCOMPARE(d.removed, removed);
        QCOMPARE(d.added, added);
        QCOMPARE(splitWords(left).join(QString()), left);
    }

    // The inline mode: each removed line above the line that replaced it, the words that differ highlighted, and the
    // view at the first change when it opens; Next and Previous Change (and Alt+Down, Alt+Up) jump between changes in
    // both modes.
    void inlineModeJumpsToTheChanges() {
        QStringList a, b;
        for (int i = 1; i <= 200; ++i)
            a << QStringLiteral("    int line_%1 = %1;").arg(i);
        b = a;
        b[119] = QStringLiteral("    float line_120 = 120;");   // row 120 changed
        b.insert(180, QStringLiteral("    __syncthreads();"));  // a line added after row 180
        DiffView view;
        view.resize(900, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setSources(a.join(QLatin1Char('\n')), b.join(QLatin1Char('\n')), QStringLiteral("#3"),
                        QStringLiteral("#9"));
        QCOMPARE(view.changeCount(), 2);
        QCOMPARE(view.changeRow(0), 119);
        QCOMPARE(view.changeRow(1), 180);
        // Side by side, the first change is in view at once (it was at the top of a 200-line file before).
        QCOMPARE(view.currentChange(), 0);
        QVERIFY(!view.isInline());
        const int first = view.leftEditor()->firstVisibleLine();
        QVERIFY2(first > 100 && first <= 120, qPrintable(QString::number(first)));
        QTRY_COMPARE(view.rightEditor()->firstVisibleLine(), first);

        view.inlineAction()->trigger();
        QVERIFY(view.isInline());
        QPlainTextEdit* text = view.inlineView();
        QVERIFY(text->isVisible());
        // 200 left lines and one added line; the changed line is there twice, removed above added.
        QCOMPARE(text->document()->blockCount(), 202);
        const int removedLine = view.inlineLineOfChange(0);
        QCOMPARE(removedLine, 119);
        QCOMPARE(text->document()->findBlockByNumber(removedLine).text(),
                 QStringLiteral(" 120      -     int line_120 = 120;"));
        QCOMPARE(text->document()->findBlockByNumber(removedLine + 1).text(),
                 QStringLiteral("      120 +     float line_120 = 120;"));
        QCOMPARE(view.inlineHighlights(removedLine), (QList<WordSpan>{{4, 3}}));
        QCOMPARE(view.inlineHighlights(removedLine + 1), (QList<WordSpan>{{4, 5}}));
        QVERIFY(view.inlineHighlights(0).isEmpty());
        QCOMPARE(text->textCursor().blockNumber(), removedLine);
        QVERIFY(text->viewport()->rect().contains(text->cursorRect().center()));

        // To the next change and back, with the buttons' actions and the keys.
        QVERIFY(!view.previousChangeAction()->isEnabled());
        view.nextChangeAction()->trigger();
        QCOMPARE(view.currentChange(), 1);
        QCOMPARE(text->textCursor().blockNumber(), view.inlineLineOfChange(1));
        QCOMPARE(text->document()->findBlockByNumber(view.inlineLineOfChange(1)).text(),
                 QStringLiteral("      181 +     __syncthreads();"));
        QVERIFY(text->viewport()->rect().contains(text->cursorRect().center()));
        QVERIFY(!view.nextChangeAction()->isEnabled());
        QCOMPARE(view.findChild<QLabel*>(QStringLiteral("diffChangePosition"))->text(),
                 QStringLiteral("change 2 of 2"));
        view.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&view));
        text->setFocus();
        QTest::keyClick(text, Qt::Key_Up, Qt::AltModifier);
        QCOMPARE(view.currentChange(), 0);
        QTest::keyClick(text, Qt::Key_Down, Qt::AltModifier);
        QCOMPARE(view.currentChange(), 1);

        // Back to the two sides: at the change jumped to last.
        view.inlineAction()->trigger();
        QVERIFY(!view.isInline());
        QVERIFY(view.leftEditor()->firstVisibleLine() > 170);

        // Identical sources have no change to jump to.
        view.setSources(a.join(QLatin1Char('\n')), a.join(QLatin1Char('\n')));
        QCOMPARE(view.changeCount(), 0);
        QCOMPARE(view.currentChange(), -1);
        QVERIFY(!view.nextChangeAction()->isEnabled());
    }

    void theHeaderFitsANarrowDock_data() {
        QTest::addColumn<QLocale>("language");
        QTest::addColumn<int>("width");
        for (const QLocale& language :
             {QLocale(QLocale::English, QLocale::UnitedStates), QLocale(QLocale::German, QLocale::Germany)})
            for (int width : {280, 332, 440, 900})
                QTest::addRow("%s %d", language.name().toLatin1().constData(), width) << language << width;
    }
    // The diff dock of a 1280×720 window is about 330 pixels wide (440 at 1920×1080): its header stays inside it,
    // the summary and the change position are whole, and a title is shortened only with "…" and its whole text in
    // the tool tip ("#5 Elternteil", never "#5 Elter" cut off at the edge).
    void theHeaderFitsANarrowDock() {
        QFETCH(QLocale, language);
        QFETCH(int, width);
        if (language.language() != QLocale::English)  // English is the source text: there is no catalogue for it
            QVERIFY(install_translations(language));
        const auto restore =
            qScopeGuard([] { install_translations(QLocale(QLocale::English, QLocale::UnitedStates)); });
        const QString leftTitle =
            language.language() == QLocale::German ? QStringLiteral("#5 Elternteil") : QStringLiteral("#5 parent");
        const QString rightTitle = QStringLiteral("#46 family TPR=256 ROWS=1 VEC=4 ITEMS=8 (crossover with #26)");
        QStringList changed;
        for (int i = 0; i < 40; ++i)
            changed << QStringLiteral("line %1").arg(i);
        const QString left = changed.join(QLatin1Char('\n'));
        changed[3] += QStringLiteral(" // a");
        changed[20] += QStringLiteral(" // b");
        changed[37] += QStringLiteral(" // c");

        DiffView view;
        view.setSources(left, changed.join(QLatin1Char('\n')), leftTitle, rightTitle);
        view.resize(width, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCoreApplication::processEvents();
        QCOMPARE(view.width(), width);  // nothing in the header asks for more
        QCOMPARE(view.changeCount(), 3);

        QStringList problems;
        for (const QWidget* w : view.findChildren<QWidget*>()) {
            if (!w->isVisible() || !(qobject_cast<const QLabel*>(w) || qobject_cast<const QToolButton*>(w)))
                continue;
            const QRect at(w->mapTo(&view, QPoint(0, 0)), w->size());
            if (at.right() >= width)
                problems << QStringLiteral("%1 '%2' ends at %3")
                                .arg(QString::fromLatin1(w->metaObject()->className()), w->objectName())
                                .arg(at.right());
            const auto* label = qobject_cast<const QLabel*>(w);
            if (label && label->width() < label->sizeHint().width() &&
                !(label->toolTip() == leftTitle || label->toolTip() == rightTitle))
                problems << QStringLiteral("'%1' cut to %2 of %3 pixels without its text in a tool tip")
                                .arg(label->text())
                                .arg(label->width())
                                .arg(label->sizeHint().width());
        }
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
        // The summary and the position are never shortened.
        for (const char* name : {"diffSummary", "diffChangePosition"}) {
            const auto* label = view.findChild<QLabel*>(QLatin1String(name));
            QVERIFY2(label->width() >= label->sizeHint().width(), name);
        }
        QCOMPARE(view.findChild<QLabel*>(QStringLiteral("diffChangePosition"))->text(),
                 DiffView::tr("change %1 of %2").arg(1).arg(3));
        // A shortened title ends in "…" and says the rest in its tool tip; a whole one needs none.
        for (ElidedLabel* title : {view.leftTitleLabel(), view.rightTitleLabel()}) {
            QVERIFY(title->text() == leftTitle || title->text() == rightTitle);
            if (title->isElided()) {
                QVERIFY2(title->displayedText().endsWith(QStringLiteral("…")), qPrintable(title->displayedText()));
                QCOMPARE(title->toolTip(), title->text());
            } else {
                QCOMPARE(title->displayedText(), title->text());
                QVERIFY(title->toolTip().isEmpty());
            }
        }
        // The left title is short: it is whole on any dock the workbench makes.
        QVERIFY(!view.leftTitleLabel()->isElided());
        if (width >= 900)
            QVERIFY(!view.rightTitleLabel()->isElided() && !view.headerWrapped());
    }
};

QTEST_MAIN(TestDiffView)
#include "tst_diff_view.moc"
