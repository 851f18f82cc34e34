#include "engine/worker/replay_worker_server.h"

#include "core/error.h"
#include "core/problem_fingerprint.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

namespace fs = std::filesystem;

namespace kerncast {

std::string replay_worker_folder(const ReplayWorkerOptions& options) {
    if (options.device.rfind("replay:", 0) == 0) {
        const fs::path folder = fs::path(options.resources_dir) / "recordings" / options.device.substr(7);
        if (!fs::is_directory(folder))
            throw Error("no recordings for '" + options.device + "' (looked in " + folder.string() +
                        "; pass --resources DIR with the recordings/ folder)");
        return folder.string();
    }
    if (!fs::is_directory(options.device))
        throw Error("--replay expects replay:<recording folder name> or a recording folder; '" + options.device +
                    "' is neither");
    return options.device;
}

ReplayWorkerServer::ReplayWorkerServer(const ReplayWorkerOptions& options, int reply_fd)
    : WorkerLineServer(reply_fd), m_options(options), m_replay(replay_worker_folder(options)) {}

double ReplayWorkerServer::recordedWallSeconds(const Measurement& m) { return (m.verify_ms + m.time_ms) / 1000.0; }

bool ReplayWorkerServer::handleLine(const std::string& line, int* exit_code) {
    *exit_code = 0;
    const auto req = readRequest(line);
    if (!req)
        return true;
    const std::optional<int64_t>& id = req->id;
    const nlohmann::json& id_json = req->id_json;
    const std::string& op = req->op;
    if (op == "shutdown") {
        reply(make_bye());
        return false;
    }
    if (op == "hello") {
        reply(make_hello_reply(m_replay.fingerprint(), m_replay.header().ceilings));
        return true;
    }
    if (op != "measure") {
        reply(make_error_reply(id_json, "unknown op '" + op + "' (expected hello, ping, measure or shutdown)"));
        return true;
    }
    MeasurePayload payload;
    std::string problem;
    try {
        payload = parse_measure_request(req->json);
        const auto problem_json = nlohmann::json::parse(payload.problem_json);
        problem = problem_json.at("name").get<std::string>();
    } catch (const std::exception& e) {
        reply(make_error_reply(id_json, std::string("a measure request needs problem.json with a name: ") + e.what()));
        return true;
    }
    if (!id) {
        reply(make_error_reply(id_json, "a measure request needs an id"));
        return true;
    }
    m_watchdog.arm(payload.options.deadline_s, "measure request " + std::to_string(*id));
    Measurement m;
    try {
        reply(make_progress(*id, "time"));
        m = m_replay
                .lookup(
                    problem,
                    [&] {
            return problem_fingerprint_of(payload.problem_json, payload.reference.source, payload.problem_file);
                    },
                    {payload.candidate.source, payload.candidate.file, payload.candidate.tunables})
            .measurement;
        if (m_options.wall_time_scale > 0 && m.status != Status::NotRecorded)
            std::this_thread::sleep_for(
                std::chrono::duration<double>(recordedWallSeconds(m) * m_options.wall_time_scale));
    } catch (const std::exception& e) {
        m_watchdog.disarm();
        reply(make_error_reply(id_json, e.what()));
        return true;
    }
    m_watchdog.disarm();
    reply(make_result(*id, m, false));
    return true;
}

}  // namespace kerncast
