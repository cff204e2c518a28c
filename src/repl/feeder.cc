#include "repl/feeder.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <rocksdb/transaction_log.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/clock.h"
#include "common/coding.h"

namespace basalt {

namespace {

constexpr size_t kSendChunk = 256 * 1024;
constexpr int64_t kHeartbeatMs = 1000;
// Also bounds how late an acknowledgement is noticed while idle (WAIT latency).
constexpr std::chrono::milliseconds kWaitForWrites(10);

int64_t MonotonicMillis() {
  return MonotonicMicros() / 1000;
}

// Undoes one DisableFileDeletions() (RocksDB counts them).
void EnableFileDeletions(rocksdb::DB* db) {
  rocksdb::Status s = db->EnableFileDeletions();
  if (!s.ok()) LOG(ERROR) << "replication: re-enabling WAL file deletion: " << s.ToString();
}

}  // namespace

ReplicaFeeder::ReplicaFeeder(FeederContext context, int fd, SyncRequest request,
                             std::string peer_ip)
    : ctx_(std::move(context)),
      request_(std::move(request)),
      peer_ip_(std::move(peer_ip)),
      sock_(std::make_unique<ReplSocket>(fd, &stop_)) {
  acked_seq_ = request_.next_seq > 0 ? request_.next_seq - 1 : 0;
}

ReplicaFeeder::~ReplicaFeeder() {
  Stop();
}

void ReplicaFeeder::Start() {
  thread_ = std::thread([this] { Run(); });
}

void ReplicaFeeder::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

ReplicaFeeder::Info ReplicaFeeder::info() const {
  Info info;
  info.ip = peer_ip_;
  info.port = request_.listening_port;
  info.state = state_.load();
  info.acked_seq = acked_seq_.load();
  info.last_ack_unix_ms = last_ack_unix_ms_.load();
  info.sync_total_bytes = sync_total_bytes_.load();
  info.sync_sent_bytes = sync_sent_bytes_.load();
  return info;
}

void ReplicaFeeder::Run() {
  std::string who = peer_ip_ + ":" + std::to_string(request_.listening_port);
  LOG(INFO) << "replication: replica " << who << " asks to sync from sequence "
            << request_.next_seq;
  Status s = Serve();
  if (!stop_.load())
    LOG(WARNING) << "replication: link to replica " << who << " ended: " << s.message();
  sock_.reset();
  finished_ = true;
}

Status ReplicaFeeder::Serve() {
  sock_->set_timeout_ms(ctx_.config->GetInt("repl-timeout") * 1000);
  if (request_.replica_replid == ctx_.replid) {
    Status s = sock_->Send("-ERR a server can't replicate from itself\r\n");
    return s.ok() ? Status::InvalidArgument("a server can't replicate from itself") : s;
  }
  std::unique_ptr<rocksdb::TransactionLogIterator> iter;
  if (CanResume(&iter)) {
    Status s = sock_->Send("+CONTINUE " + ctx_.replid + "\r\n");
    if (!s.ok()) return s;
    state_ = State::kOnline;
    WalCursor cursor(ctx_.engine->db(), request_.next_seq);
    if (iter != nullptr) cursor.Adopt(std::move(iter));
    return Stream(std::move(cursor), false);
  }
  // Held until streaming has found its start: the WAL after the checkpoint must survive the
  // transfer and the replica's swap.
  rocksdb::Status disabled = ctx_.engine->db()->DisableFileDeletions();
  if (!disabled.ok()) return Status::IOError(disabled.ToString());
  auto next = FullSync();
  if (!next.ok()) {
    EnableFileDeletions(ctx_.engine->db());
    return next.status();
  }
  state_ = State::kOnline;
  return Stream(WalCursor(ctx_.engine->db(), *next), true);
}

bool ReplicaFeeder::CanResume(std::unique_ptr<rocksdb::TransactionLogIterator>* iter) {
  const char* why = "the replica's position is not at a batch boundary";
  bool ok = CheckResume(iter, &why);
  if (!ok) LOG(INFO) << "replication: full sync needed: " << why;
  return ok;
}

bool ReplicaFeeder::CheckResume(std::unique_ptr<rocksdb::TransactionLogIterator>* iter,
                                const char** why) {
  if (request_.master_replid != ctx_.replid || request_.next_seq == 0) {
    *why = "the replica holds no position in this master's history";
    return false;
  }
  uint64_t next = request_.next_seq;
  uint64_t latest = ctx_.engine->LatestSequence();
  if (next > latest + 1) {
    *why = "the replica is ahead of this master (the master lost writes)";
    return false;
  }
  uint64_t check = request_.last_hash != 0 ? next - 1 : next;
  rocksdb::Status s = check <= latest ? ctx_.engine->db()->GetUpdatesSince(check, iter)
                                      : rocksdb::Status::NotFound();
  if (!s.ok() || !(*iter)->Valid()) {
    // Nothing to compare with: acceptable only if the replica has everything there is.
    iter->reset();
    *why = "the WAL at the replica's position was purged";
    return next == latest + 1;
  }
  rocksdb::BatchResult batch = (*iter)->GetBatch();
  uint64_t count = batch.writeBatchPtr->Count();
  if (batch.sequence > check) {
    *why = "the WAL at the replica's position was purged";
    return false;
  }
  if (request_.last_hash == 0) {
    iter->reset();  // the batch at `next` was taken out to look at it: streaming reopens
    return batch.sequence == next;
  }
  if (batch.sequence + count != next ||
      BatchHash(batch.writeBatchPtr->Data()) != request_.last_hash) {
    *why = "the replica's last batch differs from this master's history";
    return false;
  }
  return true;  // *iter stays on the replica's last batch; streaming goes on from there
}

StatusOr<uint64_t> ReplicaFeeder::FullSync() {
  Status s = sock_->Send("+FULLSYNC " + ctx_.replid + "\r\n");
  if (!s.ok()) return s;
  auto checkpoint = ctx_.checkpoints->Acquire();
  if (!checkpoint.ok()) return checkpoint.status();
  state_ = State::kSendCheckpoint;
  sync_total_bytes_ = (*checkpoint)->total_bytes;
  for (const auto& [name, size] : (*checkpoint)->files) {
    std::string path = (*checkpoint)->dir + "/" + name;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::IOError("can't open " + path);
    std::string header;
    AppendFileHeader(&header, name, size);
    s = sock_->Send(header);
    if (s.ok()) s = sock_->SendFile(fd, size);
    ::close(fd);
    if (!s.ok()) return s;
    sync_sent_bytes_ += size;
  }
  std::string end;
  AppendFilesEnd(&end, (*checkpoint)->files.size(), (*checkpoint)->total_bytes);
  s = sock_->Send(end);
  if (!s.ok()) return s;
  checkpoint->reset();  // the directory goes once no other transfer uses it
  // The replica swaps the data in and tells where its copy ends.
  s = sock_->Fill(kAckSize);
  if (!s.ok()) return s;
  std::string_view frame = sock_->buffered();
  if (frame[0] != static_cast<char>(FrameType::kResume))
    return Status::IOError("expected the replica's resume frame");
  uint64_t next = DecodeFixed64(frame.data() + 1);
  sock_->Consume(kAckSize);
  if (next == 0 || next > ctx_.engine->LatestSequence() + 1)
    return Status::IOError("the replica resumes from an unknown sequence");
  acked_seq_ = next - 1;
  LOG(INFO) << "replication: full sync done; streaming from sequence " << next;
  return next;
}

Status ReplicaFeeder::ReadAcks() {
  Status s = sock_->Receive(0);
  if (!s.ok()) return s;
  bool advanced = false;
  while (sock_->buffered().size() >= kAckSize) {
    std::string_view frame = sock_->buffered();
    if (frame[0] != static_cast<char>(FrameType::kAck))
      return Status::IOError("unexpected frame from the replica");
    uint64_t seq = DecodeFixed64(frame.data() + 1);
    sock_->Consume(kAckSize);
    last_ack_unix_ms_ = UnixMillis();
    if (seq > acked_seq_.load()) {
      acked_seq_ = seq;
      advanced = true;
    }
  }
  if (advanced && ctx_.on_ack) ctx_.on_ack();
  return Status::OK();
}

Status ReplicaFeeder::Flush(std::string* out, int64_t* last_send_ms) {
  if (out->empty()) return Status::OK();
  Status s = sock_->Send(*out);
  out->clear();
  *last_send_ms = MonotonicMillis();
  return s;
}

Status ReplicaFeeder::Stream(WalCursor cursor, bool deletions_disabled) {
  rocksdb::DB* db = ctx_.engine->db();
  auto enable_deletions = [&] {
    if (deletions_disabled) EnableFileDeletions(db);
    deletions_disabled = false;
  };
  std::string out;
  int64_t last_send_ms = MonotonicMillis();
  int64_t timeout_ms = ctx_.config->GetInt("repl-timeout") * 1000;
  Status result;
  while (result.ok() && !stop_.load()) {
    if (out.empty()) {  // between chunks: not a system call per batch
      result = ReadAcks();
      if (!result.ok()) break;
      if (MonotonicMillis() - sock_->last_receive_ms() > timeout_ms) {
        result = Status::IOError("no acknowledgement from the replica within repl-timeout");
        break;
      }
    }
    uint64_t latest = ctx_.engine->LatestSequence();
    auto batch = cursor.Next(latest);
    if (!batch.ok()) {
      result = batch.status();
      break;
    }
    if (batch->has_value()) {
      enable_deletions();  // the cursor holds its place in the WAL now
      const rocksdb::BatchResult& b = **batch;
      uint64_t end = cursor.next() - 1;
      AppendBatchFrame(&out, b.sequence, b.writeBatchPtr->Count(), ctx_.engine->CommitTimeOf(end),
                       b.writeBatchPtr->Data());
      if (out.size() >= kSendChunk) {
        // Tells the replica how far the master is, so its lag figures cover what is still
        // on the way.
        AppendHeartbeatFrame(&out, ctx_.engine->LatestSequence(), UnixMillis());
        result = Flush(&out, &last_send_ms);
      }
      continue;
    }
    result = Flush(&out, &last_send_ms);
    if (!result.ok()) break;
    if (latest >= cursor.next()) {
      // Committed but not readable yet (RocksDB is switching WAL files): try again shortly.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    enable_deletions();
    ctx_.engine->WaitForSequenceAbove(latest, kWaitForWrites);
    if (MonotonicMillis() - last_send_ms >= kHeartbeatMs) {
      AppendHeartbeatFrame(&out, ctx_.engine->LatestSequence(), UnixMillis());
      result = Flush(&out, &last_send_ms);
    }
  }
  enable_deletions();
  if (stop_.load() && result.ok()) result = Status::Busy("stopping");
  return result;
}

WalCursor::WalCursor(rocksdb::DB* db, uint64_t next) : db_(db), next_(next) {}

void WalCursor::Adopt(std::unique_ptr<rocksdb::TransactionLogIterator> iter) {
  iter_ = std::move(iter);
  taken_ = true;
}

StatusOr<std::optional<rocksdb::BatchResult>> WalCursor::Next(uint64_t latest) {
  using Result = std::optional<rocksdb::BatchResult>;
  if (latest < next_) return Result();
  int reopened = 0;
  while (true) {
    if (iter_ == nullptr) {
      if (reopened++ == 2) return Result();
      rocksdb::Status s = db_->GetUpdatesSince(next_, &iter_);
      if (!s.ok()) {
        iter_.reset();
        return Status::IOError("WAL from sequence " + std::to_string(next_) +
                               " is not available: " + s.ToString());
      }
    } else if (taken_) {
      iter_->Next();
    }
    taken_ = false;
    if (!iter_->Valid()) {
      // The batch is in a WAL file the iterator does not know (RocksDB switched files):
      // start a new iterator there.
      iter_.reset();
      continue;
    }
    rocksdb::BatchResult batch = iter_->GetBatch();
    taken_ = true;
    uint64_t count = batch.writeBatchPtr->Count();
    if (batch.sequence + count <= next_) continue;  // before our start
    if (batch.sequence != next_)
      return Status::IOError("gap in the WAL at sequence " + std::to_string(next_));
    next_ += count;
    return Result(std::move(batch));
  }
}

}  // namespace basalt
