#include "types/string.h"

#include <algorithm>
#include <cstring>

#include "common/coding.h"
#include "types/collection.h"

namespace basalt {

namespace {

std::string SegmentName(uint32_t index) {
  std::string out;
  PutFixed32(&out, index);
  return out;
}

bool ParseSegmentName(std::string_view name, uint32_t* index) {
  return name.size() == 4 && GetFixed32(&name, index);
}

uint64_t SegmentBytes(const Metadata& meta) {
  return uint64_t{1} << meta.segment_shift;
}

}  // namespace

uint64_t StringLength(const Metadata& meta) {
  return meta.segmented ? meta.size : meta.value.size();
}

void PutString(Context& ctx, int db, std::string_view key, std::string_view value,
               int64_t expire_ms, const KeyState& old, StringEncoding encoding) {
  Metadata meta;
  meta.type = RedisType::kString;
  meta.encoding = encoding;
  meta.expire_ms = expire_ms;
  if (value.size() <= kInlineStringMax) {
    meta.value.assign(value.data(), value.size());
    ctx.Write(db, key, meta, old);
    return;
  }
  meta.segmented = true;
  meta.segment_shift = kWholeValueSegmentShift;
  meta.version = NewVersion();
  meta.size = value.size();
  uint64_t step = SegmentBytes(meta);
  for (uint64_t off = 0, i = 0; off < value.size(); off += step, i++) {
    ctx.batch().Put(ColumnFamily::kSubkey,
                    MemberKey(ctx, db, key, meta.version, SegmentName(static_cast<uint32_t>(i))),
                    rocksdb::Slice(value.data() + off, std::min(step, value.size() - off)));
  }
  ctx.Write(db, key, meta, old);
}

Status VisitStringRange(Context& ctx, int db, std::string_view key, const Metadata& meta,
                        uint64_t begin, uint64_t end, const StringPieceVisitor& visit) {
  end = std::min(end, StringLength(meta));
  if (begin >= end) return Status::OK();
  if (!meta.segmented) {
    visit(begin, std::string_view(meta.value).substr(begin, end - begin));
    return Status::OK();
  }
  uint64_t step = SegmentBytes(meta);
  MemberIterator it(ctx, ColumnFamily::kSubkey, db, key, meta.version);
  for (it.Seek(SegmentName(static_cast<uint32_t>(begin / step))); it.Valid(); it.Next()) {
    uint32_t index;
    if (!ParseSegmentName(it.member(), &index))
      return Status::IOError("corrupt string segment key");
    uint64_t seg_begin = index * step;
    if (seg_begin >= end) break;
    std::string_view bytes = it.value();
    uint64_t from = std::max(begin, seg_begin);
    uint64_t to = std::min(end, seg_begin + bytes.size());
    if (from < to && !visit(from, bytes.substr(from - seg_begin, to - from))) break;
  }
  return it.status();
}

Status ReadStringRange(Context& ctx, int db, std::string_view key, const Metadata& meta,
                       uint64_t begin, uint64_t end, std::string* out) {
  out->clear();
  end = std::min(end, StringLength(meta));
  if (begin >= end) return Status::OK();
  if (!meta.segmented) {
    out->assign(meta.value, begin, end - begin);
    return Status::OK();
  }
  out->assign(end - begin, '\0');
  return VisitStringRange(ctx, db, key, meta, begin, end,
                          [&](uint64_t offset, std::string_view bytes) {
                            std::memcpy(out->data() + (offset - begin), bytes.data(), bytes.size());
                            return true;
                          });
}

Status ReadString(Context& ctx, int db, std::string_view key, const Metadata& meta,
                  std::string* out) {
  if (!meta.segmented) {
    *out = meta.value;
    return Status::OK();
  }
  return ReadStringRange(ctx, db, key, meta, 0, meta.size, out);
}

StringEditor::StringEditor(Context& ctx, int db, std::string_view key, const KeyState& old)
    : ctx_(ctx), db_(db), key_(key), old_(old) {
  if (old.live()) {
    meta_ = old.meta;
  } else {
    meta_.type = RedisType::kString;
  }
}

Status StringEditor::LoadSegment(uint32_t index, std::string** out) {
  auto found = segments_.find(index);
  if (found == segments_.end()) {
    std::string value;
    rocksdb::Status s =
        ctx_.batch().Get(ColumnFamily::kSubkey,
                         MemberKey(ctx_, db_, key_, meta_.version, SegmentName(index)), &value);
    if (!s.ok() && !s.IsNotFound()) return Status::IOError(s.ToString());
    found = segments_.emplace(index, std::move(value)).first;
  }
  *out = &found->second;
  return Status::OK();
}

Status StringEditor::Read(uint64_t offset, uint64_t n, std::string* out) {
  out->clear();
  uint64_t end = std::min(length(), offset + n);
  if (offset >= end) return Status::OK();
  if (!meta_.segmented) {
    out->assign(meta_.value, offset, end - offset);
    return Status::OK();
  }
  out->assign(end - offset, '\0');
  uint64_t step = SegmentBytes(meta_);
  for (uint64_t pos = offset; pos < end;) {
    uint32_t index = static_cast<uint32_t>(pos / step);
    std::string* segment;
    Status s = LoadSegment(index, &segment);
    if (!s.ok()) return s;
    uint64_t seg_begin = uint64_t{index} * step;
    uint64_t seg_end = std::min(end, seg_begin + step);
    uint64_t stored_end = std::min(seg_end, seg_begin + segment->size());
    if (pos < stored_end) {
      std::memcpy(out->data() + (pos - offset), segment->data() + (pos - seg_begin),
                  stored_end - pos);
    }
    pos = seg_end;
  }
  return Status::OK();
}

void StringEditor::ConvertToSegmented() {
  meta_.segmented = true;
  meta_.segment_shift = kEditSegmentShift;
  meta_.version = NewVersion();
  meta_.size = meta_.value.size();
  uint64_t step = SegmentBytes(meta_);
  for (uint64_t off = 0; off < meta_.value.size(); off += step) {
    uint32_t index = static_cast<uint32_t>(off / step);
    segments_[index] = meta_.value.substr(off, step);
    dirty_.insert(index);
  }
  meta_.value.clear();
}

Status StringEditor::Write(uint64_t offset, std::string_view bytes) {
  if (bytes.empty()) return Status::OK();
  uint64_t end = offset + bytes.size();
  changed_ = true;
  if (!meta_.segmented && end > kInlineStringMax) ConvertToSegmented();
  if (!meta_.segmented) {
    if (meta_.value.size() < end) meta_.value.resize(end, '\0');
    meta_.value.replace(offset, bytes.size(), bytes);
    return Status::OK();
  }
  uint64_t step = SegmentBytes(meta_);
  for (uint64_t pos = offset; pos < end;) {
    uint32_t index = static_cast<uint32_t>(pos / step);
    std::string* segment;
    Status s = LoadSegment(index, &segment);
    if (!s.ok()) return s;
    uint64_t seg_begin = uint64_t{index} * step;
    uint64_t piece_end = std::min(end, seg_begin + step);
    if (segment->size() < piece_end - seg_begin) segment->resize(piece_end - seg_begin, '\0');
    std::memcpy(segment->data() + (pos - seg_begin), bytes.data() + (pos - offset),
                piece_end - pos);
    dirty_.insert(index);
    pos = piece_end;
  }
  meta_.size = std::max(meta_.size, end);
  return Status::OK();
}

void StringEditor::Grow(uint64_t length) {
  if (length <= this->length()) return;
  changed_ = true;
  if (!meta_.segmented && length > kInlineStringMax) ConvertToSegmented();
  if (meta_.segmented) {
    meta_.size = length;  // bytes no segment holds read as zeros
  } else {
    meta_.value.resize(length, '\0');
  }
}

void StringEditor::Finish(StringEncoding encoding) {
  if (!changed_) return;
  for (uint32_t index : dirty_) {
    ctx_.batch().Put(ColumnFamily::kSubkey,
                     MemberKey(ctx_, db_, key_, meta_.version, SegmentName(index)),
                     segments_[index]);
  }
  meta_.encoding = encoding;
  ctx_.Write(db_, key_, meta_, old_);
  old_ = KeyState{true, false, meta_};
  dirty_.clear();
  changed_ = false;
}

}  // namespace basalt
