#include "engine/search/llm_mutators.h"
#include "core/text_util.h"

#include "core/error.h"
#include "core/kernel_program.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace kerncast {

namespace {

std::string read_template(const std::string& dir, const std::string& name) {
    return read_text_file(dir + "/" + name, "the prompt template");
}

void replace_all(std::string& text, const std::string& key, const std::string& value) {
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
        text.replace(at, key.size(), value);
}

std::string report_text(const std::vector<StaticReport>& report) {
    std::string out;
    for (const auto& r : report) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "%s: %d registers, %d B static shared, %d B spilled, %d B stack\n",
                      r.kernel.c_str(), r.registers, r.shared_bytes, r.spill_store_bytes + r.spill_load_bytes,
                      r.stack_bytes);
        out += buf;
    }
    return out.empty() ? "(not available)\n" : out;
}

std::string example_text(const MutationExample& e) {
    std::string t;
    for (const auto& [k, v] : e.candidate.tunables)
        t += " " + k + "=" + std::to_string(v);
    char head[160];
    if (e.speedup > 0)
        std::snprintf(head, sizeof head, "measured speedup %.3fx over the reference", e.speedup);
    else
        std::snprintf(head, sizeof head, "FAILED");
    std::string out = std::string("### ") + e.candidate.label + " (" + head + ")\n";
    if (!t.empty())
        out += "tunable values:" + t + "\n";
    if (!e.failure.empty())
        out += "failure: " + e.failure.substr(0, 800) + (e.failure.size() > 800 ? "\n(cut)" : "") + "\n";
    out += "static report:\n" + report_text(e.static_report);
    out += "```cuda\n" + e.candidate.source +
           (e.candidate.source.empty() || e.candidate.source.back() == '\n' ? "" : "\n") + "```\n";
    return out;
}

}  // namespace

std::vector<std::pair<std::string, size_t>> mutation_prompt_sections(const std::string& prompt) {
    const char* headings[] = {"# Problem: ", "# Reference kernel program", "# Parent to improve",
                              "# Other measured programs"};
    std::vector<size_t> at;
    for (const char* h : headings) {
        const size_t pos = prompt.find(h, at.empty() ? 0 : at.back());
        if (pos == std::string::npos)
            return {};
        at.push_back(pos);
    }
    // The inspirations end where the closing instructions begin: the last paragraph.
    size_t end = prompt.rfind("\n\n");
    if (end == std::string::npos || end < at[3])
        end = prompt.size();
    const size_t problem = at[1] - at[0], reference = at[2] - at[1], parent = at[3] - at[2], inspirations = end - at[3];
    return {{"instructions", prompt.size() - problem - reference - parent - inspirations},
            {"problem", problem},
            {"reference", reference},
            {"parent", parent},
            {"inspirations", inspirations}};
}

std::optional<std::string> extract_code_block(const std::string& reply) {
    std::optional<std::string> last;
    size_t pos = 0;
    while (true) {
        const size_t open = reply.find("```", pos);
        if (open == std::string::npos)
            break;
        const size_t line_end = reply.find('\n', open);
        if (line_end == std::string::npos)
            break;
        const size_t close = reply.find("```", line_end + 1);
        if (close == std::string::npos)
            break;
        last = reply.substr(line_end + 1, close - line_end - 1);
        pos = close + 3;
    }
    return last;
}

std::string apply_search_replace(const std::string& text, const std::string& reply) {
    static const std::string kSearch = "<<<<<<< SEARCH\n", kSep = "\n=======\n", kEnd = "\n>>>>>>> REPLACE";
    std::string out = text;
    size_t pos = 0;
    int block = 0;
    while (true) {
        const size_t s = reply.find(kSearch, pos);
        if (s == std::string::npos)
            break;
        ++block;
        const size_t sep = reply.find(kSep, s + kSearch.size());
        // An empty replacement puts the separator right before the end marker.
        size_t end = sep == std::string::npos ? std::string::npos : reply.find(kEnd, sep + 1);
        if (sep == std::string::npos || end == std::string::npos)
            throw Error("edit block " + std::to_string(block) +
                        " is not closed (expected ======= and >>>>>>> REPLACE)");
        const std::string old_text = reply.substr(s + kSearch.size(), sep - s - kSearch.size());
        const size_t new_start = sep + kSep.size();
        const std::string new_text = end > new_start ? reply.substr(new_start, end - new_start) : std::string();
        const size_t at = out.find(old_text);
        if (old_text.empty() || at == std::string::npos)
            throw Error("edit block " + std::to_string(block) + ": its SEARCH text is not in the parent kernel");
        out.replace(at, old_text.size(), new_text);
        pos = end + kEnd.size();
    }
    if (block == 0)
        throw Error("the reply holds no SEARCH/REPLACE block");
    return out;
}

