// Wire: the bytes a master and a replica exchange once a replica's REPLSYNC has switched its
// connection into replication mode, and the socket both sides drive from their own threads.
//
// After the one-line answer to REPLSYNC ("+CONTINUE <replid>" or "+FULLSYNC <replid>") the
// connection carries frames, each a type byte and a fixed header (big-endian integers):
//
//   master -> replica
//     'B' seq(8) count(4) commit_ms(8) len(4) data   one WAL write batch, exactly as RocksDB
//                                                    logged it (WriteBatch::Data())
//     'H' latest_seq(8) master_ms(8)                 heartbeat, about once a second when idle
//     'F' name_len(4) name size(8) bytes             one checkpoint file (full sync)
//     'E' files(8) bytes(8)                          end of the checkpoint files
//   replica -> master
//     'A' applied_seq(8)                             the last master sequence applied
//     'R' next_seq(8)                                after a full sync: stream from here
//
// ReplSocket does blocking-style I/O over a non-blocking socket with poll(): every wait is cut
// into short slices so that a stop request ends it promptly, and a send also drains what the
// peer sent meanwhile, so two peers writing to each other can never deadlock on full buffers.
// A send blocks while the peer does not read: that is the flow control that keeps a slow
// replica from growing the master's memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace basalt {

enum class FrameType : char {
  kBatch = 'B',
  kHeartbeat = 'H',
  kFile = 'F',
  kFilesEnd = 'E',
  kAck = 'A',
  kResume = 'R',
};

constexpr size_t kBatchHeaderSize = 1 + 8 + 4 + 8 + 4;
constexpr size_t kHeartbeatSize = 1 + 8 + 8;
constexpr size_t kAckSize = 1 + 8;

void AppendBatchFrame(std::string* out, uint64_t seq, uint32_t count, int64_t commit_ms,
                      std::string_view data);
void AppendHeartbeatFrame(std::string* out, uint64_t latest_seq, int64_t master_ms);
void AppendFileHeader(std::string* out, std::string_view name, uint64_t size);
void AppendFilesEnd(std::string* out, uint64_t files, uint64_t bytes);
void AppendSeqFrame(std::string* out, FrameType type, uint64_t seq);

// FNV-1a over a batch's bytes: a replica remembers the hash of the last batch it applied and
// the master checks it before resuming, so histories that diverged (a master that lost writes
// it had already streamed) are detected instead of silently continued.
uint64_t BatchHash(std::string_view data);

// A command as a RESP multibulk, as a client sends it.
std::string RespCommand(std::initializer_list<std::string> args);

class ReplSocket {
 public:
  // Takes ownership of `fd`. `stop`, if given, aborts any wait once it becomes true.
  ReplSocket(int fd, const std::atomic<bool>* stop);
  ~ReplSocket();
  ReplSocket(const ReplSocket&) = delete;
  ReplSocket& operator=(const ReplSocket&) = delete;

  static StatusOr<std::unique_ptr<ReplSocket>> Connect(const std::string& host, int port,
                                                       int64_t timeout_ms,
                                                       const std::atomic<bool>* stop);

  // How long a blocking operation may wait without any progress before it fails.
  void set_timeout_ms(int64_t ms) { timeout_ms_ = ms; }
  int64_t last_receive_ms() const { return last_receive_ms_; }
  uint64_t bytes_received() const { return bytes_received_; }

  Status Send(std::string_view data);
  // Sends `size` bytes of the open file `file_fd` from its start (sendfile, no copy).
  Status SendFile(int file_fd, uint64_t size);
  // Waits up to `wait_ms` for input and buffers whatever arrived; OK with nothing on timeout.
  Status Receive(int64_t wait_ms);
  // Blocks until at least `n` bytes are buffered.
  Status Fill(size_t n);
  // Reads a "\r\n"-terminated line (without the terminator), at most 4 KiB.
  Status ReadLine(std::string* line);

  std::string_view buffered() const { return std::string_view(in_).substr(in_pos_); }
  void Consume(size_t n);

 private:
  // Waits for `events` (POLLIN/POLLOUT) up to `wait_ms`; true when ready.
  StatusOr<bool> Wait(short events, int64_t wait_ms);
  // Reads what is available without blocking. `*got` is the byte count.
  Status ReadAvailable(size_t* got);
  bool stopping() const { return stop_ != nullptr && stop_->load(); }

  int fd_;
  const std::atomic<bool>* stop_;
  int64_t timeout_ms_ = 60000;
  std::string in_;
  size_t in_pos_ = 0;
  int64_t last_receive_ms_ = 0;
  uint64_t bytes_received_ = 0;
};

}  // namespace basalt
