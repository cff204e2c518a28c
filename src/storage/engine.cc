#include "storage/engine.h"

#include <glog/logging.h>
#include <rocksdb/advanced_cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/listener.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "common/clock.h"
#include "common/coding.h"
#include "storage/info_logger.h"
#include "storage/options.h"
#include "storage/skiplist_memtable.h"

namespace basalt {

const char* ColumnFamilyName(ColumnFamily cf) {
  static const char* kNames[] = {"default",   "metadata", "subkey",   "zset_score", "pubsub",
                                 "propagate", "expire",   "counters", "large_value"};
  return kNames[static_cast<int>(cf)];
}

bool IsVersioned(ColumnFamily cf) {
  return cf == ColumnFamily::kSubkey || cf == ColumnFamily::kZsetScore ||
         cf == ColumnFamily::kLargeValue;
}

namespace {

Durability ParseDurability(const std::string& v) {
  if (v == "sync") return Durability::kSync;
  if (v == "nosync") return Durability::kNoSync;
  return Durability::kLazy;
}

// The families whose writes WarmMemtables walks toward first (and whose inserts start where the
// walks left off): `metadata`, `subkey` and `zset_score`, the ones written at random places
// (a random key, a member among a million). Warming `subkey` puts too, which an existence check
// read just before, gives 10-19% more pipelined HSETs and SADDs, for 7-9% more instructions:
// the walks overlap their cache misses (docs/benchmarks.md, "The memtable skip list").
bool IsWarmed(ColumnFamily cf) {
  return cf == ColumnFamily::kMetadata || cf == ColumnFamily::kSubkey ||
         cf == ColumnFamily::kZsetScore;
}

bool IsBlobColumnFamily(int i) {
  return i == static_cast<int>(ColumnFamily::kMetadata) ||
         i == static_cast<int>(ColumnFamily::kSubkey) ||
         i == static_cast<int>(ColumnFamily::kLargeValue);
}

}  // namespace

// One pass over a batch before its write gathers what the engine does around the write: the
// keys it inserts into each column family's memtable (by RocksDB's column family id), in the
// batch's order (the order RocksDB inserts them in), for WarmMemtables; and its `metadata`
// writes, for the metadata cache once the write is done. Both point into the batch, which the
// write does not move. (Two passes, one for each, cost 4-8% of a pipelined push.)
class BatchRecords : public rocksdb::WriteBatch::Handler {
 public:
  // What a `metadata` write does to the cache's entry for its key.
  enum class Change { kPut, kDelete, kInvalidate, kClearAll };
  struct MetadataWrite {
    Change change;
    rocksdb::Slice key;
    rocksdb::Slice value;  // kPut's
  };

  // Forgets the last batch's records, for one of a database with `families` column families.
  void Reset(size_t families, uint32_t metadata_cf) {
    keys_.resize(families);
    for (auto& keys : keys_) keys.clear();
    metadata_.clear();
    metadata_cf_ = metadata_cf;
  }
  const std::vector<rocksdb::Slice>& keys(size_t cf) const { return keys_[cf]; }
  const std::vector<MetadataWrite>& metadata() const { return metadata_; }

  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    return Add(cf, key, Change::kPut, value);
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    return Add(cf, key, Change::kDelete);
  }
  rocksdb::Status SingleDeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    return Add(cf, key, Change::kDelete);
  }
  rocksdb::Status MergeCF(uint32_t cf, const rocksdb::Slice& key, const rocksdb::Slice&) override {
    return Add(cf, key, Change::kInvalidate);
  }
  rocksdb::Status PutBlobIndexCF(uint32_t cf, const rocksdb::Slice& key,
                                 const rocksdb::Slice&) override {
    return Add(cf, key, Change::kInvalidate);
  }
  rocksdb::Status DeleteRangeCF(uint32_t cf, const rocksdb::Slice&,
                                const rocksdb::Slice&) override {
    // Range deletions have a table of their own: nothing to warm.
    if (cf == metadata_cf_) metadata_.push_back({Change::kClearAll, {}, {}});
    return rocksdb::Status::OK();
  }

 private:
  rocksdb::Status Add(uint32_t cf, const rocksdb::Slice& key, Change change,
                      const rocksdb::Slice& value = {}) {
    if (cf < keys_.size()) keys_[cf].push_back(key);
    if (cf == metadata_cf_) metadata_.push_back({change, key, value});
    return rocksdb::Status::OK();
  }

  std::vector<std::vector<rocksdb::Slice>> keys_;  // by column family id
  std::vector<MetadataWrite> metadata_;
  uint32_t metadata_cf_ = 0;
};

