#pragma once
// What a QCustomPlot graph or bar chart holds, as (key, value) points in key order: what plot tests compare.

#include "widgets/qcustomplot_include.h"

#include <QPointF>
#include <QVector>

namespace kerncast::test {

template<typename Plottable>
QVector<QPointF> pointsOf(const Plottable* plottable) {
    QVector<QPointF> points;
    const auto data = plottable->data();
    for (auto it = data->constBegin(); it != data->constEnd(); ++it)
        points.append({it->mainKey(), it->mainValue()});
    return points;
}

}  // namespace kerncast::test
