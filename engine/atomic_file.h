#pragma once
// Writing a file so that a reader never sees half of it: the text goes to <path>.partial beside the target, which is
// renamed over it only when every byte was written. A full disk leaves the old file (or none) in place.

#include <string>

namespace kerncast {

// Throws kerncast::Error naming the file when it cannot be written (disk full, no permission, missing folder).
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace kerncast
