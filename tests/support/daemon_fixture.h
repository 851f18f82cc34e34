#pragma once
// Helpers for tests that start real daemons on loopback (sshd, munged, slurmctld, slurmd): free ports, running a
// command and reading its output, waiting for a condition, and whether a process is still alive.

#include <QByteArray>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QThread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <string>

namespace kerncast::test {

// A TCP port nobody listens on now (bound, read back, released).
inline int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

struct Ran {
    int code = -1;
    QString output;  // stdout and stderr together
};

inline Ran run_command(const QString& program, const QStringList& args, int timeout_ms = 30000) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    Ran r;
    if (!p.waitForStarted(5000)) {
        r.output = program + ": " + p.errorString();
        return r;
    }
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished(2000);
        r.output = QString::fromLocal8Bit(p.readAll()) + "\n(" + program + " timed out)";
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.output = QString::fromLocal8Bit(p.readAll());
    return r;
}

inline bool wait_until(const std::function<bool()>& done, int timeout_ms, int step_ms = 100) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeout_ms) {
        if (done())
            return true;
        QThread::msleep(step_ms);
    }
    return done();
}

// A resources folder only this test uses, whose recordings/ is the real one: the workers' command lines name it, so
// the test can find their processes wherever they run. Returns its path.
inline std::string private_resources(const QString& dir, const std::string& real_resources) {
    const QString folder = dir + "/resources";
    QDir().mkpath(folder);
    QFile::link(QString::fromStdString(real_resources + "/recordings"), folder + "/recordings");
    return folder.toStdString();
}

inline QString read_all(const QString& path) {
    std::ifstream in(path.toStdString());
    return QString::fromStdString(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
}

}  // namespace kerncast::test
