#include "types/rdb_writer.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <shared_mutex>

#include "common/crc64.h"
#include "common/rdb_encoding.h"
#include "common/version.h"
#include "types/rdb_value.h"

namespace basalt {

namespace {

// Where src/scripting/functions.h keeps each function library in the `propagate` family:
// "function:<name>" -> its code.
constexpr std::string_view kFunctionPrefix = "function:";

constexpr size_t kChunkBytes = 64 * 1024;

// The file as it is written: buffered, checksummed, handed to the sink in chunks.
class RdbOut {
 public:
  explicit RdbOut(const RdbSink& sink) : sink_(sink) {}

  std::string& buf() { return buf_; }
  void Byte(uint8_t b) { buf_.push_back(static_cast<char>(b)); }
  void Aux(std::string_view key, std::string_view value) {
    Byte(rdb::kOpcodeAux);
    rdb::AppendString(&buf_, key);
    rdb::AppendString(&buf_, value);
  }
  Status MaybeFlush() { return buf_.size() >= kChunkBytes ? Flush() : Status::OK(); }
  Status Flush() {
    crc_ = Crc64(crc_, buf_);
    bytes_ += buf_.size();
    Status s = buf_.empty() ? Status::OK() : sink_(buf_);
    buf_.clear();
    return s;
  }
  // The EOF opcode and the checksum of everything before it.
  Status Finish() {
    Byte(rdb::kOpcodeEof);
    crc_ = Crc64(crc_, buf_);
    for (int i = 0; i < 8; i++) Byte(static_cast<uint8_t>((crc_ >> (8 * i)) & 0xff));
    bytes_ += buf_.size();
    Status s = sink_(buf_);
    buf_.clear();
    return s;
  }
  uint64_t bytes() const { return bytes_; }

