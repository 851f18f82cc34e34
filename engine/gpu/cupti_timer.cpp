#include "engine/gpu/cupti_timer.h"

#include <cupti.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace kerncast {

namespace {

constexpr size_t kBufferBytes = 1 << 20;
constexpr size_t kAlign = 8;

std::mutex g_mutex;
std::vector<KernelRecord> g_records;
// Buffers are recycled: a fresh one costs page faults inside the next kernel launch, host time that would land
// between a run's first timing event and its kernel.
std::vector<uint8_t*> g_free_buffers;

std::string cupti_error(CUptiResult rc) {
    const char* text = nullptr;
    cuptiGetResultString(rc, &text);
    return text ? text : "CUPTI error " + std::to_string(static_cast<int>(rc));
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (!g_free_buffers.empty()) {
            *buffer = g_free_buffers.back();
            g_free_buffers.pop_back();
            *size = kBufferBytes;
            *max_records = 0;
            return;
        }
    }
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
    if (*buffer)
        std::memset(*buffer, 0, kBufferBytes);
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
    CUpti_Activity* record = nullptr;
    std::vector<KernelRecord> batch;
    while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
        if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
            continue;
        // The library that wrote the record is the one we compiled against, so its newest layout applies.
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        KernelRecord r;
        r.name = k->name ? k->name : "";
        r.stream_id = k->streamId;
        r.correlation_id = k->correlationId;
        r.start_ns = k->start;
        r.end_ns = k->end;
        batch.push_back(std::move(r));
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    g_free_buffers.push_back(buffer);
    for (KernelRecord& r : batch)
        g_records.push_back(std::move(r));
}

}  // namespace

CuptiTimer::CuptiTimer() {
    CUptiResult rc = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (rc != CUPTI_SUCCESS) {
        m_reason = "CUPTI could not register its activity buffers: " + cupti_error(rc);
        return;
    }
    rc = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (rc != CUPTI_SUCCESS) {
        m_reason = "CUPTI could not trace kernels: " + cupti_error(rc);
        return;
    }
    m_ok = true;
}

CuptiTimer::~CuptiTimer() {
    if (!m_ok)
        return;
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    std::lock_guard<std::mutex> lock(g_mutex);
    g_records.clear();
}

uint32_t CuptiTimer::streamId(CUcontext context, CUstream stream) const {
    uint32_t id = 0;
    if (m_ok)
        cuptiGetStreamIdEx(context, stream, 0, &id);
    return id;
}

std::vector<KernelRecord> CuptiTimer::collect() {
    if (!m_ok)
        return {};
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard<std::mutex> lock(g_mutex);
    std::vector<KernelRecord> out;
    out.swap(g_records);
    return out;
}

double CuptiTimer::sumOnStream(const std::vector<KernelRecord>& records, uint32_t stream_id, int* count) {
    double sum = 0;
    int n = 0;
    for (const KernelRecord& r : records) {
        if (r.stream_id != stream_id)
            continue;
        sum += r.duration_us();
        ++n;
    }
    if (count)
        *count = n;
    return sum;
}

}  // namespace kerncast
