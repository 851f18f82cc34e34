#include "engine/gpu/gpu_session.h"

#include "core/text_util.h"
#include "engine/gpu/util_kernels.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

namespace kerncast {

namespace {

using cuda::check;

int dist_code(const InitSpec& init) {
    if (init.dist == "normal")
        return 1;
    if (init.dist == "randint")
        return 2;
    return 0;
}

std::string ceilings_path(const std::string& uuid) {
    const std::string base = xdg_base_dir("XDG_CACHE_HOME", ".cache");
    if (base.empty())
        return {};
    return (std::filesystem::path(base) / "kerncast" / ("ceilings-" + uuid + ".json")).string();
}

}  // namespace

// ---- conversions ----------------------------------------------------------------------------------------------

double half_to_double(uint16_t h) {
    const uint32_t sign = (h >> 15) & 1u, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f) {
        // inf or NaN: keep the payload so poison stays recognisable (engine/gpu/verifier.h)
        const uint64_t bits = (uint64_t{sign} << 63) | (uint64_t{0x7ff} << 52) | (uint64_t{mant} << 42);
        return std::bit_cast<double>(bits);
    }
    const double magnitude = exp == 0 ? std::ldexp(static_cast<double>(mant), -24)
                                      : std::ldexp(static_cast<double>(mant | 0x400u), static_cast<int>(exp) - 25);
    return sign ? -magnitude : magnitude;
}

double bfloat16_to_double(uint16_t b) {
    const uint32_t bits = static_cast<uint32_t>(b) << 16;
    if (((bits >> 23) & 0xffu) == 0xffu && (bits & 0x7fffffu)) {
        const uint64_t d = (uint64_t{bits >> 31} << 63) | (uint64_t{0x7ff} << 52) | (uint64_t{bits & 0x7fffffu} << 29);
        return std::bit_cast<double>(d);
    }
    return static_cast<double>(std::bit_cast<float>(bits));
}

