#pragma once
// Files that may be gzip-compressed (the autotuning benchmark hub ships its Kernel Tuner caches and T4 results as
// .json.gz): read whole, decompressed with zlib when they start with gzip's magic bytes, as is otherwise.

#include <cstddef>
#include <string>

namespace kerncast {

// True when the bytes start with gzip's magic number (1f 8b).
bool is_gzip(const std::string& bytes);
// The decompressed bytes of a gzip stream (several members are concatenated, as gzip -d does). Throws
// kerncast::Error "<name>: ..." for a damaged or truncated stream, or one that decompresses to more than
// max_bytes.
std::string gunzip(const std::string& bytes, const std::string& name, size_t max_bytes = size_t{1} << 30);
// The file's text: decompressed when it is gzip (whatever its name), else as read. Throws kerncast::Error when it
// cannot be opened or does not decompress.
std::string read_maybe_gzipped_file(const std::string& path, const std::string& what = "the file");

}  // namespace kerncast