// Forwards RocksDB's background-error events to the engine. Soft errors (a failed compaction)
// leave writes working and are not reported; hard ones stop writes until recovery.
class StorageErrorListener : public rocksdb::EventListener {
 public:
  explicit StorageErrorListener(Engine* engine) : engine_(engine) {}
  void OnBackgroundError(rocksdb::BackgroundErrorReason, rocksdb::Status* error) override {
    if (error->severity() >= rocksdb::Status::Severity::kHardError)
      engine_->NoteStorageError(*error);
  }
  void OnErrorRecoveryEnd(const rocksdb::BackgroundErrorRecoveryInfo& info) override {
    if (info.new_bg_error.ok()) engine_->NoteRecovered();
  }

 private:
  Engine* engine_;
};

StatusOr<std::unique_ptr<Engine>> Engine::Open(Config* config, const ColumnFamilyHooks& hooks) {
  std::unique_ptr<Engine> engine(new Engine());
  // Without a trailing slash, so that SiblingPath() names a sibling and not a child.
  engine->path_ = std::filesystem::path(config->GetString("dir")).lexically_normal().string();
  while (engine->path_.size() > 1 && engine->path_.back() == '/') engine->path_.pop_back();
  engine->config_ = config;
  engine->hooks_ = hooks;
  engine->durability_ = ParseDurability(config->GetString("durability"));
  Status s = engine->RecoverInterruptedSwap();
  if (!s.ok()) return s;
  // Sized before the open, which marks it complete when the database is empty.
  engine->metadata_cache_.SetCapacity(config->GetInt("metadata-cache-size"));
  s = engine->OpenDb();
  if (!s.ok()) return s;

  Engine* raw = engine.get();
  config->AddApplyHook("rocksdb.", [raw](const std::string& name, const std::string& value) {
    return raw->ApplyLiveOption(name, value);
  });
  config->AddApplyHook("metadata-cache-size", [raw](const std::string&, const std::string& value) {
    raw->metadata_cache_.SetCapacity(std::stoull(value));
    return Status::OK();
  });
  config->AddApplyHook("durability", [raw](const std::string&, const std::string& value) {
    raw->durability_ = ParseDurability(value);
    // A reply in sync mode says the data it stands on is on disk: that includes what earlier,
    // lazier writes left, which a write that changes nothing (and so puts nothing) relies on.
    if (raw->durability_ == Durability::kSync) {
      rocksdb::Status s = raw->db_->SyncWAL();
      if (!s.ok()) return Status::IOError("WAL sync on switching to sync: " + s.ToString());
    }
    return Status::OK();
  });
  return engine;
}

