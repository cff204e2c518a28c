#include "storage/engine.h"

#include <glog/logging.h>
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>

#include <chrono>

#include "storage/options.h"

namespace basalt {

const char* ColumnFamilyName(ColumnFamily cf) {
  static const char* kNames[] = {"default", "metadata",  "subkey", "zset_score",
                                 "pubsub",  "propagate", "expire", "counters"};
  return kNames[static_cast<int>(cf)];
}

namespace {

Durability ParseDurability(const std::string& v) {
  if (v == "sync") return Durability::kSync;
  if (v == "nosync") return Durability::kNoSync;
  return Durability::kLazy;
}

bool IsBlobColumnFamily(int i) {
  return i == static_cast<int>(ColumnFamily::kMetadata) ||
         i == static_cast<int>(ColumnFamily::kSubkey);
}

}  // namespace

StatusOr<std::unique_ptr<Engine>> Engine::Open(Config* config, const ColumnFamilyHooks& hooks) {
  std::unique_ptr<Engine> engine(new Engine());
  engine->path_ = config->GetString("dir");
  EngineOptions options = BuildEngineOptions(*config, hooks);
  engine->statistics_ = options.db.statistics;
  engine->block_cache_ = options.block_cache;
  engine->row_cache_ = options.row_cache;
  engine->durability_ = ParseDurability(config->GetString("durability"));

  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::Status s =
      rocksdb::DB::Open(options.db, engine->path_, options.column_families, &handles, &engine->db_);
  if (!s.ok())
    return Status::IOError("can't open RocksDB at '" + engine->path_ + "': " + s.ToString());
  for (size_t i = 0; i < handles.size(); i++) engine->handles_[i] = handles[i];

  Engine* raw = engine.get();
  config->AddApplyHook("rocksdb.", [raw](const std::string& name, const std::string& value) {
    return raw->ApplyLiveOption(name, value);
  });
  config->AddApplyHook("durability", [raw](const std::string&, const std::string& value) {
    raw->durability_ = ParseDurability(value);
    return Status::OK();
  });
  engine->lazy_sync_thread_ = std::thread([raw] { raw->LazySyncLoop(); });
  return engine;
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
  if (is_db_option) {
    rocksdb::Status s = db_->SetDBOptions({{opt_name, opt_value}});
    return s.ok() ? Status::OK() : Status::InvalidArgument(s.ToString());
  }
  bool blob_option = opt_name.find("blob") != std::string::npos;
  for (int i = 0; i < kColumnFamilyCount; i++) {
    if (blob_option && !IsBlobColumnFamily(i)) continue;
    rocksdb::Status s = db_->SetOptions(handles_[i], {{opt_name, opt_value}});
    if (!s.ok()) return Status::InvalidArgument(s.ToString());
  }
  return Status::OK();
}

rocksdb::Status Engine::Write(rocksdb::WriteBatch* batch) {
  rocksdb::WriteOptions wo;
  wo.sync = durability() == Durability::kSync;
  return db_->Write(wo, batch);
}

rocksdb::Status Engine::Get(ColumnFamily cf, const rocksdb::Slice& key, std::string* value,
                            const rocksdb::Snapshot* snapshot) const {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  return db_->Get(ro, handles_[static_cast<int>(cf)], key, value);
}

std::unique_ptr<rocksdb::Iterator> Engine::NewIterator(ColumnFamily cf,
                                                       const rocksdb::ReadOptions& options) const {
  return std::unique_ptr<rocksdb::Iterator>(
      db_->NewIterator(options, handles_[static_cast<int>(cf)]));
}

rocksdb::Status Engine::DeleteRange(ColumnFamily cf, const std::string& begin,
                                    const std::string& end) {
  rocksdb::WriteBatch batch;
  rocksdb::Status s = batch.DeleteRange(this->cf(cf), begin, end);
  if (!s.ok()) return s;
  return Write(&batch);
}

void Engine::LazySyncLoop() {
  std::unique_lock<std::mutex> lock(lazy_mu_);
  while (!closing_) {
    lazy_cv_.wait_for(lock, std::chrono::seconds(1));
    if (closing_) break;
    if (durability() != Durability::kLazy) continue;
    lock.unlock();
    rocksdb::Status s = db_->SyncWAL();
    if (!s.ok()) LOG(WARNING) << "background WAL sync failed: " << s.ToString();
    lock.lock();
  }
}

Status Engine::StartManualCompaction() {
  if (manual_compaction_running_.exchange(true))
    return Status::Busy("a compaction is already running");
  if (manual_compaction_thread_.joinable()) manual_compaction_thread_.join();
  manual_compaction_thread_ = std::thread([this] {
    rocksdb::CompactRangeOptions options;
    options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
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
  db_->DisableManualCompaction();
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
