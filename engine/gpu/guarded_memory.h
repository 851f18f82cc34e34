#pragma once
// Device memory for the buffers a measured program can reach, each in an address reservation of its own
// (ARCHITECTURE §5 "Isolation"):
//
//   [ unmapped gap | slack | buffer | guard zone | unmapped gap ]
//                  `------- mapped, one granule or more --------'
//
// The buffer ends kGuardBytes (and less than 256 more) before the end of the mapped range, so a read or write that
// runs past its guard zone faults (the candidate is `crashed`), and a write into the guard zone or into the slack
// before the buffer changes bytes that hold kGuardByte and is found by the guard check after every launch. The gaps
// are a random number of granules, so where one buffer lies says nothing about where another does: a program cannot
// find the reference's buffers, or anything else of the worker's, from its own pointers without faulting.
//
// Where the driver lacks virtual memory management the block falls back to cuMemAlloc with a guard zone after the
// buffer only.

#include "engine/gpu/cuda_driver.h"

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace kerncast {

// Bytes after every device buffer (and scratch) holding kGuardByte; a run that changes them wrote past the end of
// that buffer.
inline constexpr size_t kGuardBytes = 4096;
inline constexpr unsigned char kGuardByte = 0xA5;

// A region of device memory that must keep holding kGuardByte.
struct GuardRegion {
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
};

class GuardedBlock {
public:
    GuardedBlock() = default;
    ~GuardedBlock() { release(); }
    GuardedBlock(const GuardedBlock&) = delete;
    GuardedBlock& operator=(const GuardedBlock&) = delete;
    GuardedBlock(GuardedBlock&& other) noexcept { *this = std::move(other); }
    GuardedBlock& operator=(GuardedBlock&& other) noexcept;

    // Allocates `bytes` (0 allowed) on `device` and fills the guard regions; `granularity` is
    // guarded_granularity(device), 0 for a plain allocation. Returns the driver's error (CUDA_ERROR_OUT_OF_MEMORY
    // when the memory is not there); the block is then empty.
    CUresult allocate(size_t bytes, CUdevice device, size_t granularity, std::mt19937_64& rng);
    void release();

    CUdeviceptr ptr() const { return m_ptr; }
    size_t bytes() const { return m_bytes; }
    explicit operator bool() const { return m_ptr != 0; }
    // The slack before the buffer and the guard zone after it.
    std::vector<GuardRegion> guardRegions() const;
    // Empty when every guard byte is intact; else what changed (e.g. "wrote past the end of y: 12 of the 4096
    // bytes after its last element changed (from byte 0 to byte 11 past the end)"), and the regions are re-armed.
    // Copies the regions to the host: for wording a failure the device check found.
    std::string damage(const std::string& what) const;

private:
    CUdeviceptr m_ptr = 0;
    size_t m_bytes = 0;
    // Virtual memory management: the reservation, and the mapped range within it.
    CUdeviceptr m_reserved = 0;
    size_t m_reserved_bytes = 0;
    CUdeviceptr m_mapped = 0;
    size_t m_mapped_bytes = 0;
    CUmemGenericAllocationHandle m_handle = 0;
    bool m_vmm = false;
};

// The granule of `device`'s address reservations (2 MiB on current GPUs), or 0 when it lacks virtual memory
// management (blocks then fall back to cuMemAlloc). Asked once per session, not per allocation.
size_t guarded_granularity(CUdevice device);

}  // namespace kerncast
