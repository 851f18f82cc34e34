// A stand-in for kerncast-worker that speaks the protocol without a GPU, so the supervisor's handling of hangs,
// crashes and broken replies can be tested anywhere. A request asks for misbehaviour with a "fake" field, or a
// measure request with "FAKE:<mode>" in the candidate's source:
//   hang     never answer            segv   die with SIGSEGV        abort   die with SIGABRT
//   exit     exit(7) mid-request     garbage  answer a non-JSON line  sticky  answer sticky, then exit 3
//   stderr   write 80 numbered stderr lines, then answer normally
// Command line: --gpu N [--no-driver] [--hello-hang] [--die-with-parent (ignored)]
// With KERNCAST_FAKE_DOOMED_GPU=N in the environment, the worker for GPU N dies (SIGKILL) on every measure request:
// a worker that keeps failing, for the pool's tests. KERNCAST_FAKE_SLOW_MS=N makes every healthy measure take N ms.
#include "engine/worker/worker_protocol.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>

#include <unistd.h>

using namespace kerncast;

namespace {

void send(const nlohmann::json& j) { std::cout << to_protocol_line(j) << std::flush; }

std::string mode_of(const nlohmann::json& req) {
    if (req.contains("fake") && req["fake"].is_string())
        return req["fake"].get<std::string>();
    if (req.contains("candidate") && req["candidate"].is_object()) {
        const std::string src = req["candidate"].value("source", std::string());
        const auto at = src.find("FAKE:");
        if (at != std::string::npos) {
            auto end = src.find_first_of(" \n\t", at);
            return src.substr(at + 5, end == std::string::npos ? std::string::npos : end - at - 5);
        }
    }
    return "";
}

void misbehave(const std::string& mode, const nlohmann::json& id) {
    if (mode == "hang") {
        std::cerr << "fake worker: hanging" << std::endl;
        for (;;)
            std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (mode == "segv") {
        std::cerr << "fake worker: illegal memory access coming" << std::endl;
        std::signal(SIGSEGV, SIG_DFL);
        std::raise(SIGSEGV);
    }
    if (mode == "abort") {
        std::cerr << "fake worker: aborting" << std::endl;
        std::abort();
    }
    if (mode == "exit") {
        send(make_progress(id.is_number_integer() ? id.get<int64_t>() : 0, "verify"));
        std::cerr << "fake worker: exiting mid-request" << std::endl;
        std::_Exit(7);
    }
    if (mode == "garbage") {
        std::cout << "Segmentation fault? no: this is not JSON" << std::endl;
    }
    if (mode == "stderr") {
        for (int i = 1; i <= 80; ++i)
            std::cerr << "fake worker: line " << i << "\n";
        std::cerr << std::flush;
    }
}

}  // namespace

int main(int argc, char** argv) {
    int gpu = -1;
    bool no_driver = false, hello_hang = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--gpu") == 0 && i + 1 < argc)
            gpu = std::atoi(argv[++i]);
        else if (std::strcmp(argv[i], "--no-driver") == 0)
            no_driver = true;
        else if (std::strcmp(argv[i], "--hello-hang") == 0)
            hello_hang = true;
    }
    std::cerr << "fake worker: started for GPU " << gpu << std::endl;

    std::string line;
    while (std::getline(std::cin, line)) {
        nlohmann::json req;
        try {
            req = parse_protocol_line(line);
        } catch (const std::exception& e) {
            send(make_error_reply(nullptr, e.what()));
            continue;
        }
        const std::string op = req["op"].get<std::string>();
        const nlohmann::json id = req.contains("id") ? req["id"] : nlohmann::json(nullptr);
        const std::string mode = mode_of(req);
        if (op == "hello") {
            if (hello_hang)
                misbehave("hang", id);
            if (no_driver) {
                send(make_hello_failure("no NVIDIA driver (libcuda.so.1 not found)"));
                continue;
            }
            DeviceFingerprint fp;
            fp.name = "Fake GPU " + std::to_string(gpu);
            fp.uuid = "GPU-fake-" + std::to_string(gpu);
            fp.cc_major = 9;
            fp.sm_count = 132;
            send(make_hello_reply(fp, DeviceCeilings{3000, 60, 50 << 20}));
            continue;
        }
        if (op == "shutdown") {
            send(make_bye());
            return 0;
        }
        misbehave(mode, id);
        if (const char* doomed = std::getenv("KERNCAST_FAKE_DOOMED_GPU");
            op == "measure" && doomed && std::atoi(doomed) == gpu) {
            std::cerr << "fake worker: GPU " << gpu << " is doomed" << std::endl;
            std::raise(SIGKILL);
        }
        if (op == "ping") {
            send(make_pong(id.is_number_integer() ? id.get<int64_t>() : 0));
        } else if (op == "measure") {
            MeasurePayload payload;
            try {
                payload = parse_measure_request(req);
            } catch (const std::exception& e) {
                send(make_error_reply(id, e.what()));
                continue;
            }
            const int64_t rid = id.get<int64_t>();
            if (const char* slow = std::getenv("KERNCAST_FAKE_SLOW_MS"))
                std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(slow)));
            send(make_progress(rid, "verify"));
            send(make_progress(rid, "time"));
            Measurement m;
            m.device_kind = "cuda";
            m.seeds_checked = payload.options.seeds;
            if (mode == "sticky") {
                m.status = Status::Crashed;
                m.reason = "an illegal memory access was encountered";
                send(make_result(rid, m, true));
                return kWorkerStickyExitCode;
            }
            m.status = Status::Ok;
            TimingStats t;
            t.median_us = 10;
            t.n = 5;
            m.candidate = t;
            t.median_us = 15;
            m.reference = t;
            m.speedup = 1.5;
            // Echo what arrived so tests can check the payload survived the trip (cubin bytes included).
            m.reason = "cubin_bytes=" + std::to_string(payload.candidate.cubin.size());
            send(make_result(rid, m, false));
        } else {
            send(make_error_reply(id, "unknown op '" + op + "'"));
        }
    }
    return 0;
}
