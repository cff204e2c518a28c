#include "repl/redis_follower.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "common/clock.h"
#include "common/strutil.h"
#include "repl/applier.h"
#include "types/rdb_loader.h"

namespace basalt {

namespace {

constexpr int64_t kAckIntervalMs = 1000;
constexpr size_t kMarkSize = 40;          // RDB_EOF_MARK_SIZE of a diskless transfer
constexpr size_t kMaxArgs = 1024 * 1024;  // Redis's limit on a multibulk's element count

int64_t MonotonicMillis() {
  return MonotonicMicros() / 1000;
}

// Reads a "\r\n"-terminated line starting at `pos`; npos when it is not complete.
size_t LineEnd(std::string_view in, size_t pos) {
  return in.find("\r\n", pos);
}

// At most `max` bytes of what the master sent, for an error message that INFO shows on one line.
std::string Printable(std::string_view text, size_t max) {
  std::string out(text.substr(0, max));
  for (char& ch : out) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
  }
  return out;
}

std::vector<std::string> SplitSpaces(std::string_view line) {
  std::vector<std::string> words;
  size_t pos = 0;
  while (pos < line.size()) {
    size_t end = line.find(' ', pos);
    if (end == std::string_view::npos) end = line.size();
    if (end > pos) words.emplace_back(line.substr(pos, end - pos));
    pos = end + 1;
  }
  return words;
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n <= 0) return Status::IOError("can't write the RDB file from the master");
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

// The master's answer to a handshake command, which must be a status reply.
Status ExpectStatus(ReplSocket* sock, const char* what, bool must_succeed) {
  std::string line;
  Status s = sock->ReadLine(&line);
  if (!s.ok()) return s;
  if (!line.empty() && line[0] == '+') return Status::OK();
  if (!must_succeed) {
    LOG(WARNING) << "replication: the master answered " << what << " with: " << line;
    return Status::OK();
  }
  return Status::IOError(std::string("the master refused ") + what + ": " + Printable(line, 200));
}

}  // namespace

StatusOr<bool> ParseMultibulk(std::string_view in, size_t max_bulk, std::vector<std::string>* argv,
                              size_t* used) {
  *used = 0;
  if (in.empty()) return false;
  if (in[0] != '*') return Status::IOError("protocol error from the master: expected '*'");
  size_t end = LineEnd(in, 0);
  if (end == std::string_view::npos) {
    if (in.size() > 32) return Status::IOError("protocol error from the master: bad count");
    return false;
  }
  auto count = ParseInt64(in.substr(1, end - 1));
  if (!count || *count < 1 || static_cast<uint64_t>(*count) > kMaxArgs)
    return Status::IOError("protocol error from the master: bad multibulk count");
  size_t pos = end + 2;
  argv->resize(static_cast<size_t>(*count));
  for (auto& arg : *argv) {
    if (pos >= in.size()) return false;
    if (in[pos] != '$') return Status::IOError("protocol error from the master: expected '$'");
    end = LineEnd(in, pos);
    if (end == std::string_view::npos) {
      if (in.size() - pos > 32)
        return Status::IOError("protocol error from the master: bad length");
      return false;
    }
    auto len = ParseInt64(in.substr(pos + 1, end - pos - 1));
    if (!len || *len < 0 || static_cast<uint64_t>(*len) > max_bulk)
      return Status::IOError("protocol error from the master: bad bulk length");
    pos = end + 2;
    size_t n = static_cast<size_t>(*len);
    if (in.size() - pos < n + 2) return false;
    if (in.substr(pos + n, 2) != "\r\n")
      return Status::IOError("protocol error from the master: bulk not terminated by CRLF");
    arg.assign(in.substr(pos, n));
    pos += n + 2;
  }
  *used = pos;
  return true;
}

RedisFollower::RedisFollower(Keyspace* keyspace, Config* config, RedisMasterHooks hooks,
                             int listening_port, const std::atomic<bool>* stop)
    : keyspace_(keyspace),
      config_(config),
      hooks_(std::move(hooks)),
      listening_port_(listening_port),
      stop_(stop) {}

RedisFollower::Progress RedisFollower::progress() const {
  std::lock_guard<std::mutex> lock(mu_);
  return progress_;
}

void RedisFollower::NoteRead(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  progress_.sync_read_bytes += bytes;
  progress_.last_io_unix_ms = UnixMillis();
}

Status RedisFollower::Run(ReplSocket* sock, const SyncPhase& phase) {
  if (hooks_.sink == nullptr) return Status::IOError("following a Redis master is not set up");
  {
    std::lock_guard<std::mutex> lock(mu_);
    progress_ = Progress{};
  }
  Status s = Handshake(sock);
  if (!s.ok()) return s;
  phase(true);
  std::string path = keyspace_->engine()->SiblingPath(".redis-sync.rdb");
  s = ReceiveRdb(sock, path);
  if (s.ok()) s = LoadKeepingLinkAlive(sock, path);
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (!s.ok()) return s;
  hooks_.sink->Reset();
  phase(false);
  return Stream(sock);
}

