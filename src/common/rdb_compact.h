// Decoders for the compact containers Redis embeds in RDB payloads as strings: listpacks,
// ziplists and intsets. Each returns the container's entries as strings (integers in decimal),
// in order. ListpackBuilder writes listpacks (streams travel only as listpacks).
//
// The input is untrusted (a RESTORE payload): every header field, entry length and count is
// checked against the bytes actually present, and any inconsistency (a length running past the
// end, a missing terminator, a count that disagrees with the entries, an unsorted intset) makes
// the decoder return false. Nothing is allocated from a claimed size before it is checked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace basalt::rdb {

bool DecodeListpack(std::string_view lp, std::vector<std::string>* out);
bool DecodeZiplist(std::string_view zl, std::vector<std::string>* out);
bool DecodeIntset(std::string_view is, std::vector<std::string>* out);

// Builds one listpack: integers in their smallest encoding, strings as strings.
class ListpackBuilder {
 public:
  ListpackBuilder();
  void AddInt(int64_t v);
  void AddString(std::string_view s);
  // The finished listpack (header filled in, terminator appended); the builder is spent.
  std::string Finish();

 private:
  // Appends the entry's back-length, the size of the entry that starts at `start`.
  void AppendBacklen(size_t start);
  std::string buf_;
  uint64_t count_ = 0;
};

}  // namespace basalt::rdb
