#pragma once
// The text of a file under tests/data, or an empty string when it cannot be read (the caller says which fixture is
// missing).

#include <QFile>
#include <QString>

namespace kerncast::test {

inline QString fixtureText(const QString& relative) {
    QFile f(QStringLiteral(KERNCAST_TEST_DATA "/") + relative);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll());
}

}  // namespace kerncast::test
