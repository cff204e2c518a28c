#include "common/rdb_compact.h"

#include <cstdint>

namespace basalt::rdb {

namespace {

uint64_t LoadLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

// Sign-extends the low `bits` bits of v.
int64_t SignExtend(uint64_t v, int bits) {
  return static_cast<int64_t>(v << (64 - bits)) >> (64 - bits);
}

// The size of a listpack entry's trailing back-length for an entry of `len` bytes.
size_t BacklenSize(size_t len) {
  if (len <= 127) return 1;
  if (len < 16383) return 2;
  if (len < 2097151) return 3;
  if (len < 268435455) return 4;
  return 5;
}

constexpr uint8_t kEnd = 0xff;
constexpr size_t kListpackHeader = 6;
constexpr uint16_t kListpackUnknownCount = 65535;
constexpr size_t kZiplistHeader = 10;
constexpr uint16_t kZiplistUnknownCount = 65535;

// Reads one listpack entry at p (before end): its value into *out, its encoded size (without
// the back-length) into *size.
bool ListpackEntry(const uint8_t* p, const uint8_t* end, std::string* out, size_t* size) {
  size_t avail = static_cast<size_t>(end - p);
  uint8_t b = p[0];
  uint64_t str_len = 0;
  size_t header = 0;
  if ((b & 0x80) == 0) {
    *out = std::to_string(b & 0x7f);
    *size = 1;
    return true;
  }
  if ((b & 0xc0) == 0x80) {
    str_len = b & 0x3f;
    header = 1;
  } else if ((b & 0xe0) == 0xc0) {
    if (avail < 2) return false;
    *out = std::to_string(SignExtend((static_cast<uint64_t>(b & 0x1f) << 8) | p[1], 13));
    *size = 2;
    return true;
  } else if ((b & 0xf0) == 0xe0) {
    if (avail < 2) return false;
    str_len = (static_cast<uint64_t>(b & 0x0f) << 8) | p[1];
    header = 2;
  } else if (b == 0xf0) {
    if (avail < 5) return false;
    str_len = LoadLe(p + 1, 4);
    header = 5;
  } else if (b >= 0xf1 && b <= 0xf4) {
    int width = b == 0xf1 ? 2 : b == 0xf2 ? 3 : b == 0xf3 ? 4 : 8;
    if (avail < static_cast<size_t>(1 + width)) return false;
    *out = std::to_string(SignExtend(LoadLe(p + 1, width), 8 * width));
    *size = 1 + width;
    return true;
  } else {
    return false;
  }
  if (str_len > avail - header) return false;
  out->assign(reinterpret_cast<const char*>(p + header), str_len);
  *size = header + str_len;
  return true;
}

}  // namespace

bool DecodeListpack(std::string_view lp, std::vector<std::string>* out) {
  if (lp.size() < kListpackHeader + 1) return false;
  const auto* base = reinterpret_cast<const uint8_t*>(lp.data());
  if (LoadLe(base, 4) != lp.size()) return false;
  uint64_t count = LoadLe(base + 4, 2);
  const uint8_t* end = base + lp.size() - 1;  // the terminator
  if (*end != kEnd) return false;
  const uint8_t* p = base + kListpackHeader;
  size_t first = out->size();
  while (p < end) {
    std::string value;
    size_t size;
    if (!ListpackEntry(p, end, &value, &size)) return false;
    size_t backlen = BacklenSize(size);
    if (backlen > static_cast<size_t>(end - p) - size) return false;
    p += size + backlen;
    out->push_back(std::move(value));
  }
  if (p != end) return false;
  return count == kListpackUnknownCount || count == out->size() - first;
}

bool DecodeZiplist(std::string_view zl, std::vector<std::string>* out) {
  if (zl.size() < kZiplistHeader + 1) return false;
  const auto* base = reinterpret_cast<const uint8_t*>(zl.data());
  if (LoadLe(base, 4) != zl.size()) return false;
  uint64_t tail = LoadLe(base + 4, 4);
  uint64_t count = LoadLe(base + 8, 2);
  const uint8_t* end = base + zl.size() - 1;
  if (*end != kEnd) return false;
  const uint8_t* p = base + kZiplistHeader;
  const uint8_t* last = p;
  size_t first = out->size();
  while (p < end) {
    last = p;
    size_t avail = static_cast<size_t>(end - p);
    size_t prevlen = p[0] < 254 ? 1 : 5;
    if (p[0] == 255 || avail < prevlen + 1) return false;
    p += prevlen;
    avail -= prevlen;
    uint8_t b = p[0];
    uint64_t str_len = 0;
    size_t header = 0;
    int width = 0;
    switch (b >> 6) {
      case 0:
        str_len = b & 0x3f;
        header = 1;
        break;
      case 1:
        if (avail < 2) return false;
        str_len = (static_cast<uint64_t>(b & 0x3f) << 8) | p[1];
        header = 2;
        break;
      case 2:
        if (b != 0x80 || avail < 5) return false;
        str_len = (static_cast<uint64_t>(p[1]) << 24) | (p[2] << 16) | (p[3] << 8) | p[4];
        header = 5;
        break;
      default:
        if (b == 0xc0)
          width = 2;
        else if (b == 0xd0)
          width = 4;
        else if (b == 0xe0)
          width = 8;
        else if (b == 0xf0)
          width = 3;
        else if (b == 0xfe)
          width = 1;
        else if (b >= 0xf1 && b <= 0xfd)
          width = 0;
        else
          return false;
        break;
    }
    if (header != 0) {
      if (str_len > avail - header) return false;
      out->emplace_back(reinterpret_cast<const char*>(p + header), str_len);
      p += header + str_len;
    } else if (width == 0) {
      out->push_back(std::to_string((b & 0x0f) - 1));
      p += 1;
    } else {
      if (avail < static_cast<size_t>(1 + width)) return false;
      out->push_back(std::to_string(SignExtend(LoadLe(p + 1, width), 8 * width)));
      p += 1 + width;
    }
  }
  // The header's tail offset must name the last entry, as Redis's integrity check demands.
  if (p != end || tail != static_cast<uint64_t>(last - base)) return false;
  return count == kZiplistUnknownCount || count == out->size() - first;
}

bool DecodeIntset(std::string_view is, std::vector<std::string>* out) {
  if (is.size() < 8) return false;
  const auto* base = reinterpret_cast<const uint8_t*>(is.data());
  uint64_t width = LoadLe(base, 4);
  uint64_t count = LoadLe(base + 4, 4);
  if (width != 2 && width != 4 && width != 8) return false;
  if (count == 0 || (is.size() - 8) / width != count || (is.size() - 8) % width != 0) return false;
  int64_t prev = 0;
  for (uint64_t i = 0; i < count; i++) {
    int64_t v = SignExtend(LoadLe(base + 8 + i * width, static_cast<int>(width)),
                           static_cast<int>(8 * width));
    if (i > 0 && v <= prev) return false;  // an intset is sorted and free of duplicates
    out->push_back(std::to_string(v));
    prev = v;
  }
  return true;
}

ListpackBuilder::ListpackBuilder() : buf_(kListpackHeader, '\0') {}

void ListpackBuilder::AppendBacklen(size_t start) {
  size_t len = buf_.size() - start;
  size_t n = BacklenSize(len);
  // The most significant 7-bit group comes first; every byte but the first has its top bit set.
  for (size_t i = n; i-- > 0;) {
    uint8_t b = static_cast<uint8_t>((len >> (7 * i)) & 0x7f);
    if (i != n - 1) b |= 0x80;
    buf_.push_back(static_cast<char>(b));
  }
  count_++;
}

void ListpackBuilder::AddInt(int64_t v) {
  size_t start = buf_.size();
  auto put_le = [this](uint64_t x, int bytes) {
    for (int i = 0; i < bytes; i++) buf_.push_back(static_cast<char>((x >> (8 * i)) & 0xff));
  };
  uint64_t u = static_cast<uint64_t>(v);
  if (v >= 0 && v <= 127) {
    buf_.push_back(static_cast<char>(v));
  } else if (v >= -4096 && v <= 4095) {
    buf_.push_back(static_cast<char>(0xc0 | ((u >> 8) & 0x1f)));
    buf_.push_back(static_cast<char>(u & 0xff));
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    buf_.push_back(static_cast<char>(0xf1));
    put_le(u, 2);
  } else if (v >= -(1 << 23) && v < (1 << 23)) {
    buf_.push_back(static_cast<char>(0xf2));
    put_le(u, 3);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    buf_.push_back(static_cast<char>(0xf3));
    put_le(u, 4);
  } else {
    buf_.push_back(static_cast<char>(0xf4));
    put_le(u, 8);
  }
  AppendBacklen(start);
}

void ListpackBuilder::AddString(std::string_view s) {
  size_t start = buf_.size();
  if (s.size() < 64) {
    buf_.push_back(static_cast<char>(0x80 | s.size()));
  } else if (s.size() < 4096) {
    buf_.push_back(static_cast<char>(0xe0 | (s.size() >> 8)));
    buf_.push_back(static_cast<char>(s.size() & 0xff));
  } else {
    buf_.push_back(static_cast<char>(0xf0));
    for (int i = 0; i < 4; i++) buf_.push_back(static_cast<char>((s.size() >> (8 * i)) & 0xff));
  }
  buf_.append(s);
  AppendBacklen(start);
}

std::string ListpackBuilder::Finish() {
  buf_.push_back(static_cast<char>(kEnd));
  uint64_t total = buf_.size();
  for (int i = 0; i < 4; i++) buf_[i] = static_cast<char>((total >> (8 * i)) & 0xff);
  uint64_t count = count_ < kListpackUnknownCount ? count_ : kListpackUnknownCount;
  for (int i = 0; i < 2; i++) buf_[4 + i] = static_cast<char>((count >> (8 * i)) & 0xff);
  return std::move(buf_);
}

}  // namespace basalt::rdb
