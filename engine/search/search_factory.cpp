// make_search_runner / stored_search_config (engine/search/search_runner.h): the device, surrogate and mutators a
// search config names.
#include "engine/search/search_runner.h"

#include "core/error.h"
#include "engine/gpu/compiler.h"
#include "engine/llm/llm_client.h"
#include "engine/replay/replay_device.h"
#include "engine/search/llm_mutators.h"
#include "engine/search/search_loop.h"
#include "engine/surrogate/forecast_query.h"
#include "engine/surrogate/llm_forecaster.h"
#include "engine/surrogate/local_forecaster.h"
#include "engine/worker/gpu_device.h"
#include "engine/worker/measurement_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

namespace fs = std::filesystem;

namespace kerncast {

SearchConfig stored_search_config(const std::string& run_path) {
    if (!fs::exists(run_path))
        throw Error(SourceLocation{run_path, 0}, "no run file to resume");
    RunStore store = RunStore::open(run_path);
    const auto runs = store.runs();
    if (runs.empty())
        throw Error(SourceLocation{run_path, 0}, "the run file holds no run to resume");
    return search_config_from_json(runs.back().config);
}

namespace {

LlmConfig llm_config(const SearchConfig& cfg) {
    LlmConfig c;
    if (!cfg.llm.empty())
        c = cfg.llm.get<LlmConfig>();
    if (c.endpoint.empty() || c.model.empty())
        throw Error("the LLM surrogate and mutators need --endpoint URL and --model NAME (an OpenAI-compatible "
                    "server such as vLLM, Ollama or OpenAI)");
    c.api_key = LlmConfig::resolveApiKey();
    return c;
}

// The folder whose recordings teach the local surrogate: the replay device's own, else default_recordings_folder.
std::string recordings_folder(const Device& device, const std::string& resources_dir) {
    if (std::string folder = device.recordingsFolder(); !folder.empty())
        return folder;
    // A real GPU: the recordings of the same model when there are some, so the surrogate starts from its hardware.
    return default_recordings_folder(resources_dir, device.fingerprint().slug());
}

}  // namespace

// The programs and requests are the search's own (draw_first from the rng the search starts with,
// measured_program, paired_reference), so that they share the compile cache's keys.
void compile_first_programs(Device& device, const ProblemBundle& bundle, const SearchConfig& cfg) {
    const std::shared_ptr<Compiler> pool = device.compilePool();
    if (!pool)
        return;
    const std::string arch = device.compileArch();
    pool->compileAsync(measure_compile_request(search_loop::paired_reference(bundle), arch));
    SplitMix rng(cfg.seed);
    const search_loop::FirstDraw first =
        search_loop::draw_first(bundle, cfg, cfg.surrogate != "none", cfg.budgets.measurements, rng);
    for (const Candidate& c : first.batch)
        pool->compileAsync(measure_compile_request(search_loop::measured_program(c), arch));
    // The configurations the initial screen forecasts, some of which it measures at once: in the pool's spare time.
    for (const Candidate& c : first.screened)
        pool->compileSpare(measure_compile_request(search_loop::measured_program(c), arch));
}

std::unique_ptr<LocalForecaster> make_local_surrogate(const Device& device, const std::string& resources_dir,
                                                      const std::string& problem_name, uint64_t seed,
                                                      const SetupHooks& hooks) {
    auto local = std::make_unique<LocalForecaster>(search_forecaster_options(seed));
    const std::string folder = recordings_folder(device, resources_dir);
    if (folder.empty())
        return local;
    const Timeline::Scope scope(hooks.timeline.get(), TimelinePhase::BaseModel);
    const auto started = std::chrono::steady_clock::now();
    local->learn(
        examples_from_recordings_except(folder, (fs::path(resources_dir) / "problems").string(), problem_name));
    // The recordings do not change during the search: trained on once (or read from the cache), the run's own
    // measurements come in through a cheap correction between batches.
    const std::string cache = forecaster_cache_dir();
    if (hooks.progress && !local->baseCached(cache))
        hooks.progress("training the local forecaster's base model on the recordings in " + folder + " (once for " +
                       problem_name + "; cached in " + cache + ")");
    local->freezeBase(cache);
    if (hooks.progress) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        char line[256];
        std::snprintf(line, sizeof line, "local forecaster ready in %.1f s (%s)", s, local->baseSource().c_str());
        hooks.progress(line);
    }
    return local;
}

