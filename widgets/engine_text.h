#pragma once
// The engine links no Qt and speaks English: the fixed phrases it hands the workbench (bin names, why a search
// ended, how a candidate was made, why the gate decided as it did) are put into the interface's language here, the
// numbers they carry kept. Text the engine made up from a model's reply or an error stays as it was.

#include "core/bins.h"

#include <QString>

#include <string>

namespace kerncast {

class EngineText {
public:
    // A bin name of the default scheme in the interface's language; other names as they are.
    static QString binName(const std::string& name);
    // The speedups bin b (1..8) holds, e.g. "1.00–1.41×", "≤ 0.25×", "> 4.00×"; "failure" for bin 0.
    static QString binRange(const BinScheme& scheme, int bin);
    // Bin b with its name and range wherever a bin number is shown: "5 · minor speedup (1.00–1.41×)".
    static QString binLabel(const BinScheme& scheme, int bin);
    // An engine message (end reason, candidate label, gating reason) in the interface's language.
    static QString message(const QString& text);
    static QString message(const std::string& text) { return message(QString::fromStdString(text)); }
};

}  // namespace kerncast
