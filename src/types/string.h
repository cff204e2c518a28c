// Strings: the inline and segmented layouts, and the reads and writes the string and bitmap
// commands make on them.
//
// A value of at most kInlineStringMax bytes lives in its metadata entry. A longer one is
// segmented: the metadata holds a version, the length and the segment size, and the bytes live
// in `subkey` under the key's prefix, one entry per segment:
//
//   subkey key : db | len | key | version | segment index(4)  ->  up to (1 << shift) bytes
//
// Bytes that no segment holds (a missing segment, or the tail of a segment stored shorter than
// the segment size) read as zeros. So SETBIT at a large offset writes one segment, not the zeros
// before it; SETBIT, SETRANGE and APPEND rewrite only the segments they touch; and what needs
// only the type, expiry or length (TYPE, TTL, EXISTS, STRLEN, DEL) reads a small metadata entry
// that never lands in a blob file. A whole-value write (SET) takes a new version, so the old
// segments become stale at once and the subkey compaction filter reclaims them, as for
// collections.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "common/status.h"
#include "types/keyspace.h"

namespace basalt {

// Inline limit: with the 9-byte header the metadata value stays below the default
// min-blob-size (4096), so it is never moved to a blob file.
constexpr uint64_t kInlineStringMax = 4000;
// Whole values (SET and friends) are cut into 64 KiB segments: few entries per value, each large
// enough to be separated into blob files.
constexpr uint8_t kWholeValueSegmentShift = 16;
// Strings that grow by edits (SETBIT, SETRANGE, APPEND, BITFIELD) use 4 KiB segments, so each
// edit rewrites little.
constexpr uint8_t kEditSegmentShift = 12;

// The value's length in bytes (the metadata must be a string's).
uint64_t StringLength(const Metadata& meta);

// Stores `value` as the whole new value of `key`, replacing `old` (of any type).
void PutString(Context& ctx, int db, std::string_view key, std::string_view value,
               int64_t expire_ms, const KeyState& old, StringEncoding encoding);

// The whole value of the string `meta` stored at `key`.
Status ReadString(Context& ctx, int db, std::string_view key, const Metadata& meta,
                  std::string* out);

// Bytes [begin, end) of the value, clipped to its length, zeros where nothing is stored.
Status ReadStringRange(Context& ctx, int db, std::string_view key, const Metadata& meta,
                       uint64_t begin, uint64_t end, std::string* out);

// Calls visit(offset, bytes) for each stored piece of [begin, end) in offset order, clipped to
// the range and the length; bytes of the range that are not delivered are zeros. The visitor
// returns false to stop. Lets BITCOUNT and BITPOS walk a sparse bitmap without materializing
// its zeros.
using StringPieceVisitor = std::function<bool(uint64_t offset, std::string_view bytes)>;
Status VisitStringRange(Context& ctx, int db, std::string_view key, const Metadata& meta,
                        uint64_t begin, uint64_t end, const StringPieceVisitor& visit);

// Edits byte ranges of one string with a single metadata write, touching only the segments
// involved. Creates the string if `old` is not live (the caller has checked that a live `old`
// is a string). Reads see the editor's earlier writes. A string edited past kInlineStringMax
// becomes segmented.
class StringEditor {
 public:
  StringEditor(Context& ctx, int db, std::string_view key, const KeyState& old);

  uint64_t length() const { return meta_.segmented ? meta_.size : meta_.value.size(); }
  // Bytes [offset, offset + n), clipped to the length.
  Status Read(uint64_t offset, uint64_t n, std::string* out);
  // Overwrites [offset, offset + bytes.size()), growing the string with zeros as needed.
  Status Write(uint64_t offset, std::string_view bytes);
  // Grows the string with zeros to at least `length` bytes.
  void Grow(uint64_t length);
  // Whether a Write or Grow changed the value since the last Finish.
  bool changed() const { return changed_; }
  // Writes the changed segments and the metadata, keeping the expiry. Nothing if unchanged.
  void Finish(StringEncoding encoding);

 private:
  Status LoadSegment(uint32_t index, std::string** out);
  void ConvertToSegmented();

  Context& ctx_;
  int db_;
  std::string key_;
  KeyState old_;
  Metadata meta_;
  std::map<uint32_t, std::string> segments_;  // loaded (maybe edited) segments
  std::set<uint32_t> dirty_;
  bool changed_ = false;
};

}  // namespace basalt
