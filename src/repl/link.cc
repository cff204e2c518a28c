#include "repl/link.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>

#include "common/clock.h"
#include "common/coding.h"

namespace basalt {

namespace {

constexpr int64_t kBackoffStartMs = 100;
constexpr int64_t kBackoffMaxMs = 5000;
constexpr int64_t kConnectTimeoutMs = 5000;
constexpr int64_t kAckIntervalMs = 1000;
constexpr size_t kMaxGroupBytes = 1024 * 1024;
constexpr size_t kFileHeaderFixed = 1 + 4;  // type, name length

int64_t MonotonicMillis() {
  return MonotonicMicros() / 1000;
}

bool SafeFileName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

Status SyncPath(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Status::IOError("can't open " + path);
  int rc = ::fsync(fd);
  ::close(fd);
  return rc == 0 ? Status::OK() : Status::IOError("can't fsync " + path);
}

}  // namespace

MasterLink::MasterLink(LinkContext context, std::string host, int port)
    : ctx_(std::move(context)),
      host_(std::move(host)),
      port_(port),
      redis_(ctx_.keyspace, ctx_.config, ctx_.redis, ctx_.listening_port, &stop_) {
  info_.host = host_;
  info_.port = port_;
}

MasterLink::~MasterLink() {
  Stop();
}

void MasterLink::Start() {
  thread_ = std::thread([this] { Run(); });
}

void MasterLink::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

MasterLink::Info MasterLink::info() const {
  std::lock_guard<std::mutex> lock(mu_);
  Info out = info_;
  if (out.redis_master) {
    RedisFollower::Progress progress = redis_.progress();
    out.has_position = progress.has_offset;
    out.applied_seq = progress.offset;
    out.master_latest_seq = progress.offset;
    out.master_replid = progress.master_replid;
    out.sync_total_bytes = progress.sync_total_bytes;
    out.sync_read_bytes = progress.sync_read_bytes;
    out.last_io_unix_ms = std::max(out.last_io_unix_ms, progress.last_io_unix_ms);
    return out;
  }
  if (out.applied_seq < out.master_latest_seq) {
    int64_t since = std::max(applied_commit_ms_, behind_since_ms_);
    out.lag_ms = std::max<int64_t>(UnixMillis() - since, 0);
  }
  return out;
}

void MasterLink::SetState(State state) {
  std::lock_guard<std::mutex> lock(mu_);
  if (info_.state == State::kConnected && state != State::kConnected)
    info_.down_since_unix_ms = UnixMillis();
  info_.state = state;
}

void MasterLink::Run() {
  // A barrier: client writes that passed the read-only check before this server became a
  // replica hold the keyspace lock until they finish; nothing is applied before them.
  if (LockKeyspaceExclusive(ctx_.keyspace, stop_)) ctx_.keyspace->exclusive().unlock();
  int64_t backoff = kBackoffStartMs;
  while (!stop_.load()) {
    Status s = RunSession();
    bool was_up;
    {
      std::lock_guard<std::mutex> lock(mu_);
      was_up = info_.state == State::kConnected;
      if (!stop_.load()) info_.last_error = s.message();
    }
    SetState(State::kConnect);
    if (stop_.load()) break;
    if (was_up) backoff = kBackoffStartMs;
    LOG(WARNING) << "replication: link to master " << host_ << ":" << port_
                 << " failed: " << s.message() << "; retrying in " << backoff << " ms";
    int64_t until = MonotonicMillis() + backoff;
    while (!stop_.load() && MonotonicMillis() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    backoff = std::min(backoff * 2, kBackoffMaxMs);
  }
}

Status AuthenticateWithMasterAuth(ReplSocket* sock, const Config& config) {
  std::string password = config.GetString("masterauth");
  if (password.empty()) return Status::OK();
  std::string user = config.GetString("masteruser");
  Status s = sock->Send(user.empty() ? RespCommand({"AUTH", password})
                                     : RespCommand({"AUTH", user, password}));
  std::string line;
  if (s.ok()) s = sock->ReadLine(&line);
  if (!s.ok()) return s;
  if (line.empty() || line[0] != '+') {
    std::string reason("AUTH refused: ");
    reason.append(line, line.empty() ? 0 : 1);
    return Status::IOError(reason);
  }
  return Status::OK();
}

Status PromoteReplicaAt(const std::string& host, int port, const Config& config,
                        int64_t timeout_ms) {
  auto sock = ReplSocket::Connect(host, port, timeout_ms, nullptr);
  if (!sock.ok()) return sock.status();
  (*sock)->set_timeout_ms(timeout_ms);
  Status s = AuthenticateWithMasterAuth(sock->get(), config);
  if (s.ok()) s = (*sock)->Send(RespCommand({"REPLICAOF", "NO", "ONE"}));
  std::string line;
  if (s.ok()) s = (*sock)->ReadLine(&line);
  if (!s.ok()) return s;
  if (line != "+OK") return Status::IOError("REPLICAOF NO ONE refused: " + line);
  return Status::OK();
}

Status MasterLink::RunSession() {
  ctx_.applier->Discard();  // batches a failed session received but never committed
  SetState(State::kConnecting);
  int64_t timeout_ms = ctx_.config->GetInt("repl-timeout") * 1000;
  auto sock = ReplSocket::Connect(host_, port_, std::min(timeout_ms, kConnectTimeoutMs), &stop_);
  if (!sock.ok()) return sock.status();
  (*sock)->set_timeout_ms(timeout_ms);
  Status s = AuthenticateWithMasterAuth(sock->get(), *ctx_.config);
  if (!s.ok()) return s;

  auto position = LoadReplicaPosition(ctx_.keyspace->engine());
  if (!position.ok()) return position.status();
  ReplicaPosition pos = position->value_or(ReplicaPosition{"?", 0, 0});
  s = (*sock)->Send(
      RespCommand({"REPLSYNC", ctx_.own_replid(), pos.master_replid, std::to_string(pos.next_seq),
                   std::to_string(pos.last_hash), std::to_string(ctx_.listening_port)}));
  std::string line;
  if (s.ok()) s = (*sock)->ReadLine(&line);
  if (!s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    info_.last_io_unix_ms = UnixMillis();
  }
  const bool redis_master = line.rfind("-ERR unknown command", 0) == 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    info_.redis_master = redis_master;
  }
  if (redis_master) return FollowRedis(sock->get());
  std::string master_replid;
  if (line.rfind("+CONTINUE ", 0) == 0) {
    master_replid = line.substr(10);
    LOG(INFO) << "replication: resuming from master " << host_ << ":" << port_ << " at sequence "
              << pos.next_seq;
  } else if (line.rfind("+FULLSYNC ", 0) == 0) {
    master_replid = line.substr(10);
    LOG(INFO) << "replication: full sync from master " << host_ << ":" << port_;
    SetState(State::kSync);
    std::string dir = ctx_.keyspace->engine()->SiblingPath(".fullsync");
    s = ReceiveCheckpoint(sock->get(), dir);
    if (s.ok()) s = SwapIn(sock->get(), dir, master_replid);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (!s.ok()) return s;
    auto swapped = LoadReplicaPosition(ctx_.keyspace->engine());
    if (!swapped.ok()) return swapped.status();
    pos = swapped->value_or(ReplicaPosition{});
  } else {
    std::string reason("master refused to sync: ");
    reason.append(line, line.empty() ? 0 : 1);
    return Status::IOError(reason);
  }
  taken_next_ = pos.next_seq;
  taken_hash_ = pos.last_hash;
  {
    std::lock_guard<std::mutex> lock(mu_);
    info_.has_position = true;
    info_.applied_seq = pos.next_seq - 1;
    info_.master_latest_seq = std::max(info_.master_latest_seq, info_.applied_seq);
    info_.last_error.clear();
  }
  SetState(State::kConnected);
  return Stream(sock->get(), master_replid);
}

Status MasterLink::FollowRedis(ReplSocket* sock) {
  LOG(INFO) << "replication: " << host_ << ":" << port_
            << " does not know REPLSYNC; following it as a Redis master";
  // The data is about to be replaced: a position in a Basalt master's history no longer holds.
  Status s = ctx_.applier->WritePosition(std::nullopt);
  if (!s.ok()) return s;
  return redis_.Run(sock, [this](bool syncing) {
    if (!syncing) {
      std::lock_guard<std::mutex> lock(mu_);
      info_.last_error.clear();
    }
    SetState(syncing ? State::kSync : State::kConnected);
  });
}

Status MasterLink::ReceiveFile(ReplSocket* sock, const std::string& dir) {
  Status s = sock->Fill(kFileHeaderFixed);
  if (!s.ok()) return s;
  uint32_t name_len = DecodeFixed32(sock->buffered().data() + 1);
  if (name_len > 4096) return Status::IOError("checkpoint file name too long");
  s = sock->Fill(kFileHeaderFixed + name_len + 8);
  if (!s.ok()) return s;
  std::string_view header = sock->buffered();
  std::string name(header.substr(kFileHeaderFixed, name_len));
  uint64_t size = DecodeFixed64(header.data() + kFileHeaderFixed + name_len);
  sock->Consume(kFileHeaderFixed + name_len + 8);
  if (!SafeFileName(name)) return Status::IOError("bad checkpoint file name");
  std::string path = dir + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("can't create " + path);
  uint64_t left = size;
  while (s.ok() && left > 0) {
    if (sock->buffered().empty()) s = sock->Fill(1);
    if (!s.ok()) break;
    std::string_view chunk = sock->buffered();
    if (chunk.size() > left) chunk = chunk.substr(0, static_cast<size_t>(left));
    ssize_t n = ::write(fd, chunk.data(), chunk.size());
    if (n <= 0) {
      s = Status::IOError("can't write " + path);
      break;
    }
    sock->Consume(static_cast<size_t>(n));
    left -= static_cast<uint64_t>(n);
    std::lock_guard<std::mutex> lock(mu_);
    info_.sync_read_bytes += static_cast<uint64_t>(n);
    info_.last_io_unix_ms = UnixMillis();
  }
  if (s.ok() && ::fsync(fd) != 0) s = Status::IOError("can't fsync " + path);
  ::close(fd);
  return s;
}

Status MasterLink::ReceiveCheckpoint(ReplSocket* sock, const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("can't create " + dir + ": " + ec.message());
  {
    std::lock_guard<std::mutex> lock(mu_);
    info_.sync_read_bytes = 0;
    info_.sync_total_bytes = 0;
  }
  uint64_t files = 0;
  while (true) {
    Status s = sock->Fill(1);
    if (!s.ok()) return s;
    char type = sock->buffered()[0];
    if (type == static_cast<char>(FrameType::kFile)) {
      s = ReceiveFile(sock, dir);
      if (!s.ok()) return s;
      files++;
    } else if (type == static_cast<char>(FrameType::kFilesEnd)) {
      s = sock->Fill(17);
      if (!s.ok()) return s;
      uint64_t sent_files = DecodeFixed64(sock->buffered().data() + 1);
      sock->Consume(17);
      if (sent_files != files) return Status::IOError("checkpoint file count mismatch");
      return SyncPath(dir, O_RDONLY | O_DIRECTORY);
    } else {
      return Status::IOError("unexpected frame during a full sync");
    }
  }
}

Status MasterLink::SwapIn(ReplSocket* sock, const std::string& dir,
                          const std::string& master_replid) {
  if (!LockKeyspaceExclusive(ctx_.keyspace, stop_)) return Status::Busy("stopping");
  // Stops this server's own feeders and refuses new ones until after_swap: their history
  // ends with the old data.
  if (ctx_.before_swap) ctx_.before_swap();
  Status s = ctx_.keyspace->engine()->ReplaceData(dir);
  if (s.ok()) s = ctx_.keyspace->ReloadState();
  ctx_.keyspace->NoteUntrackedMemberWrites();
  if (ctx_.after_swap) ctx_.after_swap();
  ctx_.keyspace->exclusive().unlock();
  if (!s.ok()) return s;
  if (ctx_.data_replaced) ctx_.data_replaced();
  ReplicaPosition pos{master_replid, ctx_.keyspace->engine()->LatestSequence() + 1, 0};
  s = ctx_.applier->WritePosition(pos);
  if (!s.ok()) return s;
  LOG(INFO) << "replication: full sync loaded; the copy ends at master sequence "
            << pos.next_seq - 1;
  std::string frame;
  AppendSeqFrame(&frame, FrameType::kResume, pos.next_seq);
  return sock->Send(frame);
}

Status MasterLink::TakeFrames(ReplSocket* sock, const std::string& master_replid) {
  while (!sock->buffered().empty()) {
    std::string_view buf = sock->buffered();
    char type = buf[0];
    if (type == static_cast<char>(FrameType::kHeartbeat)) {
      if (buf.size() < kHeartbeatSize) return Status::OK();
      uint64_t latest = DecodeFixed64(buf.data() + 1);
      sock->Consume(kHeartbeatSize);
      std::lock_guard<std::mutex> lock(mu_);
      if (latest > info_.master_latest_seq) {
        if (info_.master_latest_seq <= info_.applied_seq) behind_since_ms_ = UnixMillis();
        info_.master_latest_seq = latest;
      }
      continue;
    }
    if (type != static_cast<char>(FrameType::kBatch))
      return Status::IOError("unexpected frame from the master");
    if (buf.size() < kBatchHeaderSize) return Status::OK();
    uint64_t seq = DecodeFixed64(buf.data() + 1);
    uint32_t count = DecodeFixed32(buf.data() + 9);
    int64_t commit_ms = static_cast<int64_t>(DecodeFixed64(buf.data() + 13));
    uint32_t len = DecodeFixed32(buf.data() + 21);
    if (buf.size() < kBatchHeaderSize + len) return Status::OK();
    if (seq != taken_next_)
      return Status::IOError("batch at sequence " + std::to_string(seq) + ", expected " +
                             std::to_string(taken_next_));
    std::string_view data = buf.substr(kBatchHeaderSize, len);
    auto added = ctx_.applier->Add(data);
    if (!added.ok()) return added.status();
    if (*added != count) return Status::IOError("batch count mismatch");
    taken_next_ = seq + count;
    last_batch_.assign(data);  // hashed once per group, at commit
    taken_commit_ms_ = commit_ms;
    sock->Consume(kBatchHeaderSize + len);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (taken_next_ - 1 > info_.master_latest_seq) {
        if (info_.master_latest_seq <= info_.applied_seq) behind_since_ms_ = UnixMillis();
        info_.master_latest_seq = taken_next_ - 1;
      }
    }
    if (ctx_.applier->pending_bytes() >= kMaxGroupBytes) {
      Status s = CommitApplied(sock, master_replid);
      if (!s.ok()) return s;
    }
  }
  return Status::OK();
}

