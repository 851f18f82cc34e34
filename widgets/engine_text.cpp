#include "widgets/engine_text.h"

#include <QCoreApplication>
#include <QLocale>
#include <QRegularExpression>

#include <cmath>
#include <map>

namespace kerncast {

namespace {

constexpr const char* kContext = "kerncast::EngineText";

QString tr(const char* text) { return QCoreApplication::translate(kContext, text); }

// The default scheme's names (core/bins.cpp) and "failure", for lupdate and the look-up.
constexpr const char* kBinNames[] = {
    QT_TRANSLATE_NOOP("kerncast::EngineText", "severe slowdown"),
    QT_TRANSLATE_NOOP("kerncast::EngineText", "significant slowdown"),
    QT_TRANSLATE_NOOP("kerncast::EngineText", "moderate slowdown"),
    QT_TRANSLATE_NOOP("kerncast::EngineText", "minor slowdown"),
    QT_TRANSLATE_NOOP("kerncast::EngineText", "minor speedup"),
    QT_TRANSLATE_NOOP("kerncast::EngineText", "significant speedup"),
    QT_TRANSLATE_NOOP("kerncast::EngineText", "high speedup"),
    QT_TRANSLATE_NOOP("kerncast::EngineText", "extreme speedup"),
    QT_TRANSLATE_NOOP("kerncast::EngineText", "failure"),
};

// An engine phrase as a pattern (its numbers captured) and the translatable text they are put into, in order.
struct Phrase {
    const char* pattern;
    const char* text;
};

// Whole messages first (anchored), then phrases inside a longer text (a candidate's label).
constexpr Phrase kPhrases[] = {
    {R"(^measurement budget spent \((\d+)\)$)",
     QT_TRANSLATE_NOOP("kerncast::EngineText", "measurement budget spent (%1)")},
    {R"(^forecast budget spent \((\d+)\)$)", QT_TRANSLATE_NOOP("kerncast::EngineText", "forecast budget spent (%1)")},
    {R"(^token budget spent$)", QT_TRANSLATE_NOOP("kerncast::EngineText", "token budget spent")},
    {R"(^cost budget spent$)", QT_TRANSLATE_NOOP("kerncast::EngineText", "cost budget spent")},
    {R"(^wall-time budget spent$)", QT_TRANSLATE_NOOP("kerncast::EngineText", "wall-time budget spent")},
    {R"(^stopped by request$)", QT_TRANSLATE_NOOP("kerncast::EngineText", "stopped by request")},
    {R"(^search space exhausted: no parent left to expand$)",
     QT_TRANSLATE_NOOP("kerncast::EngineText", "search space exhausted: no parent left to expand")},
    {R"(^no forecast$)", QT_TRANSLATE_NOOP("kerncast::EngineText", "no forecast")},
    {R"(^measure-all$)", QT_TRANSLATE_NOOP("kerncast::EngineText", "measure-all")},
    {R"(^unsure: confidence ([\d.]+) < tau ([\d.]+))",
     QT_TRANSLATE_NOOP("kerncast::EngineText", "unsure: confidence %1 < τ %2")},
    {R"(^promising: P\(S > best ([\d.e+-]+)\) = ([\d.]+) >= pi ([\d.]+))",
     QT_TRANSLATE_NOOP("kerncast::EngineText", "promising: P(S > best %1×) = %2 ≥ π %3")},
    {R"(^trusted: confidence ([\d.]+) >= tau ([\d.]+), P\(S > best ([\d.e+-]+)\) = ([\d.]+) < pi ([\d.]+), expected ([\d.e+-]+)x <= best)",
     QT_TRANSLATE_NOOP("kerncast::EngineText",
                       "sure and unpromising: confidence %1 ≥ τ %2, P(S > best %3×) = %4 < π %5, expected %6× ≤ "
                       "the best")},
    {R"(^trusted: confidence ([\d.]+) >= tau ([\d.]+), P\(S > best ([\d.e+-]+)\) = ([\d.]+) < pi ([\d.]+), expected ([\d.e+-]+)x)",
     QT_TRANSLATE_NOOP("kerncast::EngineText",
                       "trusted: confidence %1 ≥ τ %2, P(S > best %3×) = %4 < π %5, expected %6×")},
    {R"(^trusted: confidence ([\d.]+), P\(S > best ([\d.e+-]+)\) = ([\d.]+) < pi ([\d.]+))",
     QT_TRANSLATE_NOOP("kerncast::EngineText", "trusted: confidence %1, P(S > best %2×) = %3 < π %4")},
    {R"(; picked for the audit share)", QT_TRANSLATE_NOOP("kerncast::EngineText", "; picked for the audit share")},
    {R"(\(crossover with #(\d+)\))", QT_TRANSLATE_NOOP("kerncast::EngineText", "(crossover with #%1)")},
    {R"(\(move\))", QT_TRANSLATE_NOOP("kerncast::EngineText", "(move)")},
};

QString number(const QString& captured) {
    bool ok = false;
    const double value = captured.toDouble(&ok);
    if (!ok)
        return captured;
    if (!captured.contains(QLatin1Char('.')) && !captured.contains(QLatin1Char('e')))
        return QLocale().toString(static_cast<qlonglong>(value));
    // The engine's own precision, in the interface's decimal separator.
    const qsizetype dot = captured.indexOf(QLatin1Char('.'));
    const int decimals = dot < 0 || captured.contains(QLatin1Char('e')) ? 3 : int(captured.size() - dot - 1);
    return QLocale().toString(value, captured.contains(QLatin1Char('e')) ? 'g' : 'f', decimals);
}

}  // namespace

QString EngineText::binName(const std::string& name) {
    for (const char* known : kBinNames)
        if (name == known)
            return tr(known);
    return QString::fromStdString(name);
}

QString EngineText::binRange(const BinScheme& scheme, int bin) {
    if (bin < 1 || bin > kBinCount)
        return tr("failure");
    const QLocale locale;
    const double lo = scheme.lowerEdge(bin);
    const double hi = scheme.upperEdge(bin);
    if (lo <= 0)
        return QStringLiteral("≤ %1×").arg(locale.toString(hi, 'f', 2));
    if (!std::isfinite(hi))
        return QStringLiteral("> %1×").arg(locale.toString(lo, 'f', 2));
    return QStringLiteral("%1–%2×").arg(locale.toString(lo, 'f', 2), locale.toString(hi, 'f', 2));
}

QString EngineText::binLabel(const BinScheme& scheme, int bin) {
    if (bin < 1 || bin > kBinCount)
        return tr("failure");
    return QStringLiteral("%1 · %2 (%3)").arg(bin).arg(binName(scheme.name(bin)), binRange(scheme, bin));
}

QString EngineText::message(const QString& text) {
    QString out = text;
    for (const Phrase& phrase : kPhrases) {
        static thread_local std::map<const char*, QRegularExpression> compiled;
        auto [it, added] = compiled.try_emplace(phrase.pattern, QString::fromUtf8(phrase.pattern));
        const QRegularExpressionMatch match = it->second.match(out);
        if (!match.hasMatch())
            continue;
        QString replacement = tr(phrase.text);
        for (int i = 1; i <= match.lastCapturedIndex(); ++i)
            replacement = replacement.arg(number(match.captured(i)));
        out.replace(match.capturedStart(), match.capturedLength(), replacement);
    }
    return out;
}

}  // namespace kerncast
