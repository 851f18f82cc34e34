#pragma once
// LLM mutators (ARCHITECTURE §3): a full rewrite of the parent kernel program, or SEARCH/REPLACE edits of it, asked of
// an OpenAI-compatible endpoint through LlmClient. The prompt shows the problem, the parent with its measured speedup
// and static report, and a few inspirations (elites and recent failures with their errors). An answer that does not
// parse, an edit whose SEARCH text is not in the parent, or a program whose launch plan does not parse becomes a
// Proposal with a failure, never an exception.

#include "engine/llm/llm_client.h"
#include "engine/search/mutators.h"

#include <memory>
#include <string>

namespace kerncast {

// Prompt sizes are estimated at this many characters per token (code and English).
inline constexpr size_t kCharsPerToken = 4;

// A mutation prompt and what it is made of: characters per section (instructions, problem, reference, parent,
// inspirations), for the inspector and the benchmark.
struct MutationPrompt {
    std::string system, user;
    std::vector<std::pair<std::string, size_t>> sections;
    bool over_limit = false;  // the parent alone is longer than max_prompt_tokens allows (never cut)
};

class LlmMutator : public CandidateMutator {
public:
    enum class Mode { Rewrite, Diff };
    // templates_dir holds mutate_system.txt, mutate_rewrite.txt and mutate_diff.txt.
    LlmMutator(Mode mode, LlmConfig config, std::string templates_dir);
    ~LlmMutator() override;

    Mutator kind() const override { return m_mode == Mode::Rewrite ? Mutator::LlmRewrite : Mutator::LlmDiff; }
    bool canExpand(const Candidate& candidate, const ProblemBundle& problem) const override;
    std::vector<Proposal> propose(const MutationContext& ctx, int count, SplitMix& rng) override;

    // The two prompt messages for a context (the system text, then the user text). A program already shown (the
    // parent's, or an inspiration's: family configurations share one) is named, not repeated; a prompt over
    // LlmConfig::max_prompt_tokens leaves out inspirations (the last first), then cuts the reference, each saying so.
    // After duplicate answers (ctx.duplicate_streak) the inspirations are shown in another order.
    MutationPrompt buildPrompt(const MutationContext& ctx) const;
    std::pair<std::string, std::string> renderPrompt(const MutationContext& ctx) const;
    LlmClient& client() { return *m_client; }

private:
    Mode m_mode;
    std::unique_ptr<LlmClient> m_client;
    std::string m_templates_dir;
};

// The parts of a mutation prompt as sent (the stored call's prompt), in characters, found by the headings of the
// shipped templates: problem, reference, parent and inspirations, the rest being instructions. Empty when the prompt
// lacks them (edited templates).
std::vector<std::pair<std::string, size_t>> mutation_prompt_sections(const std::string& prompt);

// Reads a kernel program from an answer: the last fenced code block (```cuda, ```cpp, ```c++ or ```), else nothing.
std::optional<std::string> extract_code_block(const std::string& reply);

// Applies SEARCH/REPLACE blocks
//   <<<<<<< SEARCH
//   old lines
//   =======
//   new lines
//   >>>>>>> REPLACE
// to text, each SEARCH text replaced once (its first occurrence). Throws kerncast::Error naming the block (1-based)
// whose SEARCH text is not found, or when the reply holds no block.
std::string apply_search_replace(const std::string& text, const std::string& reply);

// The child's tunable values: the parent's where the child declares the same tunable and the value is allowed,
// else the first allowed value; when that is not a valid configuration, the first valid one.
std::map<std::string, int64_t> inherit_tunables(const KernelProgram& child,
                                                const std::map<std::string, int64_t>& parent);

}  // namespace kerncast