Status Engine::OpenDb() {
  EngineOptions options = BuildEngineOptions(*config_, hooks_);
  options.db.info_log = InfoLogger::Open(path_);
  options.db.listeners.push_back(std::make_shared<StorageErrorListener>(this));
  statistics_ = options.db.statistics;
  block_cache_ = options.block_cache;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::Status s = rocksdb::DB::Open(options.db, path_, options.column_families, &handles, &db_);
  if (!s.ok()) {
    db_ = nullptr;
    return Status::IOError("can't open RocksDB at '" + path_ + "': " + s.ToString());
  }
  for (size_t i = 0; i < handles.size(); i++) handles_[i] = handles[i];
  warmed_families_.clear();
  for (size_t i = 0; i < handles.size(); i++) {
    memtables_[i] = std::dynamic_pointer_cast<SkipListMemTableFactory>(
        options.column_families[i].options.memtable_factory);
    if (!IsWarmed(static_cast<ColumnFamily>(i))) continue;
    uint32_t id = handles[i]->GetID();
    if (warmed_families_.size() <= id) warmed_families_.resize(id + 1);
    warmed_families_[id] = memtables_[i];
  }
  metadata_cache_.Reset();  // sequence numbers of a replaced database start elsewhere
  CompleteMetadataCacheIfEmpty();
  blob_gc_.Reset(config_->GetBool("rocksdb.enable-blob-gc"),
                 config_->GetDouble("rocksdb.blob-gc-garbage-ratio"));
  subkey_reclaimer_.Start(db_, cf(ColumnFamily::kSubkey));
  score_reclaimer_.Start(db_, cf(ColumnFamily::kZsetScore));
  ready_.store(true, std::memory_order_release);
  closing_ = false;
  lazy_sync_thread_ = std::thread([this] { LazySyncLoop(); });
  return Status::OK();
}

std::string Engine::SiblingPath(const std::string& suffix) const {
  return path_ + suffix;
}

namespace {

bool HoldsDatabase(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::exists(dir / "CURRENT", ec);
}

Status SyncDirectory(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return Status::IOError("can't open " + dir.string() + ": " + strerror(errno));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Status::IOError("can't fsync " + dir.string() + ": " + strerror(errno));
  return Status::OK();
}

Status RenamePath(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::error_code ec;
  std::filesystem::rename(from, to, ec);
  if (ec) return Status::IOError("can't rename " + from.string() + ": " + ec.message());
  return Status::OK();
}

}  // namespace

// ReplaceData() moves the current data to "<dir>.replaced", moves the new data to "<dir>" and
// then deletes "<dir>.replaced". If "<dir>.replaced" exists at start-up, a crash interrupted
// that: the swap completed if "<dir>" holds a database, otherwise the old data goes back.
Status Engine::RecoverInterruptedSwap() {
  std::filesystem::path dir(path_), old(SiblingPath(".replaced"));
  std::error_code ec;
  if (!std::filesystem::exists(old, ec)) return Status::OK();
  if (HoldsDatabase(dir)) {
    LOG(WARNING) << "removing " << old << " left by an interrupted data swap";
    std::filesystem::remove_all(old, ec);
    return Status::OK();
  }
  LOG(WARNING) << "restoring " << old << ": a data swap was interrupted before it completed";
  std::filesystem::remove_all(dir, ec);
  return RenamePath(old, dir);
}

Engine::LongSnapshot::~LongSnapshot() {
  engine_->db_->ReleaseSnapshot(snapshot_);
  std::lock_guard<std::mutex> lock(engine_->long_mu_);
  if (--engine_->long_snapshots_ == 0) engine_->long_cv_.notify_all();
}

StatusOr<std::unique_ptr<Engine::LongSnapshot>> Engine::AcquireLongSnapshot() {
  std::lock_guard<std::mutex> lock(long_mu_);
  if (replacing_.load()) return Status::Busy("the data is being replaced by a full sync");
  long_snapshots_++;
  return std::unique_ptr<LongSnapshot>(new LongSnapshot(this, db_->GetSnapshot()));
}

Status Engine::ReplaceData(const std::string& source_dir) {
  {
    std::unique_lock<std::mutex> lock(long_mu_);
    replacing_ = true;
    long_cv_.wait(lock, [this] { return long_snapshots_ == 0; });
  }
  Status s = SwapData(source_dir);
  std::lock_guard<std::mutex> lock(long_mu_);
  replacing_ = false;
  return s;
}