uint64_t input_key(uint64_t seed, const std::string& buffer_name) {
    uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the name, so each buffer gets its own stream
    for (unsigned char c : buffer_name)
        h = (h ^ c) * 0x100000001b3ULL;
    uint64_t z = seed * 0x9e3779b97f4a7c15ULL ^ h;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// ---- GpuModule ------------------------------------------------------------------------------------------------

GpuModule::~GpuModule() {
    if (m_module && cuda::available())
        cuda::api().cuModuleUnload(m_module);
}

CUfunction GpuModule::function(const std::string& name) const {
    CUfunction f = nullptr;
    const CUresult rc = cuda::api().cuModuleGetFunction(&f, m_module, name.c_str());
    if (rc == CUDA_ERROR_NOT_FOUND)
        throw LaunchError("kernel '" + name + "' is not in " + m_what +
                          " (declare it extern \"C\" __global__ so that its name is not mangled)");
    check(rc, ("looking up kernel '" + name + "' in " + m_what).c_str());
    return f;
}

// ---- CaseBuffers ----------------------------------------------------------------------------------------------

std::pair<CUdeviceptr, size_t> GpuModule::global(const std::string& name) const {
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
    const CUresult rc = cuda::api().cuModuleGetGlobal_v2(&ptr, &bytes, m_module, name.c_str());
    if (rc != CUDA_SUCCESS)
        throw LaunchError("variable '" + name + "' is not in " + m_what + " (" + cuda::error_name(rc) + ")");
    return {ptr, bytes};
}

CaseBuffers::CaseBuffers(GpuSession& session, const Problem& problem, const Bindings& sizes, const InitOverrides& init)
    : m_session(session), m_problem(problem), m_sizes(sizes), m_init(init) {
    for (const auto& [name, spec] : m_init) {
        const BufferSpec* b = problem.buffer(name);
        if (!b || b->role == Role::Out)
            throw Error("an input distribution is given for '" + name + "', which is not an input of problem " +
                        problem.name);
    }
    m_buffers.reserve(problem.buffers.size());
    for (const BufferSpec& spec : problem.buffers) {
        Buffer& b = m_buffers.emplace_back();
        b.spec = &spec;
        b.elements = spec.elements(sizes);
        const size_t bytes = static_cast<size_t>(std::max<int64_t>(spec.bytes(sizes), 0));
        b.mem = session.allocateGuarded(bytes, "buffer " + spec.name);
        if (spec.role != Role::In)
            b.ref_mem = session.allocateGuarded(bytes, "the reference's copy of buffer " + spec.name);
    }
}

CaseBuffers::~CaseBuffers() = default;

std::vector<GuardRegion> CaseBuffers::guardRegions() const {
    std::vector<GuardRegion> out;
    for (const Buffer& b : m_buffers)
        for (const GuardedBlock* mem : {&b.mem, &b.ref_mem})
            for (const GuardRegion& r : mem->guardRegions())
                out.push_back(r);
    return out;
}

std::string CaseBuffers::guardDamage(std::optional<Side> side) {
    m_session.synchronize();
    for (const Buffer& b : m_buffers) {
        const bool input = b.spec->role == Role::In;
        if (input || !side || *side == Side::Candidate)
            if (std::string damage = b.mem.damage(b.spec->name); !damage.empty())
                return damage;
        if (!input && (!side || *side == Side::Reference))
            if (std::string damage = b.ref_mem.damage("the reference's " + b.spec->name); !damage.empty())
                return damage;
    }
    return {};
}

void CaseBuffers::enqueueChecks(const Tolerance& tolerance, uint64_t seed, CUdeviceptr slots) {
    for (const Buffer& b : m_buffers) {
        CUdeviceptr counters = slots;
        slots += 8 * kSlotsPerBuffer;
        CUdeviceptr mine = b.mem.ptr();
        const unsigned grid = m_session.utilGrid(b.elements);
        if (b.spec->role == Role::In) {
            FillParams f = fillParams(b, seed);
            void* params[] = {&mine, &f.dtype, &f.dist, &f.n, &f.key, &f.p0, &f.p1, &counters};
            m_session.launchUtil(m_session.m_check_fill, grid, 256, params);
            continue;
        }
        CUdeviceptr theirs = b.ref_mem.ptr();
        auto n = static_cast<unsigned long long>(b.elements);
        int dtype = static_cast<int>(b.spec->dtype);
        CUdeviceptr sums = counters + 6 * 8;
        void* ref_params[] = {&theirs, &dtype, &n, &counters, &sums};
        m_session.launchUtil(m_session.m_check_ref, grid, 256, ref_params);
        double atol = tolerance.atol, rtol = tolerance.rtol;
        int scale = tolerance.scale_atol_by_rms ? 1 : 0;
        void* params[] = {&mine, &theirs, &dtype, &n, &atol, &rtol, &scale, &counters};
        m_session.launchUtil(m_session.m_check_out, grid, 256, params);
    }
}

DeviceVerdict CaseBuffers::describe(const uint64_t* slots) const {
    DeviceVerdict verdict;
    for (const Buffer& b : m_buffers) {
        const uint64_t* c = slots;
        slots += kSlotsPerBuffer;
        const std::string of_n = " of " + std::to_string(b.elements) + " elements";
        if (b.spec->role == Role::In) {
            if (c[5] != 0) {
                verdict.reason = "input " + b.spec->name + " was modified: " + std::to_string(c[5]) + of_n +
                                 " changed (inputs are read-only)";
                return verdict;
            }
            continue;
        }
        const std::string what = "output " + b.spec->name;
        if (c[1] != 0) {
            verdict.reason = what + ": " + std::to_string(c[1]) + of_n + " not written or not finite";
            return verdict;
        }
        if (c[0] != 0) {
            verdict.reason = "the reference's " + what + " has " + std::to_string(c[0]) + of_n +
                             " that are not finite; the problem's inputs or reference need fixing";
            return verdict;
        }
        if (b.elements > 1 && c[3] == 0 && c[4] != 0) {
            verdict.reason = what + " is constant but the reference's is not";
            return verdict;
        }
        double max_abs = 0, max_rel = 0;
        std::memcpy(&max_abs, &c[7], 8);
        std::memcpy(&max_rel, &c[8], 8);
        if (c[2] != 0) {
            verdict.reason = what + ": " + std::to_string(c[2]) + of_n +
                             " differ from the reference's beyond the tolerance (largest difference " +
                             std::to_string(max_abs) + ")";
            return verdict;
        }
        verdict.max_abs = std::max(verdict.max_abs, max_abs);
        verdict.max_rel = std::max(verdict.max_rel, max_rel);
    }
    verdict.ok = true;
    return verdict;
}

DeviceVerdict CaseBuffers::verifyOnDevice(const Tolerance& tolerance, uint64_t seed) {
    DeviceCounters counters(m_session, checkSlots());
    enqueueChecks(tolerance, seed, counters.at(0));
    const std::vector<uint64_t> host = counters.read();
    return describe(host.data());
}

CUdeviceptr CaseBuffers::pointer(const std::string& name, Side side) const {
    for (const Buffer& b : m_buffers)
        if (b.spec->name == name)
            return b.at(side);
    throw Error("no buffer named '" + name + "' in problem " + m_problem.name);
}

CaseBuffers::FillParams CaseBuffers::fillParams(const Buffer& b, uint64_t seed) const {
    const auto over = m_init.find(b.spec->name);
    const InitSpec& init = over != m_init.end() ? over->second : b.spec->init;
    FillParams f;
    f.dtype = static_cast<int>(b.spec->dtype);
    f.dist = dist_code(init);
    f.n = static_cast<unsigned long long>(b.elements);
    f.key = static_cast<unsigned long long>(input_key(seed, b.spec->name));
    f.p0 = init.lo;
    f.p1 = init.hi;
    if (f.dist == 1) {
        f.p0 = init.mean;
        f.p1 = init.std;
    } else if (f.dist == 2) {
        f.p0 = static_cast<double>(init.lo_expr.empty() ? static_cast<int64_t>(init.lo) : init.lo_expr.eval(m_sizes));
        f.p1 = static_cast<double>(init.hi_expr.empty() ? static_cast<int64_t>(init.hi) : init.hi_expr.eval(m_sizes));
        if (f.p1 <= f.p0)
            throw Error("buffer " + b.spec->name + ": randint needs lo < hi, found lo " + std::to_string(f.p0) +
                        " and hi " + std::to_string(f.p1));
    }
    return f;
}

void CaseBuffers::fill(CUdeviceptr ptr, const Buffer& b, uint64_t seed) {
    FillParams f = fillParams(b, seed);
    void* params[] = {&ptr, &f.dtype, &f.dist, &f.n, &f.key, &f.p0, &f.p1};
    m_session.launchUtil(m_session.m_fill, m_session.utilGrid(b.elements), 256, params);
}

void CaseBuffers::fillInputs(uint64_t seed) {
    for (const Buffer& b : m_buffers) {
        if (b.spec->role == Role::Out)
            continue;
        fill(b.mem.ptr(), b, seed);
        if (b.ref_mem)
            fill(b.ref_mem.ptr(), b, seed);
    }
}

void CaseBuffers::poisonOutputs(Side side) {
    for (const Buffer& b : m_buffers)
        if (b.spec->role == Role::Out)
            check(cuda::api().cuMemsetD8Async(b.at(side), 0xff, static_cast<size_t>(b.spec->bytes(m_sizes)),
                                              m_session.m_util_stream),
                  ("poisoning output " + b.spec->name).c_str());
}

void CaseBuffers::poisonOutputs() {
    poisonOutputs(Side::Reference);
    poisonOutputs(Side::Candidate);
}

std::vector<double> CaseBuffers::read(const std::string& name, Side side) const {
    for (const Buffer& b : m_buffers)
        if (b.spec->name == name)
            return readFrom(b.at(side), b);
    throw Error("no buffer named '" + name + "' in problem " + m_problem.name);
}

std::vector<double> CaseBuffers::readFrom(CUdeviceptr ptr, const Buffer& b) const {
    const std::string& name = b.spec->name;
    m_session.synchronize();
    const size_t n = static_cast<size_t>(b.elements);
    std::vector<unsigned char> raw(static_cast<size_t>(b.spec->bytes(m_sizes)));
    if (!raw.empty())
        check(cuda::api().cuMemcpyDtoH_v2(raw.data(), ptr, raw.size()), ("reading buffer " + name).c_str());
    std::vector<double> out(n);
    const unsigned char* p = raw.data();
    switch (b.spec->dtype) {
    case DType::F32:
        for (size_t i = 0; i < n; ++i) {
            float v;
            std::memcpy(&v, p + 4 * i, 4);
            out[i] = v;
        }
        break;
    case DType::F64:
        std::memcpy(out.data(), p, 8 * n);
        break;
    case DType::F16:
    case DType::BF16:
        for (size_t i = 0; i < n; ++i) {
            uint16_t v;
            std::memcpy(&v, p + 2 * i, 2);
            out[i] = b.spec->dtype == DType::F16 ? half_to_double(v) : bfloat16_to_double(v);
        }
        break;
    case DType::I32:
        for (size_t i = 0; i < n; ++i) {
            int32_t v;
            std::memcpy(&v, p + 4 * i, 4);
            out[i] = v;
        }
        break;
    case DType::U8:
        for (size_t i = 0; i < n; ++i)
            out[i] = p[i];
        break;
    }
    if (!is_integer(b.spec->dtype)) {
        // A poisoned float keeps its bytes through the widening above only approximately (f32 -> f64 sets
        // the low payload bits to zero); make it the canonical pattern the verifier looks for.
        const size_t width = dtype_size(b.spec->dtype);
        for (size_t i = 0; i < n; ++i) {
            bool all_ff = true;
            for (size_t k = 0; k < width && all_ff; ++k)
                all_ff = p[width * i + k] == 0xff;
            if (all_ff)
                out[i] = poison_value(b.spec->dtype);
        }
    }
    return out;
}

BufferValues CaseBuffers::readAll(Side side) const {
    BufferValues out;
    for (const Buffer& b : m_buffers)
        out[b.spec->name] = read(b.spec->name, side);
    return out;
}

BufferValues CaseBuffers::readInputs() const {
    BufferValues out;
    for (const Buffer& b : m_buffers)
        if (b.spec->role != Role::Out)
            out[b.spec->name] = read(b.spec->name);
    return out;
}

// ---- clusters and tensor maps ---------------------------------------------------------------------------------

namespace {

// The launch of `plan` in clusters: `cluster` receives the attribute that `config` points to.
CUlaunchConfig clusterLaunch(const ResolvedLaunch& plan, CUstream stream, CUlaunchAttribute& cluster) {
    cluster = {};
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = plan.cluster[0];
    cluster.value.clusterDim.y = plan.cluster[1];
    cluster.value.clusterDim.z = plan.cluster[2];
    CUlaunchConfig config{};
    config.gridDimX = plan.grid[0];
    config.gridDimY = plan.grid[1];
    config.gridDimZ = plan.grid[2];
    config.blockDimX = plan.block[0];
    config.blockDimY = plan.block[1];
    config.blockDimZ = plan.block[2];
    config.sharedMemBytes = plan.smem;
    config.hStream = stream;
    config.attrs = &cluster;
    config.numAttrs = 1;
    return config;
}

std::string driver_failure(CUresult rc) { return cuda::error_name(rc) + " (" + cuda::error_string(rc) + ")"; }

// A cluster the device cannot place would fail every launch, or hang a kernel waiting on a block that never runs;
// the occupancy query says so before anything is launched.
void checkCluster(CUfunction function, const ResolvedLaunch& plan, const std::string& where) {
    const auto& a = cuda::api();
    const auto& c = plan.cluster;
    const std::string dims = std::to_string(c[0]) + " x " + std::to_string(c[1]) + " x " + std::to_string(c[2]);
    if (!a.cuLaunchKernelEx || !a.cuOccupancyMaxActiveClusters)
        throw LaunchError(where + " is launched in clusters of " + dims +
                          " blocks, which this NVIDIA driver cannot do (it lacks cuLaunchKernelEx; update it)");
    const uint32_t blocks = c[0] * c[1] * c[2];
    if (blocks > 8) {
        const CUresult rc = a.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
        if (rc != CUDA_SUCCESS)
            throw LaunchError(
                where + ": a cluster of " + std::to_string(blocks) +
                " blocks needs the non-portable cluster sizes this device does not allow: " + driver_failure(rc));
    }
    CUlaunchAttribute cluster;
    const CUlaunchConfig config = clusterLaunch(plan, nullptr, cluster);
    int fits = 0;
    const CUresult rc = a.cuOccupancyMaxActiveClusters(&fits, function, &config);
    const std::string per_block = std::to_string(int64_t{plan.block[0]} * plan.block[1] * plan.block[2]) +
                                  " threads and " + std::to_string(plan.smem) + " bytes of dynamic shared memory each";
    if (rc != CUDA_SUCCESS)
        throw LaunchError(where + ": a cluster of " + dims + " blocks (" + per_block +
                          ") cannot be launched on this device: " + driver_failure(rc));
    if (fits == 0)
        throw LaunchError(where + ": a cluster of " + dims + " blocks (" + per_block +
                          ") does not fit on this device: no GPC can hold all of its blocks at once; use a smaller "
                          "cluster or less shared memory per block");
}

CUtensorMapDataType tensor_map_type(DType t) {
    switch (t) {
    case DType::F32:
        return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::F16:
        return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::BF16:
        return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::F64:
        return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    case DType::I32:
        return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case DType::U8:
        return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    }
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

// The dense array the plan describes (resolve() checked that it lies inside the buffer and that its strides are
// 16-byte multiples); elements outside it read as zero.
CUtensorMap encodeTensorMap(const ResolvedTensorMap& m, CUdeviceptr base, const std::string& where) {
    const auto& a = cuda::api();
    const std::string what = where + ": tensormap of " + m.buffer;
    if (!a.cuTensorMapEncodeTiled)
        throw LaunchError(what + ": this NVIDIA driver cannot build tensor maps (it lacks cuTensorMapEncodeTiled; "
                                 "update it)");
    const auto rank = static_cast<cuuint32_t>(m.shape.size());
    std::vector<cuuint64_t> dims(m.shape.begin(), m.shape.end()), strides;
    cuuint64_t stride = dtype_size(m.dtype);
    for (size_t d = 0; d + 1 < m.shape.size(); ++d) {
        stride *= m.shape[d];
        strides.push_back(stride);
    }
    std::vector<cuuint32_t> box(m.box.begin(), m.box.end()), element_strides(rank, 1);
    const CUtensorMapSwizzle swizzle = m.swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                       : m.swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                       : m.swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                         : CU_TENSOR_MAP_SWIZZLE_NONE;
    CUtensorMap map{};
    const CUresult rc = a.cuTensorMapEncodeTiled(&map, tensor_map_type(m.dtype), rank, reinterpret_cast<void*>(base),
                                                 dims.data(), strides.empty() ? nullptr : strides.data(), box.data(),
                                                 element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (rc != CUDA_SUCCESS) {
        std::string shape, boxes;
        for (size_t d = 0; d < m.shape.size(); ++d) {
            shape += (d ? ", " : "") + std::to_string(m.shape[d]);
            boxes += (d ? ", " : "") + std::to_string(m.box[d]);
        }
        throw LaunchError(what + ": the driver refused to build it (shape " + shape + ", box " + boxes + ", swizzle " +
                          std::to_string(m.swizzle) + "): " + driver_failure(rc) +
                          "; see docs/formats.md for what a tensor map allows");
    }
    return map;
}

}  // namespace

// ---- PreparedProgram ------------------------------------------------------------------------------------------

PreparedProgram::~PreparedProgram() = default;

void PreparedProgram::launch(CUstream stream) {
    if (!stream)
        stream = m_session.m_plan_stream;
    const auto& a = cuda::api();
    std::vector<void*> params;
    // Constant memory is refilled from its buffer before every run, on the run's stream, so that it always holds
    // the inputs of this run (inputs change between measurements); the copy is a few hundred bytes.
    for (const Constant& c : m_constants)
        check(a.cuMemcpyDtoDAsync_v2(c.symbol, c.buffer, c.bytes, stream), "filling constant memory");
    for (Launch& l : m_launches) {
        params.clear();
        size_t map = 0;  // tensor maps are passed from their own storage, in argument order
        for (size_t i = 0; i < l.values.size(); ++i)
            params.push_back(l.plan.args[i].kind == ResolvedArg::Kind::TensorMap ? static_cast<void*>(&l.maps[map++])
                                                                                 : static_cast<void*>(&l.values[i]));
        CUresult rc = CUDA_SUCCESS;
        if (l.plan.cluster == std::array<uint32_t, 3>{1, 1, 1}) {
            rc = a.cuLaunchKernel(l.function, l.plan.grid[0], l.plan.grid[1], l.plan.grid[2], l.plan.block[0],
                                  l.plan.block[1], l.plan.block[2], l.plan.smem, stream, params.data(), nullptr);
        } else {
            CUlaunchAttribute cluster;
            const CUlaunchConfig config = clusterLaunch(l.plan, stream, cluster);
            rc = a.cuLaunchKernelEx(&config, l.function, params.data(), nullptr);
        }
        if (rc != CUDA_SUCCESS) {
            const std::string where = m_file + ":" + std::to_string(l.plan.line) + ": launching " + l.plan.kernel;
            if (cuda::is_sticky(rc))
                throw cuda::CudaError(rc, where);
            throw LaunchError(where + " failed: " + cuda::error_name(rc) + " (" + cuda::error_string(rc) + ")");
        }
    }
}

std::string PreparedProgram::guardDamage() {
    m_session.synchronize();
    for (const Scratch& s : m_scratch) {
        std::string damage = s.mem.damage("scratch " + s.spec.name);
        if (!damage.empty())
            return damage;
    }
    return {};
}

void PreparedProgram::poisonScratch() {
    for (const Scratch& s : m_scratch) {
        const size_t bytes = static_cast<size_t>(s.spec.elements) * dtype_size(s.spec.dtype);
        if (bytes)
            check(cuda::api().cuMemsetD8Async(s.mem.ptr(), 0xff, bytes, m_session.m_util_stream), "poisoning scratch");
    }
}

std::vector<GuardRegion> PreparedProgram::guardRegions() const {
    std::vector<GuardRegion> out;
    for (const Scratch& s : m_scratch)
        for (const GuardRegion& r : s.mem.guardRegions())
            out.push_back(r);
    return out;
}

// ---- DeviceCounters, GuardTable -------------------------------------------------------------------------------

DeviceCounters::DeviceCounters(GpuSession& session, size_t count) : m_session(session), m_count(count) {
    check(cuda::api().cuMemAlloc_v2(&m_ptr, std::max<size_t>(count, 1) * 8), "allocating verification counters");
    clear();
}

DeviceCounters::~DeviceCounters() {
    if (m_ptr && cuda::available())
        cuda::api().cuMemFree_v2(m_ptr);
}

void DeviceCounters::clear() {
    check(cuda::api().cuMemsetD8Async(m_ptr, 0, std::max<size_t>(m_count, 1) * 8, m_session.m_util_stream),
          "clearing verification counters");
}

std::vector<uint64_t> DeviceCounters::read() const {
    m_session.synchronize();
    std::vector<uint64_t> host(m_count);
    if (m_count)
        check(cuda::api().cuMemcpyDtoH_v2(host.data(), m_ptr, m_count * 8), "reading verification counters");
    return host;
}

GuardTable::GuardTable(GpuSession& session, const std::vector<GuardRegion>& regions)
    : m_session(session), m_count(static_cast<unsigned>(regions.size())) {
    if (regions.empty())
        return;
    std::vector<uint64_t> host;
    for (const GuardRegion& r : regions) {
        host.push_back(r.ptr);
        host.push_back(r.bytes);
    }
    check(cuda::api().cuMemAlloc_v2(&m_table, host.size() * 8), "allocating the guard table");
    check(cuda::api().cuMemcpyHtoD_v2(m_table, host.data(), host.size() * 8), "writing the guard table");
}

GuardTable::~GuardTable() {
    if (m_table && cuda::available())
        cuda::api().cuMemFree_v2(m_table);
}

void GuardTable::enqueueCheck(CUdeviceptr counter) {
    if (!m_count)
        return;
    CUdeviceptr table = m_table;
    void* params[] = {&table, &counter};
    // 16 blocks per region: the slack before a buffer is at most one granule (2 MiB), the rest a few KiB.
    kerncast::check(cuda::api().cuLaunchKernel(m_session.m_check_guards, 16, m_count, 1, 256, 1, 1, 0,
                                               m_session.m_util_stream, params, nullptr),
                    "launching the guard check");
}

std::vector<std::string> PreparedProgram::kernelNames() const {
    std::vector<std::string> out;
    for (const Launch& l : m_launches)
        if (std::find(out.begin(), out.end(), l.plan.kernel) == out.end())
            out.push_back(l.plan.kernel);
    return out;
}

// ---- GpuSession -----------------------------------------------------------------------------------------------

GpuSession::GpuSession(int ordinal) : m_ordinal(ordinal), m_rng(std::random_device{}()) {
    const auto& a = cuda::api();  // throws with the reason when there is no driver
    int count = 0;
    check(a.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (ordinal < 0 || ordinal >= count)
        throw Error("there is no CUDA device " + std::to_string(ordinal) + " (this machine has " +
                    std::to_string(count) + ")");
    check(a.cuDeviceGet(&m_device, ordinal), "cuDeviceGet");
    m_fingerprint = cuda::fingerprint(ordinal);
    check(a.cuDevicePrimaryCtxRetain(&m_context, m_device), "retaining the primary context");
    check(a.cuCtxSetCurrent(m_context), "cuCtxSetCurrent");
    check(a.cuDeviceGetAttribute(&m_smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, m_device),
          "cuDeviceGetAttribute");
    m_guard_granularity = guarded_granularity(m_device);
    check(a.cuStreamCreate(&m_plan_stream, CU_STREAM_NON_BLOCKING), "creating the plan stream");
    check(a.cuStreamCreate(&m_util_stream, CU_STREAM_NON_BLOCKING), "creating the utility stream");

    const std::vector<char> image = compile_util(m_fingerprint.cc_major, m_fingerprint.cc_minor);
    m_util = load(image, "Kerncast's utility kernels");
    m_fill = m_util->function("kerncast_fill");
    m_flush = m_util->function("kerncast_flush");
    m_copy = m_util->function("kerncast_copy");
    m_read = m_util->function("kerncast_read");
    m_check_ref = m_util->function("kerncast_check_ref");
    m_check_out = m_util->function("kerncast_check_out");
    m_check_fill = m_util->function("kerncast_check_fill");
    m_check_guards = m_util->function("kerncast_check_guards");
    m_fma = m_util->function("kerncast_fma");

    // 2x L2 (at least 8 MiB), rounded to 16-byte vectors.
    m_flush_bytes = static_cast<size_t>(std::max<int64_t>(2 * m_fingerprint.l2_bytes, 8 << 20)) & ~size_t{15};
    check(a.cuMemAlloc_v2(&m_flush_buffer, m_flush_bytes), "allocating the L2 flush buffer");
    check(a.cuMemAlloc_v2(&m_gate, 256), "allocating the stream gate");
    check(a.cuMemsetD8_v2(m_gate, 0, 256), "clearing the stream gate");
}

GpuSession::~GpuSession() {
    if (!cuda::available())
        return;
    const auto& a = cuda::api();
    a.cuCtxSynchronize();
    m_util.reset();
    if (m_flush_buffer)
        a.cuMemFree_v2(m_flush_buffer);
    if (m_gate)
        a.cuMemFree_v2(m_gate);
    if (m_plan_stream)
        a.cuStreamDestroy_v2(m_plan_stream);
    if (m_util_stream)
        a.cuStreamDestroy_v2(m_util_stream);
    if (m_context)
        a.cuDevicePrimaryCtxRelease_v2(m_device);
}

ClockSample GpuSession::clocks() const { return nvml::sample(m_fingerprint.uuid); }

unsigned GpuSession::utilGrid(int64_t elements) const {
    const int64_t blocks = (elements + 255) / 256;
    return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, int64_t{m_fingerprint.sm_count} * 32));
}

void GpuSession::launchUtil(CUfunction f, unsigned grid, unsigned block, void** params) {
    check(cuda::api().cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, m_util_stream, params, nullptr),
          "launching a utility kernel");
}

void GpuSession::flushL2() {
    CUdeviceptr p = m_flush_buffer;
    auto n = static_cast<unsigned long long>(m_flush_bytes / 16);
    unsigned v = ++m_flush_round;
    void* params[] = {&p, &n, &v};
    launchUtil(m_flush, utilGrid(static_cast<int64_t>(n)), 256, params);
}

void GpuSession::holdPlanStream() {
    if (!m_gate_supported)
        return;
    const CUresult rc =
        cuda::api().cuStreamWaitValue32_v2(m_plan_stream, m_gate, m_gate_value + 1, CU_STREAM_WAIT_VALUE_GEQ);
    if (rc != CUDA_SUCCESS) {
        if (cuda::is_sticky(rc))
            throw cuda::CudaError(rc, "holding the plan stream");
        // Timing still works without the gate; the events cross-check then includes launch overhead.
        m_gate_supported = false;
        std::cerr << "kerncast: stream memory operations are unavailable (" << cuda::error_name(rc)
                  << "); CUDA events will include launch overhead\n";
        return;
    }
    ++m_gate_value;
    m_gate_held = true;
}

void GpuSession::releasePlanStream() {
    if (!m_gate_held)
        return;
    m_gate_held = false;
    check(cuda::api().cuStreamWriteValue32_v2(m_util_stream, m_gate, m_gate_value, CU_STREAM_WRITE_VALUE_DEFAULT),
          "releasing the plan stream");
}

void GpuSession::synchronize() {
    releasePlanStream();  // never wait on a stream that is still held
    const auto& a = cuda::api();
    check(a.cuStreamSynchronize(m_util_stream), "waiting for the GPU");
    check(a.cuStreamSynchronize(m_plan_stream), "waiting for the GPU");
}

std::unique_ptr<GpuModule> GpuSession::load(const std::vector<char>& cubin, const std::string& what) {
    if (cubin.empty())
        throw LaunchError(what + " has no compiled code (empty cubin)");
    CUmodule m = nullptr;
    const CUresult rc = cuda::api().cuModuleLoadData(&m, cubin.data());
    if (rc != CUDA_SUCCESS) {
        if (cuda::is_sticky(rc))
            throw cuda::CudaError(rc, "loading " + what);
        throw LaunchError("the driver could not load " + what + ": " + cuda::error_name(rc) + " (" +
                          cuda::error_string(rc) + "); was it compiled for " + "sm_" +
                          std::to_string(m_fingerprint.cc_major) + std::to_string(m_fingerprint.cc_minor) + "?");
    }
    return std::unique_ptr<GpuModule>(new GpuModule(m, what));
}

std::unique_ptr<CaseBuffers> GpuSession::allocate(const Problem& problem, const Bindings& sizes,
                                                  const InitOverrides& init) {
    return std::unique_ptr<CaseBuffers>(new CaseBuffers(*this, problem, sizes, init));
}

GuardedBlock GpuSession::allocateGuarded(size_t bytes, const std::string& what) {
    GuardedBlock block;
    const CUresult rc = block.allocate(bytes, m_device, m_guard_granularity, m_rng);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY)
        throw LaunchError(what + " needs " + std::to_string(bytes) + " bytes of device memory, more than is free");
    check(rc, ("allocating " + what).c_str());
    return block;
}

