#include "commands/server_state.h"

namespace basalt {

uint64_t ScanCursors::Issue(std::string resume_key) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t cursor = next_cursor_++;
  if (order_.size() < kMaxCursors) {
    order_.push_back(cursor);
  } else {
    cursors_.erase(order_[next_slot_]);
    order_[next_slot_] = cursor;
    next_slot_ = (next_slot_ + 1) % kMaxCursors;
  }
  cursors_[cursor] = std::move(resume_key);
  return cursor;
}

bool ScanCursors::Lookup(uint64_t cursor, std::string* resume_key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cursors_.find(cursor);
  if (it == cursors_.end()) return false;
  *resume_key = it->second;
  return true;
}

}  // namespace basalt