 private:
  const RdbSink& sink_;
  std::string buf_;
  uint64_t crc_ = 0;
  uint64_t bytes_ = 0;
};

struct DbMap {
  std::array<uint8_t, kMaxDatabases> physical{};
  bool operator==(const DbMap&) const = default;
};

DbMap ReadDbMap(const Keyspace* keyspace) {
  DbMap map;
  for (int db = 0; db < keyspace->databases(); db++) map.physical[db] = keyspace->Physical(db);
  return map;
}

// The moment the file shows: a snapshot and the database map that goes with it.
struct Moment {
  std::unique_ptr<Engine::LongSnapshot> snapshot;
  DbMap map;
};

StatusOr<Moment> TakeMoment(Keyspace* keyspace, bool lock,
                            const std::function<void()>& at_snapshot) {
  if (lock && at_snapshot) {
    std::unique_lock<WriterPreferringMutex> held(keyspace->exclusive());
    auto snapshot = keyspace->engine()->AcquireLongSnapshot();
    if (!snapshot.ok()) return snapshot.status();
    at_snapshot();
    return Moment{std::move(*snapshot), ReadDbMap(keyspace)};
  }
  if (lock) {
    std::shared_lock<WriterPreferringMutex> held(keyspace->exclusive());
    auto snapshot = keyspace->engine()->AcquireLongSnapshot();
    if (!snapshot.ok()) return snapshot.status();
    return Moment{std::move(*snapshot), ReadDbMap(keyspace)};
  }
  // The caller's lock keeps SWAPDB (which takes it exclusively) out.
  auto snapshot = keyspace->engine()->AcquireLongSnapshot();
  if (!snapshot.ok()) return snapshot.status();
  return Moment{std::move(*snapshot), ReadDbMap(keyspace)};
}

// The live keys and those with an expiry in metadata [begin, end): RESIZEDB's two counts.
Status CountKeys(Context& ctx, uint8_t pdb, uint64_t* keys, uint64_t* expires) {
  std::string upper = DatabaseEnd(pdb);
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  auto it = ctx.batch().NewIterator(ColumnFamily::kMetadata, &ro);
  *keys = *expires = 0;
  for (it->Seek(DatabaseBegin(pdb)); it->Valid(); it->Next()) {
    RedisType type;
    int64_t expire_ms;
    if (!Metadata::DecodeHeader(it->value().ToStringView(), &type, &expire_ms)) continue;
    if (expire_ms != 0 && expire_ms <= ctx.now_ms()) continue;
    ++*keys;
    if (expire_ms != 0) ++*expires;
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  return Status::OK();
}

// One key: [EXPIRETIME_MS ms] type key object.
Status WriteKey(Context& ctx, int db, std::string_view key, const Metadata& meta, RdbOut& out) {
  auto payload = DumpKey(ctx, db, key, meta);
  if (!payload.ok()) return payload.status();
  // The payload is the object (type byte first) and the 10-byte DUMP footer.
  constexpr size_t kFooterBytes = 10;
  std::string_view object(*payload);
  object.remove_suffix(kFooterBytes);
  std::string& buf = out.buf();
  if (meta.expire_ms != 0) {
    out.Byte(rdb::kOpcodeExpireTimeMs);
    for (int i = 0; i < 8; i++)
      out.Byte(static_cast<uint8_t>((static_cast<uint64_t>(meta.expire_ms) >> (8 * i)) & 0xff));
  }
  buf.push_back(object[0]);
  rdb::AppendString(&buf, key);
  buf.append(object.substr(1));
  return out.MaybeFlush();
}

Status WriteDatabase(Context& ctx, const Moment& moment, int db, RdbOut& out, RdbFileStats* stats) {
  const uint8_t pdb = moment.map.physical[db];
  uint64_t keys, expires;
  Status s = CountKeys(ctx, pdb, &keys, &expires);
  if (!s.ok() || keys == 0) return s;
  out.Byte(rdb::kOpcodeSelectDb);
  rdb::AppendLength(&out.buf(), db);
  out.Byte(rdb::kOpcodeResizeDb);
  rdb::AppendLength(&out.buf(), keys);
  rdb::AppendLength(&out.buf(), expires);

  std::string upper = DatabaseEnd(pdb);
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  auto it = ctx.batch().NewIterator(ColumnFamily::kMetadata, &ro);
  Keyspace* keyspace = ctx.keyspace();
  for (it->Seek(DatabaseBegin(pdb)); it->Valid(); it->Next()) {
    if (moment.snapshot->abandoned())
      return Status::Busy("the data was replaced by a full sync during the save");
    Metadata meta;
    if (!meta.Decode(it->value().ToStringView()))
      return Status::IOError("corrupt metadata for a key");
    if (meta.ExpiredAt(ctx.now_ms())) continue;
    std::string_view key(it->key().data() + 1, it->key().size() - 1);
    // DumpKey addresses the logical database, which must still be the snapshot's physical one.
    if (keyspace->Physical(db) == pdb) s = WriteKey(ctx, db, key, meta, out);
    if (keyspace->Physical(db) != pdb) return Status::Busy("SWAPDB ran during the save");
    if (!s.ok()) return s;
    ++stats->keys;
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  return Status::OK();
}

Status WriteFunctions(Context& ctx, RdbOut& out) {
  std::string lower(kFunctionPrefix), upper(kFunctionPrefix);
  upper.back()++;
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  auto it = ctx.batch().NewIterator(ColumnFamily::kPropagate, &ro);
  for (it->Seek(lower); it->Valid(); it->Next()) {
    out.Byte(rdb::kOpcodeFunction2);
    rdb::AppendString(&out.buf(), it->value().ToStringView());
    Status s = out.MaybeFlush();
    if (!s.ok()) return s;
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  return Status::OK();
}

void WriteHeader(RdbOut& out, int64_t now_ms) {
  char magic[16];
  snprintf(magic, sizeof magic, "REDIS%04d", rdb::kVersion);
  out.buf().append(magic);
  out.Aux("redis-ver", kRedisVersion);
  out.Aux("redis-bits", std::to_string(sizeof(void*) * 8));
  out.Aux("ctime", std::to_string(now_ms / 1000));
  // Redis's heap size; Basalt's data is on disk, and what it holds in memory is mostly caches.
  out.Aux("used-mem", "0");
  out.Aux("aof-base", "0");
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError(std::string("writing the RDB file: ") + strerror(errno));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

Status SyncDirectoryOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return Status::IOError("can't open '" + dir + "': " + strerror(errno));
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  if (rc != 0) return Status::IOError("can't fsync '" + dir + "': " + strerror(saved));
  return Status::OK();
}

}  // namespace

Status WriteRdb(Keyspace* keyspace, bool lock, const RdbSink& sink, RdbFileStats* stats,
                const std::function<void()>& at_snapshot) {
  RdbFileStats ignored;
  if (stats == nullptr) stats = &ignored;
  *stats = RdbFileStats();
  auto moment = TakeMoment(keyspace, lock, at_snapshot);
  if (!moment.ok()) return moment.status();
  Context ctx(keyspace);
  ctx.batch().set_snapshot(moment->snapshot->get());
  RdbOut out(sink);
  WriteHeader(out, ctx.now_ms());
  Status s;
  for (int db = 0; db < keyspace->databases() && s.ok(); db++)
    s = WriteDatabase(ctx, *moment, db, out, stats);
  if (s.ok()) s = WriteFunctions(ctx, out);
  if (s.ok()) s = out.Flush();
  if (s.ok()) s = out.Finish();
  stats->bytes = out.bytes();
  return s;
}

Status SaveRdbFile(Keyspace* keyspace, bool lock, const std::string& path, RdbFileStats* stats,
                   const std::function<bool()>& may_replace) {
  static std::atomic<uint64_t> counter{0};
  std::string tmp = path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("can't create '" + tmp + "': " + strerror(errno));
  Status s = WriteRdb(
      keyspace, lock, [fd](std::string_view chunk) { return WriteAll(fd, chunk); }, stats);
  if (s.ok() && ::fsync(fd) != 0)
    s = Status::IOError("can't fsync '" + tmp + "': " + strerror(errno));
  if (::close(fd) != 0 && s.ok())
    s = Status::IOError("can't close '" + tmp + "': " + strerror(errno));
  if (s.ok() && may_replace && !may_replace()) s = Status::Busy("the save was cancelled");
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0)
    s = Status::IOError("can't rename '" + tmp + "' to '" + path + "': " + strerror(errno));
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return SyncDirectoryOf(path);
}

}  // namespace basalt
