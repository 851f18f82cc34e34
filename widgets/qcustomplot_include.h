#pragma once
// The one way to include QCustomPlot. Its header uses the `signals` and `foreach` keywords that QT_NO_KEYWORDS takes
// away; lend them for the duration of the include only. Only the plot classes (and their tests) include this.

#define signals Q_SIGNALS
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef foreach
