#include "storage/format_marker.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/strutil.h"

namespace basalt {

namespace {

constexpr std::string_view kMarkerWord = "basalt-format-version";

std::string MarkerPath(const std::string& dir) {
  return (std::filesystem::path(dir) / kFormatMarkerFile).string();
}

Status SyncPath(const std::string& path, int flags) {
  int fd = open(path.c_str(), flags);
  if (fd < 0) return Status::IOError("can't open '" + path + "': " + strerror(errno));
  int rc = fsync(fd);
  int saved = errno;
  close(fd);
  if (rc != 0) return Status::IOError("can't fsync '" + path + "': " + strerror(saved));
  return Status::OK();
}

// Parses "basalt-format-version N" (one line, surrounding whitespace allowed).
bool ParseMarker(const std::string& text, int64_t* version) {
  std::istringstream in(text);
  std::string word, number, extra;
  if (!(in >> word >> number) || (in >> extra) || word != kMarkerWord) return false;
  auto parsed = ParseInt64(number);
  if (!parsed || *parsed < 0) return false;
  *version = *parsed;
  return true;
}

}  // namespace

Status WriteFormatMarker(const std::string& dir, int version) {
  std::string path = MarkerPath(dir);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << kMarkerWord << " " << version << "\n";
    out.close();
    if (!out) return Status::IOError("can't write '" + tmp + "'");
  }
  Status s = SyncPath(tmp, O_RDONLY);
  if (!s.ok()) return s;
  if (rename(tmp.c_str(), path.c_str()) != 0)
    return Status::IOError("can't rename '" + tmp + "': " + strerror(errno));
  return SyncPath(dir, O_RDONLY | O_DIRECTORY);
}

Status CheckFormatMarker(const std::string& dir, int current_version, int legacy_version) {
  std::string path = MarkerPath(dir);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    // RocksDB's CURRENT file exists in every database it has created.
    bool existing = std::filesystem::exists(std::filesystem::path(dir) / "CURRENT", ec);
    int version = existing ? legacy_version : current_version;
    if (version != current_version) {
      return Status::IOError("data directory '" + dir + "' holds data in on-disk format version " +
                             std::to_string(version) + " (it has no " + kFormatMarkerFile +
                             " file), but this basalt-server uses format version " +
                             std::to_string(current_version) + "; refusing to start");
    }
    return WriteFormatMarker(dir, version);
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  int64_t version = 0;
  if (!in || !ParseMarker(text.str(), &version)) {
    return Status::IOError("data directory '" + dir + "' has an unreadable " + kFormatMarkerFile +
                           " file (expected '" + std::string(kMarkerWord) +
                           " N'); this basalt-server uses format version " +
                           std::to_string(current_version) + "; refusing to start");
  }
  if (version == current_version) return Status::OK();
  std::string why = version > current_version
                        ? "written by a newer basalt-server: run that version on it"
                        : "written by an older basalt-server, and there is no upgrade path "
                          "from it: run that version on it";
  return Status::IOError("data directory '" + dir + "' holds on-disk format version " +
                         std::to_string(version) + ", but this basalt-server uses format version " +
                         std::to_string(current_version) + " (" + why + "); refusing to start");
}

}  // namespace basalt