std::unique_ptr<SearchRunner> make_search_runner(const SearchConfig& config, const std::string& resources_dir,
                                                 const std::string& run_path, bool resume, const SetupHooks& given) {
    // The set-up's spans go into the search's timeline (one is made when none is given).
    SetupHooks hooks = given;
    if (!hooks.timeline)
        hooks.timeline = std::make_shared<Timeline>();
    SearchConfig cfg = config;
    // A run file without a run (the search was killed before it stored its settings) starts over with `config`.
    if (resume && (!fs::exists(run_path) || !RunStore::open(run_path).runs().empty())) {
        cfg = stored_search_config(run_path);
        // The runner extends the stored budgets by the larger ones given (and keeps them for later resumes).
        cfg.budgets = extended_budgets(cfg.budgets, config.budgets);
        // A resumed run may measure on other workers than the killed one did (the store keeps which measured what).
        if (pool_requested(config.pool))
            cfg.pool = config.pool;
    }
    std::unique_ptr<Device> device;
    {
        const Timeline::Scope scope(hooks.timeline.get(), TimelinePhase::OpenDevice);
        const bool gpu = is_cuda_device_id(cfg.device) ||
                         std::any_of(cfg.pool.devices.begin(), cfg.pool.devices.end(), is_cuda_device_id);
        const auto started = std::chrono::steady_clock::now();
        if (hooks.progress && gpu)
            hooks.progress("starting the GPU workers (each measures its GPU's ceilings on first use; kerncast-cli "
                           "prepare does it ahead)");
        // An overlapped search on one GPU measures through a pool of one worker too, so that the search thread
        // chooses the next batch while the GPU measures.
        device = pool_requested(cfg.pool) || (cfg.overlap && gpu)
                     ? MeasurementPool::open(cfg.pool, cfg.device, resources_dir)
                     : open_device(cfg.device, resources_dir);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (hooks.progress && (gpu || s > 1)) {
            char line[256];
            std::snprintf(line, sizeof line, "%s ready in %.1f s", device->id().c_str(), s);
            hooks.progress(line);
        }
    }
    const ProblemBundle bundle = load_problem_folder(cfg.problem_dir);
    // Which family configurations a replay device's recording holds: said here, and handed to the search.
    std::optional<RecordedFamilyCheck> family_check;
    if (bundle.family) {
        family_check = RecordedFamilyCheck{bundle.family->source,
                                           partially_recorded_family(*device, bundle.problem.name, *bundle.family)};
        if (const auto& partial = family_check->partial; partial && hooks.progress) {
            const std::string all = std::to_string(partial->configurations);
            hooks.progress(
                partial->recorded.empty()
                    ? device->id() + " holds none of the " + all + " configurations of " + bundle.problem.name +
                          "'s family (recorded before the family changed, or stopped before reaching it): "
                          "the search measures the reference and the seeds only"
                    : device->id() + " holds " + std::to_string(partial->recorded.size()) + " of the " + all +
                          " configurations of " + bundle.problem.name + "'s family: the search draws only from those");
        }
    }
    if (!resume) {
        // The search draws its first batch from the configurations the recording holds (restrictFamilyToRecording).
        ProblemBundle first = bundle;
        if (family_check && family_check->partial)
            first.family->only = family_check->partial->recorded;
        compile_first_programs(*device, first, cfg);
    }

    // One memory for every LLM client of the run: a shape one of them learns, the others use at once.
    auto shapes = std::make_shared<RequestShapeMemory>();
    std::unique_ptr<Surrogate> surrogate;
    if (cfg.surrogate == "local") {
        surrogate = make_local_surrogate(*device, resources_dir, bundle.problem.name, cfg.seed, hooks);
    } else if (cfg.surrogate == "llm") {
        LlmForecasterOptions options;
        options.samples = cfg.samples;
        options.abstain = cfg.abstain;
        auto llm =
            std::make_unique<LlmForecaster>(llm_config(cfg), (fs::path(resources_dir) / "prompts").string(), options);
        llm->client().setShapeMemory(shapes);
        surrogate = std::move(llm);
    } else if (cfg.surrogate != "none") {
        throw Error("unknown surrogate '" + cfg.surrogate + "' (expected local, llm or none)");
    }

    std::vector<std::unique_ptr<CandidateMutator>> mutators;
    for (const std::string& name : cfg.mutators) {
        if (name == "parametric")
            mutators.push_back(std::make_unique<ParametricMutator>());
        else if (name == "llm-rewrite" || name == "llm-diff") {
            auto llm =
                std::make_unique<LlmMutator>(name == "llm-rewrite" ? LlmMutator::Mode::Rewrite : LlmMutator::Mode::Diff,
                                             llm_config(cfg), (fs::path(resources_dir) / "prompts").string());
            llm->client().setShapeMemory(shapes);
            mutators.push_back(std::move(llm));
        } else {
            throw Error("unknown mutator '" + name + "' (expected parametric, llm-rewrite or llm-diff)");
        }
    }
    auto runner = std::make_unique<SearchRunner>(cfg, run_path, resume, std::move(device), std::move(surrogate),
                                                 std::move(mutators));
    runner->setRequestShapeMemory(shapes);
    runner->setTimeline(hooks.timeline);
    if (family_check)
        runner->setRecordedFamilyCheck(std::move(*family_check));
    return runner;
}

}  // namespace kerncast