Status Engine::SwapData(const std::string& source_dir) {
  if (!HoldsDatabase(source_dir))
    return Status::InvalidArgument(source_dir + " does not hold a RocksDB database");
  std::filesystem::path dir(path_), old(SiblingPath(".replaced")),
      parent = std::filesystem::absolute(dir).parent_path();
  std::error_code ec;
  std::filesystem::remove_all(old, ec);
  Close();
  Status s = RenamePath(dir, old);
  if (s.ok()) s = RenamePath(source_dir, dir);
  if (s.ok()) s = SyncDirectory(parent);
  if (s.ok()) s = OpenDb();
  if (s.ok()) {
    std::filesystem::remove_all(old, ec);
    return Status::OK();
  }
  LOG(ERROR) << "replacing the data failed (" << s.message() << "); putting the old data back";
  if (db_ != nullptr) Close();
  if (std::filesystem::exists(old, ec)) {
    std::filesystem::remove_all(dir, ec);
    Status back = RenamePath(old, dir);
    if (!back.ok()) LOG(ERROR) << back.message();
  }
  Status reopened = OpenDb();
  if (!reopened.ok()) LOG(FATAL) << "can't reopen the old data: " << reopened.message();
  return s;
}

uint64_t Engine::WaitForSequenceAbove(uint64_t seq, std::chrono::milliseconds timeout) {
  uint64_t latest = LatestSequence();
  if (latest > seq) return latest;
  seq_waiters_.fetch_add(1);
  {
    std::unique_lock<std::mutex> lock(seq_mu_);
    seq_cv_.wait_for(lock, timeout, [&] { return LatestSequence() > seq; });
  }
  seq_waiters_.fetch_sub(1);
  return LatestSequence();
}

int64_t Engine::CommitTimeOf(uint64_t seq) {
  std::lock_guard<std::mutex> lock(clock_mu_);
  size_t n = std::min(commit_sample_count_, kCommitSamples);
  if (n == 0) return UnixMillis();
  // Samples are in ring order, oldest at (count - n); binary search the first with seq >= `seq`.
  size_t lo = 0, hi = n;
  size_t base = commit_sample_count_ - n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (commit_samples_[(base + mid) % kCommitSamples].first >= seq) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  if (lo == n) return UnixMillis();
  return commit_samples_[(base + lo) % kCommitSamples].second;
}

void Engine::NotifyWriters() {
  int64_t now = UnixMillis();
  if (now - last_commit_sample_ms_.load(std::memory_order_relaxed) >= 10) {
    std::lock_guard<std::mutex> lock(clock_mu_);
    if (now - last_commit_sample_ms_.load(std::memory_order_relaxed) >= 10) {
      last_commit_sample_ms_ = now;
      commit_samples_[commit_sample_count_++ % kCommitSamples] = {LatestSequence(), now};
    }
  }
  // Pairs with the waiter's increment before it re-checks the sequence under the mutex.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (seq_waiters_.load() == 0) return;
  std::lock_guard<std::mutex> lock(seq_mu_);
  seq_cv_.notify_all();
}

Engine::~Engine() {
  Close();
}

Status Engine::ApplyLiveOption(const std::string& name, const std::string& value) {
  if (name == "rocksdb.block-cache-size") {
    block_cache_->SetCapacity(std::stoull(value));
    return Status::OK();
  }
  bool is_db_option = false;
  std::string opt_name, opt_value;
  if (!MapLiveOption(name, value, &is_db_option, &opt_name, &opt_value)) {
    return Status::InvalidArgument("option can't be changed while running");
  }
  if (opt_name.empty()) return Status::OK();  // read by the background thread each second
  if (is_db_option) {
    rocksdb::Status s = db_->SetDBOptions({{opt_name, opt_value}});
    return s.ok() ? Status::OK() : Status::InvalidArgument(s.ToString());
  }
  bool blob_option = opt_name.find("blob") != std::string::npos;
  bool bloom_option = name == "rocksdb.memtable-prefix-bloom-ratio";
  bool write_buffer_option = name == "rocksdb.write-buffer-size";
  for (int i = 0; i < kColumnFamilyCount; i++) {
    auto cf = static_cast<ColumnFamily>(i);
    if (blob_option && !IsBlobColumnFamily(i)) continue;
    // Families scanned in order have no bloom filter, nor do indexed memtables (options.cc).
    if (bloom_option &&
        (!ServesPointReads(cf) || (memtables_[i] != nullptr && memtables_[i]->indexed()))) {
      continue;
    }
    // The queue-like families keep their own write buffer size; an index follows its
    // family's, from the next memtable on, so that its chains stay about one node long.
    size_t write_buffer = write_buffer_option ? WriteBufferSizeOf(cf, std::stoull(opt_value)) : 0;
    std::string value_here = write_buffer_option ? std::to_string(write_buffer) : opt_value;
    rocksdb::Status s = db_->SetOptions(handles_[i], {{opt_name, value_here}});
    if (!s.ok()) return Status::InvalidArgument(s.ToString());
    if (write_buffer_option && memtables_[i] != nullptr) {
      memtables_[i]->ResizeIndex(MemtableIndexBuckets(cf, write_buffer));
    }
  }
  return Status::OK();
}

