#pragma once
// The workbench's error box: window-modal and not waited for, so the engine keeps reporting and the event loop keeps
// running; an error that names a file offers to show it.

#include <QString>

#include <functional>

class QWidget;

namespace kerncast {

// showFile is called when the user asks to see `file` (only offered when the file exists).
void openErrorDialog(QWidget* parent, const QString& title, const QString& message, const QString& file, int line,
                     const std::function<void()>& showFile);

}  // namespace kerncast
