// Every user-visible string of the workbench has its German text: the catalogue (translations/kerncast_de.ts) has a
// translation for each of its messages, and covers every string the code of app/ and widgets/ marks for translation
// (what lupdate finds there now, not what it found when the catalogue was last refreshed).
#include "app/gui/translations.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QLibraryInfo>
#include <QLocale>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <map>
#include <utility>

using namespace kerncast;

namespace {

const QString kSource = QStringLiteral(KERNCAST_SOURCE_DIR);

struct Message {
    QString context;
    QString source;
    QStringList translations;  // one, or one per plural form
    QString type;              // "unfinished", "vanished", "obsolete" or empty
};

// The messages of a .ts file; `error` says what could not be read.
std::vector<Message> readCatalogue(const QString& path, QString& error) {
    std::vector<Message> messages;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        error = file.errorString();
        return messages;
    }
    QXmlStreamReader xml(&file);
    QString context;
    Message current;
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement()) {
            if (xml.isEndElement() && xml.name() == QLatin1String("message"))
                messages.push_back(std::exchange(current, Message{}));
            continue;
        }
        if (xml.name() == QLatin1String("name")) {
            context = xml.readElementText();
        } else if (xml.name() == QLatin1String("message")) {
            current = Message{context, {}, {}, {}};
        } else if (xml.name() == QLatin1String("source")) {
            current.source = xml.readElementText();
        } else if (xml.name() == QLatin1String("translation")) {
            current.type = xml.attributes().value(QLatin1String("type")).toString();
            // Plural forms come as <numerusform> children; a plain translation is the element's text.
            QString text;
            while (!(xml.isEndElement() && xml.name() == QLatin1String("translation")) && !xml.atEnd()) {
                xml.readNext();
                if (xml.isStartElement() && xml.name() == QLatin1String("numerusform"))
                    current.translations << xml.readElementText();
                else if (xml.isCharacters())
                    text += xml.text();
            }
            if (current.translations.isEmpty())
                current.translations << text;
        }
    }
    if (xml.hasError())
        error = xml.errorString();
    return messages;
}

QString lupdate() {
    const QString bundled = QLibraryInfo::path(QLibraryInfo::BinariesPath) + QStringLiteral("/lupdate");
    if (QFile::exists(bundled))
        return bundled;
    return QStandardPaths::findExecutable(QStringLiteral("lupdate"));
}

}  // namespace

class TestTranslations : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Every message of the catalogue has a German text, in every plural form, and none is left unfinished.
    void everyMessageIsTranslated() {
        QString error;
        const auto messages = readCatalogue(kSource + QStringLiteral("/translations/kerncast_de.ts"), error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(messages.size() > 400);
        QStringList missing;
        for (const Message& m : messages) {
            bool empty = m.translations.isEmpty();
            for (const QString& t : m.translations)
                empty = empty || t.trimmed().isEmpty();
            if (empty || m.type == QLatin1String("unfinished"))
                missing << m.context + QStringLiteral(": ") + m.source;
        }
        QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("without German text:\n") + missing.join('\n')));
    }

    // What the code marks for translation today is in the catalogue: lupdate run over app/ and widgets/ into a copy
    // of it finds nothing new (a string added to the code without its German text fails here).
    void theCatalogueCoversTheCode() {
        const QString tool = lupdate();
        QVERIFY2(!tool.isEmpty(), "lupdate (Qt Linguist tools) is needed to compare the code with the catalogue");
        QTemporaryDir dir;
        const QString copy = dir.filePath(QStringLiteral("kerncast_de.ts"));
        QVERIFY(QFile::copy(kSource + QStringLiteral("/translations/kerncast_de.ts"), copy));
        QFile::setPermissions(copy, QFile::ReadOwner | QFile::WriteOwner);
        QStringList arguments{QStringLiteral("-no-obsolete"),
                              QStringLiteral("-locations"),
                              QStringLiteral("none"),
                              QStringLiteral("-I"),
                              kSource,
                              kSource + QStringLiteral("/app/main.cpp")};
        for (const QString& folder : {QStringLiteral("/app/gui"), QStringLiteral("/widgets")})
            for (const QString& file :
                 QDir(kSource + folder).entryList({QStringLiteral("*.cpp"), QStringLiteral("*.h")}, QDir::Files))
                arguments << kSource + folder + QLatin1Char('/') + file;
        arguments << QStringLiteral("-ts") << copy;
        QProcess process;
        process.start(tool, arguments);
        QVERIFY(process.waitForFinished(120000));
        QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
        QString error;
        const auto messages = readCatalogue(copy, error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QStringList missing;
        for (const Message& m : messages)
            if (m.type == QLatin1String("unfinished"))
                missing << m.context + QStringLiteral(": ") + m.source;
        QVERIFY2(missing.isEmpty(),
                 qPrintable(QStringLiteral("in the code but not translated in translations/kerncast_de.ts (build the "
                                           "update_translations target, then translate):\n") +
                            missing.join('\n')));
    }

    // The compiled catalogue is the one the workbench loads: a message reads in German once German is installed.
    void theCompiledCatalogueIsLoaded() {
        QVERIFY(install_translations(QLocale(QLocale::German, QLocale::Germany)));
        QCOMPARE(QCoreApplication::translate("kerncast::EngineText", "minor speedup"),
                 QStringLiteral("leichte Beschleunigung"));
        install_translations(QLocale(QLocale::English, QLocale::UnitedStates));
        QCOMPARE(QCoreApplication::translate("kerncast::EngineText", "minor speedup"), QStringLiteral("minor speedup"));
    }
};

QTEST_MAIN(TestTranslations)
#include "tst_translations.moc"
