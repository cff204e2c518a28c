#include "commands/saves.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "commands/server_state.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "repl/checkpoint.h"
#include "storage/format_marker.h"
#include "types/rdb_writer.h"

namespace basalt {

namespace {

// A replica waits for the file after +FULLRESYNC; a newline now and then tells it the master
// is alive (Redis's replicas and redis-cli skip them).
constexpr int64_t kKeepAliveMs = 1000;

// Reads "<prefix><number>\r\n" at *pos of `in`; false when incomplete or malformed.
bool ReadNumberLine(const std::string& in, size_t* pos, char prefix, uint64_t* value) {
  const size_t end = in.find("\r\n", *pos);
  if (end == std::string::npos || in[*pos] != prefix) return false;
  auto n = ParseUnsigned(std::string_view(in).substr(*pos + 1, end - *pos - 1));
  if (!n) return false;
  *value = *n;
  *pos = end + 2;
  return true;
}

// Takes the complete commands at the front of `input`, which a Redis replica sends its master
// (REPLCONF ACK <offset>, once a second), and returns the last ACK's offset, if any. A partial
// command stays for the next read; anything that is not RESP is dropped.
std::optional<uint64_t> TakeLastAck(std::string* input) {
  std::optional<uint64_t> last;
  size_t taken = 0;
  while (taken < input->size()) {
    size_t pos = taken;
    uint64_t argc = 0;
    if ((*input)[pos] != '*') {
      taken = input->size();
      break;
    }
    if (!ReadNumberLine(*input, &pos, '*', &argc) || argc > 8) break;
    std::vector<std::string_view> argv;
    for (uint64_t i = 0; i < argc; i++) {
      uint64_t len = 0;
      if (pos >= input->size() || !ReadNumberLine(*input, &pos, '$', &len)) break;
      if (pos + len + 2 > input->size()) break;
      argv.push_back(std::string_view(*input).substr(pos, len));
      pos += len + 2;
    }
    if (argv.size() != argc) break;  // incomplete
    taken = pos;
    if (argc == 3 && EqualsIgnoreCase(argv[0], "replconf") && EqualsIgnoreCase(argv[1], "ack")) {
      if (auto offset = ParseUnsigned(argv[2])) last = *offset;
    }
  }
  input->erase(0, taken);
  if (input->size() > 65536) input->clear();  // no RESP command of a replica is that long
  return last;
}

Status SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError(std::string("sending: ") + strerror(errno));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

// Sends [0, size) of file `file` to socket `fd`.
Status SendFile(int fd, int file, uint64_t size) {
  std::string buf(64 * 1024, '\0');
  uint64_t offset = 0;
  while (offset < size) {
    ssize_t n = ::pread(file, buf.data(), std::min<uint64_t>(buf.size(), size - offset),
                        static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IOError("reading the RDB file back");
    Status s = SendAll(fd, std::string_view(buf.data(), static_cast<size_t>(n)));
    if (!s.ok()) return s;
    offset += static_cast<uint64_t>(n);
  }
  return Status::OK();
}

}  // namespace

Saves::Saves(ServerState* server) : server_(server) {}

Status Saves::FlushMemtables() {
  Engine* engine = server_->keyspace->engine();
  rocksdb::FlushOptions fo;
  for (int i = 0; i < kColumnFamilyCount; i++) {
    rocksdb::Status s = engine->db()->Flush(fo, engine->cf(static_cast<ColumnFamily>(i)));
    if (!s.ok()) return Status::IOError("flushing the memtables: " + s.ToString());
  }
  return Status::OK();
}

Status Saves::SaveNow(bool lock, bool flush_memtables, const std::function<bool()>& may_replace) {
  Config* config = server_->config;
  std::filesystem::path path =
      std::filesystem::path(config->GetString("dir")) / config->GetString("dbfilename");
  RdbFileStats stats;
  // What the file holds at least; changes between here and its snapshot stay counted.
  const int64_t changes = server_->keyspace->changes_since_save();
  Status s = SaveRdbFile(server_->keyspace, lock, path.string(), &stats, may_replace);
  if (s.ok()) server_->keyspace->SubtractSavedChanges(changes);
  if (s.ok() && flush_memtables) {
    Status flushed = FlushMemtables();
    if (!flushed.ok()) LOG(WARNING) << "save: " << flushed.message();
  }
  if (s.ok()) {
    server_->counters.rdb_saves.fetch_add(1, std::memory_order_relaxed);
    server_->last_save_unix = time(nullptr);
    LOG(INFO) << "saved " << stats.keys << " keys (" << stats.bytes << " bytes) to " << path;
    std::lock_guard<std::mutex> guard(mu_);
    info_.last_save_keys = stats.keys;
  } else {
    LOG(WARNING) << "saving " << path << " failed: " << s.message();
  }
  return s;
}

Status Saves::Save() {
  if (bgsave_running_.load()) return Status::RedisError("ERR Background save already in progress");
  Status s = SaveNow(false);
  if (!s.ok()) return Status::RedisError("ERR " + s.message());
  return s;
}

bool Saves::StartBackgroundSave() {
  std::lock_guard<std::mutex> guard(mu_);
  if (bgsave_running_.load() || stopping_.load()) return false;
  if (bgsave_thread_.joinable()) bgsave_thread_.join();  // the previous one, finished
  bgsave_running_ = true;
  info_.bgsave_started_ms = UnixMillis();
  {
    std::lock_guard<std::mutex> replace(replace_mu_);
    bgsave_cancelled_ = false;
  }
  bgsave_thread_ = std::thread([this] {
    int64_t started = UnixMillis();
    std::unique_lock<std::mutex> replace(replace_mu_, std::defer_lock);
    bool cancelled = false;
    Status s = SaveNow(true, true, [&] {
      replace.lock();
      cancelled = bgsave_cancelled_;
      return !cancelled;
    });
    if (replace.owns_lock()) replace.unlock();
    std::lock_guard<std::mutex> done(mu_);
    info_.last_bgsave_seconds = (UnixMillis() - started) / 1000;
    // A save cancelled by FLUSHALL did not fail, as a Redis child killed for it did not.
    if (!cancelled) info_.last_bgsave_ok = s.ok();
    bgsave_running_ = false;
  });
  return true;
}

Status Saves::SaveAfterFlushAll() {
  {
    std::lock_guard<std::mutex> replace(replace_mu_);
    if (bgsave_running_.load()) bgsave_cancelled_ = true;
  }
  // FLUSHALL has dropped what its memtables held (Keyspace::FlushAll).
  return SaveNow(false, false);
}

void Saves::ServeSync(int fd, SyncRequest request) {
  ReapTransfers();
  std::lock_guard<std::mutex> guard(mu_);
  if (stopping_.load()) {
    ::close(fd);
    return;
  }
  auto transfer = std::make_unique<Transfer>();
  transfer->fd = fd;
  transfer->ip = request.ip;
  transfer->port = request.port;
  transfer->replica = !request.rdb_only;
  transfer->start_offset = request.offset;
  Transfer* raw = transfer.get();
  transfers_.push_back(std::move(transfer));
  raw->thread =
      std::thread([this, raw, request = std::move(request)] { RunTransfer(raw, request); });
}

Status Saves::SendRdb(Transfer* transfer, const SyncRequest& request,
                      std::shared_ptr<ReplicaStream::Feed>* feed) {
  const int fd = transfer->fd;
  if (request.psync) {
    Status s = SendAll(
        fd, "+FULLRESYNC " + request.replid + " " + std::to_string(request.offset) + "\r\n");
    if (!s.ok()) return s;
  }
  std::string tmp;
  {
    std::lock_guard<std::mutex> guard(mu_);
    tmp =
        (std::filesystem::path(server_->config->GetString("dir")) /
         ("temp-sync-" + std::to_string(getpid()) + "-" + std::to_string(++temp_counter_) + ".rdb"))
            .string();
  }
  int file = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (file < 0) return Status::IOError("can't create '" + tmp + "': " + strerror(errno));
  ::unlink(tmp.c_str());  // nothing to clean up after a crash
  int64_t last_sent_ms = UnixMillis();
  uint64_t size = 0;
  Status s = WriteRdb(
      server_->keyspace, true,
      [&](std::string_view chunk) -> Status {
        if (stopping_.load()) return Status::Busy("the server is stopping");
        if (::pwrite(file, chunk.data(), chunk.size(), static_cast<off_t>(size)) !=
            static_cast<ssize_t>(chunk.size()))
          return Status::IOError(std::string("writing the RDB file: ") + strerror(errno));
        size += chunk.size();
        if (UnixMillis() - last_sent_ms < kKeepAliveMs) return Status::OK();
        last_sent_ms = UnixMillis();
        return SendAll(fd, "\n");
      },
      nullptr,
      feed == nullptr ? std::function<void()>()
                      : [this, feed] { *feed = server_->replica_stream.Attach(); });
  std::string header = "$";
  header.append(std::to_string(size)).append("\r\n");
  if (s.ok()) s = SendAll(fd, header);
  if (s.ok()) s = SendFile(fd, file, size);
  ::close(file);
  return s;
}

void Saves::RunTransfer(Transfer* transfer, SyncRequest request) {
  // The socket came from the event loop non-blocking.
  int flags = ::fcntl(transfer->fd, F_GETFL);
  if (flags >= 0) ::fcntl(transfer->fd, F_SETFL, flags & ~O_NONBLOCK);
  std::shared_ptr<ReplicaStream::Feed> feed;
  Status s = SendRdb(transfer, request, request.rdb_only ? nullptr : &feed);
  if (s.ok()) {
    std::lock_guard<std::mutex> guard(mu_);
    info_.syncs++;
  } else {
    LOG(WARNING) << "SYNC: sending the RDB file failed: " << s.message();
  }
  if (s.ok() && feed != nullptr) StreamCommands(transfer, *feed);
  if (feed != nullptr) server_->replica_stream.Detach(feed);
  {
    std::lock_guard<std::mutex> guard(transfer->mu);
    ::close(transfer->fd);
    transfer->fd = -1;
  }
  transfer->done = true;
}

void Saves::StreamCommands(Transfer* transfer, ReplicaStream::Feed& feed) {
  const int fd = transfer->fd;
  ReplicaStream& stream = server_->replica_stream;
  transfer->attach_position = feed.attach_position();
  transfer->streaming = true;
  std::string bytes;
  std::string input;
  char chunk[4096];
  while (!stopping_.load()) {
    stream.PingIfDue(server_->config->GetInt("repl-ping-replica-period") * 1000);
    if (!feed.Take(&bytes)) {
      LOG(WARNING) << "SYNC: disconnecting a Redis replica: its command stream reached the "
                      "output limit, or this server became a replica";
      return;
    }
    if (!bytes.empty() && !SendAll(fd, bytes).ok()) return;
    pollfd p[2] = {{fd, POLLIN, 0}, {feed.wake_fd(), POLLIN, 0}};
    int ready = ::poll(p, 2, 1000);
    if (ready < 0 && errno != EINTR) return;
    if (ready <= 0 || p[0].revents == 0) continue;
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n == 0 || (n < 0 && errno != EINTR)) return;
    if (n > 0) input.append(chunk, static_cast<size_t>(n));
    if (auto offset = TakeLastAck(&input)) {
      transfer->acked_offset = *offset;
      transfer->last_ack_unix_ms = UnixMillis();
      server_->blocking.OnReplicaAck();  // WAIT counts again
    }
  }
}

void Saves::ReapTransfers() {
  std::vector<std::unique_ptr<Transfer>> finished;
  {
    std::lock_guard<std::mutex> guard(mu_);
    for (auto& t : transfers_) {
      if (t->done.load()) finished.push_back(std::move(t));
    }
    std::erase(transfers_, nullptr);
  }
  for (auto& t : finished) t->thread.join();
}

Status Saves::Backup(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec))
    return Status::RedisError("ERR backup directory '" + dir + "' already exists");
  Status s = MakeCheckpoint(server_->keyspace->engine(), dir);
  if (s.ok()) s = WriteFormatMarker(dir, kDataFormatVersion);
  if (!s.ok()) {
    std::filesystem::remove_all(dir, ec);
    s = Status::RedisError("ERR backup failed: " + s.message());
  } else {
    LOG(INFO) << "backup made in " << dir;
  }
  std::lock_guard<std::mutex> guard(mu_);
  info_.last_backup_ok = s.ok();
  if (s.ok()) {
    info_.backups++;
    info_.last_backup_unix = time(nullptr);
  }
  return s;
}