rocksdb::Status Engine::WriteDurably(rocksdb::WriteBatch* batch) {
  rocksdb::Status s = Write(batch);
  if (s.ok() && durability() != Durability::kSync) s = db_->SyncWAL();
  return s;
}

rocksdb::Status Engine::Write(rocksdb::WriteBatch* batch) {
  rocksdb::WriteOptions wo;
  wo.sync = durability() == Durability::kSync;
  thread_local BatchRecords records;
  // A batch of one write has nothing to warm, and without the cache nothing to apply.
  bool gathered = false;
  if (batch->Count() >= 2 || metadata_cache_.enabled()) {
    records.Reset(warmed_families_.size(),
                  handles_[static_cast<int>(ColumnFamily::kMetadata)]->GetID());
    gathered = batch->Iterate(&records).ok();
  }
  if (gathered && batch->Count() >= 2) WarmMemtables(records);
  rocksdb::Status s = db_->Write(wo, batch);
  // After the inserts: one that no warming ran for starts from its kept path.
  SkipListMemTableFactory::ForgetKeptSeeks();
  UpdateMetadataCache(*batch, gathered ? &records : nullptr, s);
  if (s.ok()) NotifyWriters();
  // An I/O error on the write path (WAL append or sync) stops RocksDB's writes; if it did not,
  // the next Resume() attempt finds nothing to do and clears the state at once.
  if (s.IsIOError() || s.IsCorruption()) NoteStorageError(s);
  return s;
}

void Engine::KeepLastSeekFor(ColumnFamily cf, const rocksdb::Slice& key) const {
  if (const SkipListMemTableFactory* factory = memtables(cf)) factory->KeepLastSeekFor(key);
}

void Engine::WarmMemtables(const BatchRecords& records) {
  // One key alone has no other search to overlap its cache misses with.
  for (size_t id = 0; id < warmed_families_.size(); id++) {
    if (warmed_families_[id] && records.keys(id).size() >= 2) {
      warmed_families_[id]->WarmInsertPaths(records.keys(id));
    }
  }
}

uint64_t Engine::CommittedSequence(const rocksdb::WriteBatch& batch) {
  const std::string& rep = batch.Data();
  uint64_t seq = 0;
  for (int i = 7; i >= 0; i--) seq = (seq << 8) | static_cast<uint8_t>(rep[i]);
  return seq;
}

