#include "storage/reclaimer.h"

#include <glog/logging.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace basalt {

void Reclaimer::Start(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf) {
  Stop();
  std::lock_guard<std::mutex> lock(mu_);
  db_ = db;
  cf_ = cf;
  running_ = true;
  thread_ = std::thread([this] { Run(); });
}

void Reclaimer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!running_) return;
    running_ = false;
    pending_.clear();
  }
  cv_.notify_all();
  thread_.join();
}

void Reclaimer::Note(std::string begin, std::string end) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_) return;
  auto it = pending_.find(begin);
  if (it != pending_.end()) {
    // Pops from one end note ranges with one begin that grow: keep the widest.
    it->second = std::max(it->second, end);
  } else if (pending_.size() < kMaxRanges) {
    pending_.emplace(std::move(begin), std::move(end));
  }
  cv_.notify_one();
}

namespace {

// The union of `ranges`, as ranges that neither overlap nor touch. Pops at a list's right end
// note [tail, end) for each tail they pass: counted apart, those ranges would count a file's
// bytes up to once per note, and a file a tenth dead would be rewritten again and again
// (docs/benchmarks.md, "Storage upkeep").
std::map<std::string, std::string> Union(const std::map<std::string, std::string>& ranges) {
  std::map<std::string, std::string> out;
  for (const auto& [begin, end] : ranges) {
    if (!out.empty() && begin <= out.rbegin()->second) {
      out.rbegin()->second = std::max(out.rbegin()->second, end);
    } else {
      out.emplace_hint(out.end(), begin, end);
    }
  }
  return out;
}

}  // namespace

void Reclaimer::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return !running_ || !pending_.empty(); });
    // A range is noted before its write commits, and the compaction filter judges by the
    // committed metadata: the pass waits for the write, and gathers the notes that follow.
    cv_.wait_for(lock, kPassInterval, [this] { return !running_; });
    if (!running_) return;
    Ranges ranges;
    ranges.swap(pending_);
    lock.unlock();
    Pass(Union(ranges));
    passes_.fetch_add(1, std::memory_order_release);
    lock.lock();
  }
}

bool Reclaimer::MostlyDead(const rocksdb::SstFileMetaData& file, const Ranges& ranges) const {
  uint64_t dead_bytes = 0;
  for (const auto& [begin, end] : ranges) {
    if (end <= file.smallestkey || begin > file.largestkey) continue;
    if (begin <= file.smallestkey && end > file.largestkey) return true;
    // The part of the range inside the file's keys. The estimate counts the other levels' files
    // over those keys too: an overestimate costs a compaction that drops less than hoped.
    rocksdb::Slice from = std::max(begin, file.smallestkey);
    rocksdb::Slice to = std::min(end, file.largestkey);
    rocksdb::Range range(from, to);
    uint64_t size = 0;
    rocksdb::SizeApproximationOptions options;
    options.include_files = true;
    options.files_size_error_margin = 0.1;
    if (db_->GetApproximateSizes(options, cf_, &range, 1, &size).ok()) dead_bytes += size;
  }
  return dead_bytes * 10 >= file.size * kDeadTenths;
}

void Reclaimer::Pass(const Ranges& ranges) {
  rocksdb::ColumnFamilyMetaData meta;
  db_->GetColumnFamilyMetaData(cf_, &meta);
  uint64_t base_level = 1;
  db_->GetIntProperty(cf_, rocksdb::DB::Properties::kBaseLevel, &base_level);
  for (const rocksdb::LevelMetaData& level : meta.levels) {
    std::vector<std::string> inputs;
    for (const rocksdb::SstFileMetaData& file : level.files) {
      if (!file.being_compacted && MostlyDead(file, ranges))
        inputs.push_back(file.relative_filename);
    }
    if (inputs.empty()) continue;
    rocksdb::CompactionOptions options;
    options.compression = rocksdb::kDisableCompressionOption;  // the family's own compression
    // Files of level 0 go where RocksDB's own compactions of level 0 put them; RocksDB adds the
    // files they overlap there (and any older level 0 files they overlap) to the inputs.
    int output = level.level == 0 ? static_cast<int>(base_level) : level.level;
    rocksdb::Status s = db_->CompactFiles(options, cf_, inputs, output);
    if (s.ok()) {
      files_compacted_.fetch_add(inputs.size(), std::memory_order_relaxed);
      LOG(INFO) << "reclaimer: compacted " << inputs.size() << " file(s) of level " << level.level
                << " holding mostly dead entries";
    } else {
      // A file that another compaction took meanwhile: its entries are judged there.
      LOG(INFO) << "reclaimer: compaction of level " << level.level << " skipped: " << s.ToString();
    }
  }
}

}  // namespace basalt
