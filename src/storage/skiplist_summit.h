// Summit: one level of a skip list, copied into a sorted array of words, so that a search can
// start at that level instead of walking down to it from the head.
//
// A search of a list of a million entries takes about forty steps, each a comparison whose outcome
// the branch predictor cannot guess; about half of them are on the levels above the one a thousand
// nodes link into (docs/benchmarks.md, "The memtable skip list"). Those levels change little as the
// list grows: the Summit holds that level's nodes and, for each, eight bytes of its user key just
// past the prefix all of them share, and answers with a binary search over those words. Nodes whose
// words tie with the key's (keys of one collection or one naming scheme, when the level holds
// others too and the shared prefix is short) are told apart by their whole keys.
//
// A Summit is a snapshot. Nodes inserted after it was made are not in it, and a search that
// starts from its answer walks past them as it would past any node. Its nodes are never
// removed from the list (a memtable only grows), so its answer is always a node of the list
// that links into its level.
#pragma once

#include <rocksdb/slice.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace basalt::skiplist {

class Summit {
 public:
  // `nodes`: every node linking into `level`, in order, with their user keys; at least one.
  // The keys' bytes must outlive the Summit (a node's key never changes).
  Summit(int level, std::vector<const char*> nodes, std::vector<rocksdb::Slice> keys)
      : level_(level), nodes_(std::move(nodes)), keys_(std::move(keys)) {
    const rocksdb::Slice& first = keys_.front();
    const rocksdb::Slice& last = keys_.back();
    // Keys in order share whatever prefix the first and the last share.
    size_t shared = 0;
    size_t limit = std::min(first.size(), last.size());
    while (shared < limit && first[shared] == last[shared]) shared++;
    prefix_ = rocksdb::Slice(first.data(), shared);
    words_.reserve(keys_.size());
    for (const rocksdb::Slice& key : keys_) words_.push_back(WordAfterPrefix(key));
  }

  int level() const { return level_; }
  size_t size() const { return nodes_.size(); }

  // The last node whose user key sorts before `user_key`, or nullptr if none does.
  const char* LastBefore(const rocksdb::Slice& user_key) const {
    size_t common = std::min(user_key.size(), prefix_.size());
    int c = std::memcmp(user_key.data(), prefix_.data(), common);
    if (c > 0) return nodes_.back();
    // A key that sorts before the prefix, or is a shorter part of it, sorts before every node.
    if (c < 0 || user_key.size() < prefix_.size()) return nullptr;
    // How many words are below the key's: a binary search whose steps are conditional moves,
    // not branches (each comparison is a coin toss to a branch predictor). A smaller word is a
    // smaller key, and a larger word a larger one.
    uint64_t word = WordAfterPrefix(user_key);
    size_t below = CountBelow(word);
    if (below < words_.size() && words_[below] == word) {
      // The key ties with words_[below, end): those before it are found by their keys. Left to
      // the walk from the node before them instead, a search for `key:*` on a level where
      // `counter:*` shares only the first byte would walk over every `key:*` node of the level
      // (docs/benchmarks.md, "The memtable skip list").
      size_t end = word == UINT64_MAX ? words_.size() : CountBelow(word + 1);
      while (below < end) {
        size_t mid = below + (end - below) / 2;
        if (keys_[mid].compare(user_key) < 0) {
          below = mid + 1;
        } else {
          end = mid;
        }
      }
    }
    return below == 0 ? nullptr : nodes_[below - 1];
  }

 private:
  // How many words are below `word`.
  size_t CountBelow(uint64_t word) const {
    size_t base = 0;
    for (size_t n = words_.size(); n > 1; n -= n / 2) {
      base = words_[base + n / 2] < word ? base + n / 2 : base;
    }
    return base + (words_[base] < word ? 1 : 0);
  }

  // The eight bytes of `key` after the prefix, padded with zero bytes, as a big-endian number:
  // for keys with the prefix, a smaller word means a smaller key (a key that ends early pads
  // with the smallest byte, as bytewise order ranks a key before its extensions).
  uint64_t WordAfterPrefix(const rocksdb::Slice& key) const {
    unsigned char bytes[8] = {};
    if (key.size() > prefix_.size()) {
      std::memcpy(bytes, key.data() + prefix_.size(),
                  std::min<size_t>(8, key.size() - prefix_.size()));
    }
    uint64_t word = 0;
    for (unsigned char b : bytes) word = word << 8 | b;
    return word;
  }

  const int level_;
  const std::vector<const char*> nodes_;
  const std::vector<rocksdb::Slice> keys_;  // the nodes' user keys, in the nodes
  rocksdb::Slice prefix_;                   // in the first node's key
  std::vector<uint64_t> words_;
};

}  // namespace basalt::skiplist
