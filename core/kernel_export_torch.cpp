#include "core/kernel_export.h"

namespace kerncast {

std::vector<ExportedFile> export_torch(const Problem& problem, const KernelProgram& program, const Bindings& tunables,
                                       KernelExportOptions options) {
    if (problem.pytorch.empty())
        throw Error(problem.file + ": the problem has no \"pytorch\" expression, so the torch format has nothing to "
                                   "take its inputs and outputs from; export --format cuda instead");
    return export_cuda(problem, program, tunables, options);
}

}  // namespace kerncast
