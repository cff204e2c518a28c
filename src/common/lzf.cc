#include "common/lzf.h"

namespace basalt {

// Each control byte starts either a literal run (ctrl < 32: the next ctrl+1 bytes) or a back
// reference: a length in its top three bits (7 means "add the next byte"), plus two, copied from
// an offset whose high five bits are in ctrl and low eight bits in the following byte.
bool LzfDecompress(std::string_view in, size_t expected_len, std::string* out) {
  out->clear();
  out->resize(expected_len);
  auto* ip = reinterpret_cast<const unsigned char*>(in.data());
  const unsigned char* in_end = ip + in.size();
  char* op = out->data();
  char* const out_begin = op;
  char* const out_end = op + expected_len;
  while (ip < in_end) {
    unsigned ctrl = *ip++;
    if (ctrl < 32) {
      size_t run = ctrl + 1;
      if (static_cast<size_t>(in_end - ip) < run || static_cast<size_t>(out_end - op) < run)
        return false;
      for (size_t i = 0; i < run; i++) *op++ = static_cast<char>(*ip++);
      continue;
    }
    size_t len = ctrl >> 5;
    if (len == 7) {
      if (ip >= in_end) return false;
      len += *ip++;
    }
    len += 2;
    if (ip >= in_end) return false;
    size_t back = ((ctrl & 0x1f) << 8) + *ip++ + 1;
    if (static_cast<size_t>(op - out_begin) < back || static_cast<size_t>(out_end - op) < len)
      return false;
    // Byte by byte: the reference may overlap what it produces (a run of one repeated byte).
    const char* ref = op - back;
    for (size_t i = 0; i < len; i++) *op++ = *ref++;
  }
  return op == out_end;
}

}  // namespace basalt