std::unique_ptr<PreparedProgram> GpuSession::prepare(const GpuModule& module, const KernelProgram& program,
                                                     const Problem& problem, CaseBuffers& buffers,
                                                     const Bindings& tunables, Side side) {
    const auto& a = cuda::api();
    std::unique_ptr<PreparedProgram> prepared(new PreparedProgram(*this));
    prepared->m_file = program.file;
    const std::vector<ResolvedLaunch> plan = program.resolve(problem, buffers.sizes(), tunables);
    if (plan.empty())
        throw LaunchError(program.file + ": the launch plan has no launch line");

    for (const ResolvedScratch& s : program.resolveScratch(problem, buffers.sizes(), tunables)) {
        PreparedProgram::Scratch sc;
        sc.spec = s;
        const size_t bytes = static_cast<size_t>(s.elements) * dtype_size(s.dtype);
        sc.mem = allocateGuarded(bytes, program.file + ": scratch " + s.name);
        prepared->m_scratch.push_back(std::move(sc));
    }

    for (const ResolvedLaunch& l : plan) {
        const std::string where = program.file + ":" + std::to_string(l.line) + ": kernel " + l.kernel;
        PreparedProgram::Launch launch;
        launch.plan = l;
        launch.function = module.function(l.kernel);

        int max_threads = 0, static_smem = 0;
        check(a.cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, launch.function),
              "cuFuncGetAttribute");
        check(a.cuFuncGetAttribute(&static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, launch.function),
              "cuFuncGetAttribute");
        const int64_t threads = int64_t{l.block[0]} * l.block[1] * l.block[2];
        if (threads > max_threads)
            throw LaunchError(where + " is launched with " + std::to_string(threads) +
                              " threads per block but can run at most " + std::to_string(max_threads) +
                              " (its register use limits it; lower the block size or the registers)");
        if (static_cast<int64_t>(l.smem) + static_smem > m_smem_optin)
            throw LaunchError(where + " asks for " + std::to_string(l.smem) + " bytes of dynamic shared memory" +
                              (static_smem ? " on top of " + std::to_string(static_smem) + " static" : "") +
                              "; this device allows at most " + std::to_string(m_smem_optin) + " per block");
        if (l.smem > 48 * 1024) {
            const CUresult rc = a.cuFuncSetAttribute(launch.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                     static_cast<int>(l.smem));
            if (rc != CUDA_SUCCESS)
                throw LaunchError(where + ": raising its dynamic shared memory limit to " + std::to_string(l.smem) +
                                  " bytes failed: " + cuda::error_name(rc) + " (" + cuda::error_string(rc) + ")");
        }

        if (l.cluster != std::array<uint32_t, 3>{1, 1, 1})
            checkCluster(launch.function, l, where);

        const auto scratch = [&](const std::string& name) {
            auto it = std::find_if(prepared->m_scratch.begin(), prepared->m_scratch.end(),
                                   [&](const auto& s) { return s.spec.name == name; });
            if (it == prepared->m_scratch.end())
                throw LaunchError(where + ": scratch " + name + " is not declared");
            return it->mem.ptr();
        };
        for (const ResolvedArg& arg : l.args) {
            uint64_t slot = 0;
            switch (arg.kind) {
            case ResolvedArg::Kind::TensorMap:
                launch.maps.push_back(encodeTensorMap(
                    arg.tensormap, arg.tensormap.scratch ? scratch(arg.name) : buffers.pointer(arg.name, side), where));
                break;
            case ResolvedArg::Kind::Buffer:
                slot = buffers.pointer(arg.name, side);
                break;
            case ResolvedArg::Kind::Scratch:
                slot = scratch(arg.name);
                break;
            case ResolvedArg::Kind::Scalar:
                if (arg.dtype == DType::F32) {
                    const auto f = static_cast<float>(arg.scalar_value);
                    std::memcpy(&slot, &f, sizeof f);
                } else if (arg.dtype == DType::F64) {
                    std::memcpy(&slot, &arg.scalar_value, sizeof(double));
                } else {
                    const auto i = static_cast<int32_t>(arg.scalar_value);
                    std::memcpy(&slot, &i, sizeof i);
                }
                break;
            case ResolvedArg::Kind::Size: {
                const auto i = static_cast<int32_t>(arg.size_value);
                std::memcpy(&slot, &i, sizeof i);
                break;
            }
            }
            launch.values.push_back(slot);
        }
        prepared->m_launches.push_back(std::move(launch));
    }

    for (const ConstantSpec& c : program.constants) {
        const std::string where = program.file + ":" + std::to_string(c.line) + ": constant " + c.symbol;
        const BufferSpec* spec = problem.buffer(c.buffer);
        if (!spec || spec->role != Role::In)
            throw LaunchError(where + ": " + c.buffer + " is not an input buffer of the problem");
        const auto [symbol, capacity] = module.global(c.symbol);
        const size_t bytes = static_cast<size_t>(spec->bytes(buffers.sizes()));
        if (bytes > capacity)
            throw LaunchError(where + " holds " + std::to_string(capacity) + " bytes, but buffer " + c.buffer +
                              " has " + std::to_string(bytes) + " at these sizes; declare the variable larger");
        prepared->m_constants.push_back({symbol, buffers.pointer(c.buffer, side), bytes});
    }
    return prepared;
}

