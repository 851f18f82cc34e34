// A title too long for its dock is shortened with "…" and given whole in its tool tip, never cut off at the edge;
// rich text keeps its formatting when shortened, and the label never asks its dock for the whole title's width.
#include "widgets/elided_label.h"

#include <QTest>

using namespace kerncast;

class TestElidedLabel : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void shortensOnlyWhatDoesNotFit_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("mode");
        QTest::newRow("plain, end") << QStringLiteral("#46 family TPR=256 ROWS=1 VEC=4 ITEMS=8 (crossover with #26)")
                                    << int(Qt::ElideRight);
        QTest::newRow("path, middle") << QStringLiteral("/work/main/resources/problems/softmax/seeds/reference.cu")
                                      << int(Qt::ElideMiddle);
        QTest::newRow("rich") << QStringLiteral("<b>Candidate #46</b> · parametric · generation 1 · family TPR=256")
                              << int(Qt::ElideRight);
    }
    void shortensOnlyWhatDoesNotFit() {
        QFETCH(QString, text);
        QFETCH(int, mode);
        ElidedLabel label(nullptr, static_cast<Qt::TextElideMode>(mode));
        label.setText(text);
        const int whole = label.sizeHint().width();
        QVERIFY(label.minimumSizeHint().width() < whole / 3);
        label.resize(whole + 10, label.sizeHint().height());
        label.show();
        QVERIFY(QTest::qWaitForWindowExposed(&label));
        QVERIFY(!label.isElided());
        QCOMPARE(label.displayedText(), text);
        QCOMPARE(label.text(), text);
        QVERIFY(label.toolTip().isEmpty());

        label.resize(whole / 2, label.height());
        QVERIFY(label.isElided());
        QCOMPARE(label.text(), text);  // the whole text stays the label's text
        QCOMPARE(label.toolTip(), text);
        QVERIFY2(label.displayedText().contains(QStringLiteral("…")), qPrintable(label.displayedText()));
        QVERIFY(label.QLabel::sizeHint().width() <= label.width());  // what is shown fits
        if (text.startsWith(QLatin1String("<b>")))
            QVERIFY2(label.displayedText().contains(QLatin1String("font-weight")),
                     qPrintable(label.displayedText()));  // "Candidate #46" is still bold
        if (mode == Qt::ElideMiddle)
            QVERIFY(label.displayedText().endsWith(QLatin1String("reference.cu")));

        // Wide again, and a new text: whole, no tool tip.
        label.resize(whole + 10, label.height());
        QVERIFY(!label.isElided());
        QVERIFY(label.toolTip().isEmpty());
        label.setText(QStringLiteral("#5 parent"));
        QVERIFY(!label.isElided());
        QCOMPARE(label.displayedText(), QStringLiteral("#5 parent"));
    }
};

QTEST_MAIN(TestElidedLabel)
#include "tst_elided_label.moc"
