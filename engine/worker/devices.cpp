// list_devices / open_device (engine/device.h): CUDA GPUs found through the dlopen'ed driver, then one replay device
// per recording folder.
#include "engine/device.h"
#include "engine/gpu/cuda_driver.h"
#include "engine/replay/replay_device.h"
#include "engine/surrogate/forecast_query.h"
#include "engine/worker/gpu_device.h"

#include "core/error.h"

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace kerncast {

namespace {

std::vector<fs::path> recording_folders(const std::string& resources_dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(resources_dir) / "recordings", ec)) {
        if (!entry.is_directory())
            continue;
        bool has_jsonl = false;
        for (const auto& f : fs::directory_iterator(entry.path(), ec))
            has_jsonl = has_jsonl || f.path().extension() == ".jsonl";
        if (has_jsonl)
            out.push_back(entry.path());
    }
    // The embedded default first, so that a list shown to a person starts with it; the rest by name.
    std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
        const bool da = a.filename() == kDefaultRecordings, db = b.filename() == kDefaultRecordings;
        return da != db ? da : a < b;
    });
    return out;
}

}  // namespace

std::vector<DeviceListing> list_devices(const std::string& resources_dir) {
    std::vector<DeviceListing> out;
    std::string why_none;
    const auto gpus = cuda::discover_devices(&why_none);
    for (size_t i = 0; i < gpus.size(); ++i)
        out.push_back({"cuda:" + std::to_string(i), "cuda", gpus[i], ""});
    if (gpus.empty()) {
        // A listing without an id cannot be opened; it only says why no GPU is listed.
        out.push_back({"", "cuda", {}, why_none.empty() ? "no CUDA device found" : why_none});
    }
    for (const auto& folder : recording_folders(resources_dir)) {
        DeviceListing l;
        l.kind = "replay";
        l.id = "replay:" + folder.filename().string();
        try {
            ReplayDevice replay(folder.string());
            l.fingerprint = replay.fingerprint();
            const auto problems = replay.problems();
            l.note = "recorded: ";
            for (size_t i = 0; i < problems.size(); ++i)
                l.note += (i ? ", " : "") + problems[i];
        } catch (const Error& e) {
            l.note = std::string("unusable: ") + e.what();
        }
        out.push_back(std::move(l));
    }
    return out;
}

std::unique_ptr<Device> open_device(const std::string& id, const std::string& resources_dir) {
    if (is_cuda_device_id(id)) {
        const std::string n = id.substr(5);
        if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos)
            throw Error("bad device id '" + id + "': expected cuda:<ordinal>, e.g. cuda:0");
        return std::make_unique<GpuDevice>(std::stoi(n), find_worker_executable());
    }
    if (id.rfind("replay:", 0) == 0) {
        const std::string slug = id.substr(7);
        const fs::path folder = fs::path(resources_dir) / "recordings" / slug;
        if (slug.empty() || !fs::is_directory(folder)) {
            std::string known;
            for (const auto& f : recording_folders(resources_dir))
                known += (known.empty() ? "" : ", ") + ("replay:" + f.filename().string());
            throw Error("no recordings for device '" + id + "' (looked in " + folder.string() +
                        "); available: " + (known.empty() ? "none" : known));
        }
        return std::make_unique<ReplayDevice>(folder.string());
    }
    throw Error("unknown device '" + id + "': expected cuda:<ordinal> or replay:<recording folder>");
}

}  // namespace kerncast
