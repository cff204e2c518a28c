// basalt-memtable-bench: the memtable alone, without the network, the server or its clients.
//
// Writes to a large collection (SADD, HSET, ZADD into one key) spend most of the server's cycles
// walking the memtable's skip list, and a change to that walk moves the server's rate by a few
// percent, less than these shared machines' noise between two redis-benchmark runs. This times
// the walk by itself: a RocksDB (no WAL, one memtable that never flushes) with Basalt's memtable
// factory is filled with `--fill` members of one set, as the server lays them out, in batches of
// 16 whose insert paths are warmed first (as a pipeline of 16 SADDs is); then each round times
// `--inserts` more such inserts (in batches of `--batch`, 16 by default; 1 is an unpipelined
// client's), `--gets` point lookups of random members and a scan of every entry in order (a
// flush's walk, or a range read's), and prints nanoseconds per key.
// `--index-buckets` sizes the memtable's index by user key (0: none). `--keys metadata` writes
// string keys as the `metadata` family holds them (MSET's) instead of members. Run two builds
// (or two settings) alternately and compare medians.
//
// It measures and asserts nothing; it exits non-zero only when RocksDB fails.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "storage/skiplist_memtable.h"

namespace {

struct Args {
  size_t fill = 1000000;
  size_t inserts = 300000;
  size_t gets = 500000;
  size_t batch = 16;
  // The server's for its default 64 MiB write buffer; 0 for a memtable without the index.
  size_t index_buckets = basalt::SkipListMemTableFactory::IndexBucketsFor(64 << 20);
  int rounds = 3;
  bool metadata_keys = false;
  std::string dir = "/tmp/basalt-memtable-bench";
};

// A member key as the subkey family holds it: db, key length, key, version, member. Members
// are redis-benchmark's ("element:" and six digits), drawn from a million.
std::string MemberKey(uint64_t draw) {
  static const std::string prefix("\x00\x05myset\x80\x00\x00\x00\x00\x00\x00\x01", 15);
  char member[32];
  int n = std::snprintf(member, sizeof member, "element:%06llu",
                        static_cast<unsigned long long>(draw % 1000000));
  return prefix + std::string(member, static_cast<size_t>(n));
}

// A string key as the metadata family holds it: db, then redis-benchmark's key ("key:" and
// twelve digits), drawn from a million.
std::string MetadataKey(uint64_t draw) {
  char key[32];
  int n = std::snprintf(key, sizeof key, "%ckey:%012llu", 0,
                        static_cast<unsigned long long>(draw % 1000000));
  return std::string(key, static_cast<size_t>(n));
}

bool ParseArgs(int argc, char** argv, Args* args) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--fill") {
      args->fill = std::strtoull(value, nullptr, 10);
    } else if (flag == "--inserts") {
      args->inserts = std::strtoull(value, nullptr, 10);
    } else if (flag == "--gets") {
      args->gets = std::strtoull(value, nullptr, 10);
    } else if (flag == "--batch") {
      args->batch = std::max<size_t>(1, std::strtoull(value, nullptr, 10));
    } else if (flag == "--index-buckets") {
      args->index_buckets = std::strtoull(value, nullptr, 10);
    } else if (flag == "--keys" &&
               (value == std::string_view("member") || value == std::string_view("metadata"))) {
      args->metadata_keys = value == std::string_view("metadata");
    } else if (flag == "--rounds") {
      args->rounds = std::atoi(value);
    } else if (flag == "--dir") {
      args->dir = value;
    } else {
      return false;
    }
  }
  return argc % 2 == 1;
}

class Bench {
 public:
  explicit Bench(const Args& args) : args_(args) {}
  ~Bench() { delete db_; }

