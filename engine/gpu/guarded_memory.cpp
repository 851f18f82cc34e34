#include "engine/gpu/guarded_memory.h"

#include <algorithm>

namespace kerncast {

namespace {

// How far apart reservations are pushed: 1..kMaxGapGranules unmapped granules (2 MiB each on current GPUs) before
// and after every mapped range.
constexpr uint64_t kMaxGapGranules = 16;
constexpr size_t kBufferAlignment = 256;  // what cuMemAlloc guarantees, which kernels may rely on

CUmemAllocationProp device_prop(CUdevice device) {
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    return prop;
}

size_t granularity(CUdevice device) {
    const CUmemAllocationProp prop = device_prop(device);
    size_t g = 0;
    if (cuda::api().cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS)
        return 0;
    return g;
}

size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

}  // namespace

size_t guarded_granularity(CUdevice device) {
    int vmm = 0;
    if (cuda::api().cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device) !=
            CUDA_SUCCESS ||
        vmm == 0)
        return 0;
    return granularity(device);
}

GuardedBlock& GuardedBlock::operator=(GuardedBlock&& other) noexcept {
    if (this != &other) {
        release();
        m_ptr = std::exchange(other.m_ptr, 0);
        m_bytes = std::exchange(other.m_bytes, 0);
        m_reserved = std::exchange(other.m_reserved, 0);
        m_reserved_bytes = std::exchange(other.m_reserved_bytes, 0);
        m_mapped = std::exchange(other.m_mapped, 0);
        m_mapped_bytes = std::exchange(other.m_mapped_bytes, 0);
        m_handle = std::exchange(other.m_handle, 0);
        m_vmm = std::exchange(other.m_vmm, false);
    }
    return *this;
}

CUresult GuardedBlock::allocate(size_t bytes, CUdevice device, size_t gran, std::mt19937_64& rng) {
    release();
    const auto& a = cuda::api();
    if (gran == 0) {
        CUresult rc = a.cuMemAlloc_v2(&m_ptr, bytes + kGuardBytes);
        if (rc != CUDA_SUCCESS) {
            m_ptr = 0;
            return rc;
        }
        m_bytes = bytes;
        m_mapped = m_ptr;
        m_mapped_bytes = bytes + kGuardBytes;
        rc = a.cuMemsetD8_v2(m_ptr + bytes, kGuardByte, kGuardBytes);
        if (rc != CUDA_SUCCESS)
            release();
        return rc;
    }

    m_vmm = true;
    m_mapped_bytes = round_up(bytes + kGuardBytes + kBufferAlignment, gran);
    const size_t before = gran * (1 + rng() % kMaxGapGranules), after = gran * (1 + rng() % kMaxGapGranules);
    m_reserved_bytes = before + m_mapped_bytes + after;
    CUresult rc = a.cuMemAddressReserve(&m_reserved, m_reserved_bytes, gran, 0, 0);
    if (rc != CUDA_SUCCESS) {
        m_reserved = 0;
        release();
        return rc;
    }
    const CUmemAllocationProp prop = device_prop(device);
    rc = a.cuMemCreate(&m_handle, m_mapped_bytes, &prop, 0);
    if (rc != CUDA_SUCCESS) {
        m_handle = 0;
        release();
        return rc;
    }
    m_mapped = m_reserved + before;
    rc = a.cuMemMap(m_mapped, m_mapped_bytes, 0, m_handle, 0);
    if (rc != CUDA_SUCCESS) {
        m_mapped = 0;
        release();
        return rc;
    }
    CUmemAccessDesc access = {};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    rc = a.cuMemSetAccess(m_mapped, m_mapped_bytes, &access, 1);
    if (rc == CUDA_SUCCESS) {
        m_bytes = bytes;
        m_ptr = (m_mapped + m_mapped_bytes - kGuardBytes - bytes) & ~CUdeviceptr{kBufferAlignment - 1};
        rc = a.cuMemsetD8_v2(m_mapped, kGuardByte, m_mapped_bytes);  // the buffer's own bytes are filled later
    }
    if (rc != CUDA_SUCCESS)
        release();
    return rc;
}

void GuardedBlock::release() {
    const bool held = m_ptr || m_reserved || m_mapped || m_handle;
    if (held && cuda::available()) {
        const auto& a = cuda::api();
        if (!m_vmm) {
            if (m_ptr)
                a.cuMemFree_v2(m_ptr);
        } else {
            if (m_mapped)
                a.cuMemUnmap(m_mapped, m_mapped_bytes);
            if (m_handle)
                a.cuMemRelease(m_handle);
            if (m_reserved)
                a.cuMemAddressFree(m_reserved, m_reserved_bytes);
        }
    }
    m_ptr = m_reserved = m_mapped = 0;
    m_bytes = m_reserved_bytes = m_mapped_bytes = 0;
    m_handle = 0;
    m_vmm = false;
}

std::vector<GuardRegion> GuardedBlock::guardRegions() const {
    std::vector<GuardRegion> out;
    if (!m_mapped)
        return out;
    if (m_ptr > m_mapped)
        out.push_back({m_mapped, static_cast<size_t>(m_ptr - m_mapped)});
    // The guard zone proper, then the few bytes of alignment between it and the end of the mapped range.
    const CUdeviceptr end = m_ptr + m_bytes, mapped_end = m_mapped + m_mapped_bytes;
    out.push_back({end, kGuardBytes});
    if (end + kGuardBytes < mapped_end)
        out.push_back({end + kGuardBytes, static_cast<size_t>(mapped_end - end - kGuardBytes)});
    return out;
}

std::string GuardedBlock::damage(const std::string& what) const {
    const auto& a = cuda::api();
    for (const GuardRegion& r : guardRegions()) {
        std::vector<unsigned char> host(r.bytes);
        cuda::check(a.cuMemcpyDtoH_v2(host.data(), r.ptr, r.bytes), ("reading the guard bytes of " + what).c_str());
        size_t changed = 0, first = 0, last = 0;
        for (size_t i = 0; i < host.size(); ++i) {
            if (host[i] != kGuardByte) {
                if (changed++ == 0)
                    first = i;
                last = i;
            }
        }
        if (!changed)
            continue;
        cuda::check(a.cuMemsetD8_v2(r.ptr, kGuardByte, r.bytes), ("re-arming the guard bytes of " + what).c_str());
        const CUdeviceptr end = m_ptr + m_bytes;
        if (r.ptr >= end) {
            const size_t skip = static_cast<size_t>(r.ptr - end);
            return "wrote past the end of " + what + ": " + std::to_string(changed) + " of the " +
                   std::to_string(r.bytes) + " bytes " + (skip ? std::to_string(skip) + " bytes " : "") +
                   "after its last element changed (from byte " + std::to_string(skip + first) + " to byte " +
                   std::to_string(skip + last) + " past the end)";
        }
        return "wrote before the start of " + what + ": " + std::to_string(changed) + " of the " +
               std::to_string(r.bytes) + " bytes before its first element changed (from byte " +
               std::to_string(r.bytes - first) + " to byte " + std::to_string(r.bytes - last) + " before the start)";
    }
    return {};
}

}  // namespace kerncast
