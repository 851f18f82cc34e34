#include "engine/worker/worker_server.h"

#include "core/kernel_program.h"
#include "core/problem.h"
#include "engine/gpu/cuda_driver.h"
#include "engine/gpu/cupti_timer.h"
#include "engine/gpu/gpu_session.h"
#include "engine/gpu/statistics.h"
#include "engine/gpu/verifier.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <new>
#include <optional>

namespace kerncast {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string fmt(double v, const char* spec = "%.4g") {
    char buf[48];
    std::snprintf(buf, sizeof buf, spec, v);
    return buf;
}

std::string describe_sizes(const Bindings& sizes) {
    std::string out;
    for (const auto& [name, value] : sizes)
        out += (out.empty() ? "" : ", ") + name + "=" + std::to_string(value);
    return out;
}

// Seeds: the correctness seeds are 1..n so that a failure can be reproduced; the checks after timing and the
// re-verification guard use seeds no earlier run has used.
constexpr uint64_t kPostTimingSeed = 0x7265766572696679ULL;
constexpr uint64_t kGuardSeedBase = 0x6775617264000000ULL;
constexpr int kMinTimedRuns = 10;
constexpr double kTensorToFmaRatio = 16.0;
constexpr double kRooflineMargin = 0.85;
// Cases with more elements than this (all buffers together) are verified on the GPU.
constexpr int64_t kDeviceVerifyElements = int64_t{1} << 22;

// What the candidate did wrong, or why it could not run: becomes the measurement's status and reason.
struct Verdict {
    Status status;
    std::string reason;
};

}  // namespace

struct WorkerServer::MeasureContext {
    int64_t id = 0;
    const MeasurePayload* payload = nullptr;
    Measurement m;
    Problem problem;
    KernelProgram ref_program, cand_program;
    std::unique_ptr<GpuModule> ref_module, cand_module;
    // What the worker was doing when something failed, for the reason ("running the candidate, case 2 (N=4099),
    // seed 3").
    std::string doing;
};

WorkerServer::WorkerServer(int gpu, int reply_fd) : WorkerLineServer(reply_fd), m_gpu(gpu) {}

WorkerServer::~WorkerServer() = default;

std::string WorkerServer::ensureSession() {
    if (m_session)
        return {};
    if (!cuda::available())
        return "no CUDA driver: " + cuda::unavailable_reason();
    try {
        m_session = std::make_unique<GpuSession>(m_gpu);
        m_cupti = std::make_unique<CuptiTimer>();
        if (!m_cupti->ok())
            std::cerr << "kerncast-worker: " << m_cupti->reason() << "; timing falls back to CUDA events\n";
        m_session_error.clear();
    } catch (const std::exception& e) {
        m_session.reset();
        m_session_error = std::string("cannot use CUDA device ") + std::to_string(m_gpu) + ": " + e.what();
    }
    return m_session ? std::string() : m_session_error;
}

bool WorkerServer::handleLine(const std::string& line, int* exit_code) {
    *exit_code = 0;
    const auto req = readRequest(line);
    if (!req)
        return true;
    const nlohmann::json& request = req->json;
    const std::optional<int64_t>& id = req->id;
    const nlohmann::json& id_json = req->id_json;
    const std::string& op = req->op;
    if (op == "shutdown") {
        reply(make_bye());
        return false;
    }
    if (op == "hello") {
        const std::string why = ensureSession();
        if (!why.empty()) {
            reply(make_hello_failure(why));
            return true;
        }
        try {
            reply(make_hello_reply(m_session->fingerprint(), m_session->ceilings()));
        } catch (const std::exception& e) {
            reply(make_hello_failure(std::string("measuring the device's ceilings failed: ") + e.what()));
            if (const auto* ce = dynamic_cast<const cuda::CudaError*>(&e); ce && ce->sticky()) {
                *exit_code = kWorkerStickyExitCode;
                return false;
            }
        }
        return true;
    }
    if (op == "measure") {
        MeasurePayload payload;
        try {
            payload = parse_measure_request(request);
        } catch (const std::exception& e) {
            reply(make_error_reply(id_json, e.what()));
            return true;
        }
        const std::string why = ensureSession();
        if (!why.empty()) {
            reply(make_error_reply(id_json, "cannot measure: " + why));
            return true;
        }
        bool sticky = false;
        // A hung kernel ends the worker where it runs, even when the engine that timed it out cannot reach it.
        m_watchdog.arm(payload.options.deadline_s, "measure request " + std::to_string(*id));
        const Measurement m = measure(*id, payload, &sticky);
        m_watchdog.disarm();
        reply(make_result(*id, m, sticky));
        if (sticky) {
            *exit_code = kWorkerStickyExitCode;
            return false;
        }
        return true;
    }
    reply(make_error_reply(id_json, "unknown op \"" + op + "\" (expected hello, ping, measure or shutdown)"));
    return true;
}