  bool Open() {
    std::filesystem::remove_all(args_.dir);
    rocksdb::Options options;
    options.create_if_missing = true;
    options.write_buffer_size = size_t{4} << 30;  // one memtable for the whole run
    factory_ = std::make_shared<basalt::SkipListMemTableFactory>(true, args_.index_buckets);
    options.memtable_factory = factory_;
    rocksdb::Status s = rocksdb::DB::Open(options, args_.dir, &db_);
    if (!s.ok()) std::fprintf(stderr, "open %s: %s\n", args_.dir.c_str(), s.ToString().c_str());
    return s.ok();
  }

  // Inserts `n` random members in batches of `batch`, warming each batch's paths first.
  bool Insert(size_t n, size_t batch) {
    rocksdb::WriteOptions write;
    write.disableWAL = true;
    std::vector<std::string> keys(batch);
    std::vector<rocksdb::Slice> slices(batch);
    for (size_t done = 0; done < n; done += keys.size()) {
      rocksdb::WriteBatch batch;
      for (size_t i = 0; i < keys.size(); i++) {
        keys[i] = Key(rng_());
        slices[i] = keys[i];
        batch.Put(keys[i], "");
      }
      factory_->WarmInsertPaths(slices);
      rocksdb::Status s = db_->Write(write, &batch);
      if (!s.ok()) {
        std::fprintf(stderr, "write: %s\n", s.ToString().c_str());
        return false;
      }
    }
    return true;
  }

  // Reads every entry in order; returns how many there were, or -1 on an error.
  long Scan() {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    long entries = 0;
    size_t bytes = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      bytes += it->key().size() + it->value().size();
      entries++;
    }
    if (!it->status().ok()) {
      std::fprintf(stderr, "scan: %s\n", it->status().ToString().c_str());
      return -1;
    }
    return bytes > 0 ? entries : 0;
  }

  // Looks up `n` random members; returns how many were found, or -1 on an error.
  long Get(size_t n) {
    long found = 0;
    std::string value;
    for (size_t i = 0; i < n; i++) {
      rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), Key(rng_()), &value);
      if (s.ok()) {
        found++;
      } else if (!s.IsNotFound()) {
        std::fprintf(stderr, "get: %s\n", s.ToString().c_str());
        return -1;
      }
    }
    return found;
  }

 private:
  std::string Key(uint64_t draw) const {
    return args_.metadata_keys ? MetadataKey(draw) : MemberKey(draw);
  }

  const Args& args_;
  std::mt19937_64 rng_{42};  // fixed: every build walks the same list
  std::shared_ptr<basalt::SkipListMemTableFactory> factory_;
  rocksdb::DB* db_ = nullptr;
};

double NanosPer(std::chrono::steady_clock::duration d, size_t n) {
  return std::chrono::duration<double, std::nano>(d).count() / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!ParseArgs(argc, argv, &args)) {
    std::fprintf(stderr,
                 "usage: %s [--fill N] [--inserts N] [--batch N] [--gets N] [--index-buckets N]"
                 " [--keys member|metadata] [--rounds N] [--dir PATH]\n",
                 argv[0]);
    return 2;
  }
  Bench bench(args);
  if (!bench.Open() || !bench.Insert(args.fill, 16)) return 1;
  for (int round = 0; round < args.rounds; round++) {
    auto start = std::chrono::steady_clock::now();
    if (!bench.Insert(args.inserts, args.batch)) return 1;
    auto inserted = std::chrono::steady_clock::now();
    long found = bench.Get(args.gets);
    if (found < 0) return 1;
    auto got = std::chrono::steady_clock::now();
    long entries = bench.Scan();
    if (entries < 0) return 1;
    auto done = std::chrono::steady_clock::now();
    std::printf(
        "round %d: insert %.0f ns/key, get %.0f ns/key (%ld of %zu found), scan %.0f ns/key"
        " (%ld keys)\n",
        round + 1, NanosPer(inserted - start, args.inserts), NanosPer(got - inserted, args.gets),
        found, args.gets, NanosPer(done - got, static_cast<size_t>(std::max(entries, 1L))),
        entries);
  }
  std::filesystem::remove_all(args.dir);
  return 0;
}
