// kerncast-cli review --run R --candidate N --accept|--reject: a person's verdict on a suspect result (a time below
// the roofline floor). Recorded as a "review" event in the run file; an accepted candidate enters the elite archive
// when the run is resumed (a live run in the workbench admits it at once).
#include "engine/cli/cli.h"
#include "engine/cli/problem_arg.h"

#include "core/run_store.h"
#include "core/suspect_review.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <ostream>

namespace kerncast::cli {

namespace {

struct ReviewArgs {
    std::string run;
    int64_t candidate = 0;
    bool accept = false;
    bool reject = false;
};

void run_review(Context& ctx, const ReviewArgs& a) {
    RunStore store = RunStore::open(a.run);
    const SuspectReview r = record_suspect_review(store, 0, a.candidate, a.accept);
    if (ctx.json) {
        nlohmann::json j = review_payload(r);
        j["ok"] = true;
        j["run_id"] = r.run_id;
        *ctx.out << j.dump(2) << "\n";
        return;
    }
    char speedup[32];
    std::snprintf(speedup, sizeof speedup, "%.3f", r.speedup);
    *ctx.out << "candidate " << r.candidate_id << " (" << speedup << "x, suspect: " << r.reason << ") "
             << (r.accepted ? "accepted: it enters the archive when the run is resumed"
                            : "rejected: it stays out of the archive")
             << "\n";
}

}  // namespace

void add_review_command(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<ReviewArgs>();
    auto* cmd = app.add_subcommand("review", "Accept or reject a suspect result (a time below the roofline floor)");
    cmd->add_option("--run", args->run, "Run store file")->required();
    cmd->add_option("--candidate", args->candidate, "The suspect candidate's id")->required();
    auto* accept = cmd->add_flag("--accept", args->accept, "The result is real: admit it to the archive");
    auto* reject = cmd->add_flag("--reject", args->reject, "The result is wrong: keep it out of the archive");
    accept->excludes(reject);
    cmd->callback([&ctx, args] {
        if (!args->accept && !args->reject) {
            report_failure(ctx, "review", "say --accept or --reject");
            ctx.exit_code = 2;
            return;
        }
        try {
            run_review(ctx, *args);
        } catch (const std::exception& e) {
            report_failure(ctx, "review", e.what());
        }
    });
}

}  // namespace kerncast::cli