DeviceCeilings GpuSession::ceilings() {
    if (m_have_ceilings)
        return m_ceilings;
    const std::string path = ceilings_path(m_fingerprint.uuid);
    if (!path.empty()) {
        std::ifstream in(path);
        if (in) {
            try {
                nlohmann::json j;
                in >> j;
                DeviceCeilings c = j.get<DeviceCeilings>();
                if (c.dram_gbps > 0 && c.fp32_tflops > 0) {
                    m_ceilings = c;
                    m_have_ceilings = true;
                    return m_ceilings;
                }
            } catch (const std::exception& e) {
                std::cerr << "kerncast: ignoring unreadable ceilings cache " << path << ": " << e.what() << "\n";
            }
        }
    }
    m_ceilings = measureCeilings();
    m_have_ceilings = true;
    if (!path.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
        // Written to a temporary name and renamed, so that two workers never read a half-written file.
        const std::string tmp = path + ".tmp" + std::to_string(::getpid());
        std::ofstream out(tmp);
        nlohmann::json j = m_ceilings;
        j["device"] = m_fingerprint.name;
        out << j.dump(2) << "\n";
        out.close();
        if (out)
            std::filesystem::rename(tmp, path, ec);
        if (!out || ec)
            std::cerr << "kerncast: could not cache the ceilings in " << path << "\n";
    }
    return m_ceilings;
}

