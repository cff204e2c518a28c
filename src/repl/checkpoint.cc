#include "repl/checkpoint.h"

#include <glog/logging.h>
#include <rocksdb/utilities/checkpoint.h>

#include <filesystem>

namespace basalt {

namespace {

constexpr const char* kCheckpointSuffix = ".checkpoint-";

void RemoveDirectory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (ec) LOG(WARNING) << "can't remove checkpoint " << dir << ": " << ec.message();
}

}  // namespace

Status MakeCheckpoint(Engine* engine, const std::string& dir) {
  rocksdb::Checkpoint* raw = nullptr;
  rocksdb::Status s = rocksdb::Checkpoint::Create(engine->db(), &raw);
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // log_size_for_flush 0: flush the memtables first, so the checkpoint is SST files (hard
  // links) rather than a long WAL to replay.
  if (s.ok()) s = checkpoint->CreateCheckpoint(dir, 0);
  if (!s.ok()) return Status::IOError("creating a checkpoint: " + s.ToString());
  return Status::OK();
}

uint64_t CheckpointSource::created() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counter_;
}

StatusOr<std::shared_ptr<const CheckpointFiles>> CheckpointSource::Acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto shared = current_.lock()) return shared;
  auto made = Create();
  if (made.ok()) current_ = *made;
  return made;
}

StatusOr<std::shared_ptr<const CheckpointFiles>> CheckpointSource::Create() {
  std::string dir = engine_->SiblingPath(kCheckpointSuffix + std::to_string(++counter_));
  RemoveDirectory(dir);
  RemoveDirectory(dir + ".tmp");
  Status made = MakeCheckpoint(engine_, dir);
  if (!made.ok()) {
    RemoveDirectory(dir);
    return made;
  }
  auto files = std::make_unique<CheckpointFiles>();
  files->dir = dir;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file()) continue;
    uint64_t size = entry.file_size();
    files->files.emplace_back(entry.path().filename().string(), size);
    files->total_bytes += size;
  }
  if (ec) {
    RemoveDirectory(dir);
    return Status::IOError("listing checkpoint " + dir + ": " + ec.message());
  }
  LOG(INFO) << "replication: made checkpoint " << dir << " (" << files->files.size() << " files, "
            << files->total_bytes << " bytes)";
  return std::shared_ptr<const CheckpointFiles>(files.release(), [](const CheckpointFiles* f) {
    RemoveDirectory(f->dir);
    delete f;
  });
}

void CheckpointSource::RemoveStale() {
  std::filesystem::path data(engine_->SiblingPath(""));
  std::filesystem::path parent = std::filesystem::absolute(data).parent_path();
  std::string prefix = data.filename().string() + kCheckpointSuffix;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    std::string name = entry.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) == 0) RemoveDirectory(entry.path().string());
  }
}

}  // namespace basalt
