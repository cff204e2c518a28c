// LZF decompression (Marc Lehmann's format), which Redis uses for compressed strings in RDB
// files and DUMP payloads (rdbcompression yes, the default, compresses strings over 20 bytes).
//
// The input is untrusted (a payload a client sent): every literal run and back reference is
// checked against the input and the expected output, so a hostile stream fails cleanly.
#pragma once

#include <string>
#include <string_view>

namespace basalt {

// Decompresses `in` into exactly `expected_len` bytes; false if the stream is malformed or does
// not produce exactly that many bytes.
bool LzfDecompress(std::string_view in, size_t expected_len, std::string* out);

}  // namespace basalt
