#include "app/gui/error_dialog.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QMessageBox>
#include <QPushButton>

namespace kerncast {

void openErrorDialog(QWidget* parent, const QString& title, const QString& message, const QString& file, int line,
                     const std::function<void()>& showFile) {
    auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Close, parent);
    box->setObjectName(QStringLiteral("errorDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    // Qt's own button texts come from its translations, which are not installed everywhere: say it in ours.
    box->button(QMessageBox::Close)->setText(QCoreApplication::translate("kerncast::ErrorDialog", "Close"));
    if (!file.isEmpty() && QFileInfo(file).isFile()) {
        box->setInformativeText(
            line > 0 ? QCoreApplication::translate("kerncast::ErrorDialog", "In %1, line %2.").arg(file).arg(line)
                     : QCoreApplication::translate("kerncast::ErrorDialog", "In %1.").arg(file));
        auto* show = box->addButton(QCoreApplication::translate("kerncast::ErrorDialog", "Show the File"),
                                    QMessageBox::ActionRole);
        QObject::connect(show, &QPushButton::clicked, box, showFile);
    }
    box->open();
}

}  // namespace kerncast