Measurement WorkerServer::measure(int64_t id, const MeasurePayload& payload, bool* sticky) {
    MeasureContext ctx;
    ctx.id = id;
    ctx.payload = &payload;
    ctx.m.device_kind = "cuda";
    ctx.m.device = m_session->fingerprint();
    *sticky = false;
    try {
        measureInto(ctx);
    } catch (const cuda::CudaError& e) {
        // A sticky error may surface as another code on a later call; the context tells the truth.
        const bool poisoned = e.sticky() || cuda::api().cuCtxSynchronize() != CUDA_SUCCESS;
        ctx.m.status = poisoned ? Status::Crashed : Status::LaunchError;
        ctx.m.reason = (ctx.doing.empty() ? std::string() : ctx.doing + ": ") + e.what();
        *sticky = poisoned;
    } catch (const LaunchError& e) {
        ctx.m.status = Status::LaunchError;
        ctx.m.reason = (ctx.doing.empty() ? std::string() : ctx.doing + ": ") + e.what();
    } catch (const std::bad_alloc&) {
        ctx.m.status = Status::LaunchError;
        ctx.m.reason = ctx.doing + ": the worker ran out of host memory";
    } catch (const std::exception& e) {
        ctx.m.status = Status::LaunchError;
        ctx.m.reason = (ctx.doing.empty() ? std::string() : ctx.doing + ": ") + e.what();
    }
    if (ctx.m.status != Status::Ok && ctx.m.status != Status::Suspect) {
        ctx.m.speedup = 0;
        if (!*sticky) {
            // Leave a clean slate for the next request (a failed launch may have left work queued).
            if (cuda::api().cuCtxSynchronize() != CUDA_SUCCESS) {
                *sticky = true;
                ctx.m.status = Status::Crashed;
            }
        }
    }
    return ctx.m;
}