Status MasterLink::CommitApplied(ReplSocket* sock, const std::string& master_replid) {
  if (ctx_.applier->empty()) return Status::OK();
  taken_hash_ = BatchHash(last_batch_);
  ReplicaPosition pos{master_replid, taken_next_, taken_hash_};
  Status s = ctx_.applier->Commit(pos, stop_);
  if (!s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    info_.applied_seq = taken_next_ - 1;
    applied_commit_ms_ = taken_commit_ms_;
  }
  return SendAck(sock);
}

Status MasterLink::SendAck(ReplSocket* sock) {
  std::string frame;
  AppendSeqFrame(&frame, FrameType::kAck, taken_next_ - 1);
  last_ack_ms_ = MonotonicMillis();
  return sock->Send(frame);
}

Status MasterLink::Stream(ReplSocket* sock, const std::string& master_replid) {
  Status s = SendAck(sock);
  int64_t timeout_ms = ctx_.config->GetInt("repl-timeout") * 1000;
  while (s.ok() && !stop_.load()) {
    s = sock->Receive(100);
    if (s.ok()) s = TakeFrames(sock, master_replid);
    if (s.ok()) s = CommitApplied(sock, master_replid);
    if (!s.ok()) break;
    {
      std::lock_guard<std::mutex> lock(mu_);
      info_.last_io_unix_ms = UnixMillis() - (MonotonicMillis() - sock->last_receive_ms());
    }
    if (MonotonicMillis() - last_ack_ms_ >= kAckIntervalMs) s = SendAck(sock);
    if (s.ok() && MonotonicMillis() - sock->last_receive_ms() > timeout_ms)
      s = Status::IOError("no data from the master within repl-timeout");
  }
  if (stop_.load() && s.ok()) s = Status::Busy("stopping");
  return s;
}

}  // namespace basalt
