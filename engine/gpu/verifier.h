#pragma once
// Decides whether a candidate's outputs match the reference's (ARCHITECTURE §5 "Correctness"). Pure CPU logic over
// buffers already copied back as doubles, so every rule is unit-tested without a GPU.
//
// Poison: before every verified run the worker fills outputs (and scratch) with 0xFF bytes. For the float types
// that is a negative quiet NaN with every payload bit set (f32 0xFFFFFFFF, f64 0xFFFFFFFFFFFFFFFF, f16/bf16
// 0xFFFF), a value no arithmetic produces (the GPU's own NaNs are positive, 0x7FFFFFFF), so an element still
// holding it was not written. For integer outputs 0xFF bytes read as -1 (i32) or 255 (u8); those are ordinary
// values, so an unwritten integer element is only noticed where the reference's value differs from them.

#include "core/problem.h"

#include <map>
#include <string>
#include <vector>

namespace kerncast {

// Every buffer of a problem after a run, by name, as doubles (integers exactly, f16/bf16 widened exactly).
using BufferValues = std::map<std::string, std::vector<double>>;

struct VerifyResult {
    bool ok = true;
    std::string
        reason;  // e.g. "output y: 37 of 4099 elements differ; first at index 12: 1.5 vs 2.25 (tolerance 1e-05)"
    double max_abs = 0;  // over checked output elements that are finite in both
    double max_rel = 0;  // |a - b| / |b| where b != 0
};

// The value the poison bytes read as, for a dtype (NaN for float types).
double poison_value(DType dtype);
// True when v holds the poison pattern of this dtype (as widened to double by the worker).
bool is_poison(double v, DType dtype);

class Verifier {
public:
    explicit Verifier(Tolerance tolerance) : m_tolerance(tolerance) {}

    // One output (role out or inout): every element written, finite, within tolerance; not constant when the
    // reference is not.
    VerifyResult compareOutput(const std::string& name, DType dtype, const std::vector<double>& got,
                               const std::vector<double>& expected) const;
    // One input (role in): bit-for-bit unchanged.
    VerifyResult checkUnchanged(const std::string& name, const std::vector<double>& before,
                                const std::vector<double>& after) const;
    // Every buffer of the problem: outputs and inouts of `candidate` against `expected` (the reference's run on the
    // same inputs), inputs of `candidate` against `inputs_before`. The first failure is the reason; max_abs and
    // max_rel cover every output.
    VerifyResult verify(const Problem& problem, const BufferValues& candidate, const BufferValues& expected,
                        const BufferValues& inputs_before) const;

private:
    Tolerance m_tolerance;
};

}  // namespace kerncast
