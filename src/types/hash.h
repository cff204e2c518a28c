// Hash field values: inline in the field's `subkey` entry, or, when large, in `large_value`.
//
// Each field is one `subkey` entry (under the hash's collection prefix) whose value starts with
// a tag byte:
//
//   'i' | value        the value, inline
//   'x' | length(8)    a stub: the value is in `large_value` under the same key
//
// Values of at least kLargeFieldValue bytes go to `large_value`, a column family with blob files:
// the value lands in a blob file, and the field entry that HEXISTS, HSTRLEN, HKEYS and HSCAN
// iterate stays a few bytes, so those commands never read a blob (RocksDB's iterators load a
// blob value as soon as they step on its key, even when only the key is wanted). HLEN reads the
// metadata only. Both entries share the collection prefix, so DEL, expiry and FLUSHDB reclaim
// them together (SubkeyFilter runs on both families).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "types/collection.h"
#include "types/set.h"

namespace basalt {

// The default rocksdb.min-blob-size: values this large are separated from their field entry.
constexpr uint64_t kLargeFieldValue = 4096;

// A decoded field entry. For an inline value `inline_value` points into the entry's bytes.
struct FieldEntry {
  bool external = false;
  uint64_t length = 0;
  std::string_view inline_value;
};
// False when the bytes are not a field entry.
bool DecodeFieldEntry(std::string_view stored, FieldEntry* out);

// The stored entry of `field` (through the Context's batch). NotFound when absent.
Status GetFieldEntry(Context& ctx, int db, std::string_view key, uint64_t version,
                     std::string_view field, std::string* stored);
// The value an entry stands for: the inline bytes, or the value read from `large_value`.
Status ResolveFieldValue(Context& ctx, int db, std::string_view key, uint64_t version,
                         std::string_view field, std::string_view stored, std::string* value);
// The value of `field`. NotFound when absent.
Status GetFieldValue(Context& ctx, int db, std::string_view key, uint64_t version,
                     std::string_view field, std::string* value);

// Visits every field of the hash `meta` in field order, with its value when `with_values` (else
// an empty value, and no large value is read), until `visit` returns false. Holds one value at
// a time, so replies over huge hashes can be built without a copy of the whole hash.
Status ForEachField(
    Context& ctx, int db, std::string_view key, const Metadata& meta, bool with_values,
    const std::function<bool(std::string_view field, std::string_view value)>& visit);

// Every field of the hash `meta`, in field order, with its value when `with_values` (else
// Member::value is empty and no large value is read).
StatusOr<std::vector<Member>> ReadFields(Context& ctx, int db, std::string_view key,
                                         const Metadata& meta, bool with_values);

// Builds the next state of one hash with one metadata write (see CollectionWriter), keeping the
// two column families in step.
class HashWriter {
 public:
  HashWriter(Context& ctx, int db, std::string_view key, const KeyState& old);
  uint64_t version() const { return writer_.version(); }
  // The current entry of `field` as this writer sees it. NotFound when absent.
  Status Find(std::string_view field, std::string* stored);
  // Sets `field`; `old_stored` is its current entry, or nullptr if it is absent.
  void Put(std::string_view field, std::string_view value, const std::string* old_stored);
  // Removes `field`, whose current entry is `old_stored`.
  void Remove(std::string_view field, std::string_view old_stored);
  void Finish() { writer_.Finish(); }

 private:
  void DropLargeValue(std::string_view field, std::string_view old_stored);

  Context& ctx_;
  int db_;
  std::string key_;
  CollectionWriter writer_;
};

}  // namespace basalt
