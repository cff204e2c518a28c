#include "storage/sst_ingest.h"

#include <rocksdb/sst_file_writer.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <memory>
#include <string_view>

namespace basalt {

class SstIngestSink::Collector : public rocksdb::WriteBatch::Handler {
 public:
  explicit Collector(SstIngestSink* sink) : sink_(sink) {}

  rocksdb::Status PutCF(uint32_t cf_id, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    int cf = Family(cf_id);
    if (cf < 0) return rocksdb::Status::InvalidArgument("bulk load: unknown column family");
    sink_->Put(static_cast<ColumnFamily>(cf), key, value);
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

SstIngestSink::SstIngestSink(Engine* engine, std::string staging_dir, size_t run_bytes)
    : engine_(engine),
      dir_(std::move(staging_dir)),
      run_bytes_(run_bytes),
      filling_(std::make_shared<Run>()) {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  std::filesystem::create_directories(dir_, ec);
}

SstIngestSink::~SstIngestSink() {
  Abandon();
}

void SstIngestSink::Abandon() {
  // The writer's files would otherwise appear after the directory is gone.
  FinishWriting().PermitUncheckedError();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void SstIngestSink::Put(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value) {
  std::string& arena = filling_->arena;
  if (arena.capacity() < run_bytes_) arena.reserve(run_bytes_ + (run_bytes_ >> 3));
  Entry e{
      {0, 0}, arena.size(), static_cast<uint32_t>(key.size()), static_cast<uint32_t>(value.size())};
  for (size_t i = 0; i < 16; i++) {
    uint8_t byte = i < key.size() ? static_cast<uint8_t>(key[i]) : 0;
    e.prefix[i / 8] |= static_cast<uint64_t>(byte) << (8 * (7 - i % 8));
  }
  filling_->entries[static_cast<int>(cf)].push_back(e);
  arena.append(key.data(), key.size());
  arena.append(value.data(), value.size());
}

rocksdb::Status SstIngestSink::Take(rocksdb::WriteBatch* batch) {
  if (done_) return rocksdb::Status::InvalidArgument("bulk load: already ingested");
  Collector collector(this);
  rocksdb::Status s = batch->Iterate(&collector);
  if (s.ok() && filling_->arena.size() >= run_bytes_) s = StartRun();
  return s;
}

rocksdb::Status SstIngestSink::FinishWriting() {
  if (!writing_.valid()) return rocksdb::Status::OK();
  return writing_.get();
}

rocksdb::Status SstIngestSink::StartRun() {
  rocksdb::Status s = FinishWriting();
  if (!s.ok()) return s;
  std::shared_ptr<Run> run = std::move(filling_);
  filling_ = written_ != nullptr ? std::move(written_) : std::make_shared<Run>();
  filling_->arena.clear();
  for (auto& entries : filling_->entries) entries.clear();
  written_ = run;
  const size_t index = files_.size();
  run->index = index;
  run->files.assign(kColumnFamilyCount, std::string());
  for (int cf = 0; cf < kColumnFamilyCount; cf++) {
    if (!run->entries[cf].empty())
      run->files[cf] = dir_ + "/run" + std::to_string(index) + "-cf" + std::to_string(cf) + ".sst";
  }
  files_.push_back(run->files);
  // A thread each where one can be started; where none can, the work runs when its result is
  // asked for, on the asking thread, rather than failing the load.
  constexpr auto kPolicy = std::launch::async | std::launch::deferred;
  writing_ = std::async(kPolicy, [this, run] {
    std::vector<std::future<rocksdb::Status>> families;
    for (int cf = 0; cf < kColumnFamilyCount; cf++) {
      if (run->files[cf].empty()) continue;
      families.push_back(
          std::async(kPolicy, [this, &run, cf] { return WriteFile(*run, cf, run->files[cf]); }));
    }
    rocksdb::Status first_error;
    for (auto& f : families) {
      rocksdb::Status s = f.get();
      if (first_error.ok() && !s.ok()) first_error = s;
    }
    return first_error;
  });
  return rocksdb::Status::OK();
}

rocksdb::Status SstIngestSink::WriteFile(Run& run, int cf, const std::string& path) const {
  std::vector<Entry>& entries = run.entries[cf];
  std::string_view arena = run.arena;
  auto key = [arena](const Entry& e) { return arena.substr(e.offset, e.key_size); };
  // Equal keys in the order written: the last is the one kept. Past equal prefixes only the
  // rest of the keys differs: a key shorter than 16 bytes is then a prefix of the other one.
  std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    if (a.prefix[0] != b.prefix[0]) return a.prefix[0] < b.prefix[0];
    if (a.prefix[1] != b.prefix[1]) return a.prefix[1] < b.prefix[1];
    int c = key(a)
                .substr(std::min<size_t>(16, a.key_size))
                .compare(key(b).substr(std::min<size_t>(16, b.key_size)));
    if (c != 0) return c < 0;
    return a.key_size != b.key_size ? a.key_size < b.key_size : a.offset < b.offset;
  });
  auto same_key = [&](const Entry& a, const Entry& b) {
    return a.prefix[0] == b.prefix[0] && a.prefix[1] == b.prefix[1] && key(a) == key(b);
  };
  rocksdb::ColumnFamilyHandle* handle = engine_->cf(static_cast<ColumnFamily>(cf));
  rocksdb::Options options = engine_->db()->GetOptions(handle);
  // SstFileWriter compresses as the last level does. The first run goes there (the database was
  // empty); the later ones overlap it, land in level 0 and are compacted down again, so they
  // take the compression of the levels above the last, cheaper where the two differ.
  if (run.index > 0 && options.compression_per_level.size() >= 2) {
    options.compression = options.compression_per_level[options.compression_per_level.size() - 2];
    options.bottommost_compression = rocksdb::kDisableCompressionOption;
    options.compression_per_level.clear();
  }
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options, handle);
  rocksdb::Status s = writer.Open(path);
  for (size_t i = 0; s.ok() && i < entries.size(); i++) {
    if (i + 1 < entries.size() && same_key(entries[i], entries[i + 1])) continue;
    const Entry& e = entries[i];
    s = writer.Put(key(e), rocksdb::Slice(arena.data() + e.offset + e.key_size, e.value_size));
  }
  if (s.ok()) s = writer.Finish();
  return s;
}

rocksdb::Status SstIngestSink::Ingest() {
  if (done_) return rocksdb::Status::InvalidArgument("bulk load: already ingested");
  rocksdb::Status s = StartRun();
  if (s.ok()) s = FinishWriting();
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
