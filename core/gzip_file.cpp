#include "core/gzip_file.h"

#include "core/error.h"

#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace kerncast {

bool is_gzip(const std::string& bytes) {
    return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
           static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip(const std::string& bytes, const std::string& name, size_t max_bytes) {
    const SourceLocation where{name, 0};
    z_stream z{};
    // 16 + MAX_WBITS: a gzip header and trailer (its CRC and length are checked by zlib).
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        throw Error(where, "cannot start zlib's decompressor");
    struct End {
        z_stream* z;
        ~End() { inflateEnd(z); }
    } end{&z};
    std::string out;
    out.reserve(std::min(max_bytes, bytes.size() * 8));
    // Inputs over 4 GiB are given to zlib in pieces (avail_in is 32-bit).
    size_t fed = 0;
    auto feed = [&] {
        const size_t n = std::min<size_t>(bytes.size() - fed, 1u << 30);
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + fed));
        z.avail_in = static_cast<uInt>(n);
        fed += n;
    };
    char buf[1 << 16];
    for (;;) {
        if (z.avail_in == 0 && fed < bytes.size())
            feed();
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        const int rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, sizeof buf - z.avail_out);
        if (out.size() > max_bytes)
            throw Error(where, "decompresses to more than " + std::to_string(max_bytes >> 20) + " MiB");
        if (rc == Z_STREAM_END) {
            if (z.avail_in == 0 && fed < bytes.size())
                feed();
            // Another gzip member follows (as `cat a.gz b.gz` makes): go on with it, as gzip -d does.
            if (z.avail_in >= 2 && z.next_in[0] == 0x1f && z.next_in[1] == 0x8b) {
                if (inflateReset(&z) != Z_OK)
                    throw Error(where, "cannot restart zlib's decompressor");
                continue;
            }
            return out;
        }
        if (rc == Z_OK)
            continue;
        if (rc == Z_BUF_ERROR && z.avail_in == 0 && fed >= bytes.size())
            throw Error(where, "the gzip stream is truncated (it ends before its last block)");
        if (rc != Z_BUF_ERROR)
            throw Error(where, std::string("not a valid gzip stream: ") +
                                   (z.msg ? std::string(z.msg) : "zlib error " + std::to_string(rc)));
    }
}

std::string read_maybe_gzipped_file(const std::string& path, const std::string& what) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(SourceLocation{path, 0}, "cannot open " + what + " for reading");
    std::ostringstream bytes;
    bytes << in.rdbuf();
    std::string data = bytes.str();
    if (!is_gzip(data))
        return data;
    return gunzip(data, path);
}

}  // namespace kerncast