void Engine::UpdateMetadataCache(const rocksdb::WriteBatch& batch, const BatchRecords* records,
                                 const rocksdb::Status& written) {
  if (!metadata_cache_.enabled() || batch.Count() == 0) return;
  if (!written.ok()) {
    // Part of the batch may have reached a memtable under sequence numbers not yet published:
    // forget everything and accept only what is read after them.
    metadata_cache_.Clear(LatestSequence() + batch.Count() + 1);
    return;
  }
  // A batch whose records could not be read (a kind no handler takes) may have written any key.
  if (records == nullptr) return metadata_cache_.Clear(LatestSequence() + 1);
  // Every write is taken as being as new as the batch's last: batches' sequence ranges do not
  // overlap, and within a batch a later write of a key replaces an earlier one, as in RocksDB.
  const uint64_t sequence = CommittedSequence(batch) + batch.Count() - 1;
  const std::vector<BatchRecords::MetadataWrite>& writes = records->metadata();
  std::array<std::string_view, MetadataCache::kMaxPrefetch> ahead;
  for (size_t w = 0; w < writes.size(); w++) {
    // Each run of writes starts by loading the cache lines that the run's applies will read.
    if (w % ahead.size() == 0 && writes.size() >= 2) {
      size_t n = std::min(ahead.size(), writes.size() - w);
      for (size_t k = 0; k < n; k++)
        ahead[k] = {writes[w + k].key.data(), writes[w + k].key.size()};
      metadata_cache_.Prefetch({ahead.data(), n});
    }
    const BatchRecords::MetadataWrite& write = writes[w];
    std::string_view key(write.key.data(), write.key.size());
    switch (write.change) {
      case BatchRecords::Change::kPut: {
        std::string_view value(write.value.data(), write.value.size());
        metadata_cache_.Apply(sequence, key, &value);
        break;
      }
      case BatchRecords::Change::kDelete:
        metadata_cache_.Apply(sequence, key, nullptr);
        break;
      case BatchRecords::Change::kInvalidate:
        metadata_cache_.Invalidate(sequence, key);
        break;
      case BatchRecords::Change::kClearAll:
        metadata_cache_.Clear(sequence);
        break;
    }
  }
}

namespace {
// Tells a dead-range note from any other LogData blob.
constexpr std::string_view kDeadRangeMagic = "basalt.dead-range";
}  // namespace

std::string Engine::EncodeDeadRangeNote(ColumnFamily cf, std::string_view begin,
                                        std::string_view end) {
  std::string out(kDeadRangeMagic);
  PutFixed8(&out, static_cast<uint8_t>(cf));
  PutLengthPrefixed(&out, begin);
  PutLengthPrefixed(&out, end);
  return out;
}

bool Engine::DecodeDeadRangeNote(std::string_view blob, ColumnFamily* cf, std::string* begin,
                                 std::string* end) {
  if (!blob.starts_with(kDeadRangeMagic)) return false;
  blob.remove_prefix(kDeadRangeMagic.size());
  uint8_t family;
  std::string_view b, e;
  if (!GetFixed8(&blob, &family) || !GetLengthPrefixed(&blob, &b) ||
      !GetLengthPrefixed(&blob, &e) || !blob.empty()) {
    return false;
  }
  const auto named = static_cast<ColumnFamily>(family);
  if (named != ColumnFamily::kSubkey && named != ColumnFamily::kZsetScore) return false;
  *cf = named;
  begin->assign(b);
  end->assign(e);
  return true;
}

void Engine::CompleteMetadataCacheIfEmpty() {
  if (!metadata_cache_.enabled()) return;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(
      rocksdb::ReadOptions(), handles_[static_cast<int>(ColumnFamily::kMetadata)]));
  it->SeekToFirst();
  if (!it->Valid() && it->status().ok()) metadata_cache_.MarkComplete();
}

StorageHealth Engine::health() const {
  std::lock_guard<std::mutex> lock(health_mu_);
  return health_;
}

void Engine::NoteStorageError(const rocksdb::Status& s) {
  std::lock_guard<std::mutex> lock(health_mu_);
  health_.last_error = s.ToString();
  if (health_.writes_stopped) return;
  health_.writes_stopped = true;
  health_.errors++;
  writes_stopped_ = true;
  LOG(ERROR) << "storage error, writes are refused until it clears: " << health_.last_error;
}

void Engine::NoteRecovered() {
  std::lock_guard<std::mutex> lock(health_mu_);
  if (!health_.writes_stopped) return;
  health_.writes_stopped = false;
  health_.recoveries++;
  writes_stopped_ = false;
  LOG(WARNING) << "storage recovered, writes accepted again (last error: " << health_.last_error
               << ")";
}