Status RedisFollower::Handshake(ReplSocket* sock) {
  Status s = sock->Send(RespCommand({"PING"}));
  if (s.ok()) s = ExpectStatus(sock, "PING", true);
  if (s.ok()) {
    s = sock->Send(RespCommand({"REPLCONF", "listening-port", std::to_string(listening_port_)}));
  }
  if (s.ok()) s = ExpectStatus(sock, "REPLCONF listening-port", false);
  if (s.ok()) s = sock->Send(RespCommand({"REPLCONF", "capa", "eof", "capa", "psync2"}));
  if (s.ok()) s = ExpectStatus(sock, "REPLCONF capa", false);
  if (s.ok()) s = sock->Send(RespCommand({"PSYNC", "?", "-1"}));
  // A master that delays its diskless sync (repl-diskless-sync-delay) answers PSYNC only when
  // the transfer starts, and sends newlines until then.
  if (s.ok()) s = SkipNewlines(sock);
  std::string line;
  if (s.ok()) s = sock->ReadLine(&line);
  if (!s.ok()) return s;
  // "+FULLRESYNC <replid> <offset>"
  std::vector<std::string> words = SplitSpaces(line);
  if (words.size() != 3 || words[0] != "+FULLRESYNC")
    return Status::IOError("unexpected answer to PSYNC: " + Printable(line, 200));
  auto offset = ParseInt64(words[2]);
  if (!offset || *offset < 0) return Status::IOError("bad offset in " + Printable(line, 200));
  std::lock_guard<std::mutex> lock(mu_);
  progress_.master_replid = words[1];
  progress_.offset = static_cast<uint64_t>(*offset);
  progress_.last_io_unix_ms = UnixMillis();
  LOG(INFO) << "replication: full sync from Redis master, replication id " << words[1] << " offset "
            << *offset;
  return Status::OK();
}

Status RedisFollower::SkipNewlines(ReplSocket* sock) {
  while (true) {
    Status s = sock->Fill(1);
    if (!s.ok()) return s;
    if (sock->buffered()[0] != '\n') return Status::OK();
    sock->Consume(1);
    std::lock_guard<std::mutex> lock(mu_);
    progress_.last_io_unix_ms = UnixMillis();
  }
}

Status RedisFollower::ReceiveRdb(ReplSocket* sock, const std::string& path) {
  // While it prepares the RDB the master sends newlines to keep the link alive.
  Status s = SkipNewlines(sock);
  if (!s.ok()) return s;
  std::string header;
  s = sock->ReadLine(&header);
  if (!s.ok()) return s;
  if (header.empty() || header[0] != '$')
    return Status::IOError("unexpected RDB header from the master: " + Printable(header, 100));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("can't create " + path);
  if (header.rfind("$EOF:", 0) == 0) {
    std::string mark = header.substr(5);
    s = mark.size() == kMarkSize ? ReceiveDisklessRdb(sock, fd, mark)
                                 : Status::IOError("bad EOF mark from the master");
  } else {
    auto size = ParseInt64(std::string_view(header).substr(1));
    s = size && *size >= 0 ? ReceiveSizedRdb(sock, fd, static_cast<uint64_t>(*size))
                           : Status::IOError("bad RDB length from the master");
  }
  if (s.ok() && ::fsync(fd) != 0) s = Status::IOError("can't fsync " + path);
  ::close(fd);
  return s;
}

Status RedisFollower::ReceiveSizedRdb(ReplSocket* sock, int fd, uint64_t size) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    progress_.sync_total_bytes = size;
  }
  uint64_t left = size;
  while (left > 0) {
    if (sock->buffered().empty()) {
      Status s = sock->Fill(1);
      if (!s.ok()) return s;
    }
    std::string_view chunk = sock->buffered();
    if (chunk.size() > left) chunk = chunk.substr(0, static_cast<size_t>(left));
    Status s = WriteAll(fd, chunk);
    if (!s.ok()) return s;
    sock->Consume(chunk.size());
    left -= chunk.size();
    NoteRead(chunk.size());
  }
  return Status::OK();
}

// The payload ends with the 40-byte mark of the header. The last 39 bytes seen are held back
// until more arrive, since they may be the start of the mark.
Status RedisFollower::ReceiveDisklessRdb(ReplSocket* sock, int fd, const std::string& mark) {
  std::string held;
  while (true) {
    Status s = sock->Fill(1);
    if (!s.ok()) return s;
    std::string_view in = sock->buffered();
    size_t before = held.size();
    held.append(in);
    size_t at = held.find(mark);
    if (at != std::string::npos) {
      s = WriteAll(fd, std::string_view(held).substr(0, at));
      if (!s.ok()) return s;
      sock->Consume(at + kMarkSize - before);
      NoteRead(at + kMarkSize - before);
      return Status::OK();
    }
    size_t keep = std::min(held.size(), kMarkSize - 1);
    s = WriteAll(fd, std::string_view(held).substr(0, held.size() - keep));
    if (!s.ok()) return s;
    held.erase(0, held.size() - keep);
    sock->Consume(in.size());
    NoteRead(in.size());
  }
}

