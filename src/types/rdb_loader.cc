#include "types/rdb_loader.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "common/clock.h"
#include "common/crc64.h"
#include "common/hash.h"
#include "common/hash_set64.h"
#include "common/rdb_encoding.h"
#include "storage/engine.h"
#include "storage/sst_ingest.h"
#include "types/rdb_value.h"

namespace basalt {

namespace {

// Module values.
constexpr uint8_t kTypeModulePreGa = 6;
constexpr uint8_t kTypeModule2 = 7;
constexpr uint64_t kModuleOpEof = 0;
constexpr uint64_t kModuleOpSint = 1;
constexpr uint64_t kModuleOpUint = 2;
constexpr uint64_t kModuleOpFloat = 3;
constexpr uint64_t kModuleOpDouble = 4;
constexpr uint64_t kModuleOpString = 5;

constexpr int kOldestVersion = 9;
// The window: refilled below kMinWindow bytes, kReadSize bytes at a time.
constexpr size_t kMinWindow = 1 << 20;
constexpr size_t kReadSize = 8 << 20;
// A commit after this many keys or bytes of the file, whichever comes first. Small enough that
// the batch's map of pending metadata stays in cache: 2000 keys took 15% less CPU than 20000.
constexpr uint64_t kKeysPerCommit = 2000;
constexpr uint64_t kBytesPerCommit = 64 << 20;
constexpr int64_t kProgressEveryMs = 2000;

// The file seen through a window that advances as values are consumed, with the CRC-64 of
// everything consumed so far.
class FileWindow {
 public:
  ~FileWindow() {
    if (fd_ >= 0) close(fd_);
  }
  Status Open(const std::string& path) {
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd_ < 0 || fstat(fd_, &st) != 0)
      return Status::RedisError("ERR can't open RDB file '" + path + "': " + strerror(errno));
    if (!S_ISREG(st.st_mode))
      return Status::RedisError("ERR RDB file '" + path + "' is not a regular file");
    size_ = static_cast<uint64_t>(st.st_size);
    posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
    return Status::OK();
  }
  // Reads until `want` bytes lie past the cursor or the file ends.
  Status Fill(size_t want) {
    if (view().size() >= want || read_ == size_) return Status::OK();
    buf_.erase(0, pos_);
    pos_ = 0;
    while (buf_.size() < want && read_ < size_) {
      size_t old = buf_.size();
      size_t n =
          static_cast<size_t>(std::min<uint64_t>(std::max(want - old, kReadSize), size_ - read_));
      buf_.resize(old + n);
      ssize_t got = read(fd_, buf_.data() + old, n);
      if (got <= 0) {
        buf_.resize(old);
        return Status::RedisError(std::string("ERR error reading the RDB file: ") +
                                  (got == 0 ? "it shrank while being read" : strerror(errno)));
      }
      buf_.resize(old + static_cast<size_t>(got));
      read_ += static_cast<uint64_t>(got);
    }
    return Status::OK();
  }
  std::string_view view() const { return std::string_view(buf_).substr(pos_); }
  // What remains of the file past the cursor, buffered or not.
  uint64_t unread() const { return size_ - consumed_; }
  uint64_t consumed() const { return consumed_; }
  uint64_t size() const { return size_; }
  uint64_t crc() const { return crc_; }
  void Consume(size_t n) {
    crc_ = Crc64(crc_, view().substr(0, n));
    pos_ += n;
    consumed_ += n;
  }

