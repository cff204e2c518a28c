#include "storage/info_logger.h"

#include <glog/logging.h>
#include <sys/time.h>

#include <cstdarg>
#include <ctime>
#include <filesystem>

namespace basalt {

std::shared_ptr<InfoLogger> InfoLogger::Open(const std::string& dir) {
  std::filesystem::path path = std::filesystem::path(dir) / "LOG";
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    timeval tv{};
    gettimeofday(&tv, nullptr);
    auto micros = static_cast<int64_t>(tv.tv_sec) * 1000000 + tv.tv_usec;
    std::filesystem::rename(path, path.string() + ".old." + std::to_string(micros), ec);
  }
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) LOG(WARNING) << "can't open RocksDB's info log " << path;
  return std::shared_ptr<InfoLogger>(new InfoLogger(file));
}

InfoLogger::~InfoLogger() {
  if (file_ != nullptr) std::fclose(file_);
}

void InfoLogger::Logv(const char* format, va_list ap) {
  Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
}

void InfoLogger::Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) {
  if (level < GetInfoLogLevel()) return;
  char line[4096];
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(line, sizeof(line), format, copy);
  va_end(copy);
  if (n < 0) return;
  if (level >= rocksdb::InfoLogLevel::WARN_LEVEL && level < rocksdb::InfoLogLevel::HEADER_LEVEL)
    LOG(WARNING) << "rocksdb: " << line;
  if (file_ == nullptr) return;
  timeval tv{};
  gettimeofday(&tv, nullptr);
  tm t{};
  localtime_r(&tv.tv_sec, &t);
  std::lock_guard<std::mutex> lock(mu_);
  // Errors (a full disk) are ignored on purpose: see the header.
  std::fprintf(file_, "%04d/%02d/%02d-%02d:%02d:%02d.%06ld %s\n", t.tm_year + 1900, t.tm_mon + 1,
               t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, static_cast<long>(tv.tv_usec), line);
  std::fflush(file_);
  std::clearerr(file_);
}

}  // namespace basalt
