#include "engine/worker/worker_server.h"

#include "core/gating.h"
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
#include <random>

namespace kerncast {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string fmt(double v, const char* spec = "%.4g") {
    char buf[48];
    std::snprintf(buf, sizeof buf, spec, v);
    return buf;
}

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
    return buf;
}

// Seeds: the base is drawn for every measurement from the operating system (or given, to reproduce a failure, whose
// reason names it), and every run's seed is the next of a splitmix64 sequence from it: never reused between runs,
// so no program can know its inputs ahead of time or meet the same inputs twice.
uint64_t draw_seed_base() {
    std::random_device rd;
    const uint64_t base = (uint64_t{rd()} << 32) ^ rd();
    return base ? base : 1;  // 0 means "draw one"
}

std::string describe_sizes(const Bindings& sizes) {
    std::string out;
    for (const auto& [name, value] : sizes)
        out += (out.empty() ? "" : ", ") + name + "=" + std::to_string(value);
    return out;
}

constexpr int kMinTimedRuns = 10;
// Runs of the reference alone before the interleaved loop, and how much slower it may run beside the candidate.
constexpr int kReferenceAloneRuns = 3;
constexpr double kReferenceSlowdownLimit = 1.25;
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
    const uint64_t seed_base = opt.seed_base ? opt.seed_base : draw_seed_base();
    SplitMix seeds(seed_base);

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

    // One case's buffers, both programs bound to them, and what checks their guard bytes on the GPU.
    struct Bound {
        std::unique_ptr<CaseBuffers> buffers;
        std::unique_ptr<PreparedProgram> ref, cand;
        std::unique_ptr<GuardTable> guards;
        std::unique_ptr<DeviceCounters> guard_count;
        std::string label;
    };
    auto bind = [&](const Bindings& sizes, const InitOverrides& init, const std::string& label) {
        Bound b;
        b.label = label;
        ctx.doing = "allocating the buffers of " + label;
        b.buffers = gpu.allocate(problem, sizes, init);
        ctx.doing = "preparing the reference's launch plan for " + label;
        b.ref =
            gpu.prepare(*ctx.ref_module, ctx.ref_program, problem, *b.buffers, p.reference.tunables, Side::Reference);
        ctx.doing = "preparing the candidate's launch plan for " + label;
        b.cand =
            gpu.prepare(*ctx.cand_module, ctx.cand_program, problem, *b.buffers, p.candidate.tunables, Side::Candidate);
        std::vector<GuardRegion> regions = b.buffers->guardRegions();
        for (const auto* prog : {b.ref.get(), b.cand.get()})
            for (const GuardRegion& r : prog->guardRegions())
                regions.push_back(r);
        b.guards = std::make_unique<GuardTable>(gpu, regions);
        b.guard_count = std::make_unique<DeviceCounters>(gpu, 1);
        return b;
    };
    // Which guard bytes changed, worded (and re-armed): every buffer's and both programs' scratch.
    auto word_damage = [&](Bound& b) {
        std::string damage = b.buffers->guardDamage(std::nullopt);
        if (damage.empty())
            damage = b.cand->guardDamage();
        if (damage.empty())
            damage = b.ref->guardDamage();
        return damage.empty() ? std::string("guard bytes changed") : damage;
    };
    auto guards_intact = [&](Bound& b) {
        b.guard_count->clear();
        b.guards->enqueueCheck(b.guard_count->at(0));
        return b.guard_count->read()[0] == 0;
    };
    // The candidate runs first, on freshly poisoned outputs (both sides') and scratch, so that nothing of the
    // reference's answer exists anywhere while it runs. Every guard byte is checked right after it: damage found
    // then is the candidate's, wherever it is (its own buffers, the inputs', the reference's). Then the reference
    // runs; damage found after that is the reference's own, and the problem's fault.
    // Both sides' outputs and both programs' scratch poisoned: nothing left from an earlier run.
    auto poison_all = [](Bound& b) {
        b.buffers->poisonOutputs();
        b.ref->poisonScratch();
        b.cand->poisonScratch();
    };
    auto run_both = [&](Bound& b, const std::string& where) {
        poison_all(b);
        gpu.synchronize();
        ctx.doing = "running the candidate (" + where + ")";
        b.cand->launch();
        gpu.synchronize();
        VerifyResult r;
        if (!guards_intact(b)) {
            r.ok = false;
            r.reason = where + ": " + word_damage(b);
            return r;
        }
        ctx.doing = "running the reference (" + where + ")";
        b.ref->launch();
        gpu.synchronize();
        if (!guards_intact(b))
            throw Error(where + ": the reference " + word_damage(b) + "; the problem's reference needs fixing");
        return r;
    };
    auto where_seed = [&](const Bound& b, uint64_t seed) { return b.label + ", seed " + hex(seed); };
    // Returns the verifier's verdict.
    auto check_seed_on_host = [&](Bound& b, uint64_t seed) {
        const std::string where = where_seed(b, seed);
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
        const std::string where = where_seed(b, seed);
        b.buffers->fillInputs(seed);
        if (VerifyResult past_end = run_both(b, where); !past_end.ok)
            return past_end;
        ctx.doing = "verifying on the device (" + where + ")";
        const DeviceVerdict v = b.buffers->verifyOnDevice(problem.tolerance, seed);
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
            r.reason = where +
                       ": the result differs between two runs on the same inputs (a race, or a read of "
                       "memory nothing wrote): the comparison on the GPU failed (" +
                       v.reason + "), a re-run passed";
        }
        return r;
    };
    // A failure's reason ends with what reproduces it: `kerncast-cli measure --seed` derives the same inputs.
    const std::string replay = " (to reproduce: --seed " + hex(seed_base) + ")";
    auto fail = [&](Status status, const std::string& reason) {
        m.status = status;
        m.reason = reason + replay;
        m.verify_ms += ms_since(verify_t0);
    };

    // 1. Correctness: every correctness case (with its own input distributions where problem.json gives them) on
    // every seed, the benchmark case on one; every seed drawn for this measurement.
    reply(make_progress(ctx.id, "verify"));
    const int seed_count = std::max(1, opt.seeds);
    for (size_t c = 0; c < problem.correctness.size(); ++c) {
        const InitOverrides& init = c < problem.correctness_init.size() ? problem.correctness_init[c] : InitOverrides{};
        Bound b = bind(problem.correctness[c], init,
                       "correctness case " + std::to_string(c + 1) + " (" + describe_sizes(problem.correctness[c]) +
                           (init.empty() ? "" : "; its own inputs") + ")");
        for (int s = 0; s < seed_count; ++s) {
            const VerifyResult r = check_seed(b, seeds.next());
            if (!r.ok)
                return fail(Status::Incorrect, r.reason);
        }
    }
    Bound bench = bind(problem.benchmark, {}, "benchmark case (" + describe_sizes(problem.benchmark) + ")");
    {
        const VerifyResult r = check_seed(bench, seeds.next());
        if (!r.ok)
            return fail(Status::Incorrect, r.reason);
    }
    m.seeds_checked = seed_count;
    m.verify_ms = ms_since(verify_t0);
    if (opt.verify_only) {
        m.status = Status::Ok;
        ctx.doing.clear();
        return;
    }

    // 2. Timing at the benchmark case. Every run (warm-ups included) gets inputs of a seed of its own, generated
    // outside the timed window, so that no launch meets inputs it has seen; the candidate runs first, then the
    // reference, each timed alone on its stream after an L2 flush; after each pair, kernels on the GPU check the
    // guard bytes (after each program), every output of the candidate against the reference's and every input
    // against the generator. Nothing is read back until the loop ends, so the checks cost no synchronisation.
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
    // One program's run, alone on the plan stream between two events, after a cold L2.
    auto timed_launch = [&](PreparedProgram& prog, Side side, Samples* out) {
        const char* who = side == Side::Reference ? "reference" : "candidate";
        ctx.doing = std::string("timing the ") + who + " (" + bench.label + ")";
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
    // Per run: [0] guard bytes changed after the candidate, [1] after the reference, then the buffers' checks.
    const size_t stride = 2 + bench.buffers->checkSlots();
    const int max_timed = kReferenceAloneRuns + opt.warmup + std::max(1, opt.max_runs);
    struct Run {
        uint64_t seed = 0;
        bool pair = false;  // false: the reference alone
        int label = 0;      // 1-based among the candidate's timed launches
    };
    std::vector<Run> runs;
    int candidate_launches = 0;
    auto fresh_inputs = [&](uint64_t seed) {
        bench.buffers->fillInputs(seed);
        poison_all(bench);
    };
    auto time_all = [&](DeviceCounters& counters, Samples& alone, Samples& ref, Samples& cand) {
        const auto t0 = Clock::now();
        runs.clear();
        candidate_launches = 0;
        auto slot = [&](size_t k) { return counters.at(runs.size() * stride + k); };
        // The reference alone first: its time beside the candidate must not differ from it.
        for (int r = 0; r < kReferenceAloneRuns; ++r) {
            const uint64_t seed = seeds.next();
            fresh_inputs(seed);
            timed_launch(*bench.ref, Side::Reference, &alone);
            bench.guards->enqueueCheck(slot(1));
            runs.push_back({seed, false, 0});
        }
        const double cap_ms = 2 * opt.time_cap_ms;  // the cap is per program; both share the loop
        Clock::time_point loop_t0 = Clock::now();
        for (int n = 1 - opt.warmup; static_cast<int>(runs.size()) < max_timed; ++n) {
            const uint64_t seed = seeds.next();
            fresh_inputs(seed);
            const bool warm = n <= 0;
            timed_launch(*bench.cand, Side::Candidate, warm ? nullptr : &cand);
            bench.guards->enqueueCheck(slot(0));
            timed_launch(*bench.ref, Side::Reference, warm ? nullptr : &ref);
            bench.guards->enqueueCheck(slot(1));
            bench.buffers->enqueueChecks(problem.tolerance, seed, slot(2));
            runs.push_back({seed, true, ++candidate_launches});
            if (warm) {
                loop_t0 = Clock::now();
                continue;
            }
            const bool precise = n >= std::min(kMinTimedRuns, opt.max_runs) &&
                                 stats::rel_std_error(ref.primary) <= opt.target_rse &&
                                 stats::rel_std_error(cand.primary) <= opt.target_rse;
            if (precise || n >= opt.max_runs || ms_since(loop_t0) >= cap_ms)
                break;
        }
        return ms_since(t0);
    };
    // Reads every run's counters: the first run with a failure decides. Empty when every run passed.
    auto check_runs = [&](DeviceCounters& counters) -> std::string {
        ctx.doing = "checking the timed launches (" + bench.label + ")";
        const std::vector<uint64_t> host = counters.read();
        for (size_t r = 0; r < runs.size(); ++r) {
            const uint64_t* c = host.data() + r * stride;
            const std::string which = runs[r].pair ? "the candidate's timed launch " + std::to_string(runs[r].label) +
                                                         " of " + std::to_string(candidate_launches)
                                                   : "a run of the reference alone";
            const std::string where = which + " (" + where_seed(bench, runs[r].seed) + ")";
            if (c[0] != 0)
                return where + ": " + word_damage(bench);
            if (c[1] != 0)
                throw Error(where + ": the reference " + word_damage(bench) + "; the problem's reference needs fixing");
            if (!runs[r].pair)
                continue;
            const DeviceVerdict v = bench.buffers->describe(c + 2);
            if (!v.ok)
                return where + ": " + v.reason;
            m.max_abs_error = std::max(m.max_abs_error, v.max_abs);
            m.max_rel_error = std::max(m.max_rel_error, v.max_rel);
        }
        return {};
    };
    auto fail_after_timing = [&](const std::string& reason) {
        m.status = Status::Incorrect;
        m.reason = reason + replay;
        m.speedup = 0;
    };
    auto record_times = [&](const Samples& ref, const Samples& cand) {
        m.reference = stats::summarize(ref.primary, ref.events);
        m.candidate = stats::summarize(cand.primary, cand.events);
        m.speedup = m.candidate->median_us > 0 ? m.reference->median_us / m.candidate->median_us : 0;
    };
    // The reference's median beside the candidate against its median alone: a candidate that slows the reference
    // (through anything the checks above miss) would otherwise win by it.
    std::string reference_slowed;
    auto check_reference = [&](const Samples& alone) {
        const double alone_us = stats::median(alone.primary);
        if (alone_us > 0 && m.reference && m.reference->median_us > kReferenceSlowdownLimit * alone_us)
            reference_slowed = "the reference ran " + fmt(m.reference->median_us / alone_us, "%.2f") +
                               "x slower beside the candidate than alone (rule: the reference's time must not "
                               "depend on the candidate)";
    };
    auto time_and_check = [&]() -> bool {
        DeviceCounters counters(gpu, static_cast<size_t>(max_timed) * stride);
        Samples alone, ref, cand;
        m.time_ms += time_all(counters, alone, ref, cand);
        m.clocks_after = gpu.clocks();
        record_times(ref, cand);
        if (const std::string why = check_runs(counters); !why.empty()) {
            fail_after_timing(why);
            return false;
        }
        check_reference(alone);
        return true;
    };

    reply(make_progress(ctx.id, "time"));
    m.clocks_before = gpu.clocks();
    if (!time_and_check())
        return;

    // 3. A new best (or an implausible speedup): verified again on the benchmark case with more fresh seeds, then
    // timed again.
    const auto post_t0 = Clock::now();
    if (m.speedup > opt.reverify_above) {
        reply(make_progress(ctx.id, "reverify"));
        for (int s = 0; s < seed_count; ++s) {
            const VerifyResult r = check_seed(bench, seeds.next());
            if (!r.ok) {
                m.verify_ms += ms_since(post_t0);
                m.status = Status::Incorrect;
                m.reason = "a speedup of " + fmt(m.speedup) + "x triggered re-verification, which failed: " + r.reason +
                           replay;
                m.speedup = 0;
                return;
            }
        }
        reference_slowed.clear();
        if (!time_and_check())
            return;
        m.reverified = true;
    }
    m.verify_ms += ms_since(post_t0);

    // 4. The roofline floor: no program moves the problem's bytes faster than the measured bandwidth, nor does
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
    // The reasons name the rule, not the numbers: a mutator that reads them learns what is not allowed, not how
    // close to the line it may go.
    if (m.candidate && m.roofline_floor_us > 0 && m.candidate->median_us < m.roofline_floor_us) {
        m.status = Status::Suspect;
        m.reason = "the candidate's time is below the roofline floor (rule: no program moves the problem's bytes "
                   "faster than the device's measured memory bandwidth, or does its arithmetic faster than its "
                   "measured peak): physically implausible, check the kernel by hand";
    } else if (!reference_slowed.empty()) {
        m.status = Status::Suspect;
        m.reason = reference_slowed + "; check the kernel by hand";
    }
}

}  // namespace kerncast