std::vector<Saves::RedisReplica> Saves::RedisReplicas() const {
  std::vector<RedisReplica> out;
  std::lock_guard<std::mutex> guard(mu_);
  for (const auto& t : transfers_) {
    if (!t->replica || t->done.load()) continue;
    out.push_back(
        {t->ip, t->port, t->streaming.load(), t->acked_offset.load(), t->last_ack_unix_ms.load()});
  }
  return out;
}

int Saves::CountRedisReplicasAcked(uint64_t position) const {
  std::lock_guard<std::mutex> guard(mu_);
  int n = 0;
  for (const auto& t : transfers_) {
    if (!t->replica || t->done.load() || !t->streaming.load() || t->last_ack_unix_ms == 0) {
      continue;
    }
    const uint64_t acked = t->acked_offset.load();
    if (acked < t->start_offset) continue;
    if (t->attach_position.load() + (acked - t->start_offset) >= position) n++;
  }
  return n;
}

int Saves::CountRedisReplicasAckedWithin(int64_t max_lag_ms) const {
  const int64_t now = UnixMillis();
  std::lock_guard<std::mutex> guard(mu_);
  int n = 0;
  for (const auto& t : transfers_) {
    if (!t->replica || t->done.load() || !t->streaming.load()) continue;
    const int64_t last_ack = t->last_ack_unix_ms.load();
    if (last_ack != 0 && now - last_ack <= max_lag_ms) n++;
  }
  return n;
}

Saves::Info Saves::info() const {
  std::lock_guard<std::mutex> guard(mu_);
  Info info = info_;
  info.bgsave_running = bgsave_running_.load();
  return info;
}

void Saves::Stop() {
  std::vector<std::unique_ptr<Transfer>> transfers;
  {
    std::lock_guard<std::mutex> guard(mu_);
    stopping_ = true;
    transfers.swap(transfers_);
  }
  for (auto& t : transfers) {
    std::lock_guard<std::mutex> guard(t->mu);
    if (t->fd >= 0) ::shutdown(t->fd, SHUT_RDWR);
  }
  for (auto& t : transfers) t->thread.join();
  if (bgsave_thread_.joinable()) bgsave_thread_.join();
}

}  // namespace basalt
