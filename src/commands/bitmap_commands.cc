// Bitmap commands: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO.
//
// Bitmaps are strings, as in Redis. Reads walk only the bytes a command asks for (a sparse
// segmented bitmap is never materialized, its missing segments count as zeros) and writes go
// through StringEditor, which rewrites only the segments they touch: SETBIT on a 100 MB bitmap
// writes one 4 KiB segment, not the whole value.
#include <climits>

#include "commands/command_util.h"
#include "common/bitops.h"

namespace basalt {

namespace {

constexpr const char* kBitOffsetError = "ERR bit offset is not an integer or out of range";

// Parses a bit offset ("N", or "#N" meaning N * bits when `bits` is non-zero, as BITFIELD
// allows), limited like Redis to offsets whose byte fits in proto-max-bulk-len.
std::optional<uint64_t> BitOffsetArg(CommandContext& c, size_t i, unsigned bits = 0) {
  std::string_view text = c.arg(i);
  bool scaled = bits != 0 && !text.empty() && text[0] == '#';
  if (scaled) text.remove_prefix(1);
  auto v = ParseInt64(text);
  if (!v || *v < 0 || (scaled && *v > LLONG_MAX / static_cast<int64_t>(bits))) {
    c.reply.Error(kBitOffsetError);
    return std::nullopt;
  }
  int64_t offset = scaled ? *v * static_cast<int64_t>(bits) : *v;
  if ((offset >> 3) >= c.server.config->proto_max_bulk_len.load()) {
    c.reply.Error(kBitOffsetError);
    return std::nullopt;
  }
  return static_cast<uint64_t>(offset);
}

void SetBitCommand(CommandContext& c) {
  auto offset = BitOffsetArg(c, 2);
  if (!offset) return;
  auto on = ParseInt64(c.arg(3));
  if (!on || (*on & ~int64_t{1}) != 0)
    return c.reply.Error("ERR bit is not an integer or out of range");
  auto old = LookupString(c, c.arg(1));
  if (!old) return;
  StringEditor editor(c.ctx, c.db(), c.arg(1), *old);
  // Redis notifies only a change: a new key, a longer value, or the bit flipped.
  bool grows = !old->live() || (*offset >> 3) >= editor.length();
  std::string byte;
  if (ReplyIfError(c, editor.Read(*offset >> 3, 1, &byte))) return;
  uint8_t b = byte.empty() ? 0 : static_cast<uint8_t>(byte[0]);
  uint8_t mask = static_cast<uint8_t>(1u << (7 - (*offset & 7)));
  int previous = (b & mask) ? 1 : 0;
  // As Redis, a bit set to what it is changes nothing: no write, no replication, no dirty.
  if (!grows && previous == *on) return c.reply.Integer(previous);
  b = *on ? (b | mask) : (b & static_cast<uint8_t>(~mask));
  if (ReplyIfError(c, editor.Write(*offset >> 3, std::string(1, static_cast<char>(b))))) return;
  editor.Finish(StringEncoding::kRaw);
  if (grows || previous != *on) Notify(c, notify::kString, "setbit", c.arg(1));
  c.reply.Integer(previous);
}

void GetBitCommand(CommandContext& c) {
  auto offset = BitOffsetArg(c, 2);
  if (!offset) return;
  auto state = LookupString(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live()) return c.reply.Integer(0);
  std::string byte;
  Status s = ReadStringRange(c.ctx, c.db(), c.arg(1), state->meta, *offset >> 3, (*offset >> 3) + 1,
                             &byte);
  if (ReplyIfError(c, s)) return;
  if (byte.empty()) return c.reply.Integer(0);
  c.reply.Integer((static_cast<uint8_t>(byte[0]) >> (7 - (*offset & 7))) & 1);
}

// A [first, last] range of bit positions resolved from BITCOUNT/BITPOS arguments.
struct BitRange {
  bool empty = true;
  uint64_t first = 0, last = 0;
};

// Redis's index rules: negative indexes count from the end, then both are clamped to the value;
// `end` counts in bits or bytes like `start`. For BYTE ranges the bits are whole bytes.
BitRange ResolveBitRange(int64_t start, int64_t end, bool in_bits, uint64_t length) {
  int64_t total = static_cast<int64_t>(length) * (in_bits ? 8 : 1);
  if (start < 0) start += total;
  if (end < 0) end += total;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= total) end = total - 1;
  BitRange r;
  if (start > end) return r;
  r.empty = false;
  r.first = in_bits ? static_cast<uint64_t>(start) : static_cast<uint64_t>(start) * 8;
  r.last = in_bits ? static_cast<uint64_t>(end) : static_cast<uint64_t>(end) * 8 + 7;
  return r;
}

// Parses the optional BYTE|BIT unit at argument i (absent means BYTE).
bool UnitArg(CommandContext& c, size_t i, bool* in_bits) {
  *in_bits = false;
  if (i >= c.argc()) return true;
  if (EqualsIgnoreCase(c.arg(i), "bit")) {
    *in_bits = true;
  } else if (!EqualsIgnoreCase(c.arg(i), "byte")) {
    c.reply.Error(kSyntaxError);
    return false;
  }
  return true;
}

// Calls visit(piece, first, last) with each stored piece of the bit range and the part of the
// range it covers, as bit indexes relative to the piece.
template <typename Visit>
Status VisitBits(CommandContext& c, const KeyState& state, const BitRange& range, Visit visit) {
  return VisitStringRange(c.ctx, c.db(), c.arg(1), state.meta, range.first >> 3,
                          (range.last >> 3) + 1, [&](uint64_t offset, std::string_view piece) {
                            uint64_t base = offset * 8;
                            uint64_t first = std::max(range.first, base) - base;
                            uint64_t last =
                                std::min(range.last, base + piece.size() * 8 - 1) - base;
                            return visit(offset, piece, first, last);
                          });
}

void BitCountCommand(CommandContext& c) {
  auto state = LookupString(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  if (!state->live()) return c.reply.Integer(0);
  uint64_t length = StringLength(state->meta);
  BitRange range;
  if (c.argc() == 2) {
    range = ResolveBitRange(0, -1, false, length);
  } else if (c.argc() == 4 || c.argc() == 5) {
    auto start = IntArg(c, 2);
    if (!start) return;
    auto end = IntArg(c, 3);
    if (!end) return;
    bool in_bits;
    if (!UnitArg(c, 4, &in_bits)) return;
    // Both negative and reversed: Redis answers 0 before clamping.
    if (*start < 0 && *end < 0 && *start > *end) return c.reply.Integer(0);
    range = ResolveBitRange(*start, *end, in_bits, length);
  } else {
    return c.reply.Error(kSyntaxError);
  }
  if (range.empty) return c.reply.Integer(0);
  uint64_t count = 0;
  Status s = VisitBits(c, *state, range,
                       [&](uint64_t, std::string_view piece, uint64_t first, uint64_t last) {
                         count += PopCountBits(piece, first, last);
                         return true;
                       });
  if (ReplyIfError(c, s)) return;
  c.reply.Integer(static_cast<int64_t>(count));
}

void BitPosCommand(CommandContext& c) {
  auto bit_arg = IntArg(c, 2);
  if (!bit_arg) return;
  if (*bit_arg != 0 && *bit_arg != 1) return c.reply.Error("ERR The bit argument must be 1 or 0.");
  bool bit = *bit_arg == 1;
  auto state = LookupString(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  // A missing key is an endless run of zeros.
  if (!state->live()) return c.reply.Integer(bit ? -1 : 0);
  uint64_t length = StringLength(state->meta);
  if (c.argc() > 6) return c.reply.Error(kSyntaxError);
  int64_t start = 0, end = -1;
  bool end_given = c.argc() >= 5, in_bits = false;
  if (c.argc() >= 4) {
    auto v = IntArg(c, 3);
    if (!v) return;
    start = *v;
    if (!UnitArg(c, 5, &in_bits)) return;
    if (end_given) {
      auto e = IntArg(c, 4);
      if (!e) return;
      end = *e;
    }
  }
  BitRange range = ResolveBitRange(start, end, in_bits, length);
  if (range.empty) return c.reply.Integer(-1);
  std::optional<uint64_t> found;
  uint64_t next_byte = range.first >> 3;  // where the next stored piece should start
  Status s = VisitBits(c, *state, range,
                       [&](uint64_t offset, std::string_view piece, uint64_t first, uint64_t last) {
                         // A gap before this piece is zeros: the first of them is the answer.
                         if (!bit && offset > next_byte) {
                           found = std::max(range.first, next_byte * 8);
                           return false;
                         }
                         next_byte = offset + piece.size();
                         auto pos = FindBitInRange(piece, first, last, bit);
                         if (pos) found = offset * 8 + *pos;
                         return !pos;
                       });
  if (ReplyIfError(c, s)) return;
  if (!found && !bit && next_byte * 8 <= range.last) found = std::max(range.first, next_byte * 8);
  if (found) return c.reply.Integer(static_cast<int64_t>(*found));
  // No clear bit inside: without an explicit end the value counts as padded with zeros.
  if (!bit && !end_given) return c.reply.Integer(static_cast<int64_t>(range.last + 1));
  c.reply.Integer(-1);
}

void BitOpCommand(CommandContext& c) {
  std::string op = ToLower(c.arg(1));
  if (op != "and" && op != "or" && op != "xor" && op != "not") return c.reply.Error(kSyntaxError);
  if (op == "not" && c.argc() != 4)
    return c.reply.Error("ERR BITOP NOT must be called with a single source key.");
  std::vector<std::string> values;
  size_t longest = 0;
  for (size_t i = 3; i < c.argc(); i++) {
    auto state = LookupString(c, c.arg(i));
    if (!state) return;
    CountHit(c, c.arg(i), state->live());
    values.emplace_back();
    if (!ReadStringValue(c, c.arg(i), *state, &values.back())) return;
    longest = std::max(longest, values.back().size());
  }
  std::string result(longest, '\0');
  for (size_t j = 0; j < longest; j++) {
    auto byte = [&](size_t k) {
      return j < values[k].size() ? static_cast<uint8_t>(values[k][j]) : uint8_t{0};
    };
    uint8_t out = byte(0);
    for (size_t k = 1; k < values.size(); k++) {
      if (op == "and") out &= byte(k);
      if (op == "or") out |= byte(k);
      if (op == "xor") out ^= byte(k);
    }
    if (op == "not") out = static_cast<uint8_t>(~out);
    result[j] = static_cast<char>(out);
  }
  auto dst = c.ctx.Lookup(c.db(), c.arg(2));
  if (ReplyIfError(c, dst.status())) return;
  if (result.empty()) {
    c.ctx.Delete(c.db(), c.arg(2), *dst);
    if (dst->live()) Notify(c, notify::kGeneric, "del", c.arg(2));
  } else {
    WriteString(c, c.arg(2), result, 0, *dst);
    Notify(c, notify::kString, "set", c.arg(2));
  }
  c.reply.Integer(static_cast<int64_t>(result.size()));
}

struct BitFieldOp {
  enum Kind { kGet, kSet, kIncrBy } kind;
  BitFieldType type;
  uint64_t offset;
  int64_t value;  // SET: the new value; INCRBY: the increment
  BitOverflow overflow;
};

// Parses the BITFIELD operations; replies with the error and returns false on bad input.
bool ParseBitFieldOps(CommandContext& c, bool read_only, std::vector<BitFieldOp>* ops) {
  BitOverflow overflow = BitOverflow::kWrap;
  for (size_t j = 2; j < c.argc(); j++) {
    size_t rest = c.argc() - j - 1;
    const std::string& sub = c.arg(j);
    BitFieldOp op{};
    if (EqualsIgnoreCase(sub, "get") && rest >= 2) {
      op.kind = BitFieldOp::kGet;
    } else if (EqualsIgnoreCase(sub, "set") && rest >= 3) {
      op.kind = BitFieldOp::kSet;
    } else if (EqualsIgnoreCase(sub, "incrby") && rest >= 3) {
      op.kind = BitFieldOp::kIncrBy;
    } else if (EqualsIgnoreCase(sub, "overflow") && rest >= 1) {
      const std::string& how = c.arg(++j);
      if (EqualsIgnoreCase(how, "wrap")) {
        overflow = BitOverflow::kWrap;
      } else if (EqualsIgnoreCase(how, "sat")) {
        overflow = BitOverflow::kSat;
      } else if (EqualsIgnoreCase(how, "fail")) {
        overflow = BitOverflow::kFail;
      } else {
        c.reply.Error("ERR Invalid OVERFLOW type specified");
        return false;
      }
      continue;
    } else {
      c.reply.Error(kSyntaxError);
      return false;
    }
    if (!ParseBitFieldType(c.arg(j + 1), &op.type)) {
      c.reply.Error(
          "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported "
          "but i64 is.");
      return false;
    }
    auto offset = BitOffsetArg(c, j + 2, op.type.bits);
    if (!offset) return false;
    op.offset = *offset;
    if (op.kind != BitFieldOp::kGet) {
      auto v = IntArg(c, j + 3);
      if (!v) return false;
      op.value = *v;
      if (read_only) {
        c.reply.Error("ERR BITFIELD_RO only supports the GET subcommand");
        return false;
      }
      j++;
    }
    j += 2;
    op.overflow = overflow;
    ops->push_back(op);
  }
  return true;
}

// Runs one SET or INCRBY; replies with its result (null on FAIL overflow).
Status ApplyBitFieldWrite(CommandContext& c, StringEditor& editor, const BitFieldOp& op) {
  uint64_t first_byte = op.offset >> 3;
  uint64_t nbytes = ((op.offset + op.type.bits - 1) >> 3) - first_byte + 1;
  std::string bytes;
  Status s = editor.Read(first_byte, nbytes, &bytes);
  if (!s.ok()) return s;
  bytes.resize(nbytes, '\0');
  uint64_t bit = op.offset & 7;
  int64_t current = BitFieldToInt(GetBitField(bytes, bit, op.type.bits), op.type);
  __int128 wanted;
  if (op.kind == BitFieldOp::kIncrBy) {
    wanted = static_cast<__int128>(current) + op.value;
  } else {
    // An unsigned SET takes the argument's bits as unsigned, as Redis does (-1 is 2^64-1).
    wanted = op.type.is_signed ? static_cast<__int128>(op.value)
                               : static_cast<__int128>(static_cast<uint64_t>(op.value));
  }
  auto stored = FitBitField(wanted, op.type, op.overflow);
  if (!stored) {
    c.reply.Null();
    return Status::OK();
  }
  const std::string before = bytes;
  SetBitField(&bytes, bit, op.type.bits, static_cast<uint64_t>(*stored));
  // A field set to what it holds is no write (no replication, no dirty), as in Redis.
  if (bytes != before) {
    s = editor.Write(first_byte, bytes);
    if (!s.ok()) return s;
  }
  c.reply.Integer(op.kind == BitFieldOp::kIncrBy ? *stored : current);
  return Status::OK();
}

void BitFieldGeneric(CommandContext& c, bool read_only) {
  std::vector<BitFieldOp> ops;
  if (!ParseBitFieldOps(c, read_only, &ops)) return;
  auto old = LookupString(c, c.arg(1));
  if (!old) return;
  StringEditor editor(c.ctx, c.db(), c.arg(1), *old);
  // Like Redis, a BITFIELD that writes first grows the value to cover every field it may set,
  // even if an overflow check then refuses the write.
  uint64_t highest = 0;
  bool writes = false;
  for (const auto& op : ops) {
    if (op.kind == BitFieldOp::kGet) continue;
    writes = true;
    highest = std::max(highest, op.offset + op.type.bits - 1);
  }
  if (writes) editor.Grow((highest >> 3) + 1);
  c.reply.Array(ops.size());
  for (const auto& op : ops) {
    if (op.kind != BitFieldOp::kGet) {
      Status s = ApplyBitFieldWrite(c, editor, op);
      if (!s.ok()) return c.reply.Error(s.ToReplyText());  // nothing is written
      continue;
    }
    std::string bytes;
    uint64_t first_byte = op.offset >> 3;
    Status s =
        editor.Read(first_byte, ((op.offset + op.type.bits - 1) >> 3) - first_byte + 1, &bytes);
    if (!s.ok()) return c.reply.Error(s.ToReplyText());
    c.reply.Integer(BitFieldToInt(GetBitField(bytes, op.offset & 7, op.type.bits), op.type));
  }
  if (editor.changed()) {
    editor.Finish(StringEncoding::kRaw);
    Notify(c, notify::kString, "setbit", c.arg(1));
  }
}

void BitFieldCommand(CommandContext& c) {
  BitFieldGeneric(c, false);
}
void BitFieldRoCommand(CommandContext& c) {
  BitFieldGeneric(c, true);
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const std::vector<CommandSpec> kBitmapCommands = {
    {"setbit", 4, kW, 1, 1, 1, SetBitCommand, "bitmap",
     "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.",
     "@write @bitmap @slow"},
    {"getbit", 3, kR | kCmdFast, 1, 1, 1, GetBitCommand, "bitmap", "Returns a bit value by offset.",
     "@read @bitmap @fast"},
    {"bitcount", -2, kR, 1, 1, 1, BitCountCommand, "bitmap",
     "Counts the number of set bits (population counting) in a string.", "@read @bitmap @slow"},
    {"bitpos", -3, kR, 1, 1, 1, BitPosCommand, "bitmap",
     "Finds the first set (1) or clear (0) bit in a string.", "@read @bitmap @slow"},
    {"bitop", -4, kW, 2, -1, 1, BitOpCommand, "bitmap",
     "Performs bitwise operations on multiple strings, and stores the result.",
     "@write @bitmap @slow"},
    {"bitfield", -2, kW, 1, 1, 1, BitFieldCommand, "bitmap",
     "Performs arbitrary bitfield integer operations on strings.", "@write @bitmap @slow"},
    {"bitfield_ro", -2, kR | kCmdFast, 1, 1, 1, BitFieldRoCommand, "bitmap",
     "Performs arbitrary read-only bitfield integer operations on strings.", "@read @bitmap @fast"},
};

}  // namespace

const std::vector<CommandSpec>& BitmapCommands() {
  return kBitmapCommands;
}

}  // namespace basalt
