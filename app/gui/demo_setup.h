#pragma once
// What the embedded demo searches: softmax when it is in the library and recorded for a replay device, else the
// first valid problem with a recording.

#include <QString>

namespace kerncast {

class DeviceListModel;
class ProblemListModel;

struct DemoSetup {
    QString problemDir;  // empty when no problem has a recording for a listed replay device
    QString deviceId;    // "replay:<slug>"
};
DemoSetup findDemoSetup(const ProblemListModel& problems, const DeviceListModel& devices, const QString& resourcesDir);

}  // namespace kerncast
