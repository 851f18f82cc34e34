#include "engine/gpu/compiler.h"
#include "engine/gpu/compile_log.h"

#include "core/error.h"
#include "core/kernel_program.h"
#include "engine/base64.h"
#include "engine/gpu/thread_pool.h"

#include <nvJitLink.h>
#include <nvrtc.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <list>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace fs = std::filesystem;

namespace kerncast {

void to_json(nlohmann::json& j, const CompileDiagnostic& d) {
    j = {{"file", d.file}, {"line", d.line}, {"severity", d.severity}, {"message", d.message}};
}

void from_json(const nlohmann::json& j, CompileDiagnostic& d) {
    d.file = j.value("file", "");
    d.line = j.value("line", 0);
    d.severity = j.value("severity", "error");
    d.message = j.value("message", "");
}

namespace {

using namespace compile_log;

// Bump when what a cache entry holds, or how it is produced, changes: old entries then simply stop matching.
constexpr const char* kPipeline = "kerncast-compile-v2";
constexpr size_t kMemoryCacheBytes = size_t{256} << 20;

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// FNV-1a with a 128-bit state: a collision would hand a candidate someone else's cubin, so 64 bits felt thin for a
// cache that lives across runs.
std::string fnv128(const std::string& text) {
    using u128 = unsigned __int128;
    const u128 prime = (u128{1} << 88) | 0x13B;
    u128 h = (u128{0x6c62272e07bb0142ULL} << 64) | 0x62b821756295c58dULL;
    for (unsigned char c : text) {
        h ^= c;
        h *= prime;
    }
    static const char* digits = "0123456789abcdef";
    std::string out(32, '0');
    for (int i = 31; i >= 0; --i) {
        out[i] = digits[static_cast<unsigned>(h & 0xF)];
        h >>= 4;
    }
    return out;
}

std::string fnv128(const std::vector<char>& bytes) { return fnv128(std::string(bytes.begin(), bytes.end())); }

struct Arch {
    std::string number;  // "90", "100"
    std::string suffix;  // "", "a" or "f"
    bool real = false;   // sm_: a cubin is built; compute_: PTX only
    std::string virtualArch() const { return "compute_" + number + suffix; }
    std::string realArch() const { return "sm_" + number + suffix; }
};

std::optional<Arch> parseArch(const std::string& text) {
    static const std::regex re(R"(^(sm|compute)_([0-9]{2,3})([af]?)$)");
    std::smatch m;
    if (!std::regex_match(text, m, re))
        return std::nullopt;
    return Arch{m[2].str(), m[3].str(), m[1].str() == "sm"};
}

bool isIdentifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
        return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
            return false;
    return true;
}

void fail(CompileResult& r, const std::string& file, const std::string& message) {
    r.ok = false;
    r.diagnostics.push_back({file, 0, "error", message});
    if (!r.log.empty() && r.log.back() != '\n')
        r.log += '\n';
    r.log += Error::format({file, 0}, message) + '\n';
}

// --- NVRTC and nvJitLink -----------------------------------------------------------------------------------------

struct NvrtcProgramGuard {
    nvrtcProgram program = nullptr;
    ~NvrtcProgramGuard() {
        if (program)
            nvrtcDestroyProgram(&program);
    }
};

struct JitLinkGuard {
    nvJitLinkHandle handle = nullptr;
    ~JitLinkGuard() {
        if (handle)
            nvJitLinkDestroy(&handle);
    }
};

const char* jitLinkStatus(nvJitLinkResult r) {
    switch (r) {
    case NVJITLINK_SUCCESS:
        return "success";
    case NVJITLINK_ERROR_UNRECOGNIZED_OPTION:
        return "unrecognized option";
    case NVJITLINK_ERROR_MISSING_ARCH:
        return "missing -arch";
    case NVJITLINK_ERROR_INVALID_INPUT:
        return "invalid input";
    case NVJITLINK_ERROR_PTX_COMPILE:
        return "PTX compilation failed";
    case NVJITLINK_ERROR_NVVM_COMPILE:
        return "NVVM compilation failed";
    case NVJITLINK_ERROR_INTERNAL:
        return "internal error";
    case NVJITLINK_ERROR_UNSUPPORTED_ARCH:
        return "unsupported architecture";
    case NVJITLINK_ERROR_UNRECOGNIZED_ARCH:
        return "unrecognized architecture";
    default:
        return "error";
    }
}

std::string jitLinkLog(nvJitLinkHandle h, bool info) {
    size_t size = 0;
    if ((info ? nvJitLinkGetInfoLogSize(h, &size) : nvJitLinkGetErrorLogSize(h, &size)) != NVJITLINK_SUCCESS ||
        size == 0)
        return {};
    std::string text(size, '\0');
    if ((info ? nvJitLinkGetInfoLog(h, text.data()) : nvJitLinkGetErrorLog(h, text.data())) != NVJITLINK_SUCCESS)
        return {};
    while (!text.empty() && text.back() == '\0')
        text.pop_back();
    return text;
}

std::string jitLinkVersion() {
    unsigned major = 0, minor = 0;
    if (nvJitLinkVersion(&major, &minor) != NVJITLINK_SUCCESS)
        return "unknown";
    return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace

CompileOutcome compile_failure(const CompileRequest& request, const std::string& key, const std::string& why) {
    CompileOutcome out;
    out.result.key = key;
    fail(out.result, request.file_name, why);
    return out;
}

CompileOutcome compile_here(const CompileRequest& req, const std::string& key) {
    CompileOutcome out;
    CompileResult& r = out.result;
    r.key = key;
    const auto arch = parseArch(req.arch);
    if (!arch) {
        fail(r, req.file_name,
             "unknown GPU architecture '" + req.arch +
                 "': expected sm_NN (a cubin, e.g. sm_90 for Hopper) or compute_NN (PTX only)");
        return out;
    }
    for (const auto& [name, value] : req.defines) {
        if (!isIdentifier(name)) {
            fail(r, req.file_name, "define '" + name + "' is not a valid macro name (letters, digits, _)");
            out.cacheable = true;
            return out;
        }
    }

    std::vector<std::string> options = {"--gpu-architecture=" + arch->virtualArch(), "-std=c++17", "-default-device",
                                        "-lineinfo"};
    for (const auto& [name, value] : req.defines)
        options.push_back("-D" + name + "=" + std::to_string(value));
    for (const auto& dir : Compiler::includePaths())
        options.push_back("--include-path=" + dir);
    options.insert(options.end(), req.extra_options.begin(), req.extra_options.end());
    std::vector<const char*> argv;
    for (const auto& o : options)
        argv.push_back(o.c_str());

    NvrtcProgramGuard program;
    nvrtcResult status =
        nvrtcCreateProgram(&program.program, req.source.c_str(), req.file_name.c_str(), 0, nullptr, nullptr);
    if (status != NVRTC_SUCCESS) {
        fail(r, req.file_name, std::string("NVRTC could not create the program: ") + nvrtcGetErrorString(status));
        return out;
    }
    status = nvrtcCompileProgram(program.program, static_cast<int>(argv.size()), argv.data());
    size_t logSize = 0;
    if (nvrtcGetProgramLogSize(program.program, &logSize) == NVRTC_SUCCESS && logSize > 1) {
        std::string log(logSize, '\0');
        if (nvrtcGetProgramLog(program.program, log.data()) == NVRTC_SUCCESS) {
            log.resize(logSize - 1);
            r.log = log;
        }
    }
    r.diagnostics = parseNvrtcLog(r.log, req.file_name);
    if (status != NVRTC_SUCCESS) {
        out.cacheable = status == NVRTC_ERROR_COMPILATION || status == NVRTC_ERROR_INVALID_OPTION;
        const bool hasError = std::any_of(r.diagnostics.begin(), r.diagnostics.end(),
                                          [](const CompileDiagnostic& d) { return d.severity == "error"; });
        if (hasError) {
            r.ok = false;
        } else {
            fail(r, req.file_name, std::string("NVRTC failed: ") + nvrtcGetErrorString(status));
        }
        return out;
    }

    size_t ptxSize = 0;
    if ((status = nvrtcGetPTXSize(program.program, &ptxSize)) != NVRTC_SUCCESS) {
        fail(r, req.file_name, std::string("NVRTC returned no PTX: ") + nvrtcGetErrorString(status));
        return out;
    }
    r.ptx.assign(ptxSize, '\0');
    if ((status = nvrtcGetPTX(program.program, r.ptx.data())) != NVRTC_SUCCESS) {
        fail(r, req.file_name, std::string("NVRTC returned no PTX: ") + nvrtcGetErrorString(status));
        return out;
    }
    while (!r.ptx.empty() && r.ptx.back() == '\0')
        r.ptx.pop_back();
    const auto entries = parsePtxEntries(r.ptx);

    LinkFacts facts;
    if (arch->real) {
        // ptxas runs inside nvJitLink; -verbose makes it print per-kernel resources into the info log. -no-cache:
        // where a driver is installed nvJitLink otherwise keeps its outputs in the driver's compute cache
        // (~/.nv/ComputeCache), and a program it finds there comes back without ptxas's lines, so its static report
        // would lose the static shared memory and the spills (measured on an H200: 16640 B shared read as 0).
        // Repeats are this Compiler's own caches' work.
        const std::string archOption = "-arch=" + arch->realArch();
        const char* linkOptions[] = {archOption.c_str(), "-verbose", "-lineinfo", "-no-cache"};
        JitLinkGuard link;
        nvJitLinkResult ls = nvJitLinkCreate(&link.handle, 4, linkOptions);
        if (ls != NVJITLINK_SUCCESS) {
            fail(r, req.file_name,
                 std::string("nvJitLink could not start for ") + arch->realArch() + ": " + jitLinkStatus(ls));
            return out;
        }
        ls = nvJitLinkAddData(link.handle, NVJITLINK_INPUT_PTX, r.ptx.data(), r.ptx.size(), req.file_name.c_str());
        if (ls == NVJITLINK_SUCCESS)
            ls = nvJitLinkComplete(link.handle);
        const std::string info = jitLinkLog(link.handle, true);
        const std::string errors = jitLinkLog(link.handle, false);
        if (!info.empty() || !errors.empty()) {
            if (!r.log.empty() && r.log.back() != '\n')
                r.log += '\n';
            r.log += "nvJitLink " + archOption + ":\n" + info + errors;
        }
        if (ls != NVJITLINK_SUCCESS) {
            out.cacheable = ls == NVJITLINK_ERROR_PTX_COMPILE;
            auto linkDiags = parseLinkerErrors(errors, req.file_name);
            if (linkDiags.empty()) {
                fail(r, req.file_name, std::string("nvJitLink failed: ") + jitLinkStatus(ls));
            } else {
                r.ok = false;
                r.diagnostics.insert(r.diagnostics.end(), linkDiags.begin(), linkDiags.end());
            }
            return out;
        }
        size_t cubinSize = 0;
        ls = nvJitLinkGetLinkedCubinSize(link.handle, &cubinSize);
        if (ls == NVJITLINK_SUCCESS) {
            r.cubin.resize(cubinSize);
            ls = nvJitLinkGetLinkedCubin(link.handle, r.cubin.data());
        }
        if (ls != NVJITLINK_SUCCESS || r.cubin.empty()) {
            r.cubin.clear();
            fail(r, req.file_name, std::string("nvJitLink returned no cubin: ") + jitLinkStatus(ls));
            return out;
        }
        facts = parseLinkLog(info);
    }
    r.kernels = buildReports(entries, facts);
    r.ok = true;
    out.cacheable = true;
    return out;
}

namespace {

// Narrows a full result to the launch plan's kernels; a plan kernel that the program lacks is the author's error.
CompileResult selectKernels(CompileResult r, const CompileRequest& req) {
    if (!r.ok || req.kernel_names.empty())
        return r;
    std::vector<StaticReport> chosen;
    std::vector<std::string> missing;
    for (const auto& name : req.kernel_names) {
        if (std::any_of(chosen.begin(), chosen.end(), [&](const StaticReport& s) { return s.kernel == name; }))
            continue;
        auto it =
            std::find_if(r.kernels.begin(), r.kernels.end(), [&](const StaticReport& s) { return s.kernel == name; });
        if (it == r.kernels.end())
            missing.push_back(name);
        else
            chosen.push_back(*it);
    }
    if (missing.empty()) {
        r.kernels = std::move(chosen);
        return r;
    }
    std::string found;
    for (const auto& k : r.kernels)
        found += (found.empty() ? "" : ", ") + k.kernel;
    if (found.empty())
        found = "none";
    r.ok = false;
    r.cubin.clear();
    for (const auto& name : missing) {
        std::string message = "kernel '" + name +
                              "' from the launch plan is not defined as an extern \"C\" __global__ function; "
                              "kernels found: " +
                              found;
        const std::string mangled = "_Z" + std::to_string(name.size()) + name;
        for (const auto& k : r.kernels)
            if (startsWith(k.kernel, mangled)) {
                message +=
                    " ('" + k.kernel + "' looks like '" + name + "' with a C++ mangled name: declare it extern \"C\")";
                break;
            }
        const CompileDiagnostic d{req.file_name, launchLine(req.source, name), "error", message};
        r.diagnostics.push_back(d);
        if (!r.log.empty() && r.log.back() != '\n')
            r.log += '\n';
        r.log += Error::format({d.file, d.line}, message) + '\n';
    }
    r.kernels.clear();
    return r;
}

size_t footprint(const CompileResult& r) { return r.cubin.size() + r.ptx.size() + r.log.size() + r.key.size() + 256; }

// Writes to a temporary name and renames it over the entry: readers see the old file, the new one, or none,
// never half of one; fsync first so a power cut after the rename cannot leave an empty file behind.
bool writeAtomic(const fs::path& path, const std::string& bytes, std::string& why) {
    static std::atomic<unsigned> counter{0};
    const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        why = "cannot create " + tmp.string();
        return false;
    }
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n <= 0)
            break;
        done += static_cast<size_t>(n);
    }
    const bool ok = done == bytes.size() && ::fsync(fd) == 0;
    ::close(fd);
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
        ::unlink(tmp.c_str());
        why = "cannot write " + path.string();
        return false;
    }
    return true;
}

