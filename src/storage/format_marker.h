// Format marker: one small file in the data directory that names the on-disk format version.
//
// A server must never read or write a data directory whose layout it does not understand: an
// older binary on data written by a newer one would misread it (or silently "repair" it), and a
// newer binary has no upgrade path yet. The marker is checked before RocksDB is opened, so even
// a layout change that adds column families is caught with a clear message instead of
// RocksDB's "column families not opened". The version number itself belongs to the layer that
// owns the encodings (types/); storage only keeps the file.
#pragma once

#include <string>

#include "common/status.h"

namespace basalt {

// The file's name inside the data directory.
constexpr const char* kFormatMarkerFile = "BASALT_FORMAT";

// Checks `dir` against `current_version`:
//  - marker present with the same version: OK;
//  - marker present with another version, or unreadable: an error naming both versions;
//  - no marker on a new (empty of RocksDB files) directory: writes one for `current_version`;
//  - no marker on an existing database: it predates the marker, which means format version
//    `legacy_version`; the marker is written if that equals `current_version`, else an error.
Status CheckFormatMarker(const std::string& dir, int current_version, int legacy_version);

// Writes the marker durably (temp file, fsync, rename, fsync of the directory).
Status WriteFormatMarker(const std::string& dir, int version);

}  // namespace basalt
