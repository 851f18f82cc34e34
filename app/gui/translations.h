#pragma once
// The workbench's languages. The German translation is compiled into the application (:/i18n/kerncast_de.qm);
// English is the source language and needs none.

#include <QLocale>
#include <QString>

namespace kerncast {

// Installs Qt's own and Kerncast's translations for `locale` into the running application, replacing those an
// earlier call installed, and makes `locale` the default for number formats. Returns whether Kerncast's translation
// for the locale's language was found (false for English, which is the source text).
bool install_translations(const QLocale& locale);

// The locale a --language value names ("de", "de_DE", "en", ...); ok is false when the value names no language.
QLocale language_locale(const QString& name, bool* ok);

}  // namespace kerncast