std::map<std::string, int64_t> inherit_tunables(const KernelProgram& child,
                                                const std::map<std::string, int64_t>& parent) {
    std::map<std::string, int64_t> out;
    for (const auto& t : child.tunables) {
        auto it = parent.find(t.name);
        const bool allowed =
            it != parent.end() && std::find(t.values.begin(), t.values.end(), it->second) != t.values.end();
        out[t.name] = allowed ? it->second : (t.values.empty() ? 0 : t.values.front());
    }
    if (!child.tunables.empty() && !child.isValid(out)) {
        auto configs = child.configurations(1);
        if (!configs.empty())
            out = configs.front();
    }
    return out;
}

LlmMutator::LlmMutator(Mode mode, LlmConfig config, std::string templates_dir)
    : m_mode(mode), m_client(std::make_unique<LlmClient>(std::move(config))),
      m_templates_dir(std::move(templates_dir)) {}

LlmMutator::~LlmMutator() = default;

bool LlmMutator::canExpand(const Candidate& candidate, const ProblemBundle&) const { return !candidate.source.empty(); }

namespace {

// A text cut to `limit` characters at a line end, saying how much it left out.
std::string cut_text(const std::string& text, size_t limit, const char* what) {
    if (text.size() <= limit)
        return text;
    size_t at = text.rfind('\n', limit);
    if (at == std::string::npos || at < limit / 2)
        at = limit;
    return text.substr(0, at) + "\n... (" + std::to_string(text.size() - at) + " more characters of the " + what +
           " cut to keep the prompt within max_prompt_tokens)\n";
}

}  // namespace

MutationPrompt LlmMutator::buildPrompt(const MutationContext& ctx) const {
    const std::string system_template = read_template(m_templates_dir, "mutate_system.txt");
    const std::string user_template =
        read_template(m_templates_dir, m_mode == Mode::Rewrite ? "mutate_rewrite.txt" : "mutate_diff.txt");
    const Problem& p = ctx.problem->problem;
    // A question asked again after duplicate answers shows other inspirations first.
    std::vector<const MutationExample*> order;
    for (const auto& e : ctx.inspirations)
        order.push_back(&e);
    if (!order.empty() && ctx.duplicate_streak > 0)
        std::rotate(order.begin(), order.begin() + ctx.duplicate_streak % static_cast<int>(order.size()), order.end());
    // A program shown once is not shown again: family configurations differ only in their tunable values.
    std::vector<std::string> shown_examples;
    std::map<std::string, std::string> shown_sources = {{ctx.parent.candidate.source, "the parent"}};
    for (const MutationExample* e : order) {
        if (auto same = shown_sources.find(e->candidate.source); same != shown_sources.end()) {
            MutationExample brief = *e;
            brief.candidate.source.clear();
            std::string text = example_text(brief);
            const size_t code = text.rfind("```cuda\n");
            text = text.substr(0, code) + "(the same program as " + same->second + ", with these tunable values)\n";
            shown_examples.push_back(text);
        } else {
            shown_sources.emplace(e->candidate.source, e->candidate.label);
            shown_examples.push_back(example_text(*e));
        }
    }
    MutationPrompt out;
    std::string reference = ctx.problem->reference.source;
    const std::string parent = example_text(ctx.parent);
    const auto render = [&](size_t examples) {
        std::string inspirations;
        for (size_t i = 0; i < examples; ++i)
            inspirations += shown_examples[i] + "\n";
        if (examples < shown_examples.size())
            inspirations += "(" + std::to_string(shown_examples.size() - examples) +
                            " more measured programs left out to keep the prompt within max_prompt_tokens)\n";
        std::string system = system_template, user = user_template;
        for (std::string* t : {&system, &user}) {
            replace_all(*t, "{{problem_name}}", p.name);
            replace_all(*t, "{{problem}}", p.description);
            replace_all(*t, "{{problem_json}}", p.json_text);
            replace_all(*t, "{{reference_code}}", reference);
            replace_all(*t, "{{parent}}", parent);
            replace_all(*t, "{{parent_code}}", ctx.parent.candidate.source);
            replace_all(*t, "{{inspirations}}", inspirations.empty() ? "(none yet)\n" : inspirations);
        }
        out.system = std::move(system);
        out.user = std::move(user);
        out.sections = {{"instructions", system_template.size() + user_template.size()},
                        {"problem", p.description.size() + p.json_text.size()},
                        {"reference", reference.size()},
                        {"parent", parent.size()},
                        {"inspirations", inspirations.size()}};
        return out.system.size() + out.user.size();
    };
    const size_t limit = m_client->config().max_prompt_tokens > 0
                             ? static_cast<size_t>(m_client->config().max_prompt_tokens) * kCharsPerToken
                             : std::numeric_limits<size_t>::max();
    size_t examples = shown_examples.size();
    size_t size = render(examples);
    // Over the limit: the inspirations go first (the last shown first), then the reference is cut. The parent is
    // never cut: an edit must quote it.
    while (size > limit && examples > 0)
        size = render(--examples);
    if (size > limit) {
        const size_t over = size - limit;
        reference = cut_text(reference, reference.size() > over + 200 ? reference.size() - over : 200, "reference");
        size = render(examples);
    }
    out.over_limit = size > limit;
    return out;
}