std::optional<std::string> readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    if (in.bad())
        return std::nullopt;
    return s.str();
}

}  // namespace

// --- Compiler ------------------------------------------------------------------------------------------------------

struct Compiler::Impl {
    struct Waiter {
        std::promise<CompileResult> promise;
        CompileRequest request;
    };
    struct Entry {
        CompileResult result;
        std::list<std::string>::iterator position;
    };

    std::string cache_dir;
    mutable std::mutex mutex;
    std::list<std::string> lru;  // most recently used first
    std::unordered_map<std::string, Entry> memory;
    size_t memory_bytes = 0;
    std::unordered_map<std::string, std::vector<std::shared_ptr<Waiter>>> in_flight;
    std::unordered_set<std::string> spare_queued;  // compileSpare's keys, queued and not started
    Stats stats;
    std::unique_ptr<CompileBackend> backend;  // null: compiles in this process
    // Last member: destroyed first, so queued tasks are cancelled while everything they touch still exists.
    std::unique_ptr<ThreadPool> pool;

    // Under the mutex.
    std::optional<CompileResult> memoryLookup(const std::string& key) {
        auto it = memory.find(key);
        if (it == memory.end())
            return std::nullopt;
        lru.splice(lru.begin(), lru, it->second.position);
        return it->second.result;
    }

