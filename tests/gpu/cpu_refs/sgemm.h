#pragma once
// fp64 CPU reference of resources/problems/sgemm: C (M x N) = A (M x K) * B (K x N), row-major.

#include "core/expr.h"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

// Shared by sgemm and hgemm_tc (their inputs arrive as doubles either way). i-k-j order keeps B's rows streaming.
inline std::vector<double> cpu_matmul_rowmajor(const std::vector<double>& A, const std::vector<double>& B, size_t M,
                                               size_t N, size_t K) {
    std::vector<double> C(M * N, 0.0);
    for (size_t i = 0; i < M; ++i) {
        double* c = C.data() + i * N;
        for (size_t k = 0; k < K; ++k) {
            const double a = A[i * K + k];
            const double* b = B.data() + k * N;
            for (size_t j = 0; j < N; ++j)
                c[j] += a * b[j];
        }
    }
    return C;
}

inline std::map<std::string, std::vector<double>> cpu_sgemm(const std::map<std::string, std::vector<double>>& in,
                                                            const kerncast::Bindings& sizes,
                                                            const std::map<std::string, double>& /*scalars*/) {
    const auto M = static_cast<size_t>(sizes.at("M"));
    const auto N = static_cast<size_t>(sizes.at("N"));
    const auto K = static_cast<size_t>(sizes.at("K"));
    return {{"C", cpu_matmul_rowmajor(in.at("A"), in.at("B"), M, N, K)}};
}
