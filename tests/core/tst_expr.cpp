#include "core/error.h"
#include "core/expr.h"

#include "tests/support/error_of.h"

#include <QTest>

#include <limits>

using namespace kerncast;
using kerncast::test::errorOf;

namespace {}  // namespace

class TestExpr : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void evaluates_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("expected");
        QTest::newRow("integer") << "42" << qint64(42);
        QTest::newRow("name") << "N" << qint64(1000);
        QTest::newRow("precedence") << "2 + 3 * 4" << qint64(14);
        QTest::newRow("parentheses") << "(2 + 3) * 4" << qint64(20);
        QTest::newRow("left associative minus") << "10 - 4 - 3" << qint64(3);
        QTest::newRow("left associative division") << "100 / 10 / 5" << qint64(2);
        QTest::newRow("division truncates") << "7 / 2" << qint64(3);
        QTest::newRow("negative division truncates toward zero") << "-7 / 2" << qint64(-3);
        QTest::newRow("remainder sign follows dividend") << "-7 % 2" << qint64(-1);
        QTest::newRow("unary minus") << "-N + 1" << qint64(-999);
        QTest::newRow("double unary minus") << "--5" << qint64(5);
        QTest::newRow("min") << "min(N, 256)" << qint64(256);
        QTest::newRow("max") << "max(N, 4096)" << qint64(4096);
        QTest::newRow("ceil_div exact") << "ceil_div(1024, 256)" << qint64(4);
        QTest::newRow("ceil_div rounds up") << "ceil_div(N + 1, 256)" << qint64(4);
        QTest::newRow("ceil_div negative") << "ceil_div(-7, 2)" << qint64(-3);
        QTest::newRow("nested calls") << "ceil_div(ceil_div(N, 4), BLOCK)" << qint64(1);
        QTest::newRow("spaces everywhere") << "  ceil_div ( N ,BLOCK )*  2 " << qint64(8);
        QTest::newRow("large but fine") << "N * N * N * N * N * N" << qint64(1000000000000000000LL);
    }
    void evaluates() {
        QFETCH(QString, text);
        QFETCH(qint64, expected);
        const Bindings names{{"N", 1000}, {"BLOCK", 256}};
        QCOMPARE(Expr::parse(text.toStdString()).eval(names), expected);
    }

    void conditions_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("expected");
        QTest::newRow("le true") << "BLOCK * ROWS <= 1024" << qint64(1);
        QTest::newRow("lt false") << "BLOCK < 256" << qint64(0);
        QTest::newRow("ge") << "ROWS >= 4" << qint64(1);
        QTest::newRow("gt") << "ROWS > 4" << qint64(0);
        QTest::newRow("eq") << "BLOCK % 128 == 0" << qint64(1);
        QTest::newRow("ne") << "BLOCK != 256" << qint64(0);
        QTest::newRow("and") << "BLOCK >= 64 && ROWS <= 2" << qint64(0);
        QTest::newRow("or") << "BLOCK >= 64 || ROWS <= 2" << qint64(1);
        QTest::newRow("not") << "!(ROWS == 4)" << qint64(0);
        QTest::newRow("and binds tighter than or") << "1 || 0 && 0" << qint64(1);
        QTest::newRow("comparison below arithmetic") << "ROWS + 1 > 2 * 2" << qint64(1);
        QTest::newRow("short circuit avoids division by zero") << "ZERO != 0 && 8 / ZERO > 1" << qint64(0);
    }
    void conditions() {
        QFETCH(QString, text);
        QFETCH(qint64, expected);
        const Bindings names{{"BLOCK", 256}, {"ROWS", 4}, {"ZERO", 0}};
        QCOMPARE(Expr::parse(text.toStdString(), {}, true).eval(names), expected);
    }

    // The conditions of T1 files (and Kernel Tuner's restrictions) are Python expressions; they read the same here.
    void pythonConditions_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("expected");
        QTest::newRow("or") << "use_padding==0 or block_size_x % 32 != 0" << qint64(1);
        QTest::newRow("and") << "BLOCK >= 64 and ROWS <= 2" << qint64(0);
        QTest::newRow("not binds looser than ==") << "not ROWS == 4" << qint64(0);
        QTest::newRow("not of a group") << "not (BLOCK == 256 and ROWS == 8)" << qint64(1);
        QTest::newRow("chained comparison holds") << "32 <= BLOCK * ROWS <= 1024" << qint64(1);
        QTest::newRow("chained comparison fails at the end") << "32 <= BLOCK * ROWS <= 512" << qint64(0);
        QTest::newRow("chained comparison fails at the start") << "2048 <= BLOCK * ROWS <= 4096" << qint64(0);
        QTest::newRow("chained equality") << "ROWS == 4 == 4" << qint64(1);
        QTest::newRow("floor division") << "-7 // 2" << qint64(-4);
        QTest::newRow("floor division positive") << "(262144 // BLOCK) // ROWS" << qint64(256);
        QTest::newRow("power") << "2 ** ROWS" << qint64(16);
        QTest::newRow("power is right associative") << "2 ** 3 ** 2" << qint64(512);
        QTest::newRow("sign below power") << "-2 ** 2" << qint64(-4);
        QTest::newRow("in a list") << "BLOCK in [64, 128, 256]" << qint64(1);
        QTest::newRow("in a tuple") << "ROWS in (1, 2)" << qint64(0);
        QTest::newRow("not in") << "ROWS not in [1, 2]" << qint64(1);
        QTest::newRow("in with expressions") << "BLOCK in [ROWS * 64, 2 ** 8]" << qint64(1);
        QTest::newRow("True and False") << "True and not False" << qint64(1);
        QTest::newRow("min of three") << "min(BLOCK, ROWS, 3) == 3" << qint64(1);
        QTest::newRow("max of three") << "max(1, ROWS, BLOCK // 2) == 128" << qint64(1);
        QTest::newRow("a name that starts with a keyword") << "order + notes + index == 6" << qint64(1);
        QTest::newRow("C and Python mixed") << "BLOCK > 0 && ROWS > 0 and !ZERO" << qint64(1);
    }
    void pythonConditions() {
        QFETCH(QString, text);
        QFETCH(qint64, expected);
        const Bindings names{{"BLOCK", 256}, {"ROWS", 4},  {"ZERO", 0},        {"order", 1},
                             {"notes", 2},   {"index", 3}, {"use_padding", 0}, {"block_size_x", 48}};
        QCOMPARE(Expr::parse(text.toStdString(), {}, true).eval(names), expected);
    }

    void pythonErrors_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("in without a list") << "N in 4"
                                           << "expected a list like [1, 2, 4] after 'in'";
        QTest::newRow("unclosed list") << "N in [1, 2"
                                       << "expected ',' or ']' in the list";
        QTest::newRow("negative exponent") << "2 ** -1"
                                           << "negative exponent";
        QTest::newRow("power overflow") << "2 ** 64"
                                        << "integer overflow";
        QTest::newRow("floor division by zero") << "N // 0"
                                                << "division by zero";
        QTest::newRow("a list alone") << "[1, 2] == 1"
                                      << "expected a number, a name or '('";
    }
    void pythonErrors() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const std::string msg = errorOf([&] {
            Expr::parse(text.toStdString(), {"t1.json", 5}, true).eval({{"N", 3}});
        });
        QVERIFY2(msg.rfind("t1.json:5: ", 0) == 0, msg.c_str());
        QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
    }

    void pythonWordsOnlyInConditions() {
        QVERIFY_THROWS_EXCEPTION(Error, Expr::parse("N and 1"));
        QVERIFY_THROWS_EXCEPTION(Error, Expr::parse("not N"));
        // Floor division and powers are arithmetic: allowed in grid sizes too.
        QCOMPARE(Expr::parse("N // 2 + 2 ** 3").eval({{"N", 7}}), int64_t{11});
    }

    void conditionsOnlyInWhere() {
        const std::string msg = errorOf([] { Expr::parse("N < 4", {"k.cu", 3}); });
        QVERIFY2(msg.find("k.cu:3:") == 0, msg.c_str());
        QVERIFY2(msg.find("only allowed in where") != std::string::npos, msg.c_str());
        QVERIFY_THROWS_EXCEPTION(Error, Expr::parse("!N"));
    }

    void syntaxErrorsNameFileLineAndColumn_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("dangling operator") << "N +"
                                           << "at column 4 in 'N +'";
        QTest::newRow("missing close paren") << "(N + 1"
                                             << "expected ')' at column 7";
        QTest::newRow("unknown function") << "floor(N)"
                                          << "expected a function min, max or ceil_div, found 'floor' at column 1";
        QTest::newRow("one argument") << "min(N)"
                                      << "expected ',' (min takes two or more arguments) at column 6";
        QTest::newRow("ceil_div three arguments") << "ceil_div(N, 2, 3)"
                                                  << "expected ')' (ceil_div takes two arguments)";
        QTest::newRow("decimal") << "N * 1.5"
                                 << "integer-only";
        QTest::newRow("stray character") << "N $ 2"
                                         << "found '$' at column 3";
        QTest::newRow("two operands") << "N M"
                                      << "expected an operator or the end of the expression, found 'M' at column 3";
        QTest::newRow("empty") << "   "
                               << "expected an expression at column 4";
        QTest::newRow("literal too large") << "99999999999999999999"
                                           << "fits in 64 bits at column 1";
    }
    void syntaxErrorsNameFileLineAndColumn() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const std::string msg = errorOf([&] { Expr::parse(text.toStdString(), {"plan.cu", 12}); });
        QVERIFY2(msg.rfind("plan.cu:12: ", 0) == 0, msg.c_str());
        QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
    }

    void unknownNameListsKnownNames() {
        const Expr e = Expr::parse("ceil_div(M, BLOCK)", {"family.cu", 2});
        const std::string msg = errorOf([&] { e.eval({{"N", 1}, {"BLOCK", 2}}); });
        QCOMPARE(msg, std::string("family.cu:2: unknown name 'M' in 'ceil_div(M, BLOCK)' (known: BLOCK, N)"));
    }

    void divisionByZero_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("divide") << "N / Z"
                                << "division by zero in 'N / Z'";
        QTest::newRow("remainder") << "N % Z"
                                   << "remainder by zero in 'N % Z'";
        QTest::newRow("ceil_div") << "1 + ceil_div(N, Z)"
                                  << "division by zero in 'ceil_div(N, Z)' (in '1 + ceil_div(N, Z)')";
    }
    void divisionByZero() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const std::string msg = errorOf([&] { Expr::parse(text.toStdString()).eval({{"N", 5}, {"Z", 0}}); });
        QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
    }

    void overflowIsDetected_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("multiply") << "BIG * 4";
        QTest::newRow("add") << "BIG + BIG";
        QTest::newRow("subtract") << "-BIG - BIG";
        QTest::newRow("negate minimum") << "-(-BIG - 1)";
        QTest::newRow("min / -1") << "(-BIG - 1) / -1";
        QTest::newRow("min % -1") << "(-BIG - 1) % -1";
        QTest::newRow("ceil_div min by -1") << "ceil_div(-BIG - 1, -1)";
    }
    void overflowIsDetected() {
        QFETCH(QString, text);
        const Bindings names{{"BIG", std::numeric_limits<int64_t>::max()}};
        const std::string msg = errorOf([&] { Expr::parse(text.toStdString()).eval(names); });
        QVERIFY2(msg.find("integer overflow") != std::string::npos, msg.c_str());
    }

    void namesListsEveryReadName() {
        const Expr e = Expr::parse("ceil_div(M * N, BLOCK) + min(M, 4)");
        QCOMPARE(e.names(), (std::set<std::string>{"BLOCK", "M", "N"}));
        QVERIFY(Expr::parse("3 * 4").names().empty());
        QCOMPARE(e.text(), std::string("ceil_div(M * N, BLOCK) + min(M, 4)"));
    }

    void emptyAndConstantExpressions() {
        const Expr empty;
        QVERIFY(empty.empty());
        QVERIFY_THROWS_EXCEPTION(Error, empty.eval({}));
        const Expr c = Expr::constant(-17);
        QVERIFY(!c.empty());
        QCOMPARE(c.eval({}), int64_t{-17});
        QCOMPARE(c.text(), std::string("-17"));
        // Copies share the parsed tree and stay usable after the original is gone.
        Expr copy;
        {
            const Expr original = Expr::parse("N * 2");
            copy = original;
        }
        QCOMPARE(copy.eval({{"N", 21}}), int64_t{42});
    }

    // Untrusted expressions (problem files, LLM-written kernels) end in an error naming the file and line, never in a
    // stack overflow; the limits leave room for anything a launch plan needs.
    void hostileExpressions_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        const auto repeat = [](const char* s, int n) {
            QString out;
            for (int i = 0; i < n; ++i)
                out += QString::fromLatin1(s);
            return out;
        };
        QTest::newRow("deep parentheses")
            << repeat("(", 1000) + "1" + repeat(")", 1000) << "expected at most 64 levels of parentheses";
        QTest::newRow("deep calls") << repeat("min(1, ", 300) + "1" + repeat(")", 300)
                                    << "expected at most 64 levels of parentheses";
        QTest::newRow("long sign chain") << repeat("-", 2000) + "1"
                                         << "expected at most 64 levels";
        QTest::newRow("too long") << "1" + repeat(" + 1", 100000)
                                  << "expected an expression of at most 4096 characters";
        QTest::newRow("long sum chain") << "1" + repeat("+1", 1000) << "at most 256 operations deep";
        QTest::newRow("long product chain in a condition") << "1" + repeat("*1", 300) + " > 0"
                                                           << "at most 256 operations deep";
    }
    void hostileExpressions() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const std::string msg = errorOf([&] { Expr::parse(text.toStdString(), {"k.cu", 7}, true); });
        QVERIFY2(msg.rfind("k.cu:7: ", 0) == 0, msg.c_str());
        QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
        QVERIFY2(msg.size() < 600, "the message quotes the text shortened");
    }

    void limitsLeaveRoomForRealExpressions() {
        std::string nested = "N";
        for (int i = 0; i < 40; ++i)
            nested = "max(" + nested + ", 1)";
        QCOMPARE(Expr::parse(nested).eval({{"N", 5}}), int64_t{5});
        std::string sum = "1";
        for (int i = 0; i < 200; ++i)
            sum += " + 1";
        QCOMPARE(Expr::parse(sum).eval({}), int64_t{201});
    }
};

QTEST_GUILESS_MAIN(TestExpr)
#include "tst_expr.moc"
