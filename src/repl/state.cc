#include "repl/state.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include "common/coding.h"

namespace basalt {

namespace {

constexpr size_t kReplidLength = 40;
constexpr const char* kReplidFile = "/REPLID";

std::string RandomReplid() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  static const char kHex[] = "0123456789abcdef";
  std::string id;
  for (size_t i = 0; i < kReplidLength; i++) id.push_back(kHex[rng() % 16]);
  return id;
}

bool ValidReplid(std::string_view id) {
  if (id.size() != kReplidLength) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status WriteFileDurably(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("can't create " + tmp + ": " + strerror(errno));
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0)
    return Status::IOError("can't write " + path + ": " + strerror(errno));
  return Status::OK();
}

}  // namespace

std::string ReplicaPosition::Encode() const {
  std::string out;
  PutLengthPrefixed(&out, master_replid);
  PutFixed64(&out, next_seq);
  PutFixed64(&out, last_hash);
  return out;
}

bool ReplicaPosition::Decode(std::string_view in) {
  std::string_view id;
  if (!GetLengthPrefixed(&in, &id) || !GetFixed64(&in, &next_seq) || !GetFixed64(&in, &last_hash) ||
      !in.empty())
    return false;
  master_replid = std::string(id);
  return true;
}

StatusOr<std::optional<ReplicaPosition>> LoadReplicaPosition(Engine* engine) {
  std::string value;
  rocksdb::Status s = engine->Get(ColumnFamily::kCounters, kReplicaPositionKey, &value);
  if (s.IsNotFound()) return std::optional<ReplicaPosition>();
  if (!s.ok()) return Status::IOError("reading the replication position: " + s.ToString());
  ReplicaPosition pos;
  if (!pos.Decode(value)) return Status::IOError("corrupt replication position");
  return std::optional<ReplicaPosition>(std::move(pos));
}

StatusOr<std::string> LoadOrCreateReplid(const std::string& data_dir) {
  std::ifstream in(data_dir + kReplidFile);
  std::string id;
  if (in && std::getline(in, id) && ValidReplid(id)) return id;
  return ResetReplid(data_dir);
}

StatusOr<std::string> ResetReplid(const std::string& data_dir) {
  std::string id = RandomReplid();
  Status s = WriteFileDurably(data_dir + kReplidFile, id + "\n");
  if (!s.ok()) return s;
  return id;
}

}  // namespace basalt