    // Under the mutex, which it releases on a hit: the cached result, narrowed to the request's kernels.
    std::optional<CompileResult> takeMemoryHit(std::unique_lock<std::mutex>& lock, const std::string& key,
                                               const CompileRequest& request, Clock::time_point t0) {
        auto hit = memoryLookup(key);
        if (!hit)
            return std::nullopt;
        ++stats.memory_hits;
        lock.unlock();
        hit->from_cache = true;
        hit->compile_ms = msSince(t0);
        return selectKernels(std::move(*hit), request);
    }

    // Under the mutex.
    void remember(const std::string& key, const CompileResult& r) {
        if (memory.count(key))
            return;
        lru.push_front(key);
        memory.emplace(key, Entry{r, lru.begin()});
        memory_bytes += footprint(r);
        while (memory_bytes > kMemoryCacheBytes && lru.size() > 1) {
            auto victim = memory.find(lru.back());
            memory_bytes -= footprint(victim->second.result);
            memory.erase(victim);
            lru.pop_back();
        }
    }

    fs::path entryPath(const std::string& key, const char* ext) const { return fs::path(cache_dir) / (key + ext); }

    std::optional<CompileResult> diskLookup(const std::string& key) {
        if (cache_dir.empty())
            return std::nullopt;
        const auto text = readFile(entryPath(key, ".json"));
        if (!text)
            return std::nullopt;
        try {
            const auto j = nlohmann::json::parse(*text);
            if (j.at("pipeline").get<std::string>() != kPipeline || j.at("key").get<std::string>() != key)
                throw std::runtime_error("mismatch");
            CompileResult r;
            r.key = key;
            r.ok = j.at("ok").get<bool>();
            r.log = j.at("log").get<std::string>();
            r.diagnostics = j.at("diagnostics").get<std::vector<CompileDiagnostic>>();
            r.ptx = j.at("ptx").get<std::string>();
            r.kernels = j.at("kernels").get<std::vector<StaticReport>>();
            const auto cubinSize = j.at("cubin_size").get<size_t>();
            if (cubinSize > 0) {
                const auto cubin = readFile(entryPath(key, ".cubin"));
                if (!cubin || cubin->size() != cubinSize || fnv128(*cubin) != j.at("cubin_hash").get<std::string>())
                    throw std::runtime_error("cubin does not match");
                r.cubin.assign(cubin->begin(), cubin->end());
            }
            if (r.ok && r.cubin.empty() && j.at("real_arch").get<bool>())
                throw std::runtime_error("cubin missing");
            return r;
        } catch (const std::exception&) {
            std::lock_guard lock(mutex);
            ++stats.corrupt_entries;
            return std::nullopt;
        }
    }

