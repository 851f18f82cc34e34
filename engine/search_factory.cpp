// make_search_runner / stored_search_config (engine/search_runner.h): the device, surrogate and mutators a search
// config names.
#include "engine/search_runner.h"

#include "core/error.h"
#include "engine/forecast_query.h"
#include "engine/llm_client.h"
#include "engine/llm_forecaster.h"
#include "engine/llm_mutators.h"
#include "engine/local_forecaster.h"
#include "engine/measurement_pool.h"
#include "engine/replay_device.h"

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
    if (const ReplayDevice* replay = replay_recordings_of(device))
        return replay->folder();
    // A real GPU: the recordings of the same model when there are some, so the surrogate starts from its hardware.
    return default_recordings_folder(resources_dir, device.fingerprint().slug());
}

}  // namespace

std::unique_ptr<SearchRunner> make_search_runner(const SearchConfig& config, const std::string& resources_dir,
                                                 const std::string& run_path, bool resume) {
    SearchConfig cfg = config;
    if (resume) {
        cfg = stored_search_config(run_path);
        cfg.budgets.measurements = std::max(cfg.budgets.measurements, config.budgets.measurements);
        // A resumed run may measure on other workers than the killed one did (the store keeps which measured what).
        if (pool_requested(config.pool))
            cfg.pool = config.pool;
    }
    std::unique_ptr<Device> device = pool_requested(cfg.pool)
                                         ? MeasurementPool::open(cfg.pool, cfg.device, resources_dir)
                                         : open_device(cfg.device, resources_dir);
    const ProblemBundle bundle = load_problem_folder(cfg.problem_dir);

    std::unique_ptr<Surrogate> surrogate;
    if (cfg.surrogate == "local") {
        LocalForecasterOptions options;
        options.seed = cfg.seed;
        // A search retrains often: fewer, smaller boosters, and a retrain every few measurements.
        options.members = 3;
        options.rounds = 120;
        options.retrain_after = 3;
        auto local = std::make_unique<LocalForecaster>(options);
        const std::string folder = recordings_folder(*device, resources_dir);
        if (!folder.empty())
            local->learn(examples_from_recordings_except(folder, (fs::path(resources_dir) / "problems").string(),
                                                         bundle.problem.name));
        surrogate = std::move(local);
    } else if (cfg.surrogate == "llm") {
        surrogate = std::make_unique<LlmForecaster>(llm_config(cfg), (fs::path(resources_dir) / "prompts").string());
    } else if (cfg.surrogate != "none") {
        throw Error("unknown surrogate '" + cfg.surrogate + "' (expected local, llm or none)");
    }

    std::vector<std::unique_ptr<CandidateMutator>> mutators;
    for (const std::string& name : cfg.mutators) {
        if (name == "parametric")
            mutators.push_back(std::make_unique<ParametricMutator>());
        else if (name == "llm-rewrite" || name == "llm-diff")
            mutators.push_back(std::make_unique<LlmMutator>(
                name == "llm-rewrite" ? LlmMutator::Mode::Rewrite : LlmMutator::Mode::Diff, llm_config(cfg),
                (fs::path(resources_dir) / "prompts").string()));
        else
            throw Error("unknown mutator '" + name + "' (expected parametric, llm-rewrite or llm-diff)");
    }
    return std::make_unique<SearchRunner>(cfg, run_path, resume, std::move(device), std::move(surrogate),
                                          std::move(mutators));
}

}  // namespace kerncast
