#include "engine/gpu/cuda_driver.h"

#include <nvrtc.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace kerncast::cuda {

namespace {

struct Driver {
    void* handle = nullptr;
    Api api;
    bool ok = false;
    std::string reason;
};

Driver& driver() {
    static Driver d;
    static std::once_flag once;
    std::call_once(once, [] {
        const char* override_path = std::getenv("KERNCAST_LIBCUDA");
        const std::string lib = override_path && *override_path ? override_path : "libcuda.so.1";
        d.handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!d.handle) {
            const char* err = dlerror();
            d.reason =
                lib + " could not be loaded (" + (err ? err : "unknown error") + "); is the NVIDIA driver installed?";
            return;
        }
        std::string missing;
#define KERNCAST_CUDA_RESOLVE(name)                                                                                    \
    d.api.name = reinterpret_cast<decltype(d.api.name)>(dlsym(d.handle, #name));                                       \
    if (!d.api.name)                                                                                                   \
        missing += (missing.empty() ? "" : ", ") + std::string(#name);
        KERNCAST_CUDA_FUNCTIONS(KERNCAST_CUDA_RESOLVE)
#undef KERNCAST_CUDA_RESOLVE
#define KERNCAST_CUDA_RESOLVE_OPTIONAL(name)                                                                           \
    d.api.name = reinterpret_cast<decltype(d.api.name)>(dlsym(d.handle, #name));
        KERNCAST_CUDA_OPTIONAL_FUNCTIONS(KERNCAST_CUDA_RESOLVE_OPTIONAL)
#undef KERNCAST_CUDA_RESOLVE_OPTIONAL
        if (!missing.empty()) {
            d.reason = lib + " is too old for Kerncast: it lacks " + missing + "; update the NVIDIA driver";
            return;
        }
        const CUresult rc = d.api.cuInit(0);
        if (rc != CUDA_SUCCESS) {
            const char* name = nullptr;
            const char* text = nullptr;
            d.api.cuGetErrorName(rc, &name);
            d.api.cuGetErrorString(rc, &text);
            d.reason = "the CUDA driver did not initialise: cuInit failed with " +
                       std::string(name ? name : "error " + std::to_string(static_cast<int>(rc))) + " (" +
                       (text ? text : "no description") + ")";
            return;
        }
        d.ok = true;
    });
    return d;
}

// Names for the errors a user is most likely to meet, so messages stay readable even without a driver.
const char* builtin_error_name(CUresult code) {
    switch (code) {
    case CUDA_SUCCESS:
        return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE:
        return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY:
        return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED:
        return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_NO_DEVICE:
        return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_INVALID_DEVICE:
        return "CUDA_ERROR_INVALID_DEVICE";
    case CUDA_ERROR_INVALID_IMAGE:
        return "CUDA_ERROR_INVALID_IMAGE";
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
        return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case CUDA_ERROR_NOT_FOUND:
        return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_ILLEGAL_ADDRESS:
        return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
        return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case CUDA_ERROR_LAUNCH_TIMEOUT:
        return "CUDA_ERROR_LAUNCH_TIMEOUT";
    case CUDA_ERROR_ASSERT:
        return "CUDA_ERROR_ASSERT";
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
        return "CUDA_ERROR_HARDWARE_STACK_ERROR";
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
        return "CUDA_ERROR_ILLEGAL_INSTRUCTION";
    case CUDA_ERROR_MISALIGNED_ADDRESS:
        return "CUDA_ERROR_MISALIGNED_ADDRESS";
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
        return "CUDA_ERROR_INVALID_ADDRESS_SPACE";
    case CUDA_ERROR_INVALID_PC:
        return "CUDA_ERROR_INVALID_PC";
    case CUDA_ERROR_LAUNCH_FAILED:
        return "CUDA_ERROR_LAUNCH_FAILED";
    case CUDA_ERROR_UNKNOWN:
        return "CUDA_ERROR_UNKNOWN";
    default:
        return nullptr;
    }
}

}  // namespace

bool available() { return driver().ok; }

std::string unavailable_reason() { return driver().ok ? std::string() : driver().reason; }

const Api& api() {
    Driver& d = driver();
    if (!d.ok)
        throw Error(d.reason);
    return d.api;
}

std::string error_name(CUresult code) {
    Driver& d = driver();
    const char* name = nullptr;
    if (d.api.cuGetErrorName && d.api.cuGetErrorName(code, &name) == CUDA_SUCCESS && name)
        return name;
    if (const char* builtin = builtin_error_name(code))
        return builtin;
    return "CUDA error " + std::to_string(static_cast<int>(code));
}

std::string error_string(CUresult code) {
    Driver& d = driver();
    const char* text = nullptr;
    if (d.api.cuGetErrorString && d.api.cuGetErrorString(code, &text) == CUDA_SUCCESS && text)
        return text;
    return "no description available without the driver";
}

bool is_sticky(CUresult code) {
    switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_UNKNOWN:
        return true;
    default:
        return false;
    }
}

CudaError::CudaError(CUresult code, const std::string& what)
    : Error(what + ": " + error_name(code) + " (" + error_string(code) + ")"), m_code(code) {}

void check(CUresult code, const char* what) {
    if (code != CUDA_SUCCESS)
        throw CudaError(code, what);
}

std::string format_uuid(const unsigned char b[16]) {
    char out[64];
    std::snprintf(out, sizeof out, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return out;
}

DeviceFingerprint fingerprint(int ordinal) {
    const Api& a = api();
    CUdevice dev = 0;
    check(a.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
    DeviceFingerprint f;
    char name[256] = {};
    check(a.cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
    f.name = name;
    CUuuid uuid{};
    check(a.cuDeviceGetUuid_v2(&uuid, dev), "cuDeviceGetUuid");
    f.uuid = format_uuid(reinterpret_cast<const unsigned char*>(uuid.bytes));
    auto attr = [&](CUdevice_attribute which) {
        int v = 0;
        check(a.cuDeviceGetAttribute(&v, which, dev), "cuDeviceGetAttribute");
        return v;
    };
    f.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    f.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    f.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    f.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    size_t total = 0;
    check(a.cuDeviceTotalMem_v2(&total, dev), "cuDeviceTotalMem");
    f.memory_bytes = static_cast<int64_t>(total);
    check(a.cuDriverGetVersion(&f.driver_version), "cuDriverGetVersion");
    int nvrtc_major = 0, nvrtc_minor = 0;
    if (nvrtcVersion(&nvrtc_major, &nvrtc_minor) == NVRTC_SUCCESS)
        f.cuda_version = nvrtc_major * 1000 + nvrtc_minor * 10;
    // The rated clocks; NVML knows them better than the (deprecated) driver attributes.
    if (!nvml::max_clocks(f.uuid, &f.sm_clock_mhz, &f.mem_clock_mhz)) {
        int khz = 0;
        if (a.cuDeviceGetAttribute(&khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev) == CUDA_SUCCESS)
            f.sm_clock_mhz = khz / 1000;
        if (a.cuDeviceGetAttribute(&khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev) == CUDA_SUCCESS)
            f.mem_clock_mhz = khz / 1000;
    }
    f.power_limit_mw = nvml::power_limit_mw(f.uuid);
    return f;
}

std::vector<DeviceFingerprint> discover_devices(std::string* why_none) {
    std::vector<DeviceFingerprint> out;
    if (!available()) {
        if (why_none)
            *why_none = unavailable_reason();
        return out;
    }
    try {
        int count = 0;
        check(api().cuDeviceGetCount(&count), "cuDeviceGetCount");
        for (int i = 0; i < count; ++i)
            out.push_back(fingerprint(i));
        if (out.empty() && why_none)
            *why_none = "the CUDA driver is loaded but reports no device";
    } catch (const Error& e) {
        if (why_none)
            *why_none = e.what();
    }
    return out;
}

}  // namespace kerncast::cuda

namespace kerncast::nvml {

namespace {

// The few NVML entry points Kerncast reads, declared here because the toolkit does not ship nvml.h everywhere.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlClockMem = 2;
constexpr int kNvmlTemperatureGpu = 0;

struct Nvml {
    bool ok = false;
    nvmlReturn_t (*init)() = nullptr;
    nvmlReturn_t (*byUuid)(const char*, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
    nvmlReturn_t (*maxClock)(nvmlDevice_t, int, unsigned*) = nullptr;
    nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
    nvmlReturn_t (*powerLimit)(nvmlDevice_t, unsigned*) = nullptr;  // optional: absent on some boards' drivers
};

Nvml& lib() {
    static Nvml n;
    static std::once_flag once;
    std::call_once(once, [] {
        void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h)
            return;
        n.init = reinterpret_cast<decltype(n.init)>(dlsym(h, "nvmlInit_v2"));
        n.byUuid = reinterpret_cast<decltype(n.byUuid)>(dlsym(h, "nvmlDeviceGetHandleByUUID"));
        n.clock = reinterpret_cast<decltype(n.clock)>(dlsym(h, "nvmlDeviceGetClockInfo"));
        n.maxClock = reinterpret_cast<decltype(n.maxClock)>(dlsym(h, "nvmlDeviceGetMaxClockInfo"));
        n.temperature = reinterpret_cast<decltype(n.temperature)>(dlsym(h, "nvmlDeviceGetTemperature"));
        n.powerLimit = reinterpret_cast<decltype(n.powerLimit)>(dlsym(h, "nvmlDeviceGetEnforcedPowerLimit"));
        n.ok = n.init && n.byUuid && n.clock && n.maxClock && n.temperature && n.init() == kNvmlSuccess;
    });
    return n;
}

nvmlDevice_t device(const std::string& uuid) {
    Nvml& n = lib();
    nvmlDevice_t dev = nullptr;
    if (!n.ok || uuid.empty() || n.byUuid(uuid.c_str(), &dev) != kNvmlSuccess)
        return nullptr;
    return dev;
}

}  // namespace

bool available() { return lib().ok; }

ClockSample sample(const std::string& uuid) {
    ClockSample s;
    nvmlDevice_t dev = device(uuid);
    if (!dev)
        return s;
    Nvml& n = lib();
    unsigned v = 0;
    if (n.clock(dev, kNvmlClockSm, &v) == kNvmlSuccess)
        s.sm_clock_mhz = static_cast<int>(v);
    if (n.clock(dev, kNvmlClockMem, &v) == kNvmlSuccess)
        s.mem_clock_mhz = static_cast<int>(v);
    if (n.temperature(dev, kNvmlTemperatureGpu, &v) == kNvmlSuccess)
        s.temperature_c = static_cast<int>(v);
    return s;
}

bool max_clocks(const std::string& uuid, int* sm_mhz, int* mem_mhz) {
    nvmlDevice_t dev = device(uuid);
    if (!dev)
        return false;
    Nvml& n = lib();
    unsigned sm = 0, mem = 0;
    if (n.maxClock(dev, kNvmlClockSm, &sm) != kNvmlSuccess || n.maxClock(dev, kNvmlClockMem, &mem) != kNvmlSuccess)
        return false;
    *sm_mhz = static_cast<int>(sm);
    *mem_mhz = static_cast<int>(mem);
    return true;
}

int power_limit_mw(const std::string& uuid) {
    nvmlDevice_t dev = device(uuid);
    unsigned mw = 0;
    if (!dev || !lib().powerLimit || lib().powerLimit(dev, &mw) != kNvmlSuccess)
        return 0;
    return static_cast<int>(mw);
}

}  // namespace kerncast::nvml
