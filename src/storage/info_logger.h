// InfoLogger: RocksDB's informational log (the LOG file in the data directory), written so that
// a full or failing disk can never take the server down.
//
// RocksDB's own file logger treats a failed write as fatal on the next one (Debian's build
// keeps its assertions, and the log is written on every background event, including the
// handling of the disk-full error itself). This logger writes through stdio and ignores write
// errors: losing informational lines while the disk is full is harmless. Warnings and errors
// also go to Basalt's own log, where operators look first. On open, an existing LOG is renamed
// to LOG.old.<micros>, the name RocksDB's keep_log_file_num purging recognises.
#pragma once

#include <rocksdb/env.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

namespace basalt {

class InfoLogger : public rocksdb::Logger {
 public:
  static std::shared_ptr<InfoLogger> Open(const std::string& dir);
  ~InfoLogger() override;

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override;
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override;

 private:
  explicit InfoLogger(std::FILE* file) : file_(file) {}
  std::mutex mu_;
  std::FILE* file_;  // may be null if the file could not be opened: lines are then dropped
};

}  // namespace basalt
