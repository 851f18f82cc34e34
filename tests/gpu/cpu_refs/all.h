#pragma once
// Every problem's fp64 CPU reference, by problem name. A problem folder without an entry here fails
// tst_problem_references, so each new problem brings its reference.

#include "tests/gpu/cpu_refs/argmax.h"
#include "tests/gpu/cpu_refs/attention.h"
#include "tests/gpu/cpu_refs/avgpool2d.h"
#include "tests/gpu/cpu_refs/batchnorm.h"
#include "tests/gpu/cpu_refs/bgemm_gelu.h"
#include "tests/gpu/cpu_refs/bmm.h"
#include "tests/gpu/cpu_refs/conv2d.h"
#include "tests/gpu/cpu_refs/cross_entropy.h"
#include "tests/gpu/cpu_refs/cumsum_reverse.h"
#include "tests/gpu/cpu_refs/depthwise_conv2d.h"
#include "tests/gpu/cpu_refs/diag_matmul.h"
#include "tests/gpu/cpu_refs/gelu.h"
#include "tests/gpu/cpu_refs/gemv.h"
#include "tests/gpu/cpu_refs/groupnorm.h"
#include "tests/gpu/cpu_refs/hgemm_tc.h"
#include "tests/gpu/cpu_refs/histogram.h"
#include "tests/gpu/cpu_refs/huber_loss.h"
#include "tests/gpu/cpu_refs/kl_div.h"
#include "tests/gpu/cpu_refs/layernorm.h"
#include "tests/gpu/cpu_refs/log_softmax.h"
#include "tests/gpu/cpu_refs/matmul_tb.h"
#include "tests/gpu/cpu_refs/maxpool2d.h"
#include "tests/gpu/cpu_refs/mean_reduce.h"
#include "tests/gpu/cpu_refs/min_reduce.h"
#include "tests/gpu/cpu_refs/mse_loss.h"
#include "tests/gpu/cpu_refs/prefix_sum.h"
#include "tests/gpu/cpu_refs/rmsnorm.h"
#include "tests/gpu/cpu_refs/row_sum.h"
#include "tests/gpu/cpu_refs/saxpy.h"
#include "tests/gpu/cpu_refs/sgemm.h"
#include "tests/gpu/cpu_refs/silu.h"
#include "tests/gpu/cpu_refs/softmax.h"
#include "tests/gpu/cpu_refs/softplus.h"
#include "tests/gpu/cpu_refs/stencil2d.h"
#include "tests/gpu/cpu_refs/transpose.h"

#include "core/expr.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

using CpuRefFn = std::function<std::map<std::string, std::vector<double>>(
    const std::map<std::string, std::vector<double>>& inputs, const kerncast::Bindings& sizes,
    const std::map<std::string, double>& scalars)>;

inline const std::map<std::string, CpuRefFn>& cpu_references() {
    static const std::map<std::string, CpuRefFn> refs = {
        {"argmax", cpu_argmax},
        {"avgpool2d", cpu_avgpool2d},
        {"batchnorm", cpu_batchnorm},
        {"bmm", cpu_bmm},
        {"conv2d", cpu_conv2d},
        {"cross_entropy", cpu_cross_entropy},
        {"cumsum_reverse", cpu_cumsum_reverse},
        {"depthwise_conv2d", cpu_depthwise_conv2d},
        {"diag_matmul", cpu_diag_matmul},
        {"gelu", cpu_gelu},
        {"gemv", cpu_gemv},
        {"groupnorm", cpu_groupnorm},
        {"attention", cpu_attention},
        {"attention_causal", cpu_attention_causal},
        {"bgemm_gelu", cpu_bgemm_gelu},
        {"hgemm_tc", cpu_hgemm_tc},
        {"histogram", cpu_histogram},
        {"huber_loss", cpu_huber_loss},
        {"kl_div", cpu_kl_div},
        {"layernorm", cpu_layernorm},
        {"log_softmax", cpu_log_softmax},
        {"matmul_tb", cpu_matmul_tb},
        {"maxpool2d", cpu_maxpool2d},
        {"mean_reduce", cpu_mean_reduce},
        {"min_reduce", cpu_min_reduce},
        {"mse_loss", cpu_mse_loss},
        {"prefix_sum", cpu_prefix_sum},
        {"rmsnorm", cpu_rmsnorm},
        {"row_sum", cpu_row_sum},
        {"saxpy", cpu_saxpy},
        {"sgemm", cpu_sgemm},
        {"silu", cpu_silu},
        {"softmax", cpu_softmax},
        {"softplus", cpu_softplus},
        {"stencil2d", cpu_stencil2d},
        {"transpose", cpu_transpose},
    };
    return refs;
}