    // The cubin goes first: a JSON entry only ever points at a complete cubin, and the JSON names the cubin's
    // size and hash so that a cubin replaced behind its back is noticed.
    void diskStore(const std::string& key, CompileResult& r, bool realArch) {
        if (cache_dir.empty())
            return;
        std::string why;
        std::error_code ec;
        fs::create_directories(cache_dir, ec);
        bool ok = !ec;
        if (ec)
            why = "cannot create " + cache_dir + ": " + ec.message();
        if (ok && !r.cubin.empty())
            ok = writeAtomic(entryPath(key, ".cubin"), std::string(r.cubin.begin(), r.cubin.end()), why);
        if (ok) {
            const nlohmann::json j = {{"pipeline", kPipeline},
                                      {"key", key},
                                      {"nvrtc", Compiler::nvrtcVersion()},
                                      {"ok", r.ok},
                                      {"log", r.log},
                                      {"diagnostics", r.diagnostics},
                                      {"ptx", r.ptx},
                                      {"kernels", r.kernels},
                                      {"real_arch", realArch},
                                      {"cubin_size", r.cubin.size()},
                                      {"cubin_hash", fnv128(r.cubin)}};
            ok = writeAtomic(entryPath(key, ".json"), j.dump(), why);
        }
        if (!ok)
            r.log += "note: the compile cache entry was not saved (" + why + ")\n";
    }

