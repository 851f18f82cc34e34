#pragma once
// The CUDA driver API, loaded at run time. Kerncast never links libcuda: everything that needs no GPU (the GUI, the
// CLI, replay, compilation) must start on machines without an NVIDIA driver, so libcuda.so.1 is dlopen'ed on first
// use and its absence is a readable reason instead of a loader error. NVML (clocks, temperature) is optional the
// same way.
//
// cuda.h is included for its types and enums only; the function prototypes it declares are never called directly
// (only their types are used to declare the table below), so no symbol of libcuda is referenced at link time.

#include "core/error.h"
#include "core/measurement.h"

#include <cuda.h>

#include <string>
#include <vector>

namespace kerncast::cuda {

// The driver functions Kerncast uses, resolved with dlsym by their versioned (ABI-stable) names.
#define KERNCAST_CUDA_FUNCTIONS(X)                                                                                     \
    X(cuInit)                                                                                                          \
    X(cuDriverGetVersion)                                                                                              \
    X(cuGetErrorName)                                                                                                  \
    X(cuGetErrorString)                                                                                                \
    X(cuDeviceGetCount)                                                                                                \
    X(cuDeviceGet)                                                                                                     \
    X(cuDeviceGetName)                                                                                                 \
    X(cuDeviceGetUuid_v2)                                                                                              \
    X(cuDeviceGetAttribute)                                                                                            \
    X(cuDeviceTotalMem_v2)                                                                                             \
    X(cuDevicePrimaryCtxRetain)                                                                                        \
    X(cuDevicePrimaryCtxRelease_v2)                                                                                    \
    X(cuCtxSetCurrent)                                                                                                 \
    X(cuCtxSynchronize)                                                                                                \
    X(cuCtxSetLimit)                                                                                                   \
    X(cuModuleLoadData)                                                                                                \
    X(cuModuleUnload)                                                                                                  \
    X(cuModuleGetFunction)                                                                                             \
    X(cuModuleGetGlobal_v2)                                                                                            \
    X(cuFuncSetAttribute)                                                                                              \
    X(cuFuncGetAttribute)                                                                                              \
    X(cuMemGetInfo_v2)                                                                                                 \
    X(cuMemAlloc_v2)                                                                                                   \
    X(cuMemFree_v2)                                                                                                    \
    X(cuMemcpyHtoD_v2)                                                                                                 \
    X(cuMemcpyDtoH_v2)                                                                                                 \
    X(cuMemcpyDtoDAsync_v2)                                                                                            \
    X(cuMemsetD8_v2)                                                                                                   \
    X(cuMemsetD8Async)                                                                                                 \
    X(cuMemcpyHtoDAsync_v2)                                                                                            \
    X(cuMemAddressReserve)                                                                                             \
    X(cuMemAddressFree)                                                                                                \
    X(cuMemCreate)                                                                                                     \
    X(cuMemRelease)                                                                                                    \
    X(cuMemMap)                                                                                                        \
    X(cuMemUnmap)                                                                                                      \
    X(cuMemSetAccess)                                                                                                  \
    X(cuMemGetAllocationGranularity)                                                                                   \
    X(cuLaunchKernel)                                                                                                  \
    X(cuStreamCreate)                                                                                                  \
    X(cuStreamSynchronize)                                                                                             \
    X(cuStreamDestroy_v2)                                                                                              \
    X(cuStreamWaitValue32_v2)                                                                                          \
    X(cuStreamWriteValue32_v2)                                                                                         \
    X(cuEventCreate)                                                                                                   \
    X(cuEventRecord)                                                                                                   \
    X(cuEventSynchronize)                                                                                              \
    X(cuEventElapsedTime_v2)                                                                                           \
    X(cuEventDestroy_v2)

// Functions only some programs need (tensor maps and clusters, CUDA 12 drivers and later): their absence fails those
// programs with a reason, not the driver as a whole.
#define KERNCAST_CUDA_OPTIONAL_FUNCTIONS(X)                                                                            \
    X(cuLaunchKernelEx)                                                                                                \
    X(cuTensorMapEncodeTiled)                                                                                          \
    X(cuOccupancyMaxActiveClusters)

struct Api {
#define KERNCAST_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
    KERNCAST_CUDA_FUNCTIONS(KERNCAST_CUDA_DECLARE)
    KERNCAST_CUDA_OPTIONAL_FUNCTIONS(KERNCAST_CUDA_DECLARE)
#undef KERNCAST_CUDA_DECLARE
};

// True when libcuda.so.1 was loaded, every function resolved and cuInit succeeded. Loading happens once, on the
// first call of any function here; the environment variable KERNCAST_LIBCUDA names another library to load
// (tests use a path that does not exist to see the no-driver behaviour on a GPU machine).
bool available();
// Why available() is false, e.g. "libcuda.so.1 could not be loaded (libcuda.so.1: cannot open shared object file:
// No such file or directory); is the NVIDIA driver installed?". Empty when available.
std::string unavailable_reason();
// The function table; throws Error(unavailable_reason()) when the driver is not available.
const Api& api();

// "CUDA_ERROR_ILLEGAL_ADDRESS" and "an illegal memory access was encountered"; work without a driver too.
std::string error_name(CUresult code);
std::string error_string(CUresult code);
// Errors after which the context is unusable (every later call fails): the process must be restarted.
bool is_sticky(CUresult code);

// A failed driver call. sticky() tells the worker it must reply and exit so that the engine restarts it.
class CudaError : public Error {
public:
    CudaError(CUresult code, const std::string& what);
    CUresult code() const { return m_code; }
    bool sticky() const { return is_sticky(m_code); }

private:
    CUresult m_code;
};

// Throws CudaError "<what>: CUDA_ERROR_X (description)" unless code is CUDA_SUCCESS.
void check(CUresult code, const char* what);

// Every CUDA device with its fingerprint (clocks from NVML when it is there, else the driver's attributes).
// Empty when there is no driver or no device; *why_none (when given) then says which.
std::vector<DeviceFingerprint> discover_devices(std::string* why_none = nullptr);
// The fingerprint of one device; requires available().
DeviceFingerprint fingerprint(int ordinal);
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", the form nvidia-smi and NVML use.
std::string format_uuid(const unsigned char bytes[16]);

}  // namespace kerncast::cuda

namespace kerncast::nvml {

// libnvidia-ml.so.1 loaded and initialised.
bool available();
// Current SM and memory clocks and the GPU temperature of the device with this UUID; zeros when NVML is missing
// or does not know the device.
ClockSample sample(const std::string& uuid);
// Maximum SM and memory clocks (MHz); false when NVML cannot tell.
bool max_clocks(const std::string& uuid, int* sm_mhz, int* mem_mhz);
// The board power limit in force (milliwatts: what an administrator set, or the default); 0 when NVML cannot tell.
int power_limit_mw(const std::string& uuid);

}  // namespace kerncast::nvml
