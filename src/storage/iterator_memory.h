// IteratorMemory: where the skip-list memtable's iterators live when RocksDB asks for them with
// an arena (skiplist_memtable.cc).
//
// Such iterators are destroyed by a bare destructor call, never freed, and the memtable cannot
// allocate from RocksDB's Arena (its header is not public). So their memory is recycled: a
// destructor hands it to its thread's list, and only that thread reuses it, after the destructor
// has returned. A thread keeps at most kKept blocks; one more is freed by the thread's next
// hand-over, when the destructor that handed it over is certainly finished. Every block is of
// one size, the iterator's: Take() hands a kept block out whatever size it is asked for.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace basalt::skiplist {

class IteratorMemory {
 public:
  static constexpr size_t kKept = 64;

  ~IteratorMemory() {
    for (void* block : free_) ::operator delete(block);
    ::operator delete(excess_);
  }

  void* Take(size_t size) {
    if (free_.empty()) return ::operator new(size);
    void* block = free_.back();
    free_.pop_back();
    return block;
  }

  void Give(void* block) {
    ::operator delete(excess_);
    excess_ = nullptr;
    if (free_.size() < kKept) {
      free_.push_back(block);
    } else {
      excess_ = block;
    }
  }

  static IteratorMemory& ForThisThread() {
    thread_local IteratorMemory memory;
    return memory;
  }

 private:
  std::vector<void*> free_;
  void* excess_ = nullptr;
};

}  // namespace basalt::skiplist
