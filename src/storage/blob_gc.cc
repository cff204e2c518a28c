#include "storage/blob_gc.h"

#include <glog/logging.h>

namespace basalt {

bool WantBlobGc(bool running, uint64_t garbage_bytes, uint64_t file_bytes, double ratio) {
  if (ratio <= 0) return true;
  if (file_bytes == 0) return false;
  double share = static_cast<double>(garbage_bytes) / static_cast<double>(file_bytes);
  return running ? share > ratio / 2 : share > ratio;
}

rocksdb::Status BlobGcGovernor::Govern(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, int index,
                                       bool allowed, double ratio) {
  uint64_t file_bytes = 0, garbage_bytes = 0;
  // Both properties read counters of the current version: no file is opened.
  if (!db->GetIntProperty(cf, "rocksdb.live-blob-file-size", &file_bytes) ||
      !db->GetIntProperty(cf, "rocksdb.live-blob-file-garbage-size", &garbage_bytes)) {
    return rocksdb::Status::NotSupported("blob file properties");
  }
  bool running = running_[index].load(std::memory_order_relaxed);
  bool want = allowed && WantBlobGc(running, garbage_bytes, file_bytes, ratio);
  if (want == running) return rocksdb::Status::OK();
  rocksdb::Status s =
      db->SetOptions(cf, {{"enable_blob_garbage_collection", want ? "true" : "false"}});
  if (!s.ok()) return s;
  running_[index].store(want, std::memory_order_relaxed);
  LOG(INFO) << "blob GC " << (want ? "on" : "off") << " in " << cf->GetName() << ": "
            << garbage_bytes << " of " << file_bytes << " blob bytes are garbage";
  return s;
}

}  // namespace basalt