    // Produces the full (all-kernels) result for a key: from disk, else by compiling. Never throws.
    CompileOutcome produce(const std::string& key, const CompileRequest& req) {
        const auto t0 = Clock::now();
        try {
            if (auto cached = diskLookup(key)) {
                cached->from_cache = true;
                cached->compile_ms = msSince(t0);
                std::lock_guard lock(mutex);
                ++stats.disk_hits;
                return {std::move(*cached), true};
            }
            {
                std::lock_guard lock(mutex);
                ++stats.compiles;
            }
            CompileOutcome fresh = backend ? backend->compile(req, key) : compile_here(req, key);
            fresh.result.compile_ms = msSince(t0);
            if (fresh.cacheable) {
                const auto arch = parseArch(req.arch);
                diskStore(key, fresh.result, arch && arch->real);
            }
            return fresh;
        } catch (const std::exception& e) {
            CompileOutcome out;
            out.result.key = key;
            fail(out.result, req.file_name, std::string("internal error while compiling: ") + e.what());
            out.result.compile_ms = msSince(t0);
            return out;
        }
    }

    // Hands a finished result to everyone waiting on its key.
    void publish(const std::string& key, const CompileResult& raw, bool cacheable) {
        std::vector<std::shared_ptr<Waiter>> waiters;
        {
            std::lock_guard lock(mutex);
            if (cacheable)
                remember(key, raw);
            auto it = in_flight.find(key);
            if (it != in_flight.end()) {
                waiters = std::move(it->second);
                in_flight.erase(it);
            }
        }
        for (auto& w : waiters)
            w->promise.set_value(selectKernels(raw, w->request));
    }

