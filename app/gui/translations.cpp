#include "app/gui/translations.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QPointer>
#include <QTranslator>

#include <vector>

namespace kerncast {

namespace {

std::vector<QPointer<QTranslator>>& installed() {
    static std::vector<QPointer<QTranslator>> translators;
    return translators;
}

}  // namespace

bool install_translations(const QLocale& locale) {
    for (const QPointer<QTranslator>& t : installed()) {
        if (t) {
            QCoreApplication::removeTranslator(t);
            delete t.data();
        }
    }
    installed().clear();
    QLocale::setDefault(locale);
    auto* qt = new QTranslator(QCoreApplication::instance());
    if (qt->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                 QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
        QCoreApplication::installTranslator(qt);
        installed().push_back(qt);
    } else {
        delete qt;
    }
    auto* own = new QTranslator(QCoreApplication::instance());
    if (!own->load(locale, QStringLiteral("kerncast"), QStringLiteral("_"), QStringLiteral(":/i18n"))) {
        delete own;
        return false;
    }
    QCoreApplication::installTranslator(own);
    installed().push_back(own);
    return true;
}

QLocale language_locale(const QString& name, bool* ok) {
    const QLocale locale(name);
    const bool known = locale.language() != QLocale::C || name == QLatin1String("C");
    if (ok)
        *ok = known && !name.isEmpty();
    return locale;
}

}  // namespace kerncast
