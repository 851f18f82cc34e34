#include "engine/gpu/verifier.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

namespace kerncast {

namespace {

std::string num(double v) {
    if (std::isnan(v))
        return "nan";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

bool all_equal(const std::vector<double>& v) {
    for (size_t i = 1; i < v.size(); ++i)
        if (!(v[i] == v[0]))
            return false;
    return true;
}

}  // namespace

double poison_value(DType dtype) {
    switch (dtype) {
    case DType::I32:
        return -1;
    case DType::U8:
        return 255;
    default:
        return std::bit_cast<double>(~uint64_t{0});
    }
}

bool is_poison(double v, DType dtype) {
    if (is_integer(dtype))
        return v == poison_value(dtype);
    // 0xFF bytes widened from any float type: sign set, exponent all ones, at least the top 7 mantissa bits set
    // (bf16 has 7). Arithmetic NaNs on the GPU are positive, so they never match.
    return (std::bit_cast<uint64_t>(v) >> 45) == 0x7FFFF;
}

VerifyResult Verifier::compareOutput(const std::string& name, DType dtype, const std::vector<double>& got,
                                     const std::vector<double>& expected) const {
    VerifyResult r;
    const std::string what = "output " + name;
    if (got.size() != expected.size()) {
        r.ok = false;
        r.reason = what + ": " + std::to_string(got.size()) + " elements but the reference has " +
                   std::to_string(expected.size());
        return r;
    }
    const size_t n = got.size();
    const std::string of_n = " of " + std::to_string(n) + " elements";

    size_t unwritten = 0, first_unwritten = 0;
    size_t nonfinite = 0, first_nonfinite = 0;
    size_t ref_nonfinite = 0, first_ref_nonfinite = 0;
    double sum_sq = 0;
    size_t finite_ref = 0;
    for (size_t i = 0; i < n; ++i) {
        const double a = got[i], b = expected[i];
        if (!std::isfinite(b)) {
            if (ref_nonfinite++ == 0)
                first_ref_nonfinite = i;
        } else {
            sum_sq += b * b;
            ++finite_ref;
        }
        if (is_poison(a, dtype) && !is_poison(b, dtype)) {
            if (unwritten++ == 0)
                first_unwritten = i;
        } else if (!std::isfinite(a)) {
            if (nonfinite++ == 0)
                first_nonfinite = i;
        }
    }
    if (unwritten) {
        r.ok = false;
        r.reason = what + ": " + std::to_string(unwritten) + of_n +
                   " not written (they still hold the poison pattern); first at index " +
                   std::to_string(first_unwritten);
        return r;
    }
    if (nonfinite) {
        r.ok = false;
        r.reason = what + ": " + std::to_string(nonfinite) + of_n + " are not finite; first at index " +
                   std::to_string(first_nonfinite) + ": " + num(got[first_nonfinite]);
        return r;
    }
    if (ref_nonfinite) {
        r.ok = false;
        r.reason = "the reference's " + what + " has " + std::to_string(ref_nonfinite) + of_n +
                   " that are not finite (first at index " + std::to_string(first_ref_nonfinite) +
                   "); the problem's inputs or reference need fixing";
        return r;
    }
    if (n > 1 && all_equal(got) && !all_equal(expected)) {
        r.ok = false;
        r.reason = what + " is constant (every element " + num(got[0]) + ") but the reference's is not";
        return r;
    }

    const double rms = finite_ref ? std::sqrt(sum_sq / static_cast<double>(finite_ref)) : 0;
    const double atol = m_tolerance.scale_atol_by_rms ? m_tolerance.atol * rms : m_tolerance.atol;
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < n; ++i) {
        const double a = got[i], b = expected[i];
        const double diff = std::abs(a - b);
        r.max_abs = std::max(r.max_abs, diff);
        if (b != 0)
            r.max_rel = std::max(r.max_rel, diff / std::abs(b));
        if (diff > atol + m_tolerance.rtol * std::abs(b)) {
            if (bad++ == 0)
                first_bad = i;
        }
    }
    if (bad) {
        r.ok = false;
        const double b = expected[first_bad];
        r.reason = what + ": " + std::to_string(bad) + of_n + " differ; first at index " + std::to_string(first_bad) +
                   ": " + num(got[first_bad]) + " vs " + num(b) + " (tolerance " +
                   num(atol + m_tolerance.rtol * std::abs(b)) + ")";
    }
    return r;
}

VerifyResult Verifier::checkUnchanged(const std::string& name, const std::vector<double>& before,
                                      const std::vector<double>& after) const {
    VerifyResult r;
    if (before.size() != after.size()) {
        r.ok = false;
        r.reason = "input " + name + " changed size";
        return r;
    }
    size_t changed = 0, first = 0;
    for (size_t i = 0; i < before.size(); ++i) {
        // Bitwise, so that an input overwritten with NaN counts as changed.
        if (std::bit_cast<uint64_t>(before[i]) != std::bit_cast<uint64_t>(after[i])) {
            if (changed++ == 0)
                first = i;
        }
    }
    if (changed) {
        r.ok = false;
        r.reason = "input " + name + " was modified: " + std::to_string(changed) + " of " +
                   std::to_string(before.size()) + " elements changed; first at index " + std::to_string(first) + ": " +
                   num(before[first]) + " became " + num(after[first]) +
                   " (an input must stay unchanged unless its role is inout)";
    }
    return r;
}

VerifyResult Verifier::verify(const Problem& problem, const BufferValues& candidate, const BufferValues& expected,
                              const BufferValues& inputs_before) const {
    VerifyResult total;
    auto find = [](const BufferValues& m, const std::string& name) -> const std::vector<double>* {
        const auto it = m.find(name);
        return it == m.end() ? nullptr : &it->second;
    };
    for (const BufferSpec& b : problem.buffers) {
        const std::vector<double>* got = find(candidate, b.name);
        if (!got) {
            total.ok = false;
            total.reason = "buffer " + b.name + " was not copied back";
            return total;
        }
        VerifyResult r;
        if (b.role == Role::In) {
            const std::vector<double>* before = find(inputs_before, b.name);
            if (!before)
                continue;
            r = checkUnchanged(b.name, *before, *got);
        } else {
            const std::vector<double>* want = find(expected, b.name);
            if (!want) {
                total.ok = false;
                total.reason = "the reference's " + b.name + " is missing";
                return total;
            }
            r = compareOutput(b.name, b.dtype, *got, *want);
            total.max_abs = std::max(total.max_abs, r.max_abs);
            total.max_rel = std::max(total.max_rel, r.max_rel);
        }
        if (!r.ok && total.ok) {
            total.ok = false;
            total.reason = r.reason;
        }
    }
    return total;
}

}  // namespace kerncast