 private:
  int fd_ = -1;
  uint64_t size_ = 0, read_ = 0, consumed_ = 0, crc_ = 0;
  std::string buf_;
  size_t pos_ = 0;
};

uint64_t LittleEndian(std::string_view b) {
  uint64_t v = 0;
  for (size_t i = b.size(); i-- > 0;) v = (v << 8) | static_cast<uint8_t>(b[i]);
  return v;
}

bool ReadUnsigned(rdb::Reader& r, uint64_t* v) {
  bool encoded;
  return r.ReadLength(v, &encoded) && !encoded;
}

// The name Redis derives from a module type ID: nine characters of six bits each, from the
// top 54 bits.
std::string ModuleName(uint64_t id) {
  static const char kCharset[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string name(9, ' ');
  id >>= 10;
  for (int j = 8; j >= 0; j--) {
    name[j] = kCharset[id & 63];
    id >>= 6;
  }
  return name;
}

// Passes over a module value's opcodes up to its EOF opcode.
bool SkipModuleValue(rdb::Reader& r) {
  for (;;) {
    uint64_t op, ignored;
    std::string_view raw;
    std::string s;
    if (!ReadUnsigned(r, &op)) return false;
    if (op == kModuleOpEof) return true;
    if (op == kModuleOpSint || op == kModuleOpUint) {
      if (!ReadUnsigned(r, &ignored)) return false;
    } else if (op == kModuleOpFloat || op == kModuleOpDouble) {
      if (!r.ReadBytes(op == kModuleOpFloat ? 4 : 8, &raw)) return false;
    } else if (op != kModuleOpString || !r.ReadString(&s)) {
      return false;
    }
  }
}

class Importer {
 public:
  Importer(Keyspace* keyspace, const RdbImportOptions& options)
      : keyspace_(keyspace), options_(options), ctx_(keyspace) {
    if (options.ingest_sst_files) {
      sink_ = std::make_unique<SstIngestSink>(keyspace->engine(), keyspace->ImportStagingDir());
      ctx_.batch().set_ingest_sink(sink_.get());
    }
  }
  Status Run(const std::string& path);
  RdbImportStats& stats() { return stats_; }

 private:
  Status Header();
  Status Body();
  Status Footer();
  Status Finish();
  // Runs `parse` on the window, which grows while the parse runs out of it before the file
  // ends; then consumes what it read. `what` names the item in the error.
  template <typename Parse>
  Status Item(const char* what, Parse parse);
  Status Corrupt(const std::string& what) const {
    return Status::RedisError("ERR Bad RDB file: " + what + " at offset " +
                              std::to_string(item_offset_));
  }
  Status Key(uint8_t type);
  Status Write(const std::string& key, const RdbValue& value);
  Status Commit();
  void Progress(bool force);

  Keyspace* keyspace_;
  const RdbImportOptions& options_;
  std::unique_ptr<SstIngestSink> sink_;
  Context ctx_;
  FileWindow file_;
  RdbImportStats stats_;
  std::vector<std::string> libraries_;
  HashSet64 seen_;  // hashes of the db and name of every key written
  int db_ = 0;
  int64_t expire_ms_ = -1;  // of the next key; -1: none
  int64_t idle_s_ = -1;     // the next key's IDLE and FREQ (types/key_access.h); -1: none
  int freq_ = -1;
  uint64_t item_offset_ = 0;
  uint64_t uncommitted_keys_ = 0, committed_bytes_ = 0;
  int64_t start_us_ = MonotonicMicros(), last_progress_ms_ = 0;
};

template <typename Parse>
Status Importer::Item(const char* what, Parse parse) {
  item_offset_ = file_.consumed();
  size_t want = kMinWindow;
  for (;;) {
    Status s = file_.Fill(want);
    if (!s.ok()) return s;
    rdb::Reader r(file_.view(), file_.unread());
    if (parse(r)) {
      file_.Consume(file_.view().size() - r.remaining());
      return Status::OK();
    }
    if (!r.exhausted() || file_.view().size() >= file_.unread()) return Corrupt(what);
    want = std::max(file_.view().size() * 2, kReadSize);
  }
}

Status Importer::Header() {
  Status s = file_.Fill(9);
  if (!s.ok()) return s;
  std::string_view head = file_.view().substr(0, 9);
  if (head.size() < 9 || head.substr(0, 5) != "REDIS" ||
      !std::all_of(head.begin() + 5, head.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return Status::RedisError("ERR Bad RDB file: no REDIS signature at its start");
  stats_.version = std::stoi(std::string(head.substr(5)));
  if (stats_.version < kOldestVersion || stats_.version > rdb::kNewestReadableVersion)
    return Status::RedisError("ERR Bad RDB file: RDB version " + std::to_string(stats_.version) +
                              " is not supported (9 to 11, Redis 6.0 to 7.2)");
  file_.Consume(9);
  return Status::OK();
}

Status Importer::Body() {
  for (;;) {
    uint8_t op = 0;
    Status s = Item("missing EOF marker", [&](rdb::Reader& r) { return r.ReadByte(&op); });
    if (!s.ok()) return s;
    uint64_t a, b;
    std::string_view raw;
    std::string s1, s2;
    switch (op) {
      case rdb::kOpcodeEof:
        return Status::OK();
      case rdb::kOpcodeSelectDb:
        s = Item("bad SELECTDB", [&](rdb::Reader& r) { return ReadUnsigned(r, &a); });
        if (!s.ok()) return s;
        if (a >= static_cast<uint64_t>(keyspace_->databases()))
          return Corrupt("database " + std::to_string(a) + " beyond the " +
                         std::to_string(keyspace_->databases()) + " configured (databases)");
        db_ = static_cast<int>(a);
        break;
      case rdb::kOpcodeResizeDb:
        s = Item("bad RESIZEDB",
                 [&](rdb::Reader& r) { return ReadUnsigned(r, &a) && ReadUnsigned(r, &b); });
        break;
      case rdb::kOpcodeAux:
        s = Item("bad AUX field",
                 [&](rdb::Reader& r) { return r.ReadString(&s1) && r.ReadString(&s2); });
        break;
      case rdb::kOpcodeExpireTime:
      case rdb::kOpcodeExpireTimeMs:
        s = Item("bad expire time", [&](rdb::Reader& r) {
          return r.ReadBytes(op == rdb::kOpcodeExpireTime ? 4 : 8, &raw);
        });
        if (s.ok()) {
          uint64_t t = LittleEndian(raw);
          expire_ms_ = op == rdb::kOpcodeExpireTime ? static_cast<int64_t>(t) * 1000
                                                    : static_cast<int64_t>(t);
          if (expire_ms_ < 0) expire_ms_ = 0;  // long ago
        }
        break;
      case rdb::kOpcodeIdle:
        s = Item("bad IDLE", [&](rdb::Reader& r) { return ReadUnsigned(r, &a); });
        if (s.ok()) idle_s_ = static_cast<int64_t>(std::min<uint64_t>(a, INT64_MAX));
        break;
      case rdb::kOpcodeFreq:
        s = Item("bad FREQ", [&](rdb::Reader& r) { return r.ReadBytes(1, &raw); });
        if (s.ok()) freq_ = static_cast<uint8_t>(raw[0]);
        break;
      case rdb::kOpcodeFunctionPreGa:
        return Corrupt("pre-GA function format (Redis 7.0 release candidates) not supported");
      case rdb::kOpcodeFunction2:
        s = Item("bad FUNCTION2", [&](rdb::Reader& r) { return r.ReadString(&s1); });
        if (s.ok()) libraries_.push_back(std::move(s1));
        break;
      case rdb::kOpcodeModuleAux:
        s = Item("bad MODULE_AUX", [&](rdb::Reader& r) {
          uint64_t when;
          return ReadUnsigned(r, &a) && ReadUnsigned(r, &b) && b == kModuleOpUint &&
                 ReadUnsigned(r, &when) && SkipModuleValue(r);
        });
        if (s.ok())
          LOG(WARNING) << "RDB import: module AUX data of '" << ModuleName(a) << "' skipped";
        break;
      default:
        s = Key(op);
        break;
    }
    if (!s.ok()) return s;
  }
}

Status Importer::Key(uint8_t type) {
  std::string key;
  if (type == kTypeModulePreGa) return Corrupt("pre-GA module value");
  if (type == kTypeModule2) {
    uint64_t id;
    Status s = Item("bad module value", [&](rdb::Reader& r) {
      return r.ReadString(&key) && ReadUnsigned(r, &id) && SkipModuleValue(r);
    });
    if (!s.ok()) return s;
    LOG(WARNING) << "RDB import: key '" << key << "' of db " << db_ << " holds a value of module '"
                 << ModuleName(id) << "', which Basalt cannot load: skipped";
    stats_.module_keys_skipped++;
    expire_ms_ = idle_s_ = freq_ = -1;
    return Status::OK();
  }
  RdbValue value;
  Status s = Item("bad key", [&](rdb::Reader& r) {
    value = RdbValue();
    return r.ReadString(&key) && ParseRdbObject(r, type, &value);
  });
  if (!s.ok()) {
    bool malformed = s.message().rfind("ERR Bad RDB file", 0) == 0;
    return key.empty() || !malformed ? s
                                     : Corrupt("bad or unsupported value (type " +
                                               std::to_string(type) + ") of key '" + key + "'");
  }
  s = Write(key, value);
  expire_ms_ = idle_s_ = freq_ = -1;
  return s;
}

Status Importer::Write(const std::string& key, const RdbValue& value) {
  if (expire_ms_ >= 0 && expire_ms_ <= ctx_.now_ms()) {
    stats_.expired_skipped++;
    return Status::OK();
  }
  // The keyspace was empty: only the file's own keys can be there. A hash seen before (rarely
  // a collision) is checked against the keyspace.
  uint64_t hash = HashBytes(key) ^ (static_cast<uint64_t>(db_ + 1) * 0x9e3779b97f4a7c15ull);
  KeyState old;
  if (seen_.Contains(hash) && sink_ != nullptr)
    return Corrupt("duplicate key '" + key + "' in db " + std::to_string(db_));
  if (seen_.Contains(hash)) {
    auto found = ctx_.Lookup(db_, key);
    if (!found.ok()) return found.status();
    if (found->present) return Corrupt("duplicate key '" + key + "' in db " + std::to_string(db_));
    old = *found;
  }
  seen_.Insert(hash);
  Status s = WriteRdbValue(ctx_, db_, key, value, expire_ms_ < 0 ? 0 : expire_ms_, old);
  if (!s.ok()) return s;
  keyspace_->access().SetRestored(keyspace_->Physical(db_), key, ctx_.now_ms(), idle_s_, freq_);
  stats_.keys[db_]++;
  stats_.total_keys++;
  if (++uncommitted_keys_ >= kKeysPerCommit ||
      file_.consumed() - committed_bytes_ >= kBytesPerCommit)
    return Commit();
  return Status::OK();
}

Status Importer::Commit() {
  Status s = ctx_.Commit();
  uncommitted_keys_ = 0;
  committed_bytes_ = file_.consumed();
  Progress(false);
  return s;
}

void Importer::Progress(bool force) {
  int64_t now_ms = MonotonicMicros() / 1000;
  if (!force && now_ms - last_progress_ms_ < kProgressEveryMs) return;
  last_progress_ms_ = now_ms;
  double seconds = static_cast<double>(MonotonicMicros() - start_us_) / 1e6;
  double mb = static_cast<double>(file_.consumed()) / (1 << 20);
  double total_mb = static_cast<double>(file_.size()) / (1 << 20);
  double rate = seconds > 0 ? mb / seconds : 0;
  double left = rate > 0 ? (total_mb - mb) / rate : 0;
  char line[256];
  snprintf(line, sizeof line, "%.1f of %.1f MB (%.1f MB/s), about %.0f s left", mb, total_mb, rate,
           left);
  LOG(INFO) << "RDB import: " << stats_.total_keys << " keys, " << line;
}

Status Importer::Footer() {
  uint64_t expected = file_.crc();
  std::string_view raw;
  Status s = Item("missing checksum", [&](rdb::Reader& r) { return r.ReadBytes(8, &raw); });
  if (!s.ok()) return s;
  uint64_t stored = LittleEndian(raw);
  if (stored != 0 && stored != expected) return Corrupt("wrong checksum (CRC-64)");
  return Status::OK();
}

Status Importer::Finish() {
  if (!libraries_.empty()) {
    if (!options_.install_functions)
      return Status::RedisError(
          "ERR the RDB file holds function libraries, which this import "
          "cannot load");
    Status s = options_.install_functions(ctx_, libraries_);
    if (!s.ok()) return Status::RedisError("ERR loading the file's functions: " + s.message());
    stats_.functions = libraries_.size();
  }
  Status s = Commit();
  if (!s.ok() || sink_ == nullptr) return s;
  rocksdb::Status ingested = sink_->Ingest();
  if (!ingested.ok())
    return Status::RedisError("ERR ingesting the imported data: " + ingested.ToString());
  return Status::OK();
}

Status Importer::Run(const std::string& path) {
  for (int db = 0; db < keyspace_->databases(); db++) {
    if (keyspace_->KeyCount(db) != 0)
      return Status::RedisError("ERR an RDB import needs an empty keyspace, and db " +
                                std::to_string(db) + " holds keys (FLUSHALL first)");
  }
  Status s = file_.Open(path);
  if (!s.ok()) return s;
  s = keyspace_->MarkImportStarted(path);
  if (!s.ok()) return s;
  stats_.bytes = file_.size();
  LOG(INFO) << "RDB import of " << path << " (" << file_.size() << " bytes) starts";
  s = Header();
  if (s.ok()) s = Body();
  if (s.ok()) s = Footer();
  if (s.ok()) s = Finish();
  stats_.seconds = static_cast<double>(MonotonicMicros() - start_us_) / 1e6;
  if (s.ok()) {
    Progress(true);
    return keyspace_->MarkImportFinished();
  }
  LOG(WARNING) << "RDB import of " << path << " failed: " << s.message()
               << "; emptying the keyspace again";
  ctx_.Discard();
  Status flushed = keyspace_->FlushAll();
  if (!flushed.ok())
    LOG(ERROR) << "RDB import: emptying the keyspace failed: " << flushed.message();
  // Unmarked only once emptied: if emptying failed, the next start empties it.
  if (flushed.ok()) {
    Status unmarked = keyspace_->MarkImportFinished();
    if (!unmarked.ok()) LOG(ERROR) << "RDB import: " << unmarked.message();
  }
  return s;
}

}  // namespace

StatusOr<RdbImportStats> ImportRdbFile(Keyspace* keyspace, const std::string& path,
                                       const RdbImportOptions& options) {
  Importer importer(keyspace, options);
  Status s = importer.Run(path);
  if (!s.ok()) return s;
  return importer.stats();
}

}  // namespace basalt
