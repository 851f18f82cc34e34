<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>CandidateRow</name>
    <message>
        <source>vs parent #%1</source>
        <translation>gegenüber Elternkandidat #%1</translation>
    </message>
    <message>
        <source>vs reference</source>
        <translation>gegenüber der Referenz</translation>
    </message>
</context>
<context>
    <name>CommandLine</name>
    <message>
        <source>Kerncast: forecast-guided evolutionary search over CUDA kernels.</source>
        <translation>Kerncast: prognosegeleitete evolutionäre Suche über CUDA-Kernel.</translation>
    </message>
    <message>
        <source>Folder with problems/ and recordings/.</source>
        <translation>Ordner mit problems/ und recordings/.</translation>
    </message>
    <message>
        <source>Quit after this many seconds.</source>
        <translation>Nach so vielen Sekunden beenden.</translation>
    </message>
    <message>
        <source>Unexpected argument: %1</source>
        <translation>Unerwartetes Argument: %1</translation>
    </message>
    <message>
        <source>Give the run file once: as an argument or with --run, not both</source>
        <translation>Die Laufdatei nur einmal angeben: als Argument oder mit --run, nicht beides</translation>
    </message>
    <message>
        <source>A run file to open (as --run).</source>
        <translation>Eine Laufdatei zum Öffnen (wie --run).</translation>
    </message>
    <message>
        <source>Resources folder not found: %1</source>
        <translation>Ressourcenordner nicht gefunden: %1</translation>
    </message>
    <message>
        <source>--quit-after needs a number of seconds &gt;= 0, found &apos;%1&apos;</source>
        <translation>--quit-after erwartet eine Sekundenzahl &gt;= 0, gefunden: „%1“</translation>
    </message>
    <message>
        <source>Save a PNG of the window once it shows results (the problems; with --run the opened run; with --demo the finished search), then quit (unless --quit-after is given).</source>
        <translation>Ein PNG des Fensters speichern, sobald es Ergebnisse zeigt (die Probleme; mit --run den geöffneten Lauf; mit --demo die abgeschlossene Suche), und dann beenden (außer wenn --quit-after angegeben ist).</translation>
    </message>
    <message>
        <source>Start the demo at once: a search over softmax on the replay device with the local surrogate and selective gating.</source>
        <translation>Die Demo sofort starten: eine Suche über softmax auf dem Replay-Gerät mit dem lokalen Surrogatmodell und selektivem Gating.</translation>
    </message>
    <message>
        <source>Open a run file (a search or an evaluation).</source>
        <translation>Eine Laufdatei öffnen (eine Suche oder eine Auswertung).</translation>
    </message>
    <message>
        <source>Run file not found: %1</source>
        <translation>Laufdatei nicht gefunden: %1</translation>
    </message>
    <message>
        <source>--demo and --run cannot be combined: the demo starts a new run</source>
        <translation>--demo und --run können nicht kombiniert werden: Die Demo startet einen neuen Lauf</translation>
    </message>
    <message>
        <source>Language of the interface: de (German) or en (English); default: the system&apos;s.</source>
        <translation>Sprache der Oberfläche: de (Deutsch) oder en (Englisch); Vorgabe: die des Systems.</translation>
    </message>
    <message>
        <source>--language needs a language code such as de or en, found &apos;%1&apos;</source>
        <translation>--language braucht einen Sprachcode wie de oder en, gefunden: „%1“</translation>
    </message>
</context>
<context>
    <name>kerncast::BinDistributionWidget</name>
    <message>
        <source>No forecast</source>
        <translation>Keine Prognose</translation>
    </message>
    <message>
        <source>The measured speedup is in this bin</source>
        <translation>Die gemessene Beschleunigung liegt in dieser Klasse</translation>
    </message>
    <message>
        <source>Bin %1: %2</source>
        <translation>Klasse %1: %2</translation>
    </message>