void Engine::TryResume() {
  rocksdb::Status s = db_->Resume();
  if (s.ok()) return NoteRecovered();
  if (s.IsBusy()) return;  // RocksDB's own recovery is under way
  std::lock_guard<std::mutex> lock(health_mu_);
  health_.last_error = s.ToString();
}

rocksdb::Status Engine::Get(ColumnFamily cf, const rocksdb::Slice& key, std::string* value,
                            const rocksdb::Snapshot* snapshot, rocksdb::ReadTier tier) const {
  // Commands never get here while the data is being replaced (they wait for the keyspace
  // lock), but the subkey compaction filter does, from RocksDB's background threads, as soon
  // as the reopened database starts compacting.
  if (!ready_.load(std::memory_order_acquire))
    return rocksdb::Status::Incomplete("the database is being reopened");
  if (cf == ColumnFamily::kMetadata && snapshot == nullptr)
    return ReadThroughCache(key, value, /*fill=*/true, tier);
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  ro.read_tier = tier;
  PrepareRead(cf, &ro);
  return db_->Get(ro, handles_[static_cast<int>(cf)], key, value);
}

rocksdb::Status Engine::Peek(ColumnFamily cf, const rocksdb::Slice& key, std::string* value) const {
  if (cf == ColumnFamily::kMetadata && ready_.load(std::memory_order_acquire))
    return ReadThroughCache(key, value, /*fill=*/false);
  return ReadStored(cf, key, value);
}

rocksdb::Status Engine::ReadStored(ColumnFamily cf, const rocksdb::Slice& key,
                                   std::string* value) const {
  if (!ready_.load(std::memory_order_acquire))
    return rocksdb::Status::Incomplete("the database is being reopened");
  rocksdb::ReadOptions ro;
  PrepareRead(cf, &ro);
  return db_->Get(ro, handles_[static_cast<int>(cf)], key, value);
}

rocksdb::Status Engine::ReadThroughCache(const rocksdb::Slice& key, std::string* value, bool fill,
                                         rocksdb::ReadTier tier) const {
  std::string_view k(key.data(), key.size());
  switch (metadata_cache_.Get(k, value)) {
    case MetadataCache::Lookup::kPresent:
      return rocksdb::Status::OK();
    case MetadataCache::Lookup::kAbsent:
      return rocksdb::Status::NotFound();
    case MetadataCache::Lookup::kMiss:
      break;
  }
  MetadataCache::Ticket ticket = metadata_cache_.TakeTicket(LatestSequence());
  rocksdb::ReadOptions ro;
  ro.read_tier = tier;
  rocksdb::Status s = db_->Get(ro, handles_[static_cast<int>(ColumnFamily::kMetadata)], key, value);
  if (!fill || !metadata_cache_.enabled()) return s;
  if (s.IsNotFound()) {
    metadata_cache_.Fill(ticket, k, nullptr);
  } else if (s.ok() && !(hooks_.metadata_expired && hooks_.metadata_expired(*value))) {
    std::string_view v(*value);
    metadata_cache_.Fill(ticket, k, &v);
  }
  return s;
}

std::unique_ptr<rocksdb::Iterator> Engine::NewIterator(ColumnFamily cf,
                                                       const rocksdb::ReadOptions& options) const {
  rocksdb::ReadOptions prepared = options;
  PrepareRead(cf, &prepared);
  return std::unique_ptr<rocksdb::Iterator>(
      db_->NewIterator(prepared, handles_[static_cast<int>(cf)]));
}

rocksdb::Status Engine::DeleteRange(ColumnFamily cf, const std::string& begin,
                                    const std::string& end) {
  rocksdb::WriteBatch batch;
  rocksdb::Status s = batch.DeleteRange(this->cf(cf), begin, end);
  if (!s.ok()) return s;
  return Write(&batch);
}

void Engine::StartFlush(std::span<const ColumnFamily> families) {
  rocksdb::FlushOptions options;
  options.wait = false;
  options.allow_write_stall = true;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  for (ColumnFamily family : families) handles.push_back(cf(family));
  rocksdb::Status s = db_->Flush(options, handles);
  if (!s.ok()) LOG(WARNING) << "starting a flush: " << s.ToString();
}

