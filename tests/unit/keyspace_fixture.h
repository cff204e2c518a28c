// Shared fixture for the Keyspace/Context and ActiveExpirer tests: a real RocksDB in a temporary
// directory (removed afterwards) with small caches, plus helpers that write keys the way the
// string commands do.
#pragma once

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "config/config.h"
#include "types/keyspace.h"

namespace basalt {

class KeyspaceFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/basalt-unit-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_NO_FATAL_FAILURE(Open());
  }

  void TearDown() override {
    ks_.reset();
    config_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // A fresh Config for every open: the engine registers apply hooks on the config it opens.
  void Open() {
    config_ = std::make_unique<Config>();
    ASSERT_TRUE(config_->SetAtStartup("dir", dir_).ok());
    ASSERT_TRUE(config_->SetAtStartup("rocksdb.block-cache-size", "8mb").ok());
    ASSERT_TRUE(config_->SetAtStartup("rocksdb.write-buffer-size", "4mb").ok());
    for (const auto& [name, value] : extra_config_) {
      ASSERT_TRUE(config_->SetAtStartup(name, value).ok()) << name;
    }
    auto ks = Keyspace::Open(config_.get());
    ASSERT_TRUE(ks.ok()) << ks.status().message();
    ks_ = std::move(*ks);
  }

  void Reopen() {
    ks_.reset();
    config_.reset();
    ASSERT_NO_FATAL_FAILURE(Open());
  }

  // Config keys set, in order, at every open after the fixture's own.
  std::vector<std::pair<std::string, std::string>> extra_config_;

  // SET key value [PXAT expire_ms] through a Context, as the string commands do.
  void Set(int db, const std::string& key, const std::string& value, int64_t expire_ms = 0) {
    Context ctx(ks_.get());
    auto old = ctx.Lookup(db, key);
    ASSERT_TRUE(old.ok());
    Metadata m;
    m.type = RedisType::kString;
    m.value = value;
    m.expire_ms = expire_ms;
    ctx.Write(db, key, m, *old);
    ASSERT_TRUE(ctx.Commit().ok());
  }

  void Del(int db, const std::string& key) {
    Context ctx(ks_.get());
    auto old = ctx.Lookup(db, key);
    ASSERT_TRUE(old.ok());
    ctx.Delete(db, key, *old);
    ASSERT_TRUE(ctx.Commit().ok());
  }

  KeyState Get(int db, const std::string& key) {
    Context ctx(ks_.get());
    auto state = ctx.Lookup(db, key);
    EXPECT_TRUE(state.ok());
    return state.ok() ? *state : KeyState();
  }

  // Entries in the expiry index (all databases).
  int64_t ExpireIndexSize() {
    rocksdb::ReadOptions ro;
    auto it = ks_->engine()->NewIterator(ColumnFamily::kExpire, ro);
    int64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
    return n;
  }

  // A full compaction of `metadata` (which drops expired entries). By default the metadata
  // cache then forgets everything, as if the dropped entries had been evicted, so that readers
  // see what the compaction left; with `keep_cache` a cached entry outlives its drop.
  void CompactMetadata(bool keep_cache = false) {
    rocksdb::CompactRangeOptions options;
    options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    auto s = ks_->engine()->db()->CompactRange(options, ks_->engine()->cf(ColumnFamily::kMetadata),
                                               nullptr, nullptr);
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (keep_cache) return;
    std::string size = config_->GetString("metadata-cache-size");
    ASSERT_TRUE(config_->SetLive("metadata-cache-size", "0").ok());
    ASSERT_TRUE(config_->SetLive("metadata-cache-size", size).ok());
  }

  // Whether RocksDB itself holds the key's metadata entry (the cache is not asked).
  bool RawMetadataPresent(int db, const std::string& key) {
    std::string v, k = MetadataKey(ks_->Physical(db), key);
    return ks_->engine()
        ->db()
        ->Get(rocksdb::ReadOptions(), ks_->engine()->cf(ColumnFamily::kMetadata), k, &v)
        .ok();
  }

  static void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

  std::string dir_;
  std::unique_ptr<Config> config_;
  std::unique_ptr<Keyspace> ks_;
};

}  // namespace basalt
