#include "repl/wire.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "common/coding.h"
#include "common/resp_encoding.h"

namespace basalt {

namespace {

constexpr int64_t kPollSliceMs = 100;  // how often a wait looks at the stop flag
constexpr size_t kReadChunk = 64 * 1024;
// One read pass stops after this much so that the caller gets to apply what arrived.
constexpr size_t kMaxReadAtOnce = 1024 * 1024;
constexpr size_t kMaxLine = 4096;

int64_t MonotonicMillis() {
  return MonotonicMicros() / 1000;
}

Status Errno(const char* what) {
  return Status::IOError(std::string(what) + ": " + strerror(errno));
}

}  // namespace

void AppendBatchFrame(std::string* out, uint64_t seq, uint32_t count, int64_t commit_ms,
                      std::string_view data) {
  out->push_back(static_cast<char>(FrameType::kBatch));
  PutFixed64(out, seq);
  PutFixed32(out, count);
  PutFixed64(out, static_cast<uint64_t>(commit_ms));
  PutFixed32(out, static_cast<uint32_t>(data.size()));
  out->append(data);
}

void AppendHeartbeatFrame(std::string* out, uint64_t latest_seq, int64_t master_ms) {
  out->push_back(static_cast<char>(FrameType::kHeartbeat));
  PutFixed64(out, latest_seq);
  PutFixed64(out, static_cast<uint64_t>(master_ms));
}

void AppendFileHeader(std::string* out, std::string_view name, uint64_t size) {
  out->push_back(static_cast<char>(FrameType::kFile));
  PutLengthPrefixed(out, name);
  PutFixed64(out, size);
}

void AppendFilesEnd(std::string* out, uint64_t files, uint64_t bytes) {
  out->push_back(static_cast<char>(FrameType::kFilesEnd));
  PutFixed64(out, files);
  PutFixed64(out, bytes);
}

void AppendSeqFrame(std::string* out, FrameType type, uint64_t seq) {
  out->push_back(static_cast<char>(type));
  PutFixed64(out, seq);
}

uint64_t BatchHash(std::string_view data) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// Built with append: GCC 12 warns falsely (-Wrestrict) on chains of operator+.
std::string RespCommand(std::initializer_list<std::string> args) {
  std::string out;
  AppendRespArray(&out, args);
  return out;
}

ReplSocket::ReplSocket(int fd, const std::atomic<bool>* stop)
    : fd_(fd), stop_(stop), last_receive_ms_(MonotonicMillis()) {}

ReplSocket::~ReplSocket() {
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<std::unique_ptr<ReplSocket>> ReplSocket::Connect(const std::string& host, int port,
                                                          int64_t timeout_ms,
                                                          const std::atomic<bool>* stop) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string port_text = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &found);
  if (rc != 0) return Status::IOError("can't resolve " + host + ": " + gai_strerror(rc));
  Status last = Status::IOError("no address for " + host);
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last = Errno("socket");
      continue;
    }
    auto sock = std::make_unique<ReplSocket>(fd, stop);
    sock->set_timeout_ms(timeout_ms);
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last = Errno("connect");
      continue;
    }
    auto ready = sock->Wait(POLLOUT, timeout_ms);
    if (!ready.ok()) {
      last = ready.status();
      continue;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (!*ready || err != 0) {
      last = Status::IOError("connect to " + host + ":" + port_text + ": " +
                             (err != 0 ? strerror(err) : "timed out"));
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    freeaddrinfo(found);
    return sock;
  }
  freeaddrinfo(found);
  return last;
}

StatusOr<bool> ReplSocket::Wait(short events, int64_t wait_ms) {
  int64_t deadline = MonotonicMillis() + wait_ms;
  while (true) {
    if (stopping()) return Status::Busy("stopping");
    int64_t left = std::max<int64_t>(deadline - MonotonicMillis(), 0);
    pollfd p{fd_, events, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min(left, kPollSliceMs)));
    if (rc < 0) {
      if (errno == EINTR) continue;
      return Errno("poll");
    }
    if (rc == 0) {
      if (left == 0) return false;
      continue;
    }
    if (p.revents & (POLLERR | POLLNVAL)) return Status::IOError("connection error");
    // POLLHUP with POLLIN still has data to read; without it the peer is gone.
    if ((p.revents & POLLHUP) && !(p.revents & POLLIN)) return Status::IOError("connection closed");
    return true;
  }
}

Status ReplSocket::ReadAvailable(size_t* got) {
  *got = 0;
  if (in_pos_ > 0 && in_pos_ * 2 >= in_.size()) {
    in_.erase(0, in_pos_);
    in_pos_ = 0;
  }
  char chunk[kReadChunk];
  while (true) {
    ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n > 0) {
      in_.append(chunk, static_cast<size_t>(n));
      *got += static_cast<size_t>(n);
      bytes_received_ += static_cast<uint64_t>(n);
      last_receive_ms_ = MonotonicMillis();
      if (static_cast<size_t>(n) < sizeof(chunk) || *got >= kMaxReadAtOnce) return Status::OK();
      continue;
    }
    if (n == 0) return Status::IOError("connection closed by peer");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::OK();
    return Errno("recv");
  }
}

Status ReplSocket::Send(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return Errno("send");
    auto ready = Wait(POLLOUT | POLLIN, timeout_ms_);
    if (!ready.ok()) return ready.status();
    if (!*ready) return Status::IOError("send timed out (peer not reading)");
    size_t got;
    Status s = ReadAvailable(&got);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status ReplSocket::SendFile(int file_fd, uint64_t size) {
  off_t offset = 0;
  while (static_cast<uint64_t>(offset) < size) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(size - offset, 1 << 30));
    ssize_t n = ::sendfile(fd_, file_fd, &offset, want);
    if (n > 0) continue;
    if (n == 0) return Status::IOError("file shorter than announced");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return Errno("sendfile");
    auto ready = Wait(POLLOUT | POLLIN, timeout_ms_);
    if (!ready.ok()) return ready.status();
    if (!*ready) return Status::IOError("send timed out (peer not reading)");
    size_t got;
    Status s = ReadAvailable(&got);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status ReplSocket::Receive(int64_t wait_ms) {
  auto ready = Wait(POLLIN, wait_ms);
  if (!ready.ok()) return ready.status();
  if (!*ready) return Status::OK();
  size_t got;
  return ReadAvailable(&got);
}

Status ReplSocket::Fill(size_t n) {
  int64_t idle_since = MonotonicMillis();
  while (buffered().size() < n) {
    size_t before = buffered().size();
    Status s = Receive(kPollSliceMs);
    if (!s.ok()) return s;
    if (buffered().size() > before) {
      idle_since = MonotonicMillis();
    } else if (MonotonicMillis() - idle_since > timeout_ms_) {
      return Status::IOError("timed out waiting for data");
    }
  }
  return Status::OK();
}

Status ReplSocket::ReadLine(std::string* line) {
  while (true) {
    std::string_view buf = buffered();
    size_t end = buf.find("\r\n");
    if (end != std::string_view::npos) {
      line->assign(buf.substr(0, end));
      Consume(end + 2);
      return Status::OK();
    }
    if (buf.size() > kMaxLine) return Status::IOError("line too long");
    Status s = Fill(buf.size() + 1);
    if (!s.ok()) return s;
  }
}

void ReplSocket::Consume(size_t n) {
  in_pos_ += n;
  if (in_pos_ >= in_.size()) {
    in_.clear();
    in_pos_ = 0;
  }
}

}  // namespace basalt
