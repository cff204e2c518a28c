#include "types/member_filter.h"

#include <algorithm>
#include <new>
#include <utility>

#include "common/hash.h"

namespace basalt {

namespace {

constexpr int kInitialSlotsLog2 = 4;

}  // namespace

MemberFilter::Table::Table(size_t size)
    : slots_(static_cast<uint32_t*>(std::calloc(size, sizeof(uint32_t)))), size_(size) {
  if (slots_ == nullptr) throw std::bad_alloc();
}

MemberFilter::MemberFilter()
    : slots_(size_t{1} << kInitialSlotsLog2), shift_(32 - kInitialSlotsLog2) {}

size_t MemberFilter::Find(const Table& table, int shift, uint32_t fp) {
  const size_t mask = table.size() - 1;
  size_t i = fp >> shift;
  while (table[i] != 0 && table[i] != fp) i = (i + 1) & mask;
  return i;
}

bool MemberFilter::Add(uint64_t hash, size_t max_bytes) {
  const uint32_t fp = Fingerprint(hash);
  if (saturated_) return false;
  bool resized = false;
  if (!old_.empty()) {
    MoveSome(kMovesPerAdd);
    resized = old_.empty();
  }
  if ((count_ + 1) * 2 > slots_.size()) {
    MoveSome(old_.size());  // never two old tables
    if (bytes() + 2 * slots_.size() * sizeof(uint32_t) > max_bytes || shift_ <= 1) {
      saturated_ = true;
      slots_ = {};
      old_ = {};
      return true;
    }
    old_ = std::exchange(slots_, Table(slots_.size() * 2));
    moved_ = 0;
    shift_--;
    resized = true;
  }
  uint32_t& slot = slots_[Find(slots_, shift_, fp)];
  if (slot == 0) {
    slot = fp;  // possibly also still in old_, which is harmless
    count_++;
  }
  return resized;
}

bool MemberFilter::MayContain(uint64_t hash) const {
  if (saturated_) return true;
  const uint32_t fp = Fingerprint(hash);
  if (slots_[Find(slots_, shift_, fp)] != 0) return true;
  return !old_.empty() && old_[Find(old_, shift_ + 1, fp)] != 0;
}

void MemberFilter::MoveSome(size_t slots) {
  const size_t end = std::min(old_.size(), moved_ + slots);
  for (; moved_ < end; moved_++) {
    const uint32_t fp = old_[moved_];
    if (fp != 0) slots_[Find(slots_, shift_, fp)] = fp;
  }
  if (moved_ == old_.size()) {
    old_ = {};
    moved_ = 0;
  }
}

void MemberFilters::SetBudget(size_t budget_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  budget_ = budget_bytes;
  max_filter_bytes_.store(budget_bytes / 4, std::memory_order_relaxed);
  DropOverBudget();
}

std::shared_ptr<MemberFilter> MemberFilters::Start(uint64_t version) {
  auto filter = std::make_shared<MemberFilter>();
  std::lock_guard<std::mutex> lock(mu_);
  if (budget_ == 0) return nullptr;
  auto [it, inserted] = entries_.try_emplace(version);
  if (!inserted) return nullptr;  // versions are never reused; if one were, trust neither
  it->second.filter = filter;
  it->second.bytes = filter->bytes();
  it->second.clock_slot = clock_.size();
  clock_.push_back(version);
  bytes_ += it->second.bytes;
  any_.store(true, std::memory_order_relaxed);
  DropOverBudget();
  return filter;
}

std::shared_ptr<MemberFilter> MemberFilters::Find(uint64_t version) {
  if (!any_.load(std::memory_order_relaxed)) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(version);
  if (it == entries_.end()) return nullptr;
  it->second.used = true;
  return it->second.filter;
}

void MemberFilters::Resized(uint64_t version, const MemberFilter& filter) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(version);
  if (it == entries_.end() || it->second.filter.get() != &filter) return;  // dropped meanwhile
  if (filter.saturated()) return Drop(it);
  bytes_ = bytes_ - it->second.bytes + filter.bytes();
  it->second.bytes = filter.bytes();
  DropOverBudget();
}

void MemberFilters::Clear() {
  if (!any_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [version, entry] : entries_)
    dropped_absent_answers_ += entry.filter->absent_answers();
  entries_.clear();
  clock_.clear();
  hand_ = 0;
  bytes_ = 0;
  any_.store(false, std::memory_order_relaxed);
}

MemberFilters::Stats MemberFilters::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats out{entries_.size(), bytes_, dropped_absent_answers_};
  for (const auto& [version, entry] : entries_)
    out.absent_answers += entry.filter->absent_answers();
  return out;
}

void MemberFilters::DropOverBudget() {
  while (bytes_ > budget_ && !clock_.empty()) {
    if (hand_ >= clock_.size()) hand_ = 0;
    auto it = entries_.find(clock_[hand_]);
    if (it->second.used) {
      it->second.used = false;
      hand_++;
    } else {
      Drop(it);  // the last version moves into the hand's place, which is looked at next
    }
  }
}

void MemberFilters::Drop(std::unordered_map<uint64_t, Entry>::iterator it) {
  const size_t slot = it->second.clock_slot;
  clock_[slot] = clock_.back();
  entries_[clock_[slot]].clock_slot = slot;
  clock_.pop_back();
  bytes_ -= it->second.bytes;
  dropped_absent_answers_ += it->second.filter->absent_answers();
  entries_.erase(it);
  if (entries_.empty()) any_.store(false, std::memory_order_relaxed);
}

MemberFilter* MemberFilterRef::filter() const {
  if (!resolved_) {
    filter_ = new_incarnation_ ? filters_->Start(version_) : filters_->Find(version_);
    resolved_ = true;
  }
  return filter_.get();
}

bool MemberFilterRef::MayHold(std::string_view member) const {
  MemberFilter* f = filter();
  if (f == nullptr || f->MayContain(HashBytes(member))) return true;
  f->NoteAbsentAnswer();
  return false;
}

void MemberFilterRef::Note(std::string_view member) {
  MemberFilter* f = filter();
  if (f != nullptr && f->Add(HashBytes(member), filters_->max_filter_bytes())) {
    filters_->Resized(version_, *f);
  }
}

}  // namespace basalt