    CompileResult produceAndPublish(const std::string& key, const CompileRequest& req) {
        CompileOutcome done = produce(key, req);
        publish(key, done.result, done.cacheable);
        return std::move(done.result);
    }
};

Compiler::Compiler(std::string cache_dir, unsigned threads)
    : Compiler(std::move(cache_dir), threads, std::unique_ptr<CompileBackend>()) {
    m_impl->backend = default_compile_backend(m_impl->pool->size());  // a helper per thread
}

Compiler::Compiler(std::string cache_dir, unsigned threads, std::unique_ptr<CompileBackend> backend)
    : m_impl(std::make_unique<Impl>()) {
    m_impl->cache_dir = std::move(cache_dir);
    m_impl->backend = std::move(backend);
    m_impl->pool = std::make_unique<ThreadPool>(threads);
}

Compiler::~Compiler() { m_impl->pool.reset(); }

CompileResult Compiler::compile(const CompileRequest& request) {
    const auto t0 = Clock::now();
    const std::string key = cacheKey(request);
    std::future<CompileResult> joined;
    {
        std::unique_lock lock(m_impl->mutex);
        if (auto hit = m_impl->takeMemoryHit(lock, key, request, t0))
            return std::move(*hit);
        m_impl->spare_queued.erase(key);  // a spare compile not started yet: this one takes its place
        auto it = m_impl->in_flight.find(key);
        if (it != m_impl->in_flight.end()) {
            auto waiter = std::make_shared<Impl::Waiter>();
            waiter->request = request;
            joined = waiter->promise.get_future();
            it->second.push_back(std::move(waiter));
            ++m_impl->stats.joined;
        } else {
            m_impl->in_flight.emplace(key, std::vector<std::shared_ptr<Impl::Waiter>>{});
        }
    }
    if (joined.valid())
        return joined.get();
    return selectKernels(m_impl->produceAndPublish(key, request), request);
}

