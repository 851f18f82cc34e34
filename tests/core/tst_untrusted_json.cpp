#include "core/error.h"
#include "core/untrusted_json.h"

#include "tests/support/error_of.h"

#include <QTest>

using namespace kerncast;
using kerncast::test::errorOf;

class TestUntrustedJson : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parsesOrdinaryJson() {
        const auto j = parse_untrusted_json(R"({"a": [1, 2.5, "x", null, true], "b": {"c": {}}})", {"f.json", 1});
        QCOMPARE(j["a"][1].get<double>(), 2.5);
        QVERIFY(j["b"]["c"].is_object());
        // Exactly at the depth limit is fine.
        std::string deep = std::string(64, '[') + std::string(64, ']');
        QVERIFY(parse_untrusted_json(deep, {"f.json", 1}).is_array());
    }

    // Every failure names the file, the line (counted from where the text starts in it) and the column.
    void errorsNameFileLineAndColumn_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("firstLine");
        QTest::addColumn<QString>("expected");
        QTest::newRow("one level too deep")
            << QString(65, '[') + QString(65, ']') << 1
            << "f.json:1: invalid JSON at column 65: objects and arrays nest deeper than 64 levels";
        QTest::newRow("very deep, on line 3")
            << "{\n\"a\":\n" + QString(500000, '[') << 1
            << "f.json:3: invalid JSON at column 64: objects and arrays nest deeper than 64 levels";
        QTest::newRow("number overflow")
            << "{\n  \"x\": [1, 1e999]\n}" << 1
            << "f.json:2: invalid JSON at column 12: the number 1e999 is not finite (too large for a double)";
        QTest::newRow("line of a JSONL file")
            << "[1e999]" << 40 << "f.json:40: invalid JSON at column 2: the number 1e999 is not finite";
        QTest::newRow("negative overflow")
            << "-1e400" << 1 << "f.json:1: invalid JSON at column 1: the number -1e400 is not finite";
        QTest::newRow("trailing comma") << "{\"a\": 1,}" << 1
                                        << "f.json:1: invalid JSON at column 9: syntax error while parsing object key";
        QTest::newRow("empty") << "" << 1 << "f.json:1: invalid JSON at column 1: syntax error while parsing value";
    }
    void errorsNameFileLineAndColumn() {
        QFETCH(QString, text);
        QFETCH(int, firstLine);
        QFETCH(QString, expected);
        const std::string msg = errorOf([&] { parse_untrusted_json(text.toStdString(), {"f.json", firstLine}); });
        QVERIFY2(msg.find(expected.toStdString()) != std::string::npos, msg.c_str());
    }

    // Quoted text is shortened: an unterminated string of a megabyte yields a short message.
    void longTextIsQuotedShortened() {
        const std::string text = "{\"a\": \"" + std::string(1 << 20, 'x');
        const std::string msg = errorOf([&] { parse_untrusted_json(text, {"f.json", 1}); });
        QVERIFY2(msg.size() < 300, msg.c_str());
        QVERIFY2(msg.find("missing closing quote") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("more characters)") != std::string::npos, msg.c_str());
    }

    void lengthIsCapped() {
        const std::string msg = errorOf([] { parse_untrusted_json("[1, 2, 3]", {"f.json", 1}, JsonLimits{64, 8}); });
        QVERIFY2(msg.find("the text is 9 bytes long; at most 8 are accepted") != std::string::npos, msg.c_str());
    }

    void tryParseReportsWithoutThrowing() {
        std::string error;
        QVERIFY(!try_parse_untrusted_json(std::string(100000, '['), &error));
        QVERIFY2(error.starts_with("invalid JSON at line 1, column 65: "), error.c_str());
        QVERIFY(!try_parse_untrusted_json("nope"));
        const auto ok = try_parse_untrusted_json("{\"k\": 2}", &error);
        QVERIFY(ok && (*ok)["k"] == 2);
    }
};

QTEST_GUILESS_MAIN(TestUntrustedJson)
#include "tst_untrusted_json.moc"