// A master that sent the RDB from a file counts the replica as online from then on and drops it
// after repl-timeout seconds without a sign of life; a load can take longer. As a Redis replica
// does, this one sends a newline every second while it loads (the master takes an empty line
// from a replica as a sign of life); the socket is left to that thread meanwhile.
Status RedisFollower::LoadKeepingLinkAlive(ReplSocket* sock, const std::string& path) {
  std::atomic<bool> loaded{false};
  Status sent;
  std::thread keepalive([&] {
    int64_t next = MonotonicMillis() + kAckIntervalMs;
    while (!loaded.load() && sent.ok()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (MonotonicMillis() < next) continue;
      sent = sock->Send("\n");
      next += kAckIntervalMs;
    }
  });
  Status s = LoadRdb(path);
  loaded = true;
  keepalive.join();
  return s.ok() ? sent : s;
}

Status RedisFollower::LoadRdb(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  keyspace_->BeginLoading(ec ? 0 : static_cast<uint64_t>(size));
  if (!LockKeyspaceExclusive(keyspace_, *stop_)) {
    keyspace_->EndLoading();
    return Status::Busy("stopping");
  }
  RdbImportOptions options;
  options.install_functions = hooks_.install_functions;
  Status s = keyspace_->FlushAll();
  StatusOr<RdbImportStats> stats = s.ok() ? ImportRdbFile(keyspace_, path, options) : s;
  keyspace_->exclusive().unlock();
  keyspace_->EndLoading();
  if (!stats.ok()) return stats.status();
  LOG(INFO) << "replication: loaded the Redis master's RDB (version " << stats->version
            << "): " << stats->total_keys << " keys, " << stats->expired_skipped
            << " already expired, skipped";
  return Status::OK();
}

Status RedisFollower::SendAck(ReplSocket* sock, uint64_t offset) {
  last_ack_ms_ = MonotonicMillis();
  return sock->Send(RespCommand({"REPLCONF", "ACK", std::to_string(offset)}));
}

Status RedisFollower::Stream(ReplSocket* sock) {
  uint64_t offset;
  {
    std::lock_guard<std::mutex> lock(mu_);
    offset = progress_.offset;
    progress_.has_offset = true;
  }
  // The first acknowledgement also tells a diskless master that the RDB was loaded.
  Status s = SendAck(sock, offset);
  int64_t timeout_ms = config_->GetInt("repl-timeout") * 1000;
  while (s.ok() && !stop_->load()) {
    s = sock->Receive(100);
    if (s.ok()) s = TakeCommands(sock);
    if (!s.ok()) break;
    {
      std::lock_guard<std::mutex> lock(mu_);
      progress_.last_io_unix_ms = UnixMillis() - (MonotonicMillis() - sock->last_receive_ms());
      offset = progress_.offset;
    }
    if (MonotonicMillis() - last_ack_ms_ >= kAckIntervalMs) s = SendAck(sock, offset);
    if (s.ok() && MonotonicMillis() - sock->last_receive_ms() > timeout_ms)
      s = Status::IOError("no data from the master within repl-timeout");
  }
  if (stop_->load() && s.ok()) s = Status::Busy("stopping");
  return s;
}

Status RedisFollower::TakeCommands(ReplSocket* sock) {
  size_t max_bulk = static_cast<size_t>(config_->proto_max_bulk_len.load());
  uint64_t offset;
  {
    std::lock_guard<std::mutex> lock(mu_);
    offset = progress_.offset;
  }
  Status s;
  while (s.ok() && !sock->buffered().empty() && !stop_->load()) {
    size_t used = 0;
    auto complete = ParseMultibulk(sock->buffered(), max_bulk, &argv_, &used);
    if (!complete.ok()) {
      s = complete.status();
      break;
    }
    if (!*complete) break;
    sock->Consume(used);
    if (EqualsIgnoreCase(argv_[0], "replconf")) {
      // As in Redis, the acknowledgement a GETACK asks for does not count the GETACK itself.
      if (argv_.size() >= 2 && EqualsIgnoreCase(argv_[1], "getack")) {
        CommitUpTo(offset);
        s = SendAck(sock, offset);
      }
    } else if (!EqualsIgnoreCase(argv_[0], "ping")) {
      hooks_.sink->Execute(argv_, *stop_);
      // A command cut short by a stop request did not run: it is not counted either.
      if (stop_->load()) break;
    }
    offset += used;
  }
  CommitUpTo(offset);
  return s;
}

void RedisFollower::CommitUpTo(uint64_t offset) {
  hooks_.sink->Flush();
  std::lock_guard<std::mutex> lock(mu_);
  progress_.offset = offset;
}

}  // namespace basalt