void Compiler::compileSpare(CompileRequest request) {
    const std::string key = cacheKey(request);
    {
        std::lock_guard lock(m_impl->mutex);
        if (m_impl->memory.count(key) || m_impl->in_flight.count(key) || !m_impl->spare_queued.insert(key).second)
            return;
    }
    Impl* impl = m_impl.get();
    impl->pool->postSpare([impl, key, request = std::move(request)](bool run) {
        {
            std::lock_guard lock(impl->mutex);
            // Taken by an ordinary compile meanwhile (or the compiler shut down): nothing to do.
            if (!impl->spare_queued.erase(key) || !run)
                return;
            impl->in_flight.emplace(key, std::vector<std::shared_ptr<Impl::Waiter>>{});
            ++impl->stats.spare;
        }
        impl->produceAndPublish(key, request);
    });
}

std::shared_future<CompileResult> Compiler::compileAsync(CompileRequest request) {
    const auto t0 = Clock::now();
    const std::string key = cacheKey(request);
    auto waiter = std::make_shared<Impl::Waiter>();
    std::shared_future<CompileResult> future = waiter->promise.get_future().share();
    {
        std::unique_lock lock(m_impl->mutex);
        if (auto hit = m_impl->takeMemoryHit(lock, key, request, t0)) {
            waiter->promise.set_value(std::move(*hit));
            return future;
        }
        m_impl->spare_queued.erase(key);  // a spare compile not started yet: this one takes its place
        auto it = m_impl->in_flight.find(key);
        waiter->request = request;
        if (it != m_impl->in_flight.end()) {
            it->second.push_back(std::move(waiter));
            ++m_impl->stats.joined;
            return future;
        }
        m_impl->in_flight[key].push_back(std::move(waiter));
    }
    Impl* impl = m_impl.get();
    impl->pool->post([impl, key, request = std::move(request)](bool run) {
        if (run) {
            impl->produceAndPublish(key, request);
            return;
        }
        CompileResult cancelled;
        cancelled.key = key;
        fail(cancelled, request.file_name, "the compiler shut down before this compile started");
        impl->publish(key, cancelled, false);
    });
    return future;
}

std::string Compiler::cacheKey(const CompileRequest& request) {
    // Length-prefixed fields, so that moving text between fields can never produce the same material.
    std::string material;
    auto add = [&material](const std::string& field) {
        material += std::to_string(field.size());
        material += ':';
        material += field;
    };
    add(kPipeline);
    add(nvrtcVersion());
    add(jitLinkVersion());
    add(request.arch);
    add(request.file_name);  // NVRTC's messages and the line table name the file
    for (const auto& [name, value] : request.defines)
        add(name + "=" + std::to_string(value));
    add("|");
    for (const auto& o : request.extra_options)
        add(o);
    add("|");
    for (const auto& dir : includePaths())
        add(dir);
    add(request.source);
    return fnv128(material);
}