void WorkerServer::measureInto(MeasureContext& ctx) {
    const MeasurePayload& p = *ctx.payload;
    const MeasureOptions& opt = p.options;
    GpuSession& gpu = *m_session;
    Measurement& m = ctx.m;
    const auto verify_t0 = Clock::now();

    ctx.doing = "reading the problem";
    ctx.problem = Problem::parse(p.problem_json, p.problem_file);
    ctx.doing = "reading the reference";
    ctx.ref_program = KernelProgram::parse(p.reference.source, p.reference.file);
    ctx.doing = "reading the candidate";
    ctx.cand_program = KernelProgram::parse(p.candidate.source, p.candidate.file);
    ctx.doing = "loading the reference";
    ctx.ref_module = gpu.load(p.reference.cubin, "the reference's cubin (" + p.reference.file + ")");
    ctx.doing = "loading the candidate";
    ctx.cand_module = gpu.load(p.candidate.cubin, "the candidate's cubin (" + p.candidate.file + ")");
    const Problem& problem = ctx.problem;
    const Verifier verifier(problem.tolerance);

    // One case's buffers and both programs bound to them.
    struct Bound {
        std::unique_ptr<CaseBuffers> buffers;
        std::unique_ptr<PreparedProgram> ref, cand;
        std::string label;
    };
    auto bind = [&](const Bindings& sizes, const std::string& label) {
        Bound b;
        b.label = label;
        ctx.doing = "allocating the buffers of " + label;
        b.buffers = gpu.allocate(problem, sizes);
        ctx.doing = "preparing the reference's launch plan for " + label;
        b.ref =
            gpu.prepare(*ctx.ref_module, ctx.ref_program, problem, *b.buffers, p.reference.tunables, Side::Reference);
        ctx.doing = "preparing the candidate's launch plan for " + label;
        b.cand =
            gpu.prepare(*ctx.cand_module, ctx.cand_program, problem, *b.buffers, p.candidate.tunables, Side::Candidate);
        return b;
    };
    // A write past the end of a buffer, found in the guard zones after one program's run. The reference's is the
    // problem's fault and stops the measurement; the candidate's makes it incorrect.
    auto guard_failure = [&](Bound& b, Side side, const std::string& where) {
        PreparedProgram& prog = side == Side::Reference ? *b.ref : *b.cand;
        std::string damage = b.buffers->guardDamage(side);
        if (damage.empty())
            damage = prog.guardDamage();
        if (!damage.empty() && side == Side::Reference)
            throw Error(where + ": the reference " + damage + "; the problem's reference needs fixing");
        VerifyResult r;
        if (!damage.empty()) {
            r.ok = false;
            r.reason = where + ": " + damage;
        }
        return r;
    };
    // Reference then candidate on the same fresh inputs, each into its own outputs; the outputs of both are
    // poisoned first.
    auto run_both = [&](Bound& b, const std::string& where) {
        ctx.doing = "running the reference (" + where + ")";
        b.buffers->poisonOutputs();
        b.ref->poisonScratch();
        b.cand->poisonScratch();
        gpu.synchronize();
        b.ref->launch();
        guard_failure(b, Side::Reference, where);
        ctx.doing = "running the candidate (" + where + ")";
        b.cand->launch();
        gpu.synchronize();
        return guard_failure(b, Side::Candidate, where);
    };
    // Returns the verifier's verdict.
    auto check_seed_on_host = [&](Bound& b, uint64_t seed) {
        const std::string where = b.label + ", seed " + std::to_string(seed);
        b.buffers->fillInputs(seed);
        const BufferValues before = b.buffers->readInputs();
        if (VerifyResult past_end = run_both(b, where); !past_end.ok)
            return past_end;
        ctx.doing = "verifying (" + where + ")";
        const BufferValues expected = b.buffers->readAll(Side::Reference);
        const BufferValues got = b.buffers->readAll(Side::Candidate);
        VerifyResult r = verifier.verify(problem, got, expected, before);
        if (!r.ok)
            r.reason = where + ": " + r.reason;
        m.max_abs_error = std::max(m.max_abs_error, r.max_abs);
        m.max_rel_error = std::max(m.max_rel_error, r.max_rel);
        return r;
    };
    // Large cases are compared on the GPU (the same rules); only a failure is re-run and worded on the host.
    auto check_seed = [&](Bound& b, uint64_t seed) {
        int64_t elements = 0;
        for (const BufferSpec& spec : problem.buffers)
            elements += spec.elements(b.buffers->sizes());
        if (elements < kDeviceVerifyElements)
            return check_seed_on_host(b, seed);
        const std::string where = b.label + ", seed " + std::to_string(seed);
        b.buffers->fillInputs(seed);
        b.buffers->snapshotInputs();
        if (VerifyResult past_end = run_both(b, where); !past_end.ok)
            return past_end;
        ctx.doing = "verifying on the device (" + where + ")";
        const DeviceVerdict v = b.buffers->verifyOnDevice(problem.tolerance);
        if (v.ok) {
            m.max_abs_error = std::max(m.max_abs_error, v.max_abs);
            m.max_rel_error = std::max(m.max_rel_error, v.max_rel);
            VerifyResult r;
            r.max_abs = v.max_abs;
            r.max_rel = v.max_rel;
            return r;
        }
        VerifyResult r = check_seed_on_host(b, seed);
        if (r.ok) {
            r.ok = false;
            r.reason = where + ": the result differs between two runs on the same inputs (a race, or a read of "
                               "memory nothing wrote): the comparison on the GPU failed, a re-run passed";
        }
        return r;
    };
    auto fail = [&](Status status, const std::string& reason) {
        m.status = status;
        m.reason = reason;
        m.verify_ms += ms_since(verify_t0);
    };

    // 1. Correctness: every correctness case on every seed, the benchmark case on the first.
    reply(make_progress(ctx.id, "verify"));
    const int seeds = std::max(1, opt.seeds);
    for (size_t c = 0; c < problem.correctness.size(); ++c) {
        Bound b = bind(problem.correctness[c], "correctness case " + std::to_string(c + 1) + " (" +
                                                   describe_sizes(problem.correctness[c]) + ")");
        for (int s = 1; s <= seeds; ++s) {
            const VerifyResult r = check_seed(b, static_cast<uint64_t>(s));
            if (!r.ok)
                return fail(Status::Incorrect, r.reason);
        }
    }
    Bound bench = bind(problem.benchmark, "benchmark case (" + describe_sizes(problem.benchmark) + ")");
    {
        const VerifyResult r = check_seed(bench, 1);
        if (!r.ok)
            return fail(Status::Incorrect, r.reason);
    }
    m.seeds_checked = seeds;
    m.verify_ms = ms_since(verify_t0);
    if (opt.verify_only) {
        m.status = Status::Ok;
        ctx.doing.clear();
        return;
    }

    // 2. Timing at the benchmark case, reference and candidate interleaved.
    CUevent ev_start = nullptr, ev_stop = nullptr;
    const auto& a = cuda::api();
    cuda::check(a.cuEventCreate(&ev_start, CU_EVENT_DEFAULT), "cuEventCreate");
    cuda::check(a.cuEventCreate(&ev_stop, CU_EVENT_DEFAULT), "cuEventCreate");
    struct EventGuard {
        CUevent a, b;
        ~EventGuard() {
            if (cuda::available()) {
                cuda::api().cuEventDestroy_v2(a);
                cuda::api().cuEventDestroy_v2(b);
            }
        }
    } event_guard{ev_start, ev_stop};
    const bool use_cupti = m_cupti && m_cupti->ok();
    const uint32_t plan_stream_id = use_cupti ? m_cupti->streamId(gpu.context(), gpu.planStream()) : 0;

    struct Samples {
        std::vector<double> primary, events;
    };
    // One timed run: this program's outputs and scratch poisoned (its inouts refilled), so that no launch finds
    // its answer already in place, then a cold L2, then the plan alone on its stream between two events.
    auto timed_run = [&](PreparedProgram& prog, Side side, Samples* out) {
        const char* who = side == Side::Reference ? "reference" : "candidate";
        ctx.doing = std::string("timing the ") + who + " (" + bench.label + ")";
        bench.buffers->poisonOutputs(side);
        bench.buffers->fillInOuts(1, side);
        prog.poisonScratch();
        gpu.flushL2();
        gpu.synchronize();
        if (use_cupti)
            m_cupti->collect();  // drop the utility kernels' records
        gpu.holdPlanStream();
        try {
            cuda::check(a.cuEventRecord(ev_start, gpu.planStream()), "cuEventRecord");
            prog.launch();
            cuda::check(a.cuEventRecord(ev_stop, gpu.planStream()), "cuEventRecord");
        } catch (...) {
            gpu.releasePlanStream();
            throw;
        }
        gpu.releasePlanStream();
        cuda::check(a.cuEventSynchronize(ev_stop), "running the plan");
        float ms = 0;
        cuda::check(a.cuEventElapsedTime_v2(&ms, ev_start, ev_stop), "cuEventElapsedTime");
        const double events_us = static_cast<double>(ms) * 1000.0;
        double primary_us = events_us;
        if (use_cupti) {
            int count = 0;
            std::vector<KernelRecord> records = m_cupti->collect();
            primary_us = CuptiTimer::sumOnStream(records, plan_stream_id, &count);
            if (count < static_cast<int>(prog.launchCount())) {  // a late buffer: flush once more
                const std::vector<KernelRecord> more = m_cupti->collect();
                int more_count = 0;
                primary_us += CuptiTimer::sumOnStream(more, plan_stream_id, &more_count);
                count += more_count;
            }
            if (count < static_cast<int>(prog.launchCount())) {
                std::cerr << "kerncast-worker: CUPTI delivered " << count << " of " << prog.launchCount()
                          << " kernel records; using the events' time for this run\n";
                primary_us = events_us;
            }
        }
        if (out) {
            out->primary.push_back(primary_us);
            out->events.push_back(events_us);
        }
    };
    auto time_both = [&](Samples& ref, Samples& cand) {
        const auto t0 = Clock::now();
        bench.buffers->snapshotInputs();  // for check_last_timed
        for (int w = 0; w < opt.warmup; ++w) {
            timed_run(*bench.ref, Side::Reference, nullptr);
            timed_run(*bench.cand, Side::Candidate, nullptr);
        }
        const double cap_ms = 2 * opt.time_cap_ms;  // the cap is per program; both share the loop
        const auto loop_t0 = Clock::now();
        for (int n = 1;; ++n) {
            timed_run(*bench.ref, Side::Reference, &ref);
            timed_run(*bench.cand, Side::Candidate, &cand);
            const bool precise = n >= std::min(kMinTimedRuns, opt.max_runs) &&
                                 stats::rel_std_error(ref.primary) <= opt.target_rse &&
                                 stats::rel_std_error(cand.primary) <= opt.target_rse;
            if (precise || n >= opt.max_runs || ms_since(loop_t0) >= cap_ms)
                break;
        }
        return ms_since(t0);
    };
    // The last timed launch of each program left its outputs in its own buffers, on the inputs of seed 1: the
    // candidate's must match the reference's, the inputs must be unchanged and the guard zones intact. A program
    // that skipped work during timing (trusting what it found in its outputs) fails here.
    auto check_last_timed = [&]() -> VerifyResult {
        const std::string where = "the candidate's last timed launch (" + bench.label + ")";
        ctx.doing = "checking " + where;
        if (VerifyResult past_end = guard_failure(bench, Side::Candidate, where); !past_end.ok)
            return past_end;
        guard_failure(bench, Side::Reference, "the reference's last timed launch (" + bench.label + ")");
        if (bench.buffers->verifyOnDevice(problem.tolerance).ok)
            return {};
        // Word it on the host from the same buffers; the inputs as they were before timing are the snapshot's.
        const BufferValues snapshot = bench.buffers->readInputSnapshot();
        const BufferValues expected = bench.buffers->readAll(Side::Reference);
        const BufferValues got = bench.buffers->readAll(Side::Candidate);
        BufferValues before;
        for (const BufferSpec& spec : problem.buffers)
            if (spec.role != Role::Out)
                before[spec.name] = spec.role == Role::InOut ? got.at(spec.name) : snapshot.at(spec.name);
        VerifyResult r = verifier.verify(problem, got, expected, before);
        if (r.ok)  // the device saw a difference the host does not: report it rather than pass it
            r.reason = "the comparison on the GPU failed";
        r.ok = false;
        r.reason = where + ": " + r.reason;
        return r;
    };
    auto fail_after_timing = [&](const std::string& reason) {
        m.status = Status::Incorrect;
        m.reason = reason;
        m.speedup = 0;
    };
    auto record_times = [&](const Samples& ref, const Samples& cand) {
        m.reference = stats::summarize(ref.primary, ref.events);
        m.candidate = stats::summarize(cand.primary, cand.events);
        m.speedup = m.candidate->median_us > 0 ? m.reference->median_us / m.candidate->median_us : 0;
    };

    reply(make_progress(ctx.id, "time"));
    m.clocks_before = gpu.clocks();
    Samples ref_samples, cand_samples;
    m.time_ms = time_both(ref_samples, cand_samples);
    m.clocks_after = gpu.clocks();
    record_times(ref_samples, cand_samples);
    if (const VerifyResult r = check_last_timed(); !r.ok)
        return fail_after_timing(r.reason);

    // 3. Fresh values in the same buffers: a program that caches its result across calls fails here.
    const auto post_t0 = Clock::now();
    reply(make_progress(ctx.id, "reverify"));
    {
        const VerifyResult r = check_seed(bench, kPostTimingSeed);
        if (!r.ok) {
            m.verify_ms += ms_since(post_t0);
            m.status = Status::Incorrect;
            m.reason = "result cached across runs: after timing, fresh inputs in the same buffers gave a wrong "
                       "result (" +
                       r.reason + ")";
            m.speedup = 0;
            return;
        }
    }

    // 4a. An implausible speedup: re-verify at the largest case with new seeds, then time again.
    if (m.speedup > opt.reverify_above) {
        for (int s = 0; s < seeds; ++s) {
            const VerifyResult r = check_seed(bench, kGuardSeedBase + static_cast<uint64_t>(s));
            if (!r.ok) {
                m.verify_ms += ms_since(post_t0);
                m.status = Status::Incorrect;
                m.reason = "a speedup of " + fmt(m.speedup) + "x triggered re-verification, which failed: " + r.reason;
                m.speedup = 0;
                return;
            }
        }
        Samples ref2, cand2;
        m.time_ms += time_both(ref2, cand2);
        m.clocks_after = gpu.clocks();
        record_times(ref2, cand2);
        if (const VerifyResult r = check_last_timed(); !r.ok)
            return fail_after_timing(r.reason);
        m.reverified = true;
    }
    m.verify_ms += ms_since(post_t0);

    // 4b. The roofline floor: no program moves the problem's bytes faster than the measured bandwidth, nor does
    // its arithmetic faster than the measured FMA peak.
    ctx.doing = "computing the roofline floor";
    const DeviceCeilings ceil = gpu.ceilings();
    double bytes = 0, flops = 0;
    if (!problem.bytes.empty())
        bytes = static_cast<double>(problem.bytes.eval(problem.benchmark));
    if (!problem.flops.empty())
        flops = static_cast<double>(problem.flops.eval(problem.benchmark));
    // Half-precision problems may run on the tensor cores, whose dense rate on Hopper is about 15x the FMA
    // peak we measure; bounding them by the FMA peak would flag honest tensor-core kernels.
    bool half_inputs = false;
    for (const auto& b : problem.buffers)
        half_inputs |= (b.dtype == DType::F16 || b.dtype == DType::BF16) && b.role != Role::Out;
    const double compute_tflops = ceil.fp32_tflops * (half_inputs ? kTensorToFmaRatio : 1.0);
    const double bytes_us = ceil.dram_gbps > 0 ? bytes / (ceil.dram_gbps * 1e3) : 0;
    const double flops_us = compute_tflops > 0 ? flops / (compute_tflops * 1e6) : 0;
    // The floor is the roofline time less a margin: read-mostly kernels beat a copy's bandwidth by a few percent,
    // and the ceilings themselves are measurements. Below this the time is physically implausible.
    m.roofline_floor_us = kRooflineMargin * std::max(bytes_us, flops_us);
    m.status = Status::Ok;
    ctx.doing.clear();
    if (m.candidate && m.roofline_floor_us > 0 && m.candidate->median_us < m.roofline_floor_us) {
        m.status = Status::Suspect;
        m.reason = "the candidate's median " + fmt(m.candidate->median_us) + " us is below the roofline floor " +
                   fmt(m.roofline_floor_us) + " us (" + fmt(bytes / 1e6) + " MB at the measured " +
                   fmt(ceil.dram_gbps) + " GB/s; " + fmt(flops / 1e9) + " GFLOP at the measured " +
                   fmt(ceil.fp32_tflops) + " TFLOP/s): physically implausible, check the kernel by hand";
    }
}

}  // namespace kerncast