uint64_t Engine::ActiveMemtableEntries(ColumnFamily family) const {
  uint64_t entries = 0;
  db_->GetIntProperty(cf(family), "rocksdb.num-entries-active-mem-table", &entries);
  return entries;
}

void Engine::LazySyncLoop() {
  std::unique_lock<std::mutex> lock(lazy_mu_);
  while (!closing_) {
    lazy_cv_.wait_for(lock, std::chrono::seconds(1));
    if (closing_) break;
    lock.unlock();
    if (writes_stopped()) {
      TryResume();
    } else {
      if (durability() == Durability::kLazy) {
        rocksdb::Status s = db_->SyncWAL();
        if (!s.ok()) {
          LOG(WARNING) << "background WAL sync failed: " << s.ToString();
          if (s.IsIOError()) NoteStorageError(s);
        }
      }
      GovernBlobGc();
    }
    lock.lock();
  }
}

static_assert(kColumnFamilyCount <= BlobGcGovernor::kMaxColumnFamilies);

void Engine::GovernBlobGc() {
  bool allowed = config_->GetBool("rocksdb.enable-blob-gc");
  double ratio = config_->GetDouble("rocksdb.blob-gc-garbage-ratio");
  for (int i = 0; i < kColumnFamilyCount; i++) {
    if (!IsBlobColumnFamily(i)) continue;
    rocksdb::Status s = blob_gc_.Govern(db_, handles_[i], i, allowed, ratio);
    if (!s.ok())
      LOG(WARNING) << "blob GC of " << ColumnFamilyName(static_cast<ColumnFamily>(i))
                   << " not switched: " << s.ToString();
  }
}

Status Engine::StartManualCompaction() {
  if (manual_compaction_running_.exchange(true))
    return Status::Busy("a compaction is already running");
  if (manual_compaction_thread_.joinable()) manual_compaction_thread_.join();
  // A manual compaction collects blob garbage whatever the governor decided, unless blob GC is
  // off altogether.
  auto blob_gc = config_->GetBool("rocksdb.enable-blob-gc")
                     ? rocksdb::BlobGarbageCollectionPolicy::kForce
                     : rocksdb::BlobGarbageCollectionPolicy::kDisable;
  manual_compaction_thread_ = std::thread([this, blob_gc] {
    rocksdb::CompactRangeOptions options;
    options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    options.blob_garbage_collection_policy = blob_gc;
    for (auto* handle : handles_) {
      rocksdb::Status s = db_->CompactRange(options, handle, nullptr, nullptr);
      if (!s.ok()) {
        LOG(WARNING) << "manual compaction of " << handle->GetName() << ": " << s.ToString();
        break;
      }
    }
    manual_compaction_running_ = false;
  });
  return Status::OK();
}

void Engine::Close() {
  if (db_ == nullptr) return;
  ready_.store(false, std::memory_order_release);
  db_->DisableManualCompaction();  // also ends a reclaimer's compaction early
  subkey_reclaimer_.Stop();
  score_reclaimer_.Stop();
  if (manual_compaction_thread_.joinable()) manual_compaction_thread_.join();
  {
    std::lock_guard<std::mutex> lock(lazy_mu_);
    closing_ = true;
  }
  lazy_cv_.notify_all();
  if (lazy_sync_thread_.joinable()) lazy_sync_thread_.join();
  rocksdb::Status s = db_->SyncWAL();
  if (!s.ok()) LOG(WARNING) << "final WAL sync failed: " << s.ToString();
  rocksdb::CancelAllBackgroundWork(db_, true);
  for (auto* h : handles_) {
    if (h != nullptr) db_->DestroyColumnFamilyHandle(h);
  }
  handles_.fill(nullptr);
  s = db_->Close();
  if (!s.ok()) LOG(WARNING) << "closing RocksDB: " << s.ToString();
  delete db_;
  db_ = nullptr;
}

}  // namespace basalt
