#include "storage/sst_ingest.h"

#include <rocksdb/sst_file_writer.h>

#include <algorithm>
#include <filesystem>
#include <string_view>

namespace basalt {

namespace {

// Buffered bytes that make one run: the sort and the files stay this size.
constexpr size_t kRunBytes = 256ull << 20;

}  // namespace

class SstIngestSink::Collector : public rocksdb::WriteBatch::Handler {
 public:
  explicit Collector(SstIngestSink* sink) : sink_(sink) {}

  rocksdb::Status PutCF(uint32_t cf_id, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    int cf = Family(cf_id);
    if (cf < 0) return rocksdb::Status::InvalidArgument("bulk load: unknown column family");
    std::string& arena = sink_->arena_;
    if (arena.capacity() < kRunBytes) arena.reserve(kRunBytes + (kRunBytes >> 3));
    Entry e{{0, 0},
            arena.size(),
            static_cast<uint32_t>(key.size()),
            static_cast<uint32_t>(value.size())};
    for (size_t i = 0; i < 16; i++) {
      uint8_t byte = i < key.size() ? static_cast<uint8_t>(key[i]) : 0;
      e.prefix[i / 8] |= static_cast<uint64_t>(byte) << (8 * (7 - i % 8));
    }
    sink_->entries_[cf].push_back(e);
    arena.append(key.data(), key.size());
    arena.append(value.data(), value.size());
    return rocksdb::Status::OK();
  }
  rocksdb::Status MergeCF(uint32_t cf_id, const rocksdb::Slice& key,
                          const rocksdb::Slice& value) override {
    int cf = Family(cf_id);
    if (cf < 0) return rocksdb::Status::InvalidArgument("bulk load: unknown column family");
    return sink_->merges_.Merge(sink_->engine_->cf(static_cast<ColumnFamily>(cf)), key, value);
  }
  // Deletes and everything else keep the Handler's refusal.

 private:
  int Family(uint32_t cf_id) const {
    for (int i = 0; i < kColumnFamilyCount; i++) {
      if (sink_->engine_->cf(static_cast<ColumnFamily>(i))->GetID() == cf_id) return i;
    }
    return -1;
  }
  SstIngestSink* sink_;
};

SstIngestSink::SstIngestSink(Engine* engine, std::string staging_dir)
    : engine_(engine), dir_(std::move(staging_dir)) {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  std::filesystem::create_directories(dir_, ec);
}

SstIngestSink::~SstIngestSink() {
  Abandon();
}

void SstIngestSink::Abandon() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

rocksdb::Status SstIngestSink::Take(rocksdb::WriteBatch* batch) {
  if (done_) return rocksdb::Status::InvalidArgument("bulk load: already ingested");
  Collector collector(this);
  rocksdb::Status s = batch->Iterate(&collector);
  if (s.ok() && arena_.size() >= kRunBytes) s = WriteRun();
  return s;
}

rocksdb::Status SstIngestSink::WriteRun() {
  std::vector<std::string> run(kColumnFamilyCount);
  const size_t index = files_.size();
  for (int cf = 0; cf < kColumnFamilyCount; cf++) {
    std::vector<Entry>& entries = entries_[cf];
    if (entries.empty()) continue;
    auto key = [this](const Entry& e) {
      return std::string_view(arena_).substr(e.offset, e.key_size);
    };
    // Equal keys in the order written: the last is the one kept.
    std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
      if (a.prefix[0] != b.prefix[0]) return a.prefix[0] < b.prefix[0];
      if (a.prefix[1] != b.prefix[1]) return a.prefix[1] < b.prefix[1];
      int c = key(a).compare(key(b));
      return c != 0 ? c < 0 : a.offset < b.offset;
    });
    rocksdb::ColumnFamilyHandle* handle = engine_->cf(static_cast<ColumnFamily>(cf));
    rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), engine_->db()->GetOptions(handle), handle);
    std::string path = dir_ + "/run" + std::to_string(index) + "-cf" + std::to_string(cf) + ".sst";
    rocksdb::Status s = writer.Open(path);
    for (size_t i = 0; s.ok() && i < entries.size(); i++) {
      if (i + 1 < entries.size() && key(entries[i]) == key(entries[i + 1])) continue;
      const Entry& e = entries[i];
      s = writer.Put(key(e), rocksdb::Slice(arena_.data() + e.offset + e.key_size, e.value_size));
    }
    if (s.ok()) s = writer.Finish();
    if (!s.ok()) return s;
    run[cf] = path;
    entries.clear();
  }
  arena_.clear();
  files_.push_back(std::move(run));
  return rocksdb::Status::OK();
}

rocksdb::Status SstIngestSink::Ingest() {
  rocksdb::Status s = WriteRun();
  for (const auto& run : files_) {
    if (!s.ok()) break;
    std::vector<rocksdb::IngestExternalFileArg> args;
    for (int cf = 0; cf < kColumnFamilyCount; cf++) {
      if (run[cf].empty()) continue;
      rocksdb::IngestExternalFileArg arg;
      arg.column_family = engine_->cf(static_cast<ColumnFamily>(cf));
      arg.external_files = {run[cf]};
      arg.options.move_files = true;
      args.push_back(std::move(arg));
    }
    if (!args.empty()) s = engine_->db()->IngestExternalFiles(args);
  }
  if (s.ok() && merges_.Count() > 0) s = engine_->db()->Write(rocksdb::WriteOptions(), &merges_);
  done_ = true;
  Abandon();
  return s;
}

}  // namespace basalt
