// The shared text and file helpers: trimming, joining names for messages, reading a whole file with an error that
// names it, and writing a file that a reader never sees half of.
#include "core/error.h"
#include "core/text_util.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

using namespace kerncast;

class TestTextUtil : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void trims_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("trimmed");
        QTest::newRow("both ends") << " \t a b \r\n"
                                   << "a b";
        QTest::newRow("nothing to trim") << "a"
                                         << "a";
        QTest::newRow("only space") << " \f\v "
                                    << "";
        QTest::newRow("empty") << ""
                               << "";
    }
    void trims() {
        QFETCH(QString, text);
        QFETCH(QString, trimmed);
        QCOMPARE(QString::fromStdString(trim(text.toStdString())), trimmed);
    }

    void joins() {
        QCOMPARE(join(std::vector<std::string>{"a", "b", "c"}), std::string("a, b, c"));
        QCOMPARE(join(std::set<std::string>{"y", "x"}, " | "), std::string("x | y"));
        QCOMPARE(join(std::vector<std::string>{}), std::string());
        QCOMPARE(join_names(std::vector<std::string>{}), std::string("none"));
        QCOMPARE(join_names(std::vector<const char*>{"N", "M"}), std::string("N, M"));
    }

    void readsAWholeFileOrNamesIt() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("k.cu")).toStdString();
        std::ofstream(path, std::ios::binary) << std::string("line 1\n\0line 2", 14);
        QCOMPARE(read_text_file(path).size(), size_t{14});
        const std::string missing = dir.filePath(QStringLiteral("missing.cu")).toStdString();
        try {
            read_text_file(missing, "the kernel file");
            QFAIL("a missing file must throw");
        } catch (const Error& e) {
            QCOMPARE(e.where().file, missing);
            QVERIFY2(std::string(e.what()).find("cannot read the kernel file") != std::string::npos, e.what());
        }
    }

    void writesAtomically() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("out.json")).toStdString();
        write_file_atomically(path, "old");
        write_file_atomically(path, "new text");
        QCOMPARE(read_text_file(path), std::string("new text"));
        QVERIFY(!std::filesystem::exists(path + ".partial"));
        // A folder that does not exist: an error naming the file, and the target untouched.
        const std::string nowhere = dir.filePath(QStringLiteral("no/such/folder/out.json")).toStdString();
        try {
            write_file_atomically(nowhere, "x");
            QFAIL("writing into a missing folder must throw");
        } catch (const Error& e) {
            QCOMPARE(e.where().file, nowhere);
        }
        QVERIFY(!std::filesystem::exists(nowhere));
    }

    // Writers of one file at once (two searches saving the same cached model): every write succeeds, the file ends
    // as one writer's whole text, and no partial file is left.
    void concurrentWritersNeverMix() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("shared.json")).toStdString();
        std::vector<std::string> texts;
        for (int t = 0; t < 4; ++t)
            texts.push_back(std::string(200000, static_cast<char>('a' + t)));
        std::atomic<int> failures{0};
        std::vector<std::thread> writers;
        for (int t = 0; t < 4; ++t)
            writers.emplace_back([&, t] {
                for (int i = 0; i < 25; ++i) {
                    try {
                        write_file_atomically(path, texts[static_cast<size_t>(t)]);
                    } catch (const Error&) {
                        ++failures;
                    }
                }
            });
        for (auto& w : writers)
            w.join();
        QCOMPARE(failures.load(), 0);
        const std::string final = read_text_file(path);
        QVERIFY(std::find(texts.begin(), texts.end(), final) != texts.end());
        QCOMPARE(std::distance(std::filesystem::directory_iterator(dir.path().toStdString()),
                               std::filesystem::directory_iterator()),
                 std::ptrdiff_t(1));
    }
};

QTEST_MAIN(TestTextUtil)
#include "tst_text_util.moc"