DeviceCeilings GpuSession::measureCeilings() {
    const auto& a = cuda::api();
    DeviceCeilings c;
    c.l2_bytes = m_fingerprint.l2_bytes;

    CUevent start = nullptr, stop = nullptr;
    check(a.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
    check(a.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
    auto best_ms = [&](CUfunction f, unsigned grid, unsigned block, void** params, int runs) {
        float best = 0;
        for (int r = 0; r < runs + 1; ++r) {  // the first run warms up
            check(a.cuEventRecord(start, m_util_stream), "cuEventRecord");
            launchUtil(f, grid, block, params);
            check(a.cuEventRecord(stop, m_util_stream), "cuEventRecord");
            check(a.cuEventSynchronize(stop), "measuring the ceilings");
            float ms = 0;
            check(a.cuEventElapsedTime_v2(&ms, start, stop), "cuEventElapsedTime");
            if (r > 0 && (best == 0 || ms < best))
                best = ms;
        }
        return static_cast<double>(best);
    };

    // Copy: 256 MiB each way, far beyond any L2; bytes read plus bytes written.
    size_t free_bytes = 0, total_bytes = 0;
    check(a.cuMemGetInfo_v2(&free_bytes, &total_bytes), "cuMemGetInfo");
    size_t half = std::min<size_t>(size_t{256} << 20, free_bytes / 4) & ~size_t{15};
    CUdeviceptr src = 0, dst = 0;
    check(a.cuMemAlloc_v2(&src, half), "allocating the bandwidth test");
    check(a.cuMemAlloc_v2(&dst, half), "allocating the bandwidth test");
    check(a.cuMemsetD8_v2(src, 1, half), "cuMemsetD8");
    {
        auto n = static_cast<unsigned long long>(half / 16);
        void* params[] = {&src, &dst, &n};
        const double ms = best_ms(m_copy, static_cast<unsigned>(m_fingerprint.sm_count) * 8, 512, params, 5);
        c.dram_gbps = ms > 0 ? 2.0 * static_cast<double>(half) / (ms * 1e-3) / 1e9 : 0;
    }
    for (unsigned blocks_per_sm : {4u, 8u, 16u}) {
        auto n = static_cast<unsigned long long>(half / 16);
        CUdeviceptr sink =
            m_flush_buffer;  // written only in the practically impossible case; its contents never matter
        void* params[] = {&src, &sink, &n};
        const double ms =
            best_ms(m_read, static_cast<unsigned>(m_fingerprint.sm_count) * blocks_per_sm, 512, params, 5);
        if (ms > 0)
            c.dram_gbps = std::max(c.dram_gbps, static_cast<double>(half) / (ms * 1e-3) / 1e9);
    }
    a.cuMemFree_v2(src);
    a.cuMemFree_v2(dst);

    {
        CUdeviceptr out = m_flush_buffer;
        int iters = 2048;
        float seed = 1.0f;
        const unsigned blocks = static_cast<unsigned>(m_fingerprint.sm_count) * 8, threads = 256;
        void* params[] = {&out, &iters, &seed};
        const double ms = best_ms(m_fma, blocks, threads, params, 5);
        const double flops = 2.0 * kFmaChains * kFmaUnroll * iters * static_cast<double>(blocks) * threads;
        c.fp32_tflops = ms > 0 ? flops / (ms * 1e-3) / 1e12 : 0;
    }
    a.cuEventDestroy_v2(start);
    a.cuEventDestroy_v2(stop);
    return c;
}

RunOutput GpuSession::runOnce(const Problem& problem, const KernelProgram& program, const std::vector<char>& cubin,
                              const Bindings& sizes, const Bindings& tunables, uint64_t seed) {
    auto module = load(cubin, program.file);
    auto buffers = allocate(problem, sizes);
    auto prepared = prepare(*module, program, problem, *buffers, tunables);
    RunOutput out;
    buffers->fillInputs(seed);
    out.inputs_before = buffers->readInputs();
    buffers->poisonOutputs();
    prepared->poisonScratch();
    synchronize();
    prepared->launch();
    synchronize();
    out.buffers = buffers->readAll();
    return out;
}

}  // namespace kerncast
