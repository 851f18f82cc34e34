// kerncast-cli devices: the GPUs this machine can measure on and the recordings it can replay.
#include "engine/cli/cli.h"
#include "engine/cli/problem_arg.h"
#include "engine/device.h"

#include "core/error.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iomanip>
#include <ostream>

namespace kerncast::cli {

namespace {

void run_devices(Context& ctx) {
    std::vector<DeviceListing> devices;
    try {
        devices = list_devices(resources_dir());
    } catch (const std::exception& e) {
        report_failure(ctx, "devices", e.what());
        return;
    }
    if (ctx.json) {
        nlohmann::json list = nlohmann::json::array();
        nlohmann::json notes = nlohmann::json::array();
        for (const auto& d : devices) {
            if (d.id.empty()) {
                notes.push_back({{"kind", d.kind}, {"note", d.note}});
                continue;
            }
            list.push_back({{"id", d.id}, {"kind", d.kind}, {"device", d.fingerprint}, {"note", d.note}});
        }
        *ctx.out << nlohmann::json{{"ok", true}, {"devices", list}, {"notes", notes}}.dump(2) << "\n";
        return;
    }
    auto& out = *ctx.out;
    out << std::left << std::setw(40) << "ID" << std::setw(8) << "KIND" << std::setw(26) << "NAME" << std::setw(6)
        << "CC" << std::setw(6) << "SMS"
        << "NOTE\n";
    for (const auto& d : devices) {
        if (d.id.empty())
            continue;
        const auto& f = d.fingerprint;
        out << std::left << std::setw(40) << d.id << std::setw(8) << d.kind << std::setw(26)
            << (f.name.empty() ? "-" : f.name) << std::setw(6)
            << (f.cc_major ? std::to_string(f.cc_major) + "." + std::to_string(f.cc_minor) : "-") << std::setw(6)
            << (f.sm_count ? std::to_string(f.sm_count) : "-") << d.note << "\n";
    }
    for (const auto& d : devices)
        if (d.id.empty())
            out << "No " << d.kind << " device: " << d.note << "\n";
}

}  // namespace

void add_devices_command(CLI::App& app, Context& ctx) {
    auto* cmd = app.add_subcommand("devices", "List the GPUs and the replay devices (recordings) this machine can use");
    cmd->callback([&ctx] { run_devices(ctx); });
}

}  // namespace kerncast::cli
