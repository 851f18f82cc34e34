#pragma once
// The status bar's permanent part: a busy indicator (also the progress of an evaluation), the run's state, the active
// device and the surrogate in use. Messages that come and go use the status bar itself.

#include <QObject>
#include <QString>

class QLabel;
class QProgressBar;
class QStatusBar;

namespace kerncast {

class StatusLine : public QObject {
    Q_OBJECT
public:
    explicit StatusLine(QStatusBar* bar);

    void setRun(const QString& stateText, const QString& path);
    void setDevice(const QString& id);
    // surrogate: "local", "llm" or "none"; model: the LLM's model name.
    void setSurrogate(const QString& surrogate, const QString& model);
    QString surrogateText() const;
    void showBusy();
    void showProgress(int done, int total);
    void hideBusy();

private:
    QLabel* m_run;
    QLabel* m_device;
    QLabel* m_surrogate;
    QProgressBar* m_busy;
};

}  // namespace kerncast
