// LLM mutators against a real HTTP server on loopback: full rewrites, SEARCH/REPLACE edits, and every way an
// answer can be unusable (no code, an edit that does not apply, a plan that names unknown buffers, HTTP failures).
#include "core/problem_library.h"
#include "core/run_store.h"
#include "engine/cli/cli.h"
#include "engine/replay/replay_device.h"
#include "engine/search/llm_mutators.h"
#include "engine/search/search_runner.h"
#include "tests/support/chat_replies.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace kerncast;
using namespace kerncast::test;

namespace {

const char* kRewrite = R"(Process 4 elements per thread with float4.

```cuda
// @kerncast launch saxpy4 grid(ceil_div(N, 1024)) block(256) args(x, y, a, N)
extern "C" __global__ void saxpy4(const float* x, float* y, float a, int N) {
    int i = (blockIdx.x * 256 + threadIdx.x) * 4;
    for (int k = 0; k < 4; ++k)
        if (i + k < N) y[i + k] = a * x[i + k] + y[i + k];
}
```
)";

MutationContext context(const ProblemBundle& bundle, const std::set<std::string>& seen) {
    MutationContext ctx;
    ctx.problem = &bundle;
    ctx.parent.candidate.id = 7;
    ctx.parent.candidate.label = "reference";
    ctx.parent.candidate.source = bundle.reference.source;
    ctx.parent.speedup = 1.0;
    MutationExample failed;
    failed.candidate.id = 9;
    failed.candidate.label = "llm rewrite";
    failed.candidate.source = "// broken";
    failed.failure = "candidate.cu:3: error: identifier \"foo\" is undefined";
    ctx.inspirations.push_back(failed);
    ctx.seen = &seen;
    ctx.generation = 1;
    return ctx;
}

}  // namespace

class TestLlmMutators : public QObject {
    Q_OBJECT

private slots:
    void extractsTheLastCodeBlock() {
        QCOMPARE(*extract_code_block("a\n```cuda\nx\n```\nb\n```\ny\n```\n"), std::string("y\n"));
        QVERIFY(!extract_code_block("no code here").has_value());
        QVERIFY(!extract_code_block("```cuda\nunclosed").has_value());
    }

