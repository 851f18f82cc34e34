#include "engine/atomic_file.h"

#include "core/error.h"

#include <filesystem>
#include <fstream>

namespace kerncast {

void write_file_atomically(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".partial";
    std::error_code ec;
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f << text;
        f.flush();
        if (!f) {
            std::filesystem::remove(tmp, ec);
            throw Error(SourceLocation{path, 0}, "cannot write the file (disk full, no permission or no such folder)");
        }
    }
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        throw Error(SourceLocation{path, 0}, "cannot replace the file: " + ec.message());
    }
}

}  // namespace kerncast
