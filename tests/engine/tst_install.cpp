// `cmake --install` into a temporary prefix gives a tree that works on its own: the installed kerncast-cli finds its
// problems and recordings from any folder with no environment set, even after the prefix is moved; the desktop
// entry, MIME type, icons and translations are where a desktop looks for them.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

namespace {

struct Result {
    int code = -1;
    QByteArray out, err;
};

Result run(const QString& program, const QStringList& args, const QString& cwd, const QProcessEnvironment& env) {
    QProcess p;
    p.setProgram(program);
    p.setArguments(args);
    p.setWorkingDirectory(cwd);
    p.setProcessEnvironment(env);
    p.start();
    Result r;
    if (!p.waitForFinished(600000))
        return r;
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

}  // namespace

class TestInstall : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_root;
    QString m_prefix;

private Q_SLOTS:
    void initTestCase() {
        m_prefix = m_root.filePath("prefix");
        const auto r =
            run(QStringLiteral("cmake"), {"--install", QStringLiteral(KERNCAST_BINARY_DIR), "--prefix", m_prefix},
                m_root.path(), QProcessEnvironment::systemEnvironment());
        QVERIFY2(r.code == 0, (r.out + r.err).constData());
    }

    void installsTheLayoutADesktopExpects_data() {
        QTest::addColumn<QString>("path");
        for (const char* p :
             {"bin/kerncast-cli", "bin/kerncast-worker", "bin/kerncast", "share/kerncast/problems/softmax/problem.json",
              "share/kerncast/recordings/nvidia-h200/softmax.jsonl", "share/kerncast/prompts",
              "share/kerncast/translations/kerncast_de.qm", "share/applications/kerncast.desktop",
              "share/mime/packages/kerncast.xml", "share/icons/hicolor/scalable/apps/kerncast.svg",
              "share/icons/hicolor/256x256/apps/kerncast.png", "share/icons/hicolor/32x32/apps/kerncast.png"})
            QTest::newRow(p) << QString::fromLatin1(p);
    }

    void installsTheLayoutADesktopExpects() {
        QFETCH(QString, path);
        QVERIFY2(QFileInfo::exists(m_prefix + "/" + path), qPrintable(path));
    }

    void desktopEntryOpensRunFiles() {
        QFile f(m_prefix + "/share/applications/kerncast.desktop");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(f.readAll());
        QVERIFY(text.contains("Exec=kerncast %f"));
        QVERIFY(text.contains(
            QRegularExpression("^MimeType=.*application/x-kerncast-run;", QRegularExpression::MultilineOption)));
        QFile mime(m_prefix + "/share/mime/packages/kerncast.xml");
        QVERIFY(mime.open(QIODevice::ReadOnly));
        QVERIFY(mime.readAll().contains("type=\"application/x-kerncast-run\""));
        // The CUDA libraries are bundled only by the package, never by a plain install.
        QVERIFY(!QFileInfo::exists(m_prefix + "/lib/kerncast/cuda"));
    }

    void installedCliWorksFromAnyFolderWithoutEnvironment() {
        QTemporaryDir elsewhere;
        const QProcessEnvironment empty;  // no PATH, no HOME, no KERNCAST_RESOURCES
        auto r = run(m_prefix + "/bin/kerncast-cli", {"--json", "problems", "list"}, elsewhere.path(), empty);
        QVERIFY2(r.code == 0, (r.out + r.err).constData());
        const auto j = nlohmann::json::parse(r.out.toStdString());
        std::string all = j.dump();
        QVERIFY2(all.find("softmax") != std::string::npos, all.c_str());
        QVERIFY2(all.find((m_prefix + "/share/kerncast/problems").toStdString()) != std::string::npos, all.c_str());
        QVERIFY2(all.find(KERNCAST_SOURCE_DIR) == std::string::npos, "the installed CLI read the source tree");

        // The demo's search runs from the installed recordings.
        r = run(m_prefix + "/bin/kerncast-cli",
                {"--json", "search", "--problem", "softmax", "--device", "replay:nvidia-h200", "--surrogate", "none",
                 "--gating", "measure-all", "--budget", "4", "--run", elsewhere.filePath("demo.sqlite")},
                elsewhere.path(), empty);
        QVERIFY2(r.code == 0, (r.out + r.err).constData());
        QVERIFY(nlohmann::json::parse(r.out.toStdString())["best_speedup"].get<double>() > 1.0);

        // Moved elsewhere, the tree still finds its own resources.
        const QString moved = m_root.filePath("moved");
        QVERIFY(QDir().rename(m_prefix, moved));
        r = run(moved + "/bin/kerncast-cli", {"--json", "problems", "list"}, elsewhere.path(), empty);
        QDir().rename(moved, m_prefix);
        QVERIFY2(r.code == 0, (r.out + r.err).constData());
        QVERIFY(r.out.contains((moved + "/share/kerncast/problems").toUtf8()));
    }

    // The program copied away from its tree (and out of the build tree) says where it looked and what to set.
    void aProgramWithoutItsResourcesSaysWhatToSet() {
        QTemporaryDir away;
        const QString cli = away.filePath("kerncast-cli");
        QVERIFY(QFile::copy(m_prefix + "/bin/kerncast-cli", cli));
        const QProcessEnvironment empty;
        auto r = run(cli, {"problems", "list"}, away.path(), empty);
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("KERNCAST_RESOURCES"), r.err.constData());
        QVERIFY2(r.err.contains("the problem library was not found"), r.err.constData());

        QProcessEnvironment wrong;
        wrong.insert("KERNCAST_RESOURCES", away.path());
        r = run(cli, {"problems", "list"}, away.path(), wrong);
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(("KERNCAST_RESOURCES is " + away.path()).toUtf8()), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestInstall)
#include "tst_install.moc"
