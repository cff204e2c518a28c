// TouchedKeys: the keys one unit of work (a Context) changed, for WATCH, blocked clients and
// client-side caching.
//
// Every write records its key, repeats included; the commit walks each distinct key once, and
// only while someone watches or waits. The keys' bytes share one buffer: a copy of its own was
// an allocation and a free for every key longer than a std::string holds inline (15 bytes,
// shorter than redis-benchmark's "key:000000123456"), ten of each per ten-key MSET.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace basalt {

class TouchedKeys {
 public:
  void Add(uint8_t pdb, std::string_view key) {
    entries_.push_back({pdb, bytes_.size(), key.size()});
    bytes_.append(key);
  }
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  // Forgets the keys. A buffer that a huge key grew is given back rather than kept.
  void clear() {
    entries_.clear();
    bytes_.clear();
    if (bytes_.capacity() > kKeptBytes) bytes_ = std::string();
  }
  // Calls fn(key) for each key recorded from the `first`-th on, in order, repeats included.
  template <typename Fn>
  void ForEachFrom(size_t first, Fn fn) const {
    for (size_t i = first; i < entries_.size(); i++) {
      fn(std::string_view(bytes_).substr(entries_[i].offset, entries_[i].size));
    }
  }
  // Whether pred(pdb, key) holds for a key recorded from the `first`-th on.
  template <typename Pred>
  bool AnyFrom(size_t first, Pred pred) const {
    for (size_t i = first; i < entries_.size(); i++) {
      const Entry& e = entries_[i];
      if (pred(e.pdb, std::string_view(bytes_).substr(e.offset, e.size))) return true;
    }
    return false;
  }
  // Calls fn(pdb, key) once for each distinct (pdb, key), in (pdb, key) order.
  template <typename Fn>
  void ForEachDistinct(Fn fn) const {
    std::vector<std::pair<uint8_t, std::string_view>> keys;
    keys.reserve(entries_.size());
    for (const Entry& e : entries_)
      keys.emplace_back(e.pdb, std::string_view(bytes_).substr(e.offset, e.size));
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (const auto& [pdb, key] : keys) fn(pdb, key);
  }

 private:
  static constexpr size_t kKeptBytes = 64 * 1024;
  struct Entry {
    uint8_t pdb;
    size_t offset, size;  // the key's bytes in bytes_
  };
  std::string bytes_;
  std::vector<Entry> entries_;
};

}  // namespace basalt
