#include "app/gui/demo_setup.h"

#include "widgets/device_list_model.h"
#include "widgets/problem_list_model.h"

#include <QDir>
#include <QFileInfo>

namespace kerncast {

DemoSetup findDemoSetup(const ProblemListModel& problems, const DeviceListModel& devices, const QString& resourcesDir) {
    for (const QString& wanted : {QStringLiteral("softmax"), QString()}) {
        for (int r = 0; r < problems.rowCount(); ++r) {
            const ProblemEntry* e = problems.entry(r);
            if (!e->valid() || e->recorded.empty() || (!wanted.isEmpty() && e->name != wanted.toStdString()))
                continue;
            for (int d = 0; d < devices.rowCount(); ++d) {
                const QString id = devices.index(d, 0).data(DeviceListModel::IdRole).toString();
                const QString recording =
                    QDir(resourcesDir)
                        .filePath(
                            QStringLiteral("recordings/%1/%2.jsonl").arg(id.mid(7), QString::fromStdString(e->name)));
                if (id.startsWith(QStringLiteral("replay:")) && QFileInfo::exists(recording))
                    return {QString::fromStdString(e->dir), id};
            }
        }
    }
    return {};
}

}  // namespace kerncast
