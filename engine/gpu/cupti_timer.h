#pragma once
// Kernel durations from the CUPTI activity API (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL): the GPU's own start and
// end timestamps of each kernel, free of launch overhead and host jitter. This is the primary timer of a
// measurement; CUDA events around the plan are the cross-check.
//
// CUPTI is process-wide (one set of buffer callbacks per process), so at most one CuptiTimer exists at a time.

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kerncast {

struct KernelRecord {
    std::string name;
    uint32_t stream_id = 0;
    uint32_t correlation_id = 0;
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
    double duration_us() const { return static_cast<double>(end_ns - start_ns) / 1000.0; }
};

class CuptiTimer {
public:
    // Registers the buffer callbacks and enables kernel activity records. Never throws: when CUPTI cannot be used
    // (another profiler holds it, an unsupported driver) ok() is false and reason() says why, and the worker falls
    // back to CUDA events.
    CuptiTimer();
    ~CuptiTimer();
    CuptiTimer(const CuptiTimer&) = delete;
    CuptiTimer& operator=(const CuptiTimer&) = delete;

    bool ok() const { return m_ok; }
    const std::string& reason() const { return m_reason; }

    // CUPTI's id of a stream, the key for telling the plan's kernels from utility kernels (fill, flush).
    uint32_t streamId(CUcontext context, CUstream stream) const;
    // Flushes CUPTI's buffers and returns every kernel record completed since the last call (synchronise first).
    std::vector<KernelRecord> collect();
    // Sum of the durations of the records on one stream, with their count.
    static double sumOnStream(const std::vector<KernelRecord>& records, uint32_t stream_id, int* count = nullptr);

private:
    bool m_ok = false;
    std::string m_reason;
};

}  // namespace kerncast