std::pair<std::string, std::string> LlmMutator::renderPrompt(const MutationContext& ctx) const {
    MutationPrompt prompt = buildPrompt(ctx);
    return {std::move(prompt.system), std::move(prompt.user)};
}

std::vector<Proposal> LlmMutator::propose(const MutationContext& ctx, int count, SplitMix& rng) {
    (void)rng;
    std::vector<Proposal> out;
    if (count <= 0)
        return out;
    const auto [system, user] = renderPrompt(ctx);
    std::vector<ChatRequest> requests;
    for (int i = 0; i < count; ++i) {
        ChatRequest r;
        r.messages = {{"system", system}, {"user", user}};
        // Each proposal for a parent is a new sample: asking again never returns the cached answer to an earlier
        // question (a certain duplicate), while the same request of a resumed run still comes from the cache.
        r.sample_index = ctx.asked_before + i;
        if (ctx.duplicate_streak > 0)
            r.temperature = std::min(2.0, m_client->config().temperature + 0.2 * ctx.duplicate_streak);
        requests.push_back(std::move(r));
    }
    const std::vector<ChatResult> results = m_client->complete(requests);
    for (const ChatResult& r : results) {
        Proposal p;
        p.raw_reply = r.content;
        LlmCall call =
            llm_call_from(r, m_mode == Mode::Rewrite ? "mutate_rewrite" : "mutate_diff", m_client->config().model);
        if (r.from_cache) {
            // Paid for when it was first received: an answer from the cache spends nothing again.
            call.tokens_in = call.tokens_out = 0;
            call.cost_usd = 0;
        }
        p.tokens_in = call.tokens_in;
        p.tokens_out = call.tokens_out;
        p.cost_usd = call.cost_usd;
        try {
            if (r.truncated)
                throw Error(r.error);
            if (!r.ok)
                throw Error("the endpoint failed: " + r.error);
            std::string source;
            if (m_mode == Mode::Rewrite) {
                auto code = extract_code_block(r.content);
                if (!code)
                    throw Error("reply did not parse: no fenced code block with the kernel program");
                source = *code;
            } else {
                source = apply_search_replace(ctx.parent.candidate.source, r.content);
            }
            KernelProgram program = KernelProgram::parse(source, "candidate.cu");
            program.validate(ctx.problem->problem);
            Candidate c;
            c.mutator = kind();
            c.source = source;
            c.tunables = inherit_tunables(program, ctx.parent.candidate.tunables);
            c.label = m_mode == Mode::Rewrite ? "llm rewrite" : "llm edit";
            c.parent_id = ctx.parent.candidate.id;
            c.generation = ctx.generation;
            c.source_hash = content_hash(c.source, c.tunables);
            p.child = std::move(c);
        } catch (const Error& e) {
            p.failure = e.what();
            call.outcome = r.truncated ? "truncated" : "failed";
            call.error = p.failure;
        }
        p.call = std::move(call);
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace kerncast