std::string Compiler::nvrtcVersion() {
    int major = 0, minor = 0;
    if (::nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        return "unknown";
    return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> Compiler::includePaths() {
    static const std::vector<std::string> paths = [] {
        // Headers must come from the same toolkit as the NVRTC that compiles them, so the loaded library's own
        // location wins over the build machine's toolkit and the usual environment variables.
        std::vector<fs::path> candidates;
        Dl_info info{};
        if (dladdr(reinterpret_cast<void*>(&::nvrtcVersion), &info) && info.dli_fname) {
            std::error_code ec;
            const fs::path lib = fs::canonical(info.dli_fname, ec);
            if (!ec)
                candidates.push_back(lib.parent_path().parent_path() / "include");
        }
#ifdef KERNCAST_CUDA_INCLUDE
        {
            std::string dirs = KERNCAST_CUDA_INCLUDE;
            std::replace(dirs.begin(), dirs.end(), '|', ';');
            std::istringstream in(dirs);
            for (std::string d; std::getline(in, d, ';');)
                if (!d.empty())
                    candidates.emplace_back(d);
        }
#endif
        for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
            if (const char* v = std::getenv(var); v && *v)
                candidates.push_back(fs::path(v) / "include");
        candidates.emplace_back("/usr/local/cuda/include");
        for (const auto& dir : candidates) {
            std::error_code ec;
            if (!fs::exists(dir / "cuda_runtime.h", ec))
                continue;
            std::vector<std::string> out;
            if (fs::is_directory(dir / "cccl", ec))
                out.push_back((dir / "cccl").string());
            out.push_back(dir.string());
            return out;
        }
        return std::vector<std::string>{};
    }();
    return paths;
}

Compiler::Stats Compiler::stats() const {
    Stats out;
    {
        std::lock_guard lock(m_impl->mutex);
        out = m_impl->stats;
    }
    out.helper_processes = m_impl->backend ? m_impl->backend->processes() : 0;
    return out;
}

bool Compiler::inHelpers() const { return m_impl->backend != nullptr; }

unsigned Compiler::threads() const { return m_impl->pool->size(); }

nlohmann::json compile_request_to_json(const CompileRequest& request) {
    return {
        {"source", request.source}, {"file_name", request.file_name},       {"defines", request.defines},
        {"arch", request.arch},     {"kernel_names", request.kernel_names}, {"extra_options", request.extra_options}};
}

CompileRequest compile_request_from_json(const nlohmann::json& j) {
    CompileRequest r;
    try {
        r.source = j.at("source").get<std::string>();
        r.file_name = j.at("file_name").get<std::string>();
        r.defines = j.at("defines").get<std::map<std::string, int64_t>>();
        r.arch = j.at("arch").get<std::string>();
        r.kernel_names = j.at("kernel_names").get<std::vector<std::string>>();
        r.extra_options = j.at("extra_options").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("compile request: ") + e.what());
    }
    return r;
}

nlohmann::json compile_outcome_to_json(const CompileOutcome& outcome) {
    const CompileResult& r = outcome.result;
    return {{"key", r.key},
            {"ok", r.ok},
            {"log", r.log},
            {"diagnostics", r.diagnostics},
            {"ptx", r.ptx},
            {"kernels", r.kernels},
            {"cubin", base64_encode(r.cubin)},
            {"cacheable", outcome.cacheable}};
}

CompileOutcome compile_outcome_from_json(const nlohmann::json& j, const std::string& key) {
    CompileOutcome out;
    CompileResult& r = out.result;
    try {
        r.key = j.at("key").get<std::string>();
        r.ok = j.at("ok").get<bool>();
        r.log = j.at("log").get<std::string>();
        r.diagnostics = j.at("diagnostics").get<std::vector<CompileDiagnostic>>();
        r.ptx = j.at("ptx").get<std::string>();
        r.kernels = j.at("kernels").get<std::vector<StaticReport>>();
        r.cubin = base64_decode(j.at("cubin").get<std::string>());
        out.cacheable = j.at("cacheable").get<bool>();
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("compile outcome: ") + e.what());
    }
    if (r.key != key)
        throw Error("compile outcome: it answers the request " + r.key + ", not " + key);
    if (r.ok && r.kernels.empty() && r.cubin.empty() && r.ptx.empty())
        throw Error("compile outcome: ok, but without PTX, cubin or kernels");
    return out;
}

CompileRequest measure_compile_request(const ProgramRef& program, const std::string& arch) {
    CompileRequest r;
    r.source = program.source;
    r.file_name = program.file_name;
    r.defines = program.tunables;
    r.arch = arch;
    // The plan names the kernels to report on and the architecture the code needs; a plan that does not parse, or
    // whose targets leave out this device, is reported by the caller.
    try {
        const KernelProgram parsed = KernelProgram::parse(program.source, program.file_name);
        r.kernel_names = parsed.kernelNames();
        if (!parsed.targets.empty())
            try {
                r.arch = parsed.compileArch(arch);
            } catch (const Error&) {
                r.arch = parsed.targets.front();
            }
    } catch (const Error&) {}
    return r;
}

}  // namespace kerncast