    void appliesSearchReplaceBlocks() {
        const std::string text = "a\nb\nc\n";
        QCOMPARE(apply_search_replace(text, "<<<<<<< SEARCH\nb\n=======\nB1\nB2\n>>>>>>> REPLACE\n"),
                 std::string("a\nB1\nB2\nc\n"));
        QCOMPARE(apply_search_replace(text, "<<<<<<< SEARCH\na\n=======\nA\n>>>>>>> REPLACE\n"
                                            "<<<<<<< SEARCH\nc\n=======\nC\n>>>>>>> REPLACE"),
                 std::string("A\nb\nC\n"));
        try {
            apply_search_replace(text, "<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n"
                                       "<<<<<<< SEARCH\nzzz\n=======\nZ\n>>>>>>> REPLACE\n");
            QFAIL("a SEARCH text that is not there must fail");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("edit block 2") != std::string::npos, e.what());
        }
        QVERIFY_THROWS_EXCEPTION(Error, apply_search_replace(text, "just prose"));
        QVERIFY_THROWS_EXCEPTION(Error, apply_search_replace(text, "<<<<<<< SEARCH\nb\n=======\nB\n"));
    }

    void rewriteProposesAValidProgram() {
        const ProblemBundle bundle = load_problem_folder(cli::resources_dir() + "/problems/saxpy");
        LoopbackHttpServer server;
        server.enqueue(HttpAnswer::json(chatCompletionBody(kRewrite, 1200, 300)));
        server.enqueue(HttpAnswer::json(chatCompletionBody("I would use float4, but here is no code.")));
        server.enqueue(HttpAnswer::json(
            chatCompletionBody("```cuda\n// @kerncast launch k grid(1) block(32) args(nonexistent, N)\n"
                               "extern \"C\" __global__ void k(float* p, int N) {}\n```")));
        LlmMutator mutator(LlmMutator::Mode::Rewrite, loopbackLlmConfig(server), cli::resources_dir() + "/prompts");
        std::set<std::string> seen;
        SplitMix rng(1);
        const auto ctx = context(bundle, seen);
        const auto proposals = mutator.propose(ctx, 3, rng);
        QCOMPARE(proposals.size(), size_t(3));
        int ok = 0;
        std::vector<std::string> failures;
        for (const auto& p : proposals) {
            if (p.child) {
                ++ok;
                QCOMPARE(p.child->mutator, Mutator::LlmRewrite);
                QCOMPARE(p.child->parent_id, int64_t(7));
                QVERIFY(p.child->source.find("saxpy4") != std::string::npos);
                QCOMPARE(p.tokens_in, int64_t(1200));
            } else {
                failures.push_back(p.failure);
            }
        }
        QCOMPARE(ok, 1);
        QCOMPARE(failures.size(), size_t(2));
        // The prompt carries the problem, the parent with its speedup and the failure of an inspiration.
        const auto requests = server.requests();
        QVERIFY(!requests.empty());
        const std::string body = requests.front().body;
        QVERIFY(body.find("1.000x") != std::string::npos);
        QVERIFY(body.find("identifier") != std::string::npos);
        QVERIFY(body.find("@kerncast launch") != std::string::npos);
    }

    void diffEditsTheParent() {
        const ProblemBundle bundle = load_problem_folder(cli::resources_dir() + "/problems/saxpy");
        // Find one line of the reference to edit.
        const std::string& ref = bundle.reference.source;
        const size_t at = ref.find("extern \"C\"");
        QVERIFY(at != std::string::npos);
        const std::string line = ref.substr(at, ref.find('\n', at) - at);
        LoopbackHttpServer server;
        server.enqueue(
            HttpAnswer::json(chatCompletionBody("Restrict the pointers.\n<<<<<<< SEARCH\n" + line +
                                                "\n=======\n// restrict-qualified\n" + line + "\n>>>>>>> REPLACE\n")));
        server.enqueue(
            HttpAnswer::json(chatCompletionBody("<<<<<<< SEARCH\nnot in the file\n=======\nx\n>>>>>>> REPLACE")));
        LlmMutator mutator(LlmMutator::Mode::Diff, loopbackLlmConfig(server), cli::resources_dir() + "/prompts");
        std::set<std::string> seen;
        SplitMix rng(1);
        const auto proposals = mutator.propose(context(bundle, seen), 2, rng);
        QCOMPARE(proposals.size(), size_t(2));
        // The two requests are in flight at once, so which of them gets which answer depends on their arrival.
        const bool first_ok = proposals[0].child.has_value();
        const Proposal& edited = proposals[first_ok ? 0 : 1];
        const Proposal& failed = proposals[first_ok ? 1 : 0];
        QVERIFY(edited.child.has_value());
        QCOMPARE(edited.child->mutator, Mutator::LlmDiff);
        QVERIFY(edited.child->source.find("// restrict-qualified") != std::string::npos);
        QVERIFY(!failed.child.has_value());
        QVERIFY2(failed.failure.find("SEARCH text is not in the parent") != std::string::npos, failed.failure.c_str());
    }

    // A program shown once is named after that (family configurations share one source), and a prompt over
    // max_prompt_tokens leaves out inspirations, saying so; the parent is always whole.
    void promptStaysWithinItsLimit() {
        const ProblemBundle bundle = load_problem_folder(cli::resources_dir() + "/problems/softmax");
        QVERIFY(bundle.family);
        SplitMix rng(3);
        const std::vector<Candidate> configs = random_family_candidates(bundle, 5, rng);
        MutationContext ctx;
        ctx.problem = &bundle;
        ctx.parent.candidate = configs[0];
        ctx.parent.speedup = 2.0;
        for (size_t i = 1; i < configs.size(); ++i) {
            MutationExample e;
            e.candidate = configs[i];
            e.candidate.id = static_cast<int64_t>(10 + i);
            e.speedup = 1.5;
            ctx.inspirations.push_back(e);
        }
        for (int k = 0; k < 2; ++k) {
            MutationExample failed;
            failed.candidate.id = 20 + k;
            failed.candidate.label = "llm rewrite";
            failed.candidate.source = "// variant " + std::to_string(k) + "\n" + bundle.family->source;
            failed.failure = std::string(3000, 'e');
            ctx.inspirations.push_back(failed);
        }
        LlmConfig config;
        config.endpoint = "http://127.0.0.1:9/v1";
        config.model = "m";
        config.max_prompt_tokens = 0;
        const MutationPrompt whole =
            LlmMutator(LlmMutator::Mode::Rewrite, config, cli::resources_dir() + "/prompts").buildPrompt(ctx);
        const std::string all = whole.system + whole.user;
        auto count = [](const std::string& text, const std::string& what) {
            size_t n = 0;
            for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
                ++n;
            return n;
        };
        // The family source once (the parent), the two rewrites, the reference: four programs, not eight.
        QCOMPARE(count(all, "```cuda\n"), size_t{4});
        QCOMPARE(count(all, "(the same program as the parent, with these tunable values)"), size_t{4});
        QVERIFY(all.find(std::string(801, 'e')) == std::string::npos);  // failure logs cut at 800
        size_t summed = 0;
        for (const auto& [name, chars] : whole.sections)
            summed += chars;
        QVERIFY(summed > 0);

        config.max_prompt_tokens = 3000;
        const MutationPrompt cut =
            LlmMutator(LlmMutator::Mode::Rewrite, config, cli::resources_dir() + "/prompts").buildPrompt(ctx);
        QVERIFY2(cut.system.size() + cut.user.size() <= 3000 * kCharsPerToken,
                 std::to_string(cut.system.size() + cut.user.size()).c_str());
        QVERIFY(!cut.over_limit);
        QVERIFY(cut.user.find("more measured programs left out to keep the prompt within max_prompt_tokens") !=
                std::string::npos);
        QVERIFY(cut.user.find(bundle.family->source) != std::string::npos);  // the parent, whole

        // The sections of the prompt as sent (what the inspector shows) add up to it.
        const std::string sent = "[system]\n" + cut.system + "\n\n[user]\n" + cut.user;
        const auto parts = mutation_prompt_sections(sent);
        QCOMPARE(parts.size(), size_t{5});
        size_t total = 0;
        for (const auto& [name, chars] : parts)
            total += chars;
        QCOMPARE(total, sent.size());
        QVERIFY(parts[3].second >= bundle.family->source.size());  // the parent's section holds its code
        QVERIFY(mutation_prompt_sections("[user]\nno headings here").empty());
    }

    void endpointFailureIsAFailedProposal() {
        const ProblemBundle bundle = load_problem_folder(cli::resources_dir() + "/problems/saxpy");
        LoopbackHttpServer server;
        server.setHandler([](const HttpRequestSeen&) { return HttpAnswer::json("{\"error\":\"overloaded\"}", 503); });
        LlmMutator mutator(LlmMutator::Mode::Rewrite, loopbackLlmConfig(server), cli::resources_dir() + "/prompts");
        std::set<std::string> seen;
        SplitMix rng(1);
        const auto proposals = mutator.propose(context(bundle, seen), 1, rng);
        QCOMPARE(proposals.size(), size_t(1));
        QVERIFY(!proposals[0].child);
        QVERIFY2(proposals[0].failure.find("503") != std::string::npos, proposals[0].failure.c_str());
    }

    void searchWithAnLlmMutatorRecordsWhatCameBack() {
        // On the replay device an LLM-written kernel is not recorded, so it is stored as not_recorded; unusable
        // answers are mutation_failed events; the run finishes either way.
        LoopbackHttpServer server;
        int n = 0;
        server.setHandler([&](const HttpRequestSeen&) {
            ++n;
            std::string reply = kRewrite;
            // Each good answer must be a new kernel: vary a comment.
            reply.insert(reply.find("extern"), "// variant " + std::to_string(n) + "\n");
            return HttpAnswer::json(chatCompletionBody(n % 2 ? reply : std::string("no code, sorry")));
        });
        QTemporaryDir dir;
        const std::string path = dir.filePath("run.sqlite").toStdString();
        SearchConfig c;
        c.problem_dir = cli::resources_dir() + "/problems/saxpy";
        c.device = "replay:nvidia-h200";
        c.surrogate = "none";
        c.gating.kind = GatingKind::MeasureAll;
        c.mutators = {"llm-rewrite"};
        c.budgets.measurements = 10;
        c.budgets.wall_s = 60;
        c.batch = 2;
        c.initial_family = 0;
        const LlmConfig llm = loopbackLlmConfig(server);
        c.llm = llm;
        const SearchSummary s = make_search_runner(c, cli::resources_dir(), path, false)->runHere();
        QCOMPARE(s.state, RunState::Finished);
        RunStore store = RunStore::open(path);
        int rewrites = 0, failed_events = 0;
        for (const auto& cand : store.candidates(s.run_id))
            if (cand.mutator == Mutator::LlmRewrite) {
                ++rewrites;
                const auto ms = store.measurementsFor(cand.id);
                QVERIFY(!ms.empty());
                QCOMPARE(ms.back().measurement.status, Status::NotRecorded);
            }
        for (const auto& e : store.events(s.run_id))
            failed_events += e.kind == "mutation_failed";
        QVERIFY(rewrites > 0);
        QVERIFY(failed_events > 0);
        QVERIFY(s.progress.tokens > 0);
    }
};

QTEST_GUILESS_MAIN(TestLlmMutators)
#include "tst_llm_mutators.moc"