</context>
<context>
    <name>kerncast::CandidateView</name>
    <message>
        <source>Could not read the model calls of candidate #%1: %2</source>
        <translation>Die Modellaufrufe von Kandidat #%1 konnten nicht gelesen werden: %2</translation>
    </message>
    <message>
        <source>Could not read candidate #%1: %2</source>
        <translation>Kandidat #%1 konnte nicht gelesen werden: %2</translation>
    </message>
    <message>
        <source>&lt;b&gt;Candidate #%1&lt;/b&gt; · %2 · generation %3 · %4</source>
        <translation>&lt;b&gt;Kandidat #%1&lt;/b&gt; · %2 · Generation %3 · %4</translation>
    </message>
    <message>
        <source>#%1 %2</source>
        <translation>#%1 %2</translation>
    </message>
    <message>
        <source>anchor of the pair</source>
        <translation>Anker des Paares</translation>
    </message>
    <message>
        <source>reference</source>
        <translation>Referenz</translation>
    </message>
    <message>
        <source>parent</source>
        <translation>Elternteil</translation>
    </message>
    <message>
        <source>(no parent)</source>
        <translation>(kein Elternteil)</translation>
    </message>
    <message>
        <source>Kernel submitted to the search as a child of #%1</source>
        <translation>Kernel als Nachkomme von #%1 an die Suche übergeben</translation>
    </message>
    <message>
        <source>Kernel submitted to the search</source>
        <translation>Kernel an die Suche übergeben</translation>
    </message>
    <message>
        <source>Submitted kernel is candidate #%1: it is forecast and measured</source>
        <translation>Der übergebene Kernel ist Kandidat #%1: Er wird prognostiziert und gemessen</translation>
    </message>
    <message>
        <source>Submitted kernel (candidate #%1) does not compile: the errors are marked on their lines</source>
        <translation>Der übergebene Kernel (Kandidat #%1) lässt sich nicht kompilieren: Die Fehler sind in ihren Zeilen markiert</translation>
    </message>
    <message>
        <source>Submitting a kernel needs a running search: your edit is kept; resume the run (Run › Resume Opened Run) and submit it again.</source>
        <translation>Das Übergeben eines Kernels erfordert eine laufende Suche: Ihre Änderung bleibt erhalten; setzen Sie den Lauf fort (Lauf › Geöffneten Lauf fortsetzen) und übergeben Sie sie erneut.</translation>
    </message>
    <message>
        <source>#%1 · %2×</source>
        <translation>#%1 · %2×</translation>
    </message>
    <message>
        <source>#%1 · %2</source>
        <translation>#%1 · %2</translation>
    </message>
    <message>
        <source>Diff: #%1 against #%2</source>
        <translation>Diff: #%1 gegenüber #%2</translation>
    </message>
    <message>
        <source>%1 µs</source>
        <translation>%1 µs</translation>
    </message>
    <message numerus="yes">
        <source>%n register(s)</source>
        <translation>
            <numerusform>%n Register</numerusform>
            <numerusform>%n Register</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n B spilled</source>
        <translation>
            <numerusform>%n B ausgelagert</numerusform>
            <numerusform>%n B ausgelagert</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kerncast::DeviceListModel</name>
    <message>
        <source>%1 SMs</source>
        <translation>%1 SMs</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>(keines)</translation>
    </message>
    <message>
        <source>CUDA GPU</source>
        <translation>CUDA-GPU</translation>
    </message>
    <message>
        <source>replay</source>
        <translation>Replay</translation>
    </message>
    <message>
        <source>UUID: %1</source>
        <translation>UUID: %1</translation>
    </message>
    <message>
        <source>Driver: %1, CUDA: %2</source>
        <translation>Treiber: %1, CUDA: %2</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>Art</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>Hinweis</translation>
    </message>
</context>
<context>
    <name>kerncast::DevicePanel</name>
    <message>
        <source>Double-click a device to measure on it.</source>
        <translation>Doppelklicken Sie auf ein Gerät, um darauf zu messen.</translation>
    </message>
    <message>
        <source>idle</source>
        <translation>im Leerlauf</translation>
    </message>
    <message>
        <source>No CUDA device</source>
        <translation>Kein CUDA-Gerät</translation>
    </message>
    <message>
        <source>Could not list devices: %1</source>
        <translation>Geräte konnten nicht aufgelistet werden: %1</translation>
    </message>
    <message>
        <source>No recordings for the replay device under %1.</source>
        <translation>Keine Aufzeichnungen für das Replay-Gerät unter %1.</translation>
    </message>
    <message>
        <source>&lt;b&gt;No device selected.&lt;/b&gt;</source>
        <translation>&lt;b&gt;Kein Gerät ausgewählt.&lt;/b&gt;</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; (%2)</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; (%2)</translation>
    </message>
    <message>
        <source>Compute capability %1.%2, %3 SMs</source>
        <translation>Compute Capability %1.%2, %3 SMs</translation>
    </message>
    <message>
        <source>Memory %1, L2 %2</source>
        <translation>Speicher %1, L2 %2</translation>
    </message>
    <message>
        <source>Driver %1, CUDA %2</source>
        <translation>Treiber %1, CUDA %2</translation>
    </message>
    <message>
        <source>Power limit %1 W</source>
        <translation>Leistungsgrenze %1 W</translation>
    </message>
    <message>
        <source>Clocks up to %1 MHz (SM), %2 MHz (memory)</source>
        <translation>Takt bis %1 MHz (SM), %2 MHz (Speicher)</translation>
    </message>
    <message>
        <source>UUID %1</source>
        <translation>UUID %1</translation>
    </message>
    <message>
        <source>Measured DRAM bandwidth: %1 GB/s</source>
        <translation>Gemessene DRAM-Bandbreite: %1 GB/s</translation>
    </message>
    <message>
        <source>Measured DRAM bandwidth: not measured yet</source>
        <translation>Gemessene DRAM-Bandbreite: noch nicht gemessen</translation>
    </message>
    <message>
        <source>Worker: %1</source>
        <translation>Worker: %1</translation>
    </message>
    <message numerus="yes">
        <source>Queue: %n candidate(s) waiting for the device</source>
        <translation>
            <numerusform>Warteschlange: %n Kandidat wartet auf das Gerät</numerusform>
            <numerusform>Warteschlange: %n Kandidaten warten auf das Gerät</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kerncast::DiffView</name>
    <message>
        <source>identical</source>
        <translation>identisch</translation>
    </message>
    <message>
        <source>+%1 −%2 lines</source>
        <translation>+%1 −%2 Zeilen</translation>
    </message>
    <message>
        <source>Previous Change</source>
        <translation>Vorherige Änderung</translation>
    </message>
    <message>
        <source>Previous change (Alt+Up)</source>
        <translation>Vorherige Änderung (Alt+Hoch)</translation>
    </message>
    <message>
        <source>Next Change</source>
        <translation>Nächste Änderung</translation>
    </message>
    <message>
        <source>Next change (Alt+Down)</source>
        <translation>Nächste Änderung (Alt+Runter)</translation>
    </message>
    <message>
        <source>Inline</source>
        <translation>Inline</translation>
    </message>
    <message>
        <source>One text with each removed line above the line that replaced it and the changed words highlighted, instead of the two sides beside each other</source>
        <translation>Ein Text, jede entfernte Zeile über der Zeile, die sie ersetzt, die geänderten Wörter hervorgehoben, statt der beiden Seiten nebeneinander</translation>
    </message>
    <message>
        <source>change %1 of %2</source>
        <translation>Änderung %1 von %2</translation>
    </message>
</context>
<context>
    <name>kerncast::EngineText</name>
    <message>
        <source>severe slowdown</source>
        <translation>starke Verlangsamung</translation>
    </message>
    <message>
        <source>significant slowdown</source>
        <translation>deutliche Verlangsamung</translation>
    </message>
    <message>
        <source>moderate slowdown</source>
        <translation>mäßige Verlangsamung</translation>
    </message>
    <message>
        <source>minor slowdown</source>
        <translation>leichte Verlangsamung</translation>
    </message>
    <message>
        <source>minor speedup</source>
        <translation>leichte Beschleunigung</translation>
    </message>
    <message>
        <source>significant speedup</source>
        <translation>deutliche Beschleunigung</translation>
    </message>
    <message>
        <source>high speedup</source>
        <translation>hohe Beschleunigung</translation>
    </message>
    <message>
        <source>extreme speedup</source>
        <translation>extreme Beschleunigung</translation>
    </message>
    <message>
        <source>failure</source>
        <translation>Fehlschlag</translation>
    </message>
    <message>
        <source>measurement budget spent (%1)</source>
        <translation>Messbudget aufgebraucht (%1)</translation>
    </message>
    <message>
        <source>forecast budget spent (%1)</source>
        <translation>Prognosebudget aufgebraucht (%1)</translation>
    </message>
    <message>
        <source>token budget spent</source>
        <translation>Tokenbudget aufgebraucht</translation>
    </message>
    <message>
        <source>cost budget spent</source>
        <translation>Kostenbudget aufgebraucht</translation>
    </message>
    <message>
        <source>wall-time budget spent</source>
        <translation>Zeitbudget aufgebraucht</translation>
    </message>
    <message>
        <source>stopped by request</source>
        <translation>auf Wunsch angehalten</translation>
    </message>
    <message>
        <source>search space exhausted: no parent left to expand</source>
        <translation>Suchraum erschöpft: kein Elternkandidat mehr zu erweitern</translation>
    </message>
    <message>
        <source>no forecast</source>
        <translation>keine Prognose</translation>
    </message>
    <message>
        <source>measure-all</source>
        <translation>alles messen</translation>
    </message>
    <message>
        <source>unsure: confidence %1 &lt; τ %2</source>
        <translation>unsicher: Konfidenz %1 &lt; τ %2</translation>
    </message>
    <message>
        <source>promising: P(S &gt; best %1×) = %2 ≥ π %3</source>
        <translation>vielversprechend: P(S &gt; Bestwert %1×) = %2 ≥ π %3</translation>
    </message>
    <message>
        <source>sure and unpromising: confidence %1 ≥ τ %2, P(S &gt; best %3×) = %4 &lt; π %5, expected %6× ≤ the best</source>
        <translation>sicher und wenig versprechend: Konfidenz %1 ≥ τ %2, P(S &gt; Bestwert %3×) = %4 &lt; π %5, erwartet %6× ≤ Bestwert</translation>
    </message>
    <message>
        <source>trusted: confidence %1 ≥ τ %2, P(S &gt; best %3×) = %4 &lt; π %5, expected %6×</source>
        <translation>vertraut: Konfidenz %1 ≥ τ %2, P(S &gt; Bestwert %3×) = %4 &lt; π %5, erwartet %6×</translation>
    </message>
    <message>
        <source>trusted: confidence %1, P(S &gt; best %2×) = %3 &lt; π %4</source>
        <translation>vertraut: Konfidenz %1, P(S &gt; Bestwert %2×) = %3 &lt; π %4</translation>
    </message>
    <message>
        <source>; picked for the audit share</source>
        <translation>; für den Prüfanteil gezogen</translation>
    </message>
    <message>
        <source>(crossover with #%1)</source>
        <translation>(Kreuzung mit #%1)</translation>
    </message>
    <message>
        <source>(move)</source>
        <translation>(Schritt)</translation>
    </message>
</context>
<context>
    <name>kerncast::ErrorDialog</name>
    <message>
        <source>In %1, line %2.</source>
        <translation>In %1, Zeile %2.</translation>
    </message>
    <message>
        <source>In %1.</source>
        <translation>In %1.</translation>
    </message>
    <message>
        <source>Show the File</source>
        <translation>Datei anzeigen</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
</context>
<context>
    <name>kerncast::EvaluateDialog</name>
    <message>
        <source>Evaluate Pair Set</source>
        <translation>Paarmenge auswerten</translation>
    </message>
    <message>
        <source>Browse...</source>
        <translation>Durchsuchen...</translation>
    </message>
    <message>
        <source>Pair Set</source>
        <translation>Paarmenge</translation>
    </message>
    <message>
        <source>Pair JSONL (*.jsonl *.json);;All files (*)</source>
        <translation>Paar-JSONL (*.jsonl *.json);;Alle Dateien (*)</translation>
    </message>
    <message>
        <source>Local (learned from recordings)</source>
        <translation>Lokal (aus Aufzeichnungen gelernt)</translation>
    </message>
    <message>
        <source>LLM endpoint</source>
        <translation>LLM-Endpunkt</translation>
    </message>
    <message>
        <source>&amp;Pairs:</source>
        <translation>&amp;Paare:</translation>
    </message>
    <message>
        <source>&amp;Surrogate:</source>
        <translation>&amp;Surrogatmodell:</translation>
    </message>
    <message>
        <source>&amp;Endpoint:</source>
        <translation>&amp;Endpunkt:</translation>
    </message>
    <message>
        <source>&amp;Model:</source>
        <translation>&amp;Modell:</translation>
    </message>
    <message>
        <source>Evaluate</source>
        <translation>Auswerten</translation>
    </message>
</context>
<context>
    <name>kerncast::ExportKernelDialog</name>
    <message>
        <source>Export Kernel #%1</source>
        <translation>Kernel #%1 exportieren</translation>
    </message>
    <message>
        <source>The run&apos;s sweeps cannot be read: %1</source>
        <translation>Die Größenreihen des Laufs lassen sich nicht lesen: %1</translation>
    </message>
    <message>
        <source>CUDA unit (kernel, header with a launch function)</source>
        <translation>CUDA-Einheit (Kernel, Header mit Startfunktion)</translation>
    </message>
    <message>
        <source>PyTorch extension (and the CUDA unit, with a test script)</source>
        <translation>PyTorch-Erweiterung (und die CUDA-Einheit, mit Testskript)</translation>
    </message>
    <message>
        <source>Format:</source>
        <translation>Format:</translation>
    </message>
    <message>
        <source>Browse...</source>
        <translation>Durchsuchen...</translation>
    </message>
    <message>
        <source>Export Into</source>
        <translation>Exportieren nach</translation>
    </message>
    <message>
        <source>Folder:</source>
        <translation>Ordner:</translation>
    </message>
    <message>
        <source>kerncast_&lt;problem&gt;</source>
        <translation>kerncast_&lt;Problem&gt;</translation>
    </message>
    <message>
        <source>The C++ namespace of the unit, so that several exported kernels compile into one program</source>
        <translation>Der C++-Namensraum der Einheit, damit mehrere exportierte Kernel in ein Programm kompiliert werden können</translation>
    </message>
    <message>
        <source>Namespace:</source>
        <translation>Namensraum:</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>Exportieren</translation>
    </message>
    <message numerus="yes">
        <source>Wrote %n file(s) into %1: build with nvcc as its README.md says.</source>
        <translation>
            <numerusform>%n Datei nach %1 geschrieben: Bauen mit nvcc, wie ihre README.md beschreibt.</numerusform>
            <numerusform>%n Dateien nach %1 geschrieben: Bauen mit nvcc, wie ihre README.md beschreibt.</numerusform>
        </translation>
    </message>
    <message>
        <source>Not exported: %1</source>
        <translation>Nicht exportiert: %1</translation>
    </message>
    <message>
        <source>The run&apos;s swept candidates (kerncast-cli sweep --run R --top K) and their speedup over the reference at each size: click a size to rank them there</source>
        <translation>Die im Lauf vermessenen Kandidaten (kerncast-cli sweep --run R --top K) und ihre Beschleunigung gegenüber der Referenz bei jeder Größe: Klicken Sie auf eine Größe, um sie dort zu ordnen</translation>
    </message>
    <message>
        <source>Swept candidates, ranked at a size (click its column):</source>
        <translation>Über Größen vermessene Kandidaten, geordnet nach einer Größe (Spalte anklicken):</translation>
    </message>
    <message>
        <source>Candidate</source>
        <translation>Kandidat</translation>
    </message>
    <message>
        <source>#%1 (this one)</source>
        <translation>#%1 (dieser)</translation>
    </message>
    <message>
        <source>Export Kernel File</source>
        <translation>Kerneldatei exportieren</translation>
    </message>
    <message>
        <source>A kernel program file with its tunables fixed, exported without a run (as kerncast-cli export --problem P --kernel F --tunable NAME=V does).</source>
        <translation>Eine Kernelprogrammdatei mit festgelegten Tunables, ohne Lauf exportiert (wie kerncast-cli export --problem P --kernel F --tunable NAME=V).</translation>
    </message>
    <message>
        <source>Kernel programs (*.cu);;All files (*)</source>
        <translation>Kernelprogramme (*.cu);;Alle Dateien (*)</translation>
    </message>
    <message>
        <source>a problem folder, or a problem&apos;s name in the library</source>
        <translation>ein Problemordner oder der Name eines Problems der Bibliothek</translation>
    </message>
    <message>
        <source>Problem:</source>
        <translation>Problem:</translation>
    </message>
    <message>
        <source>the kernel program (.cu)</source>
        <translation>das Kernelprogramm (.cu)</translation>
    </message>
    <message>
        <source>Kernel file:</source>
        <translation>Kerneldatei:</translation>
    </message>
    <message>
        <source>NAME=VALUE for each tunable the program declares, e.g. BLOCK=256 ITEMS=4</source>
        <translation>NAME=WERT für jedes Tunable, das das Programm deklariert, z. B. BLOCK=256 ITEMS=4</translation>
    </message>
    <message>
        <source>Tunables:</source>
        <translation>Tunables:</translation>
    </message>
</context>
<context>
    <name>kerncast::ForecastDistributionPlot</name>
    <message>
        <source>Probability</source>
        <translation>Wahrscheinlichkeit</translation>
    </message>
    <message>
        <source>Measured: %1</source>
        <translation>Gemessen: %1</translation>
    </message>
    <message>
        <source>Measured: failed (no speedup)</source>
        <translation>Gemessen: fehlgeschlagen (keine Beschleunigung)</translation>
    </message>
    <message>
        <source>Predicted: %1 (%2)</source>
        <translation>Vorhergesagt: %1 (%2)</translation>
    </message>
    <message>
        <source>Forecast distribution (%1)</source>
        <translation>Prognoseverteilung (%1)</translation>
    </message>
    <message>
        <source>Forecast distribution</source>
        <translation>Prognoseverteilung</translation>
    </message>
</context>
<context>
    <name>kerncast::ForecastInspector</name>
    <message>
        <source>Forecast</source>
        <translation>Prognose</translation>
    </message>
    <message>
        <source>No language model was asked about this candidate.</source>
        <translation>Zu diesem Kandidaten wurde kein Sprachmodell befragt.</translation>
    </message>
    <message>
        <source>Model calls</source>
        <translation>Modellaufrufe</translation>
    </message>
    <message>
        <source>── %1 · %2 · %3 · %4 in / %5 out tokens · $%6 · %7 s
</source>
        <translation>── %1 · %2 · %3 · %4 Token ein / %5 aus · $%6 · %7 s
</translation>
    </message>
    <message>
        <source>Error: %1
</source>
        <translation>Fehler: %1
</translation>
    </message>
    <message>
        <source>Reasoning:
%1
</source>
        <translation>Begründung:
%1
</translation>
    </message>
    <message>
        <source>Reply:
%1

</source>
        <translation>Antwort:
%1

</translation>
    </message>
    <message>
        <source>deferred to a measurement (the model abstained)</source>
        <translation>an eine Messung abgegeben (das Modell enthielt sich)</translation>
    </message>
    <message>
        <source>Predicted bin:</source>
        <translation>Vorhergesagte Klasse:</translation>
    </message>
    <message>
        <source>Max probability:</source>
        <translation>Max. Wahrscheinlichkeit:</translation>
    </message>
    <message>
        <source>1 − H/log 8:</source>
        <translation>1 − H/log 8:</translation>
    </message>
    <message>
        <source>Top-2 margin:</source>
        <translation>Top-2-Abstand:</translation>
    </message>
    <message>
        <source>Expected speedup:</source>
        <translation>Erwartete Beschleunigung:</translation>
    </message>
    <message>
        <source>Measured:</source>
        <translation>Gemessen:</translation>
    </message>
    <message>
        <source>The surrogate gave no reasoning for this forecast.</source>
        <translation>Das Surrogatmodell hat für diese Prognose keine Begründung geliefert.</translation>
    </message>
    <message>
        <source>The prompt is not available for this forecast.</source>
        <translation>Der Prompt ist für diese Prognose nicht verfügbar.</translation>
    </message>
    <message>
        <source>Reasoning</source>
        <translation>Begründung</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>Prompt</translation>
    </message>
    <message>
        <source>Measure on the device</source>
        <translation>Auf dem Gerät messen</translation>
    </message>
    <message>
        <source>No candidate selected</source>
        <translation>Kein Kandidat ausgewählt</translation>
    </message>
    <message>
        <source>Candidate %1 · %2 · generation %3</source>
        <translation>Kandidat %1 · %2 · Generation %3</translation>
    </message>
    <message>
        <source>%1 (gating: %2)</source>
        <translation>%1 (Gating: %2)</translation>
    </message>
    <message>
        <source>%1× %2 (expected bin %3)</source>
        <translation>%1× %2 (erwartete Klasse %3)</translation>
    </message>
    <message>
        <source>no forecast yet</source>
        <translation>noch keine Prognose</translation>
    </message>
    <message>
        <source>not measured</source>
        <translation>nicht gemessen</translation>
    </message>
    <message>
        <source>This candidate has been measured already.</source>
        <translation>Dieser Kandidat wurde bereits gemessen.</translation>
    </message>
    <message>
        <source>This candidate is already queued for the device.</source>
        <translation>Dieser Kandidat steht bereits in der Warteschlange für das Gerät.</translation>
    </message>
    <message>
        <source>Measure this candidate on the device whatever its forecast says.</source>
        <translation>Diesen Kandidaten unabhängig von seiner Prognose auf dem Gerät messen.</translation>
    </message>
    <message>
        <source>%1× %2 — bin %3</source>
        <translation>%1× %2 — Klasse %3</translation>
    </message>
    <message>
        <source>%1× %2 — bin %3; %4× over the reference</source>
        <translation>%1× %2 — Klasse %3; %4× gegenüber der Referenz</translation>
    </message>
    <message>
        <source>Measurement</source>
        <translation>Messung</translation>
    </message>
    <message>
        <source>Prompt: about %1 tokens; instructions %2, problem %3, reference %4, parent %5, inspirations %6
</source>
        <translation>Prompt: etwa %1 Tokens; Anweisungen %2, Problem %3, Referenz %4, Elternkandidat %5, Inspirationen %6
</translation>
    </message>
</context>
<context>
    <name>kerncast::ForecastScatterPlot</name>
    <message>
        <source>Forecast vs measured speedup</source>
        <translation>Prognostizierte vs. gemessene Beschleunigung</translation>
    </message>
    <message>
        <source>Expected speedup vs anchor (forecast)</source>
        <translation>Erwartete Beschleunigung gegenüber dem Anker (Prognose)</translation>
    </message>
    <message>
        <source>Measured speedup vs the same anchor</source>
        <translation>Gemessene Beschleunigung gegenüber demselben Anker</translation>
    </message>
    <message>
        <source>Forecast = measured</source>
        <translation>Prognose = Messung</translation>
    </message>
    <message>
        <source>Candidates</source>
        <translation>Kandidaten</translation>
    </message>
    <message>
        <source>Selected candidate</source>
        <translation>Ausgewählter Kandidat</translation>
    </message>
    <message>
        <source>Selected candidate (%1)</source>
        <translation>Ausgewählter Kandidat (%1)</translation>
    </message>
    <message>
        <source>Confidence</source>
        <translation>Konfidenz</translation>
    </message>
</context>
<context>
    <name>kerncast::KernelEditor</name>
    <message>
        <source>Submit to search</source>
        <translation>An die Suche übergeben</translation>
    </message>
    <message>
        <source>Add this kernel program to the running search as a hand-edited candidate</source>
        <translation>Dieses Kernelprogramm als von Hand bearbeiteten Kandidaten zur laufenden Suche hinzufügen</translation>
    </message>
</context>
<context>
    <name>kerncast::KernelPane</name>
    <message>
        <source>(candidate of the run)</source>
        <translation>(Kandidat des Laufs)</translation>
    </message>
    <message>
        <source>%1 (reference)</source>
        <translation>%1 (Referenz)</translation>
    </message>
    <message>
        <source>%1 (seed)</source>
        <translation>%1 (Seed)</translation>
    </message>
    <message>
        <source>%1 (family, %2 configurations)</source>
        <translation>%1 (Familie, %2 Konfigurationen)</translation>
    </message>
    <message>
        <source>%1 (family)</source>
        <translation>%1 (Familie)</translation>
    </message>
    <message>
        <source>&amp;Program:</source>
        <translation>&amp;Programm:</translation>
    </message>
    <message>
        <source>This problem has no kernel programs.</source>
        <translation>Dieses Problem hat keine Kernelprogramme.</translation>
    </message>
</context>
<context>
    <name>kerncast::LineageGraph</name>
    <message>
        <source>#%1 · generation %2 · %3 · %4</source>
        <translation>#%1 · Generation %2 · %3 · %4</translation>
    </message>
    <message>
        <source>%1× over the reference</source>
        <translation>%1× gegenüber der Referenz</translation>
    </message>
    <message>
        <source>crossover of #%1 and #%2</source>
        <translation>Kreuzung von #%1 und #%2</translation>
    </message>
    <message>
        <source>the best measured candidate</source>
        <translation>der beste gemessene Kandidat</translation>
    </message>
    <message>
        <source>an ancestor of the best measured candidate</source>
        <translation>ein Vorfahr des besten gemessenen Kandidaten</translation>
    </message>
    <message>
        <source>No candidates yet: the lineage graph draws each generation as a column once a search runs or a run is opened.</source>
        <translation>Noch keine Kandidaten: Der Abstammungsgraph zeigt jede Generation als Spalte, sobald eine Suche läuft oder ein Lauf geöffnet ist.</translation>
    </message>
    <message>
        <source>path to the best</source>
        <translation>Weg zum Besten</translation>
    </message>
    <message>
        <source>crossover</source>
        <translation>Kreuzung</translation>
    </message>
    <message>
        <source>faster than the reference</source>
        <translation>schneller als die Referenz</translation>
    </message>
    <message>
        <source>slower</source>
        <translation>langsamer</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <source>not measured</source>
        <translation>nicht gemessen</translation>
    </message>
    <message>
        <source>reference or seed</source>
        <translation>Referenz oder Startkernel</translation>
    </message>
</context>
<context>
    <name>kerncast::MainWindow</name>
    <message>
        <source>Kerncast</source>
        <translation>Kerncast</translation>
    </message>
    <message>
        <source>Problems</source>
        <translation>Probleme</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>Details</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <source>Run Control</source>
        <translation>Laufsteuerung</translation>
    </message>
    <message>
        <source>Population</source>
        <translation>Population</translation>
    </message>
    <message>
        <source>Review failed: %1</source>
        <translation>Prüfung fehlgeschlagen: %1</translation>
    </message>
    <message>
        <source>Candidate %1 accepted: it enters the archive</source>
        <translation>Kandidat %1 angenommen: er kommt ins Archiv</translation>
    </message>
    <message>
        <source>Candidate %1 rejected: it stays out of the archive</source>
        <translation>Kandidat %1 verworfen: er bleibt außerhalb des Archivs</translation>
    </message>
    <message>
        <source>Forecast Inspector</source>
        <translation>Prognose-Inspektor</translation>
    </message>
    <message>
        <source>Measuring needs a running search: resume the run first.</source>
        <translation>Messen erfordert eine laufende Suche: Setzen Sie zuerst den Lauf fort.</translation>
    </message>
    <message>
        <source>Diff</source>
        <translation>Diff</translation>
    </message>
    <message>
        <source>Plots</source>
        <translation>Diagramme</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <source>Open &amp;Run...</source>
        <translation>&amp;Lauf öffnen...</translation>
    </message>
    <message>
        <source>Open Run</source>
        <translation>Lauf öffnen</translation>
    </message>
    <message>
        <source>&amp;Evaluate Pair Set...</source>
        <translation>Paarmenge &amp;auswerten...</translation>
    </message>
    <message>
        <source>Open &amp;Problem Folder...</source>
        <translation>&amp;Problemordner öffnen...</translation>
    </message>
    <message>
        <source>Open &amp;T1 Problem...</source>
        <translation>&amp;T1-Problem öffnen...</translation>
    </message>
    <message>
        <source>Open T1 Problem</source>
        <translation>T1-Problem öffnen</translation>
    </message>
    <message>
        <source>T1 problem files (*.json);;All files (*)</source>
        <translation>T1-Problemdateien (*.json);;Alle Dateien (*)</translation>
    </message>
    <message numerus="yes">
        <source>Imported %1 from %2 into %3: %n valid configurations</source>
        <translation>
            <numerusform>%1 aus %2 nach %3 importiert: %n gültige Konfiguration</numerusform>
            <numerusform>%1 aus %2 nach %3 importiert: %n gültige Konfigurationen</numerusform>
        </translation>
    </message>
    <message>
        <source>Cannot open the T1 problem</source>
        <translation>Das T1-Problem kann nicht geöffnet werden</translation>
    </message>
    <message>
        <source>Open Problem Folder</source>
        <translation>Problemordner öffnen</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>&amp;Lauf</translation>
    </message>
    <message>
        <source>&amp;Resume Opened Run</source>
        <translation>&amp;Geöffneten Lauf fortsetzen</translation>
    </message>
    <message>
        <source>Continue the opened search in its run file</source>
        <translation>Die geöffnete Suche in ihrer Laufdatei fortsetzen</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>&amp;Ansicht</translation>
    </message>
    <message>
        <source>&amp;Reload Problems</source>
        <translation>Probleme &amp;neu laden</translation>
    </message>
    <message>
        <source>Reload &amp;Devices</source>
        <translation>&amp;Geräte neu suchen</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;Hilfe</translation>
    </message>
    <message>
        <source>&amp;About Kerncast</source>
        <translation>Ü&amp;ber Kerncast</translation>
    </message>
    <message>
        <source>About Kerncast</source>
        <translation>Über Kerncast</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Kerncast %1&lt;/h3&gt;&lt;p&gt;A workbench for forecast-guided evolutionary search over CUDA kernels: a surrogate forecasts each candidate&apos;s speedup as a distribution over speedup bins, and only the candidates it is unsure about are measured on the GPU.&lt;/p&gt;&lt;p&gt;Resources: &lt;code&gt;%2&lt;/code&gt;&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Kerncast %1&lt;/h3&gt;&lt;p&gt;Eine Werkbank für prognosegeleitete evolutionäre Suche über CUDA-Kernel: Ein Surrogatmodell prognostiziert die Beschleunigung jedes Kandidaten als Verteilung über Beschleunigungsklassen, und nur die Kandidaten, bei denen es unsicher ist, werden auf der GPU gemessen.&lt;/p&gt;&lt;p&gt;Ressourcen: &lt;code&gt;%2&lt;/code&gt;&lt;/p&gt;</translation>
    </message>
    <message>
        <source>About &amp;Qt</source>
        <translation>Über &amp;Qt</translation>
    </message>
    <message>
        <source>Stopping the search...</source>
        <translation>Suche wird gestoppt...</translation>
    </message>
    <message>
        <source>Loading problems from %1...</source>
        <translation>Probleme werden aus %1 geladen...</translation>
    </message>
    <message>
        <source>%1, line %2</source>
        <translation>%1, Zeile %2</translation>
    </message>
    <message>
        <source>Search running</source>
        <translation>Suche läuft</translation>
    </message>
    <message>
        <source>A search is running already. Stop it before starting another.</source>
        <translation>Es läuft bereits eine Suche. Stoppen Sie sie, bevor Sie eine weitere starten.</translation>
    </message>
    <message>
        <source>Cannot start the search</source>
        <translation>Suche kann nicht gestartet werden</translation>
    </message>
    <message>
        <source>Search started; run file %1</source>
        <translation>Suche gestartet; Laufdatei %1</translation>
    </message>
    <message>
        <source>Cannot start the demo</source>
        <translation>Demo kann nicht gestartet werden</translation>
    </message>
    <message>
        <source>The demo needs a problem with a recording for the replay device under %1.</source>
        <translation>Die Demo benötigt ein Problem mit einer Aufzeichnung für das Replay-Gerät unter %1.</translation>
    </message>
    <message>
        <source>Search finished: %1</source>
        <translation>Suche abgeschlossen: %1</translation>
    </message>
    <message>
        <source>The search failed</source>
        <translation>Die Suche ist fehlgeschlagen</translation>
    </message>
    <message>
        <source>Stop the running search before opening another run.</source>
        <translation>Stoppen Sie die laufende Suche, bevor Sie einen anderen Lauf öffnen.</translation>
    </message>
    <message>
        <source>Reading %1...</source>
        <translation>%1 wird gelesen...</translation>
    </message>
    <message>
        <source>Cannot open the run</source>
        <translation>Lauf kann nicht geöffnet werden</translation>
    </message>
    <message numerus="yes">
        <source>Opened %1: %2, %n candidate(s)</source>
        <translation>
            <numerusform>%1 geöffnet: %2, %n Kandidat</numerusform>
            <numerusform>%1 geöffnet: %2, %n Kandidaten</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Opened %1: %2 on %3, %n candidate(s)</source>
        <translation>
            <numerusform>%1 geöffnet: %2 auf %3, %n Kandidat</numerusform>
            <numerusform>%1 geöffnet: %2 auf %3, %n Kandidaten</numerusform>
        </translation>
    </message>
    <message>
        <source>Resuming %1</source>
        <translation>%1 wird fortgesetzt</translation>
    </message>
    <message>
        <source>Evaluating %1 with the %2 surrogate...</source>
        <translation>%1 wird mit dem Surrogatmodell %2 ausgewertet...</translation>
    </message>
    <message>
        <source>The evaluation failed</source>
        <translation>Die Auswertung ist fehlgeschlagen</translation>
    </message>
    <message>
        <source>Evaluation of %1 pairs stored in %2; open it with File › Open Run once the search has ended</source>
        <translation>Auswertung von %1 Paaren in %2 gespeichert; öffnen Sie sie über Datei › Lauf öffnen, sobald die Suche beendet ist</translation>
    </message>
    <message>
        <source>Evaluation of %1 pairs stored in %2</source>
        <translation>Auswertung von %1 Paaren in %2 gespeichert</translation>
    </message>
    <message>
        <source>Evaluating: %1 %2 of %3</source>
        <translation>Auswertung: %1 %2 von %3</translation>
    </message>
    <message>
        <source>Run files (*.kerncast *.kcrun *.sqlite *.db);;All files (*)</source>
        <translation>Laufdateien (*.kerncast *.kcrun *.sqlite *.db);;Alle Dateien (*)</translation>
    </message>
    <message numerus="yes">
        <source>The problem folder has %n error(s)</source>
        <translation>
            <numerusform>Der Problemordner hat %n Fehler</numerusform>
            <numerusform>Der Problemordner hat %n Fehler</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 (%2) cannot be searched until these are fixed:

%3</source>
        <translation>%1 (%2) kann erst durchsucht werden, wenn diese Fehler behoben sind:

%3</translation>
    </message>
    <message>
        <source>Open Re&amp;cent</source>
        <translation>&amp;Zuletzt geöffnet</translation>
    </message>
    <message>
        <source>(no runs yet)</source>
        <translation>(noch keine Läufe)</translation>
    </message>
    <message>
        <source>Reset &amp;Layout</source>
        <translation>&amp;Anordnung zurücksetzen</translation>
    </message>
    <message>
        <source>Layout reset</source>
        <translation>Anordnung zurückgesetzt</translation>
    </message>
    <message>
        <source>E&amp;xport Kernel...</source>
        <translation>Kernel e&amp;xportieren...</translation>
    </message>
    <message>
        <source>scored as a search starts (the pack&apos;s problem left out, nothing learned from the pairs): lower than the calibration line of a search, whose surrogate learns from its measurements</source>
        <translation>bewertet wie zu Beginn einer Suche (das Problem des Pakets ausgelassen, nichts aus den Paaren gelernt): niedriger als die Kalibrierungszeile einer Suche, deren Surrogatmodell aus ihren Messungen lernt</translation>
    </message>
    <message>
        <source>Setting up: %1</source>
        <translation>Vorbereitung: %1</translation>
    </message>
</context>
<context>
    <name>kerncast::MeasurementPanel</name>
    <message>
        <source>&lt;i&gt;Not measured yet.&lt;/i&gt;</source>
        <translation>&lt;i&gt;Noch nicht gemessen.&lt;/i&gt;</translation>
    </message>
    <message>
        <source>%1 µs</source>
        <translation>%1 µs</translation>
    </message>
    <message>
        <source>Outcome</source>
        <translation>Ergebnis</translation>
    </message>
    <message>
        <source>Median</source>
        <translation>Median</translation>
    </message>
    <message>
        <source>%1 (95% CI %2 – %3)</source>
        <translation>%1 (95-%-KI %2 – %3)</translation>
    </message>
    <message>
        <source>Spread</source>
        <translation>Streuung</translation>
    </message>
    <message>
        <source>p10 %1, p90 %2, mean %3, relative standard error %4%</source>
        <translation>p10 %1, p90 %2, Mittel %3, relativer Standardfehler %4 %</translation>
    </message>
    <message numerus="yes">
        <source>Samples (%n)</source>
        <translation>
            <numerusform>Messwert (%n)</numerusform>
            <numerusform>Messwerte (%n)</numerusform>
        </translation>
    </message>
    <message>
        <source>CUDA events</source>
        <translation>CUDA-Events</translation>
    </message>
    <message>
        <source>median %1 (cross-check)</source>
        <translation>Median %1 (Gegenprobe)</translation>
    </message>
    <message>
        <source>Reference</source>
        <translation>Referenz</translation>
    </message>
    <message>
        <source>Speedup</source>
        <translation>Beschleunigung</translation>
    </message>
    <message>
        <source>%1× over the reference</source>
        <translation>%1× gegenüber der Referenz</translation>
    </message>
    <message>
        <source>Roofline</source>
        <translation>Roofline</translation>
    </message>
    <message>
        <source>floor %1: the median reaches %2% of the roofline</source>
        <translation>Untergrenze %1: Der Median erreicht %2 % der Roofline</translation>
    </message>
    <message>
        <source>Correctness</source>
        <translation>Korrektheit</translation>
    </message>
    <message numerus="yes">
        <source>%n seed(s) checked, largest error %1 absolute, %2 relative</source>
        <translation>
            <numerusform>%n Seed geprüft, größter Fehler %1 absolut, %2 relativ</numerusform>
            <numerusform>%n Seeds geprüft, größter Fehler %1 absolut, %2 relativ</numerusform>
        </translation>
    </message>
    <message>
        <source>Guard</source>
        <translation>Schutz</translation>
    </message>
    <message>
        <source>verified again (a speedup above 10×)</source>
        <translation>erneut geprüft (eine Beschleunigung über 10×)</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <source>Clocks</source>
        <translation>Takte</translation>
    </message>
    <message>
        <source>SM %1 → %2 MHz, memory %3 MHz, %4 → %5 °C</source>
        <translation>SM %1 → %2 MHz, Speicher %3 MHz, %4 → %5 °C</translation>
    </message>
    <message>
        <source>Time taken</source>
        <translation>Zeitaufwand</translation>
    </message>
    <message>
        <source>compile %1 ms, verify %2 ms, benchmark %3 ms</source>
        <translation>Kompilieren %1 ms, Prüfen %2 ms, Messen %3 ms</translation>
    </message>
    <message>
        <source>Static report</source>
        <translation>Statischer Bericht</translation>
    </message>
    <message>
        <source>%1 registers, %2 B shared, %3 B stack, spills %4 B stored / %5 B loaded</source>
        <translation>%1 Register, %2 B Shared, %3 B Stack, Spills %4 B geschrieben / %5 B gelesen</translation>
    </message>
    <message>
        <source>seed 1</source>
        <translation>Seed 1</translation>
    </message>
    <message>
        <source>seeds 1–%1</source>
        <translation>Seeds 1–%1</translation>
    </message>
    <message>
        <source>Verdicts per case and seed</source>
        <translation>Urteile je Fall und Seed</translation>
    </message>
    <message>
        <source>passed on seed 1</source>
        <translation>bestanden mit Seed 1</translation>
    </message>
    <message>
        <source>passed on %1</source>
        <translation>bestanden mit %1</translation>
    </message>
    <message>
        <source>passed on every seed</source>
        <translation>bestanden mit jedem Seed</translation>
    </message>
    <message>
        <source>not run (the worker stops at the first failure)</source>
        <translation>nicht ausgeführt (der Worker hält beim ersten Fehler an)</translation>
    </message>
    <message>
        <source>failed on seed %1</source>
        <translation>fehlgeschlagen mit Seed %1</translation>
    </message>
    <message>
        <source>%1 after passing %2</source>
        <translation>%1, nachdem %2 bestanden</translation>
    </message>
    <message>
        <source>Correctness case %1 (%2)</source>
        <translation>Korrektheitsfall %1 (%2)</translation>
    </message>
    <message>
        <source>Benchmark case (%1)</source>
        <translation>Benchmark-Fall (%1)</translation>
    </message>
    <message>
        <source>The run file holds the largest error over all cases and seeds (above), not each case&apos;s.</source>
        <translation>Die Laufdatei enthält den größten Fehler über alle Fälle und Seeds (oben), nicht den jedes Falls.</translation>
    </message>
    <message>
        <source>(the reference %1 %2)</source>
        <translation>(die Referenz %1 %2)</translation>
    </message>
    <message>
        <source>Memory throughput</source>
        <translation>Speicherdurchsatz</translation>
    </message>
    <message>
        <source>GB/s</source>
        <translation>GB/s</translation>
    </message>
    <message>
        <source>— (the problem states no bytes moved)</source>
        <translation>— (das Problem nennt keine bewegten Bytes)</translation>
    </message>
    <message>
        <source>Arithmetic</source>
        <translation>Rechenleistung</translation>
    </message>
    <message>
        <source>GFLOP/s</source>
        <translation>GFLOP/s</translation>
    </message>
    <message>
        <source>— (the problem states no floating-point work)</source>
        <translation>— (das Problem nennt keine Gleitkomma-Arbeit)</translation>
    </message>
    <message>
        <source>At sizes</source>
        <translation>Bei den Größen</translation>
    </message>
</context>
<context>
    <name>kerncast::ParameterPlot</name>
    <message>
        <source>Time per value of a tunable</source>
        <translation>Zeit je Wert eines Tunables</translation>
    </message>
    <message>
        <source>Tunable value</source>
        <translation>Wert des Tunables</translation>
    </message>
    <message>
        <source>Median time (µs)</source>
        <translation>Medianzeit (µs)</translation>
    </message>
    <message>
        <source>Forecast (expected time)</source>
        <translation>Prognose (erwartete Zeit)</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>Gemessen</translation>
    </message>
    <message>
        <source>No family configurations with tunables in this run.</source>
        <translation>Keine Familienkonfigurationen mit Tunables in diesem Lauf.</translation>
    </message>
    <message>
        <source>The tunable on the horizontal axis</source>
        <translation>Das Tunable auf der waagrechten Achse</translation>
    </message>
    <message>
        <source>Time per value of %1: %2 measured, %3 forecast</source>
        <translation>Zeit je Wert von %1: %2 gemessen, %3 prognostiziert</translation>
    </message>
</context>
<context>
    <name>kerncast::PlotWidget</name>
    <message>
        <source>No data yet</source>
        <translation>Noch keine Daten</translation>
    </message>
    <message>
        <source>Export as PNG…</source>
        <translation>Als PNG exportieren…</translation>
    </message>
    <message>
        <source>Export as PDF…</source>
        <translation>Als PDF exportieren…</translation>
    </message>
    <message>
        <source>Reset View</source>
        <translation>Ansicht zurücksetzen</translation>
    </message>
    <message>
        <source>No file name was given for the export.</source>
        <translation>Für den Export wurde kein Dateiname angegeben.</translation>
    </message>
    <message>
        <source>Cannot save the plot to %1: it is a folder. Choose a file name.</source>
        <translation>Das Diagramm kann nicht unter %1 gespeichert werden: Dies ist ein Ordner. Wählen Sie einen Dateinamen.</translation>
    </message>
    <message>
        <source>Cannot save the plot to %1: the folder %2 does not exist.</source>
        <translation>Das Diagramm kann nicht unter %1 gespeichert werden: Der Ordner %2 existiert nicht.</translation>
    </message>
    <message>
        <source>Cannot save the plot to %1: the folder %2 is not writable.</source>
        <translation>Das Diagramm kann nicht unter %1 gespeichert werden: Der Ordner %2 ist nicht beschreibbar.</translation>
    </message>
    <message>
        <source>Cannot save the plot to %1: the file exists and is read-only.</source>
        <translation>Das Diagramm kann nicht unter %1 gespeichert werden: Die Datei existiert und ist schreibgeschützt.</translation>
    </message>
    <message>
        <source>Cannot save the plot to %1: %2 × %3 pixels is not a valid size (each side must be 1 to %4).</source>
        <translation>Das Diagramm kann nicht unter %1 gespeichert werden: %2 × %3 Pixel sind keine gültige Größe (jede Seite muss 1 bis %4 betragen).</translation>
    </message>
    <message>
        <source>Cannot save the plot to %1: writing the PNG image failed (is the disk full?).</source>
        <translation>Das Diagramm kann nicht unter %1 gespeichert werden: Das Schreiben des PNG-Bildes ist fehlgeschlagen (ist der Datenträger voll?).</translation>
    </message>
    <message>
        <source>Cannot save the plot to %1: writing the PDF failed (is the disk full?).</source>
        <translation>Das Diagramm kann nicht unter %1 gespeichert werden: Das Schreiben der PDF-Datei ist fehlgeschlagen (ist der Datenträger voll?).</translation>
    </message>
    <message>
        <source>Export Plot as PDF</source>
        <translation>Diagramm als PDF exportieren</translation>
    </message>
    <message>
        <source>Export Plot as PNG</source>
        <translation>Diagramm als PNG exportieren</translation>
    </message>
    <message>
        <source>PDF documents (*.pdf)</source>
        <translation>PDF-Dokumente (*.pdf)</translation>
    </message>
    <message>
        <source>PNG images (*.png)</source>
        <translation>PNG-Bilder (*.png)</translation>
    </message>
    <message>
        <source>Export Failed</source>
        <translation>Export fehlgeschlagen</translation>
    </message>
    <message>
        <source>×%1</source>
        <comment>A speedup factor on a plot, e.g. ×2 or ×0.5</comment>
        <translation>×%1</translation>
    </message>
    <message>
        <source>≤ %1</source>
        <comment>A bin holding every speedup up to a factor</comment>
        <translation>≤ %1</translation>
    </message>
    <message>
        <source>&gt; %1</source>
        <comment>A bin holding every speedup above a factor</comment>
        <translation>&gt; %1</translation>
    </message>
    <message>
        <source>%1–%2</source>
        <comment>A bin&apos;s range of speedups, e.g. ×0.5–0.71</comment>
        <translation>%1–%2</translation>
    </message>
    <message>
        <source>%1k</source>
        <comment>Thousands, e.g. 1.2k</comment>
        <translation>%1 Tsd.</translation>
    </message>
    <message>
        <source>%1M</source>
        <comment>Millions, e.g. 3.4M</comment>
        <translation>%1 Mio.</translation>
    </message>
    <message>
        <source>%1%</source>
        <comment>A share on a plot axis, e.g. 40%</comment>
        <translation>%1 %</translation>
    </message>
</context>
<context>
    <name>kerncast::PlotsPanel</name>
    <message>
        <source>Forecast vs Measured</source>
        <translation>Prognose vs. Messung</translation>
    </message>
    <message>
        <source>Reliability</source>
        <translation>Zuverlässigkeit</translation>
    </message>
    <message>
        <source>Risk-Coverage</source>
        <translation>Risiko-Abdeckung</translation>
    </message>
    <message>
        <source>Search Progress</source>
        <translation>Suchfortschritt</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>Exportieren…</translation>
    </message>
    <message>
        <source>Save the plot shown as PNG or PDF</source>
        <translation>Das angezeigte Diagramm als PNG oder PDF speichern</translation>
    </message>
    <message>
        <source>No run shown. Start a search (F5), or open a run or evaluate a pair set from the File menu.</source>
        <translation>Kein Lauf angezeigt. Starten Sie eine Suche (F5), oder öffnen Sie über das Menü „Datei“ einen Lauf oder werten Sie eine Paarmenge aus.</translation>
    </message>
    <message>
        <source>No measured candidate with a forecast yet.</source>
        <translation>Noch kein gemessener Kandidat mit Prognose.</translation>
    </message>
    <message>
        <source>No candidates yet.</source>
        <translation>Noch keine Kandidaten.</translation>
    </message>
    <message numerus="yes">
        <source>%n measured forecast(s): accuracy %1 (majority bin %2), off by one %3, ECE %4, AURC %5, Kendall τ-b %6; Brier %7 (climatology %8, skill %9), CRPS %10 (climatology %11, skill %12)</source>
        <translation>
            <numerusform>%n gemessene Prognose: Genauigkeit %1 (häufigste Klasse %2), um eins daneben %3, ECE %4, AURC %5, Kendall τ-b %6; Brier %7 (Klimatologie %8, Skill %9), CRPS %10 (Klimatologie %11, Skill %12)</numerusform>
            <numerusform>%n gemessene Prognosen: Genauigkeit %1 (häufigste Klasse %2), um eins daneben %3, ECE %4, AURC %5, Kendall τ-b %6; Brier %7 (Klimatologie %8, Skill %9), CRPS %10 (Klimatologie %11, Skill %12)</numerusform>
        </translation>
    </message>
    <message>
        <source>Audited (a random share of the trusted): no audited candidates yet.</source>
        <translation>Geprüft (zufällig aus den vertrauten gezogen): noch keine geprüften Kandidaten.</translation>
    </message>
    <message numerus="yes">
        <source>%n audited forecast(s) (a random share of the trusted): accuracy %1 (majority bin %2), ECE %3, AURC %4; Brier skill %5, CRPS skill %6</source>
        <translation>
            <numerusform>%n geprüfte Prognose (zufällig aus den vertrauten gezogen): Genauigkeit %1 (häufigste Klasse %2), ECE %3, AURC %4; Brier-Skill %5, CRPS-Skill %6</numerusform>
            <numerusform>%n geprüfte Prognosen (zufällig aus den vertrauten gezogen): Genauigkeit %1 (häufigste Klasse %2), ECE %3, AURC %4; Brier-Skill %5, CRPS-Skill %6</numerusform>
        </translation>
    </message>
    <message>
        <source>Tunables</source>
        <translation>Tunables</translation>
    </message>
</context>
<context>
    <name>kerncast::PoolModel</name>
    <message>
        <source>Worker</source>
        <translation>Prozess</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>Rechner</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>State</source>
        <translation>Zustand</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>Gemessen</translation>
    </message>
    <message>
        <source>measuring #%1</source>
        <translation>misst #%1</translation>
    </message>
    <message>
        <source>measuring</source>
        <translation>misst</translation>
    </message>
    <message>
        <source>idle</source>
        <translation>frei</translation>
    </message>
    <message>
        <source>restarting</source>
        <translation>startet neu</translation>
    </message>
    <message>
        <source>retired</source>
        <translation>ausgemustert</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>startet</translation>
    </message>
    <message>
        <source>Queue: %1 · in flight: %2 · measured: %3</source>
        <translation>Warteschlange: %1 · in Arbeit: %2 · gemessen: %3</translation>
    </message>
</context>
<context>
    <name>kerncast::PoolSettingsWidget</name>
    <message>
        <source>e.g. cuda:1, cuda:all@ssh:gpu-b</source>
        <translation>z. B. cuda:1, cuda:all@ssh:gpu-b</translation>
    </message>
    <message>
        <source>More devices for the same search, separated by commas: cuda:N, cuda:all or replay:&lt;recordings&gt;, each optionally followed by @ssh:HOST or @slurm.</source>
        <translation>Weitere Geräte für dieselbe Suche, durch Kommas getrennt: cuda:N, cuda:all oder replay:&lt;Aufzeichnungen&gt;, jeweils wahlweise gefolgt von @ssh:HOST oder @slurm.</translation>
    </message>
    <message>
        <source>Worker processes per device; a gated batch is measured on all of them at once.</source>
        <translation>Worker-Prozesse je Gerät; ein gefilterter Stapel wird auf allen zugleich gemessen.</translation>
    </message>
    <message>
        <source>local, ssh:HOST or slurm[:srun options]</source>
        <translation>local, ssh:HOST oder slurm[:srun-Optionen]</translation>
    </message>
    <message>
        <source>How workers start: here, over ssh on HOST, or as Slurm job steps (srun) inside your allocation.</source>
        <translation>Wie Worker starten: hier, über ssh auf HOST oder als Slurm-Job-Schritte (srun) in Ihrer Zuteilung.</translation>
    </message>
    <message>
        <source>Allow different GPU models</source>
        <translation>Verschiedene GPU-Modelle erlauben</translation>
    </message>
    <message>
        <source>Choose the next batch while one is measured</source>
        <translation>Nächsten Stapel beim Messen wählen</translation>
    </message>
    <message>
        <source>Keeps the workers busy: forecasting and retraining overlap the measurements. The search learns from a batch once twice a round of measurements is queued behind it; a seed still gives the same search with any number of workers.</source>
        <translation>Hält die Worker beschäftigt: Vorhersagen und Nachtrainieren überlappen die Messungen. Die Suche lernt aus einem Stapel, sobald zwei Runden an Messungen dahinter warten; ein Seed ergibt weiterhin dieselbe Suche mit beliebig vielen Workern.</translation>
    </message>
    <message>
        <source>More devices:</source>
        <translation>Weitere Geräte:</translation>
    </message>
    <message>
        <source>Workers per device:</source>
        <translation>Worker je Gerät:</translation>
    </message>
    <message>
        <source>Measure in rounds of:</source>
        <translation>In Runden messen zu:</translation>
    </message>
    <message>
        <source>Each batch is topped up to a multiple of this with the candidates gating passed over, the most promising first (never past the budget), so that this many workers measure full rounds. A search setting: the same search with any number of workers; 1: batches as gating chose them.</source>
        <translation>Jeder Stapel wird mit den Kandidaten, die das Gating übergangen hat, auf ein Vielfaches davon aufgefüllt, die vielversprechendsten zuerst (nie über das Budget hinaus), damit so viele Worker volle Runden messen. Eine Sucheinstellung: dieselbe Suche mit beliebig vielen Workern; 1: Stapel so, wie das Gating sie gewählt hat.</translation>
    </message>
    <message>
        <source>Launcher:</source>
        <translation>Start über:</translation>
    </message>
</context>
<context>
    <name>kerncast::PoolView</name>
    <message>
        <source>&lt;b&gt;Measurement pool&lt;/b&gt;</source>
        <translation>&lt;b&gt;Mess-Pool&lt;/b&gt;</translation>
    </message>
</context>
<context>
    <name>kerncast::PopulationModel</name>
    <message>
        <source>Gating: %1</source>
        <translation>Gating: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n byte(s) of spill traffic</source>
        <translation>
            <numerusform>%n Byte Spill-Verkehr</numerusform>
            <numerusform>%n Bytes Spill-Verkehr</numerusform>
        </translation>
    </message>
    <message>
        <source>bin %1 (%2%)</source>
        <translation>Klasse %1 (%2 %)</translation>
    </message>
    <message>
        <source>%1×</source>
        <translation>%1×</translation>
    </message>
    <message>
        <source>%1 µs</source>
        <translation>%1 µs</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 ms</translation>
    </message>
    <message>
        <source>No forecast yet</source>
        <translation>Noch keine Prognose</translation>
    </message>
    <message>
        <source>The surrogate&apos;s most likely speedup bin and its probability</source>
        <translation>Die laut Surrogatmodell wahrscheinlichste Beschleunigungsklasse und ihre Wahrscheinlichkeit</translation>
    </message>
    <message>
        <source>Measured speedup over the reference</source>
        <translation>Gemessene Beschleunigung gegenüber der Referenz</translation>
    </message>
    <message>
        <source>Median time of the candidate&apos;s kernels</source>
        <translation>Medianzeit der Kernel des Kandidaten</translation>
    </message>
    <message>
        <source>Registers per thread of the kernel that uses the most</source>
        <translation>Register pro Thread des Kernels, der die meisten nutzt</translation>
    </message>
    <message>
        <source>Static shared memory of the kernel that uses the most</source>
        <translation>Statischer Shared Memory des Kernels, der am meisten nutzt</translation>
    </message>
    <message>
        <source>Id</source>
        <translation>ID</translation>
    </message>
    <message>
        <source>Gen.</source>
        <translation>Gen.</translation>
    </message>
    <message>
        <source>Parent</source>
        <translation>Elternteil</translation>
    </message>
    <message>
        <source>Mutator</source>
        <translation>Mutator</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Status</translation>
    </message>
    <message>
        <source>Forecast</source>
        <translation>Prognose</translation>
    </message>
    <message>
        <source>Speedup</source>
        <translation>Beschleunigung</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>Zeit</translation>
    </message>
    <message>
        <source>Registers</source>
        <translation>Register</translation>
    </message>
    <message>
        <source>Shared memory</source>
        <translation>Shared Memory</translation>
    </message>
    <message>
        <source>proposed</source>
        <translation>vorgeschlagen</translation>
    </message>
    <message>
        <source>forecast</source>
        <translation>prognostiziert</translation>
    </message>
    <message>
        <source>trusted</source>
        <translation>vertraut</translation>
    </message>
    <message>
        <source>discarded</source>
        <translation>verworfen</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>in Warteschlange</translation>
    </message>
    <message>
        <source>measuring</source>
        <translation>wird gemessen</translation>
    </message>
    <message>
        <source>ok</source>
        <translation>ok</translation>
    </message>
    <message>
        <source>suspect</source>
        <translation>verdächtig</translation>
    </message>
    <message>
        <source>compile error</source>
        <translation>Kompilierfehler</translation>
    </message>
    <message>
        <source>launch error</source>
        <translation>Startfehler</translation>
    </message>
    <message>
        <source>incorrect</source>
        <translation>falsch</translation>
    </message>
    <message>
        <source>timeout</source>
        <translation>Zeitüberschreitung</translation>
    </message>
    <message>
        <source>crashed</source>
        <translation>abgestürzt</translation>
    </message>
    <message>
        <source>not recorded</source>
        <translation>nicht aufgezeichnet</translation>
    </message>
    <message>
        <source>seed</source>
        <translation>Seed</translation>
    </message>
    <message>
        <source>reference</source>
        <translation>Referenz</translation>
    </message>
    <message>
        <source>parametric</source>
        <translation>parametrisch</translation>
    </message>
    <message>
        <source>LLM rewrite</source>
        <translation>LLM-Neufassung</translation>
    </message>
    <message>
        <source>LLM diff</source>
        <translation>LLM-Diff</translation>
    </message>
    <message>
        <source>edited by hand</source>
        <translation>von Hand bearbeitet</translation>
    </message>
    <message>
        <source>imported pair</source>
        <translation>importiertes Paar</translation>
    </message>
    <message>
        <source>measure</source>
        <translation>messen</translation>
    </message>
    <message>
        <source>trust the forecast</source>
        <translation>der Prognose vertrauen</translation>
    </message>
    <message>
        <source>audit (measure a trusted forecast)</source>
        <translation>Prüfung (eine vertraute Prognose messen)</translation>
    </message>
    <message>
        <source>discard</source>
        <translation>verwerfen</translation>
    </message>
    <message>
        <source>measurement requested by hand</source>
        <translation>Messung von Hand angefordert</translation>
    </message>
    <message>
        <source>Predicted bin %1 with probability %2%
Expected speedup %3× %4</source>
        <translation>Vorhergesagte Klasse %1 mit Wahrscheinlichkeit %2%
Erwartete Beschleunigung %3× %4</translation>
    </message>
    <message>
        <source>Pinned as a parent: the search expands it first.</source>
        <translation>Als Elternteil angeheftet: Die Suche erweitert ihn zuerst.</translation>
    </message>
    <message>
        <source>Banned as a parent: the search never expands it.</source>
        <translation>Als Elternteil gesperrt: Die Suche erweitert ihn nie.</translation>
    </message>
    <message>
        <source>Tunable %1 of the family configuration</source>
        <translation>Tunable %1 der Familienkonfiguration</translation>
    </message>
</context>
<context>
    <name>kerncast::PopulationPanel</name>
    <message>
        <source>Filter by id, label, mutator, status or hash</source>
        <translation>Nach ID, Bezeichnung, Mutator, Status oder Hash filtern</translation>
    </message>
    <message>
        <source>Table</source>
        <translation>Tabelle</translation>
    </message>
    <message>
        <source>Lineage</source>
        <translation>Abstammung</translation>
    </message>
    <message>
        <source>Pin as Parent</source>
        <translation>Als Elternteil anheften</translation>
    </message>
    <message>
        <source>Ban as Parent</source>
        <translation>Als Elternteil sperren</translation>
    </message>
    <message>
        <source>Measure on the Device</source>
        <translation>Auf dem Gerät messen</translation>
    </message>
    <message>
        <source>Accept Suspect Result</source>
        <translation>Verdächtiges Ergebnis annehmen</translation>
    </message>
    <message>
        <source>Reject Suspect Result</source>
        <translation>Verdächtiges Ergebnis verwerfen</translation>
    </message>
    <message>
        <source>Unpin as Parent</source>
        <translation>Als Elternteil lösen</translation>
    </message>
    <message>
        <source>Unban as Parent</source>
        <translation>Sperre als Elternteil aufheben</translation>
    </message>
    <message>
        <source>Candidate #%1 pinned as a parent: the search expands it first</source>
        <translation>Kandidat #%1 als Elternteil angeheftet: Die Suche erweitert ihn zuerst</translation>
    </message>
    <message>
        <source>Candidate #%1 banned as a parent: the search never expands it</source>
        <translation>Kandidat #%1 als Elternteil gesperrt: Die Suche erweitert ihn nie</translation>
    </message>
    <message>
        <source>Candidate #%1 unpinned: the search chooses its parents again</source>
        <translation>Kandidat #%1 gelöst: Die Suche wählt ihre Eltern wieder selbst</translation>
    </message>
    <message>
        <source>Candidate #%1 unbanned: it can be a parent again</source>
        <translation>Sperre von Kandidat #%1 aufgehoben: Er kann wieder Elternteil sein</translation>
    </message>
    <message>
        <source>Compare with #%1</source>
        <translation>Mit #%1 vergleichen</translation>
    </message>
    <message>
        <source>Compare with the Shown Candidate</source>
        <translation>Mit dem angezeigten Kandidaten vergleichen</translation>
    </message>
    <message>
        <source>Lineage Graph</source>
        <translation>Abstammungsgraph</translation>
    </message>
</context>
<context>
    <name>kerncast::ProblemBrowser</name>
    <message>
        <source>Filter problems</source>
        <translation>Probleme filtern</translation>
    </message>
    <message>
        <source>%1 problems loaded, %2 with errors</source>
        <translation>%1 Probleme geladen, %2 davon fehlerhaft</translation>
    </message>
    <message>
        <source>%1 problems loaded</source>
        <translation>%1 Probleme geladen</translation>
    </message>
</context>
<context>
    <name>kerncast::ProblemDetailsView</name>
    <message>
        <source>Case</source>
        <translation>Fall</translation>
    </message>
    <message>
        <source>benchmark</source>
        <translation>Benchmark</translation>
    </message>
    <message>
        <source>correctness %1</source>
        <translation>Korrektheit %1</translation>
    </message>
    <message>
        <source>Buffer</source>
        <translation>Puffer</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>Typ</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>Rolle</translation>
    </message>
    <message>
        <source>Shape</source>
        <translation>Form</translation>
    </message>
    <message>
        <source>Benchmark size</source>
        <translation>Größe im Benchmark</translation>
    </message>
    <message>
        <source>scalar</source>
        <translation>Skalar</translation>
    </message>
    <message>
        <source>not given</source>
        <translation>nicht angegeben</translation>
    </message>
    <message>
        <source>FLOPs</source>
        <translation>FLOPs</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>Bytes</translation>
    </message>
    <message>
        <source>Arithmetic intensity</source>
        <translation>Arithmetische Intensität</translation>
    </message>
    <message>
        <source>reference</source>
        <translation>Referenz</translation>
    </message>
    <message>
        <source>seed</source>
        <translation>Seed</translation>
    </message>
    <message>
        <source>family: one configuration, no tunables</source>
        <translation>Familie: eine Konfiguration, keine Parameter</translation>
    </message>
    <message>
        <source>family: %1 configurations over %2</source>
        <translation>Familie: %1 Konfigurationen über %2</translation>
    </message>
    <message>
        <source>family (does not parse)</source>
        <translation>Familie (nicht parsebar)</translation>
    </message>
    <message>
        <source>no kernel programs found</source>
        <translation>keine Kernelprogramme gefunden</translation>
    </message>
    <message>
        <source>Select a problem to see its sizes, buffers and work.</source>
        <translation>Wählen Sie ein Problem, um seine Größen, Puffer und seinen Rechenaufwand zu sehen.</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <source>Programs</source>
        <translation>Programme</translation>
    </message>
    <message>
        <source>Reference µs</source>
        <translation>Referenz µs</translation>
    </message>
    <message>
        <source>Best µs</source>
        <translation>Beste µs</translation>
    </message>
    <message>
        <source>PyTorch µs</source>
        <translation>PyTorch µs</translation>
    </message>
    <message>
        <source>%1 (%2 not ok)</source>
        <translation>%1 (%2 nicht ok)</translation>
    </message>
    <message>
        <source>fastest:</source>
        <translation>am schnellsten:</translation>
    </message>
    <message>
        <source>1 validation error</source>
        <translation>1 Validierungsfehler</translation>
    </message>
    <message>
        <source>%1 validation errors</source>
        <translation>%1 Validierungsfehler</translation>
    </message>
    <message>
        <source>Sizes</source>
        <translation>Größen</translation>
    </message>
    <message>
        <source>Buffers</source>
        <translation>Puffer</translation>
    </message>
    <message>
        <source>Work at the benchmark case</source>
        <translation>Aufwand im Benchmark-Fall</translation>
    </message>
    <message>
        <source>Tolerance</source>
        <translation>Toleranz</translation>
    </message>
    <message>
        <source> × RMS of the reference output</source>
        <translation> × RMS der Referenzausgabe</translation>
    </message>
    <message>
        <source>Kernel programs</source>
        <translation>Kernelprogramme</translation>
    </message>
    <message>
        <source>Recorded measurements</source>
        <translation>Aufgezeichnete Messungen</translation>
    </message>
</context>
<context>
    <name>kerncast::ProblemListModel</name>
    <message>
        <source>no family</source>
        <translation>keine Familie</translation>
    </message>
    <message>
        <source>unparsed</source>
        <translation>nicht geparst</translation>
    </message>
    <message>
        <source>valid</source>
        <translation>gültig</translation>
    </message>
    <message>
        <source>1 error</source>
        <translation>1 Fehler</translation>
    </message>
    <message>
        <source>%1 errors</source>
        <translation>%1 Fehler</translation>
    </message>
    <message>
        <source>Valid tunable configurations of the problem&apos;s family.cu</source>
        <translation>Gültige Parameterkonfigurationen in der family.cu des Problems</translation>
    </message>
    <message>
        <source>Problem</source>
        <translation>Problem</translation>
    </message>
    <message>
        <source>Seeds</source>
        <translation>Seeds</translation>
    </message>
    <message>
        <source>Family</source>
        <translation>Familie</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Status</translation>
    </message>
</context>
<context>
    <name>kerncast::ReliabilityPlot</name>
    <message>
        <source>Accuracy</source>
        <translation>Genauigkeit</translation>
    </message>
    <message>
        <source>Confidence</source>
        <translation>Konfidenz</translation>
    </message>
    <message>
        <source>Forecasts</source>
        <translation>Prognosen</translation>
    </message>
    <message>
        <source>Perfect calibration</source>
        <translation>Perfekte Kalibrierung</translation>
    </message>
    <message>
        <source>Mean confidence</source>
        <translation>Mittlere Konfidenz</translation>
    </message>
    <message>
        <source>Reliability (ECE = %1)</source>
        <translation>Zuverlässigkeit (ECE = %1)</translation>
    </message>
    <message>
        <source>Reliability</source>
        <translation>Zuverlässigkeit</translation>
    </message>
    <message>
        <source>Gap (over-confidence)</source>
        <translation>Lücke (Überkonfidenz)</translation>
    </message>
    <message>
        <source>Reliability (ECE = %1; accuracy %2, majority bin %3)</source>
        <translation>Zuverlässigkeit (ECE = %1; Genauigkeit %2, häufigste Klasse %3)</translation>
    </message>
</context>
<context>
    <name>kerncast::RiskCoveragePlot</name>
    <message>
        <source>Coverage (forecasts kept)</source>
        <translation>Abdeckung (beibehaltene Prognosen)</translation>
    </message>
    <message>
        <source>Risk (kept forecasts wrong)</source>
        <translation>Risiko (beibehaltene Prognosen falsch)</translation>
    </message>
    <message>
        <source>Risk with every forecast kept</source>
        <translation>Risiko bei Beibehaltung aller Prognosen</translation>
    </message>
    <message>
        <source>Risk at coverage</source>
        <translation>Risiko bei Abdeckung</translation>
    </message>
    <message>
        <source>Risk–coverage (AURC = %1)</source>
        <translation>Risiko–Abdeckung (AURC = %1)</translation>
    </message>
    <message>
        <source>Risk–coverage</source>
        <translation>Risiko–Abdeckung</translation>
    </message>
</context>
<context>
    <name>kerncast::RunControlPanel</name>
    <message>
        <source>Auto (adapts to the endpoint)</source>
        <translation>Automatisch (passt sich dem Endpunkt an)</translation>
    </message>
    <message>
        <source>OpenAI</source>
        <translation>OpenAI</translation>
    </message>
    <message>
        <source>vLLM</source>
        <translation>vLLM</translation>
    </message>
    <message>
        <source>Ollama</source>
        <translation>Ollama</translation>
    </message>
    <message>
        <source>llama.cpp server</source>
        <translation>llama.cpp-Server</translation>
    </message>
    <message>
        <source>How requests are shaped: tool calling, JSON in the answer, max_tokens or max_completion_tokens, temperature. Auto switches once when the endpoint refuses one.</source>
        <translation>Wie Anfragen gebaut werden: Werkzeugaufruf, JSON in der Antwort, max_tokens oder max_completion_tokens, Temperatur. Automatisch wechselt einmal, wenn der Endpunkt etwas ablehnt.</translation>
    </message>
    <message>
        <source>USD per million prompt tokens: the run&apos;s cost and its cost budget count with it.</source>
        <translation>USD je Million Prompt-Token: damit rechnen die Kosten des Laufs und sein Kostenbudget.</translation>
    </message>
    <message>
        <source>USD per million completion tokens (reasoning included).</source>
        <translation>USD je Million Antwort-Token (Begründung eingeschlossen).</translation>
    </message>
    <message>
        <source>in</source>
        <translation>ein</translation>
    </message>
    <message>
        <source>out</source>
        <translation>aus</translation>
    </message>
    <message>
        <source>/M</source>
        <translation>/Mio.</translation>
    </message>
    <message>
        <source>LLM pro&amp;file:</source>
        <translation>LLM-Pro&amp;fil:</translation>
    </message>
    <message>
        <source>Prices:</source>
        <translation>Preise:</translation>
    </message>
    <message>
        <source>The LLM settings file cannot be used: %1</source>
        <translation>Die LLM-Einstellungsdatei ist nicht verwendbar: %1</translation>
    </message>
    <message>
        <source>Forecasts: %1 (%2 deferred to a measurement)</source>
        <translation>Prognosen: %1 (%2 an eine Messung abgegeben)</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>Suche</translation>
    </message>
    <message>
        <source>Local (learned from recordings)</source>
        <translation>Lokal (aus Aufzeichnungen gelernt)</translation>
    </message>
    <message>
        <source>LLM endpoint</source>
        <translation>LLM-Endpunkt</translation>
    </message>
    <message>
        <source>None (measure everything)</source>
        <translation>Keines (alles messen)</translation>
    </message>
    <message>
        <source>http://localhost:8000/v1</source>
        <translation>http://localhost:8000/v1</translation>
    </message>
    <message>
        <source>model name at the endpoint</source>
        <translation>Modellname am Endpunkt</translation>
    </message>
    <message>
        <source>The API key is read from $KERNCAST_API_KEY, $OPENAI_API_KEY or ~/.config/kerncast/llm.json; it is never stored by the workbench.</source>
        <translation>Der API-Schlüssel wird aus $KERNCAST_API_KEY, $OPENAI_API_KEY oder ~/.config/kerncast/llm.json gelesen; die Werkbank speichert ihn nie.</translation>
    </message>
    <message>
        <source>Parametric</source>
        <translation>Parametrisch</translation>
    </message>
    <message>
        <source>LLM rewrite</source>
        <translation>LLM-Neufassung</translation>
    </message>
    <message>
        <source>LLM diff</source>
        <translation>LLM-Diff</translation>
    </message>
    <message>
        <source>&amp;Problem:</source>
        <translation>&amp;Problem:</translation>
    </message>
    <message>
        <source>&amp;Device:</source>
        <translation>&amp;Gerät:</translation>
    </message>
    <message>
        <source>S&amp;urrogate:</source>
        <translation>S&amp;urrogatmodell:</translation>
    </message>
    <message>
        <source>&amp;Endpoint:</source>
        <translation>&amp;Endpunkt:</translation>
    </message>
    <message>
        <source>&amp;Model:</source>
        <translation>&amp;Modell:</translation>
    </message>
    <message>
        <source>Mutators:</source>
        <translation>Mutatoren:</translation>
    </message>
    <message>
        <source>Gating</source>
        <translation>Gating</translation>
    </message>
    <message>
        <source>Selective</source>
        <translation>Selektiv</translation>
    </message>
    <message>
        <source>Top-k per parent</source>
        <translation>Top-k je Elternteil</translation>
    </message>
    <message>
        <source>Measure all</source>
        <translation>Alle messen</translation>
    </message>
    <message>
        <source>τ: a candidate is measured when the forecast&apos;s confidence (largest bin probability) is below τ.</source>
        <translation>τ: Ein Kandidat wird gemessen, wenn die Konfidenz der Prognose (größte Klassenwahrscheinlichkeit) unter τ liegt.</translation>
    </message>
    <message>
        <source>π: a candidate is measured when the forecast gives at least π to beating the best speedup so far.</source>
        <translation>π: Ein Kandidat wird gemessen, wenn die Prognose ihm mit einer Wahrscheinlichkeit von mindestens π zutraut, die bisher beste Beschleunigung zu übertreffen.</translation>
    </message>
    <message>
        <source>ε: the share of trusted candidates measured anyway, so that calibration is tracked without bias.</source>
        <translation>ε: der Anteil vertrauter Kandidaten, die trotzdem gemessen werden, damit die Kalibrierung unverzerrt verfolgt wird.</translation>
    </message>
    <message>
        <source>Top-k: children measured per parent, by expected speedup bin.</source>
        <translation>Top-k: je Elternteil gemessene Nachkommen, nach erwarteter Beschleunigungsklasse.</translation>
    </message>
    <message>
        <source>P&amp;olicy:</source>
        <translation>St&amp;rategie:</translation>
    </message>
    <message>
        <source>τ confidence:</source>
        <translation>τ Konfidenz:</translation>
    </message>
    <message>
        <source>π P(beats best):</source>
        <translation>π P(schlägt Bestwert):</translation>
    </message>
    <message>
        <source>ε audit share:</source>
        <translation>ε Prüfanteil:</translation>
    </message>
    <message>
        <source>&amp;Top-k:</source>
        <translation>&amp;Top-k:</translation>
    </message>
    <message>
        <source>Budgets</source>
        <translation>Budgets</translation>
    </message>
    <message>
        <source>GPU measurements, the reference and the seeds included.</source>
        <translation>GPU-Messungen, einschließlich der Referenz und der Seeds.</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>auto</translation>
    </message>
    <message>
        <source>Forecasts; auto: 30 per measurement of the budget.</source>
        <translation>Prognosen; auto: 30 pro Messung des Budgets.</translation>
    </message>
    <message>
        <source>no limit</source>
        <translation>unbegrenzt</translation>
    </message>
    <message>
        <source> s</source>
        <translation> s</translation>
    </message>
    <message>
        <source>Measurements:</source>
        <translation>Messungen:</translation>
    </message>
    <message>
        <source>Forecasts:</source>
        <translation>Prognosen:</translation>
    </message>
    <message>
        <source>Tokens:</source>
        <translation>Tokens:</translation>
    </message>
    <message>
        <source>Cost:</source>
        <translation>Kosten:</translation>
    </message>
    <message>
        <source>Wall time:</source>
        <translation>Laufzeit:</translation>
    </message>
    <message>
        <source>Seed:</source>
        <translation>Seed:</translation>
    </message>
    <message>
        <source>&amp;Start Search</source>
        <translation>Suche &amp;starten</translation>
    </message>
    <message>
        <source>Start a new search with these settings (F5)</source>
        <translation>Eine neue Suche mit diesen Einstellungen starten (F5)</translation>
    </message>
    <message>
        <source>&amp;Pause</source>
        <translation>P&amp;ausieren</translation>
    </message>
    <message>
        <source>Pause or resume the search (F6)</source>
        <translation>Die Suche pausieren oder fortsetzen (F6)</translation>
    </message>
    <message>
        <source>S&amp;tep</source>
        <translation>Sc&amp;hritt</translation>
    </message>
    <message>
        <source>Run one iteration of a paused search (F10)</source>
        <translation>Eine Iteration einer pausierten Suche ausführen (F10)</translation>
    </message>
    <message>
        <source>St&amp;op</source>
        <translation>St&amp;oppen</translation>
    </message>
    <message>
        <source>Stop the search; everything so far stays in its run file (Shift+F5)</source>
        <translation>Die Suche stoppen; alles Bisherige bleibt in ihrer Laufdatei erhalten (Umschalt+F5)</translation>
    </message>
    <message>
        <source>%v of %m measurements</source>
        <translation>%v von %m Messungen</translation>
    </message>
    <message>
        <source>&amp;Resume</source>
        <translation>&amp;Fortsetzen</translation>
    </message>
    <message>
        <source>Measurements: %1 of %2</source>
        <translation>Messungen: %1 von %2</translation>
    </message>
    <message>
        <source>Forecasts: %1</source>
        <translation>Prognosen: %1</translation>
    </message>
    <message>
        <source>Tokens: %1 ($%2)</source>
        <translation>Tokens: %1 ($%2)</translation>
    </message>
    <message>
        <source>Tokens: %1</source>
        <translation>Tokens: %1</translation>
    </message>
    <message>
        <source>Per measurement: %1 tokens ($%2)</source>
        <translation>Pro Messung: %1 Tokens ($%2)</translation>
    </message>
    <message>
        <source>Per measurement: %1 tokens</source>
        <translation>Pro Messung: %1 Tokens</translation>
    </message>
    <message>
        <source>Forecasts: %1 tokens in %2 calls. Rewrites: %3 tokens in %4 calls. Diffs: %5 tokens in %6 calls. Token budget: %7.</source>
        <translation>Prognosen: %1 Tokens in %2 Aufrufen. Umschreibungen: %3 Tokens in %4 Aufrufen. Diffs: %5 Tokens in %6 Aufrufen. Token-Budget: %7.</translation>
    </message>
    <message>
        <source>none</source>
        <translation>keines</translation>
    </message>
    <message>
        <source>Elapsed: %1</source>
        <translation>Verstrichen: %1</translation>
    </message>
    <message>
        <source>Best speedup: &lt;b&gt;%1×&lt;/b&gt; (candidate #%2)</source>
        <translation>Beste Beschleunigung: &lt;b&gt;%1×&lt;/b&gt; (Kandidat #%2)</translation>
    </message>
    <message>
        <source>Best speedup: none yet</source>
        <translation>Beste Beschleunigung: noch keine</translation>
    </message>
    <message>
        <source>Surrogate on %1 measured: accuracy %2 (majority bin %3), skill over climatology: Brier %4, CRPS %5; ECE %6, AURC %7</source>
        <translation>Surrogatmodell auf %1 gemessenen Kandidaten: Genauigkeit %2 (häufigste Klasse %3), Skill gegenüber Klimatologie: Brier %4, CRPS %5; ECE %6, AURC %7</translation>
    </message>
    <message>
        <source>On %1 audited (a random share of the trusted): accuracy %2 (majority bin %3), skill over climatology: Brier %4, CRPS %5; ECE %6, AURC %7</source>
        <translation>Auf %1 geprüften Kandidaten (zufällig aus den vertrauten gezogen): Genauigkeit %2 (häufigste Klasse %3), Skill gegenüber Klimatologie: Brier %4, CRPS %5; ECE %6, AURC %7</translation>
    </message>
    <message>
        <source>Audited (a random share of the trusted): no audited candidates yet</source>
        <translation>Geprüft (zufällig aus den vertrauten gezogen): noch keine geprüften Kandidaten</translation>
    </message>
    <message>
        <source>Calibration on every measured candidate with a forecast. In a gated search most of them were measured because their forecast was unsure or promising, so this sample is not representative of the forecasts the search trusted.</source>
        <translation>Kalibrierung auf allen gemessenen Kandidaten mit Prognose. In einer Suche mit Gating wurden die meisten gemessen, weil ihre Prognose unsicher oder vielversprechend war; diese Stichprobe steht daher nicht für die Prognosen, denen die Suche vertraut hat.</translation>
    </message>
    <message>
        <source>Calibration on the ε-audited candidates alone: drawn at random from those the gate trusted and measured anyway, an unbiased sample of the forecasts the search acts on without measuring.</source>
        <translation>Kalibrierung nur auf den ε-geprüften Kandidaten: zufällig aus denen gezogen, denen das Gating vertraut hat, und trotzdem gemessen – eine unverzerrte Stichprobe der Prognosen, nach denen die Suche ohne Messung handelt.</translation>
    </message>
    <message>
        <source>Choose a problem to search.</source>
        <translation>Wählen Sie ein Problem für die Suche.</translation>
    </message>
    <message>
        <source>No device can measure: choose a GPU or a replay device.</source>
        <translation>Kein Gerät kann messen: Wählen Sie eine GPU oder ein Replay-Gerät.</translation>
    </message>
    <message>
        <source>Choose at least one mutator.</source>
        <translation>Wählen Sie mindestens einen Mutator.</translation>
    </message>
</context>
<context>
    <name>kerncast::RunSession</name>
    <message>
        <source>idle</source>
        <translation>im Leerlauf</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>startet</translation>
    </message>
    <message>
        <source>running</source>
        <translation>läuft</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>pausiert</translation>
    </message>
    <message>
        <source>stopping</source>
        <translation>wird gestoppt</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>abgeschlossen</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <source>evaluation (opened)</source>
        <translation>Auswertung (geöffnet)</translation>
    </message>
    <message>
        <source>interrupted (opened)</source>
        <translation>unterbrochen (geöffnet)</translation>
    </message>
    <message>
        <source>%1 (opened)</source>
        <translation>%1 (geöffnet)</translation>
    </message>
    <message>
        <source>no run</source>
        <translation>kein Lauf</translation>
    </message>
    <message>
        <source>starting (training the surrogate)</source>
        <translation>startet (Surrogatmodell wird trainiert)</translation>
    </message>
    <message numerus="yes">
        <source>paused, %n waiting</source>
        <translation>
            <numerusform>pausiert, %n wartet</numerusform>
            <numerusform>pausiert, %n warten</numerusform>
        </translation>
    </message>
    <message>
        <source>measuring</source>
        <translation>misst</translation>
    </message>
    <message>
        <source>idle (forecasting)</source>
        <translation>im Leerlauf (Prognosen werden erstellt)</translation>
    </message>
</context>
<context>
    <name>kerncast::SearchProgressPlot</name>
    <message>
        <source>Best speedup vs GPU measurements</source>
        <translation>Beste Beschleunigung vs. GPU-Messungen</translation>
    </message>
    <message>
        <source>GPU measurements</source>
        <translation>GPU-Messungen</translation>
    </message>
    <message>
        <source>Best measured speedup</source>
        <translation>Beste gemessene Beschleunigung</translation>
    </message>
    <message>
        <source>Measure-all</source>
        <translation>Alle messen</translation>
    </message>
    <message>
        <source>This run</source>
        <translation>Dieser Lauf</translation>
    </message>
    <message>
        <source>Best speedup %1 after 1 GPU measurement</source>
        <translation>Beste Beschleunigung %1 nach 1 GPU-Messung</translation>
    </message>
    <message>
        <source>Best speedup %1 after %2 GPU measurements</source>
        <translation>Beste Beschleunigung %1 nach %2 GPU-Messungen</translation>
    </message>
</context>
<context>
    <name>kerncast::StatusLine</name>
    <message>
        <source>Device: looking for devices...</source>
        <translation>Gerät: Geräte werden gesucht...</translation>
    </message>
    <message>
        <source>Device: none</source>
        <translation>Gerät: keines</translation>
    </message>
    <message>
        <source>Device: %1</source>
        <translation>Gerät: %1</translation>
    </message>
    <message>
        <source>Run: %1</source>
        <translation>Lauf: %1</translation>
    </message>
    <message>
        <source>Surrogate: LLM (no model set)</source>
        <translation>Surrogatmodell: LLM (kein Modell festgelegt)</translation>
    </message>
    <message>
        <source>Surrogate: LLM %1</source>
        <translation>Surrogatmodell: LLM %1</translation>
    </message>
    <message>
        <source>Surrogate: none (measure everything)</source>
        <translation>Surrogatmodell: keines (alles messen)</translation>
    </message>
    <message>
        <source>Surrogate: local</source>
        <translation>Surrogatmodell: lokal</translation>
    </message>
</context>
<context>
    <name>kerncast::SweepPlot</name>
    <message>
        <source>Reference (1x)</source>
        <translation>Referenz (1x)</translation>
    </message>
    <message>
        <source>Speedup</source>
        <translation>Beschleunigung</translation>
    </message>
    <message>
        <source>Failed at this size</source>
        <translation>Bei dieser Größe fehlgeschlagen</translation>
    </message>
    <message>
        <source>No sweep of this candidate yet (kerncast-cli sweep --run ...)</source>
        <translation>Noch keine Größenreihe dieses Kandidaten (kerncast-cli sweep --run ...)</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>Größe</translation>
    </message>
    <message>
        <source>Speedup over the reference</source>
        <translation>Beschleunigung gegenüber der Referenz</translation>
    </message>
    <message numerus="yes">
        <source>Speedup across %n size(s)</source>
        <translation>
            <numerusform>Beschleunigung über %n Größe</numerusform>
            <numerusform>Beschleunigung über %n Größen</numerusform>
        </translation>
    </message>
    <message>
        <source>Speedup across sizes</source>
        <translation>Beschleunigung über die Größen</translation>
    </message>
</context>
<context>
    <name>kerncast::TimelineView</name>
    <message>
        <source>%1: %2 ms, batch %3</source>
        <translation>%1: %2 ms, Stapel %3</translation>
    </message>
    <message>
        <source>, candidate #%1 (waited %2 ms for a worker)</source>
        <translation>, Kandidat #%1 (wartete %2 ms auf einen Worker)</translation>
    </message>
    <message>
        <source>search thread</source>
        <translation>Such-Thread</translation>
    </message>
    <message>
        <source>&lt;b&gt;Where the time goes&lt;/b&gt;</source>
        <translation>&lt;b&gt;Wohin die Zeit geht&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Each lane is the search thread or a worker; each bar a phase of the search or a part of a measurement. kerncast-cli search --trace FILE writes the same timeline for Perfetto.</source>
        <translation>Jede Spur ist der Such-Thread oder ein Worker, jeder Balken eine Phase der Suche oder ein Teil einer Messung. kerncast-cli search --trace DATEI schreibt dieselbe Zeitleiste für Perfetto.</translation>
    </message>
    <message>
        <source>Setting up: %1</source>
        <translation>Vorbereitung: %1</translation>
    </message>
    <message>
        <source>starting workers</source>
        <translation>Worker starten</translation>
    </message>
    <message>
        <source>base model</source>
        <translation>Basismodell</translation>
    </message>
    <message>
        <source>opening the run</source>
        <translation>Lauf öffnen</translation>
    </message>
    <message>
        <source>proposal</source>
        <translation>Vorschläge</translation>
    </message>
    <message>
        <source>static reports</source>
        <translation>statische Berichte</translation>
    </message>
    <message>
        <source>forecasting</source>
        <translation>Prognosen</translation>
    </message>
    <message>
        <source>gating</source>
        <translation>Gating</translation>
    </message>
    <message>
        <source>model updates</source>
        <translation>Modellaktualisierung</translation>
    </message>
    <message>
        <source>store writes</source>
        <translation>Speichern</translation>
    </message>
    <message>
        <source>waiting for measurements</source>
        <translation>Warten auf Messungen</translation>
    </message>
    <message>
        <source>measuring</source>
        <translation>Messen</translation>
    </message>
    <message>
        <source>other</source>
        <translation>Sonstiges</translation>
    </message>
    <message>
        <source>compile</source>
        <translation>Kompilieren</translation>
    </message>
    <message>
        <source>verify</source>
        <translation>Prüfen</translation>
    </message>
    <message>
        <source>timing</source>
        <translation>Zeitmessung</translation>
    </message>
    <message>
        <source>round trip</source>
        <translation>Hin und zurück</translation>
    </message>
    <message>
        <source>%1 %2%</source>
        <translation>%1 %2 %</translation>
    </message>
    <message>
        <source>%1 s, %2 measurements (%3 per second). Search thread: %4.</source>
        <translation>%1 s, %2 Messungen (%3 pro Sekunde). Such-Thread: %4.</translation>
    </message>
    <message>
        <source>Workers (%1) busy %2% of the time; a measurement waited %3 ms for a worker.</source>
        <translation>Worker (%1) %2 % der Zeit beschäftigt; eine Messung wartete %3 ms auf einen Worker.</translation>
    </message>
    <message numerus="yes">
        <source>in %n compile helper process(es)</source>
        <translation>
            <numerusform>in %n Kompilier-Hilfsprozess</numerusform>
            <numerusform>in %n Kompilier-Hilfsprozessen</numerusform>
        </translation>
    </message>
    <message>
        <source>in the engine&apos;s process</source>
        <translation>im Prozess der Engine</translation>
    </message>
    <message>
        <source>Compiles: %1 with NVRTC %2, %3 found compiled already.</source>
        <translation>Kompiliert: %1 mit NVRTC %2, %3 schon kompiliert vorgefunden.</translation>
    </message>
</context>
</TS>
