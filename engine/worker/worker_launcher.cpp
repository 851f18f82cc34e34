#include "engine/worker/worker_launcher.h"

#include "core/error.h"

#include <cstdlib>
#include <sstream>

namespace kerncast {

namespace {

std::vector<std::string> split_words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

}  // namespace

std::string shell_quote(const std::string& word) {
    if (!word.empty() &&
        word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.,/:=@+") ==
            std::string::npos)
        return word;
    std::string out = "'";
    for (char c : word)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

WorkerLauncher WorkerLauncher::parse(const std::string& text) {
    WorkerLauncher l;
    if (text.empty() || text == "local")
        return l;
    if (text.rfind("ssh:", 0) == 0) {
        l.kind = Kind::Ssh;
        l.host = text.substr(4);
        if (l.host.empty() || l.host.find_first_of(" \t'\"") != std::string::npos || l.host.front() == '-')
            throw Error("bad launcher '" + text + "': expected ssh:HOST (a host name, user@host or an ssh alias)");
        return l;
    }
    if (text == "slurm" || text.rfind("slurm:", 0) == 0) {
        l.kind = Kind::Slurm;
        if (text.size() > 6)
            l.slurm_args = split_words(text.substr(6));
        return l;
    }
    throw Error("unknown launcher '" + text + "': expected local, ssh:HOST or slurm[:SRUN OPTIONS]");
}

std::string WorkerLauncher::text() const {
    switch (kind) {
    case Kind::Local:
        return "local";
    case Kind::Ssh:
        return "ssh:" + host;
    case Kind::Slurm: {
        std::string s = "slurm";
        for (size_t i = 0; i < slurm_args.size(); ++i)
            s += (i ? " " : ":") + slurm_args[i];
        return s;
    }
    }
    return "local";
}

std::string WorkerLauncher::where() const {
    switch (kind) {
    case Kind::Local:
        return "local";
    case Kind::Ssh:
        return host;
    case Kind::Slurm:
        return "slurm";
    }
    return "local";
}

WorkerCommand WorkerLauncher::command(const std::vector<std::string>& worker_argv, bool needs_gpu,
                                      const std::string& label) const {
    WorkerCommand c;
    c.label = label;
    if (kind == Kind::Local) {
        c.argv = worker_argv;
        return c;
    }
    if (kind == Kind::Ssh) {
        const char* env = std::getenv("KERNCAST_SSH");
        c.argv = split_words(env && *env ? env : "ssh");
        // No password prompts (there is no terminal to answer them), no pty (the protocol is binary-safe only
        // without one), and a dead host or link noticed within ~15 s: the connection ends and the pool requeues.
        for (const char* a : {"-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3",
                              "-o", "ConnectTimeout=15"})
            c.argv.push_back(a);
        c.argv.push_back(host);
        // One string for the remote shell; exec, so that the worker's parent is the ssh session and
        // --die-with-parent ends it with the session.
        std::string remote = "exec";
        for (const auto& w : worker_argv)
            remote += " " + shell_quote(w);
        c.argv.push_back(remote);
        c.term_grace_s = 3;
        c.hello_deadline_s = 90;
        return c;
    }
    c.argv = {"srun", "--ntasks=1", "--nodes=1", "--quiet", "--unbuffered", "--kill-on-bad-exit=1"};
    if (const char* job = std::getenv("SLURM_JOB_ID"); job && *job) {
        // A step inside the user's allocation takes only what it asks for, so that several run side by side.
        c.argv.push_back("--exact");
        c.argv.push_back("--cpus-per-task=1");
    }
    if (needs_gpu)
        c.argv.push_back("--gres=gpu:1");
    c.argv.insert(c.argv.end(), slurm_args.begin(), slurm_args.end());
    c.argv.insert(c.argv.end(), worker_argv.begin(), worker_argv.end());
    // srun forwards SIGTERM to the step and ends it; the allocation may take a while (a queue) to start.
    c.term_grace_s = 5;
    c.hello_deadline_s = 600;
    return c;
}

}  // namespace kerncast
