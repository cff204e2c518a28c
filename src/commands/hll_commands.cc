// HyperLogLog commands: PFADD, PFCOUNT, PFMERGE over string values in Redis's HLL byte format
// (types/hyperloglog.h), so an HLL is a string to GET/TYPE/SET and Redis's own HLLs work here.
//
// Each command expands the registers of the values it reads, works on the registers and writes
// the whole value back once (a dense HLL, 12304 bytes, is a segmented string: types/string.h).
// Only LoadHll and StoreHll touch the stored bytes.
//
// PFCOUNT of one key stores the cardinality it computed in the value's header, as Redis does,
// so it may write although Redis classes it read-only: its row has kCmdRewritesKey, which makes
// the dispatcher lock the key as for a write.
#include "commands/command_util.h"
#include "types/hyperloglog.h"

namespace basalt {

namespace {

constexpr const char* kNotHllError = "WRONGTYPE Key is not a valid HyperLogLog string value.";
constexpr const char* kCorruptHllError = "INVALIDOBJ Corrupted HLL object detected";

// An HLL key as a command found it: the state to pass back when writing, and its bytes (empty
// when the key does not exist).
struct HllKey {
  KeyState state;
  std::string bytes;
  bool exists() const { return state.live(); }
};

// Reads `key`, which must be absent or a string holding an HLL; replies WRONGTYPE (either
// Redis text) or the I/O error and returns nullopt otherwise.
std::optional<HllKey> LoadHll(CommandContext& c, std::string_view key) {
  auto state = LookupString(c, key);
  if (!state) return std::nullopt;
  HllKey out{*state, {}};
  if (!state->live()) return out;
  if (!ReadStringValue(c, key, *state, &out.bytes)) return std::nullopt;
  if (!hll::LooksLikeHll(out.bytes)) {
    c.reply.Error(kNotHllError);
    return std::nullopt;
  }
  return out;
}

// Writes `bytes` as the value of `key`, keeping the TTL of the key it replaces.
void StoreHll(CommandContext& c, std::string_view key, std::string_view bytes,
              const KeyState& old) {
  int64_t expire_ms = old.live() ? old.meta.expire_ms : 0;
  WriteString(c, key, bytes, expire_ms, old, StringEncoding::kRaw);
}

// The registers of `k` (all zero when it does not exist); replies INVALIDOBJ and returns false
// when its sparse body is corrupt.
bool ReadRegistersOrReply(CommandContext& c, const HllKey& k, hll::Registers* registers) {
  if (!k.exists()) {
    registers->fill(0);
    return true;
  }
  if (hll::ReadRegisters(k.bytes, registers)) return true;
  c.reply.Error(kCorruptHllError);
  return false;
}

// Serializes registers for `k`, keeping its header; sparse only if `k` is new or sparse and
// `dense_input` is false.
std::string Serialize(CommandContext& c, const HllKey& k, const hll::Registers& registers,
                      bool dense_input) {
  bool sparse = !dense_input && (!k.exists() || hll::EncodingOf(k.bytes) == hll::Encoding::kSparse);
  auto max_bytes = static_cast<size_t>(c.server.config->hll_sparse_max_bytes.load());
  return hll::Serialize(registers, k.bytes, sparse, max_bytes);
}

// PFADD key [element ...]: 1 if a register changed or the key was created, else 0.
void PfaddCommand(CommandContext& c) {
  auto k = LoadHll(c, c.arg(1));
  if (!k) return;
  hll::Registers registers;
  if (!ReadRegistersOrReply(c, *k, &registers)) return;
  int64_t updated = k->exists() ? 0 : 1;  // as Redis counts changes: creation, then registers
  for (size_t i = 2; i < c.argc(); i++) updated += hll::Add(&registers, c.arg(i)) ? 1 : 0;
  if (updated == 0) return c.reply.Integer(0);
  StoreHll(c, c.arg(1), Serialize(c, *k, registers, false), k->state);
  CountChanges(c, updated);
  Notify(c, notify::kString, "pfadd", c.arg(1));
  c.reply.Integer(1);
}

// One key: the cached cardinality if valid, else computed and cached in the value.
void CountOneKey(CommandContext& c) {
  auto k = LoadHll(c, c.arg(1));
  if (!k) return;
  if (!k->exists()) return c.reply.Integer(0);
  if (auto cached = hll::CachedCardinality(k->bytes)) {
    return c.reply.Integer(static_cast<int64_t>(*cached));
  }
  hll::Registers registers;
  if (!ReadRegistersOrReply(c, *k, &registers)) return;
  uint64_t card = hll::Estimate(registers);
  hll::SetCachedCardinality(&k->bytes, card);
  StoreHll(c, c.arg(1), k->bytes, k->state);
  c.reply.Integer(static_cast<int64_t>(card));
}

// PFCOUNT key [key ...]: several keys count their union and cache nothing.
void PfcountCommand(CommandContext& c) {
  if (c.argc() == 2) return CountOneKey(c);
  hll::Registers merged{};
  for (size_t i = 1; i < c.argc(); i++) {
    auto k = LoadHll(c, c.arg(i));
    if (!k) return;
    CountHit(c, c.arg(i), k->exists());
    if (!k->exists()) continue;
    hll::Registers registers;
    if (!ReadRegistersOrReply(c, *k, &registers)) return;
    hll::Merge(&merged, registers);
  }
  c.reply.Integer(static_cast<int64_t>(hll::Estimate(merged)));
}

// PFMERGE destkey [sourcekey ...]: destkey's own registers take part in the union. The result
// is dense if any input was dense, as in Redis.
void PfmergeCommand(CommandContext& c) {
  hll::Registers merged{};
  std::optional<HllKey> dest;
  bool dense_input = false;
  for (size_t i = 1; i < c.argc(); i++) {
    auto k = LoadHll(c, c.arg(i));
    if (!k) return;
    CountHit(c, c.arg(i), k->exists());
    if (i == 1) dest = k;
    if (!k->exists()) continue;
    hll::Registers registers;
    if (!ReadRegistersOrReply(c, *k, &registers)) return;
    hll::Merge(&merged, registers);
    dense_input |= hll::EncodingOf(k->bytes) == hll::Encoding::kDense;
  }
  StoreHll(c, c.arg(1), Serialize(c, *dest, merged, dense_input), dest->state);
  Notify(c, notify::kString, "pfadd", c.arg(1));
  c.reply.Ok();
}

// Rewrites a sparse `k` as dense (Redis's hllSparseToDense); false after replying INVALIDOBJ
// when its sparse body is corrupt.
bool StoreDense(CommandContext& c, const HllKey& k, hll::Registers* registers) {
  if (!ReadRegistersOrReply(c, k, registers)) return false;
  if (hll::EncodingOf(k.bytes) == hll::Encoding::kSparse) {
    StoreHll(c, c.arg(2), hll::Serialize(*registers, k.bytes, false, 0), k.state);
  }
  return true;
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key: Redis's HLL debugging views. GETREG and TODENSE
// leave a sparse value dense, as in Redis.
void PfdebugCommand(CommandContext& c) {
  auto k = LoadHll(c, c.arg(2));
  if (!k) return;
  if (!k->exists()) return c.reply.Error("ERR The specified key does not exist");
  std::string sub = ToLower(c.arg(1));
  bool sparse = hll::EncodingOf(k->bytes) == hll::Encoding::kSparse;
  hll::Registers registers;
  if (sub == "getreg") {
    if (!StoreDense(c, *k, &registers)) return;
    c.reply.Array(hll::kRegisters);
    for (uint8_t r : registers) c.reply.Integer(r);
  } else if (sub == "decode") {
    if (!sparse) return c.reply.Error("ERR HLL encoding is not sparse");
    c.reply.Bulk(hll::DescribeSparse(k->bytes));
  } else if (sub == "encoding") {
    c.reply.Simple(sparse ? "sparse" : "dense");
  } else if (sub == "todense") {
    if (!StoreDense(c, *k, &registers)) return;
    c.reply.Integer(sparse ? 1 : 0);
  } else {
    c.reply.Error("ERR Unknown PFDEBUG subcommand '" + c.arg(1) + "'");
  }
}

// PFSELFTEST: checks the register packing and the estimator's error bounds (hll::SelfTest).
void PfselftestCommand(CommandContext& c) {
  auto max_bytes = static_cast<size_t>(c.server.config->hll_sparse_max_bytes.load());
  std::string failure = hll::SelfTest(max_bytes);
  if (!failure.empty()) return c.reply.Error(failure);
  c.reply.Ok();
}

const std::vector<CommandSpec> kHllCommands = {
    {"pfadd", -2, kCmdWrite | kCmdDenyOom | kCmdFast, 1, 1, 1, PfaddCommand, "hyperloglog",
     "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.",
     "@write @hyperloglog @fast"},
    {"pfcount", -2, kCmdReadOnly | kCmdRewritesKey | kCmdMayReplicate, 1, -1, 1, PfcountCommand,
     "hyperloglog",
     "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).",
     "@read @hyperloglog @slow"},
    {"pfmerge", -2, kCmdWrite | kCmdDenyOom, 1, -1, 1, PfmergeCommand, "hyperloglog",
     "Merges one or more HyperLogLog values into a single key.", "@write @hyperloglog @slow"},
    {"pfdebug", 3, kCmdWrite | kCmdDenyOom | kCmdAdmin, 2, 2, 1, PfdebugCommand, "hyperloglog",
     "Internal commands for debugging HyperLogLog values.",
     "@write @hyperloglog @admin @slow @dangerous"},
    {"pfselftest", 1, kCmdAdmin, 0, 0, 0, PfselftestCommand, "hyperloglog",
     "An internal command for testing HyperLogLog values.", "@hyperloglog @admin @slow @dangerous"},
};

}  // namespace

const std::vector<CommandSpec>& HllCommands() {
  return kHllCommands;
}

}  // namespace basalt
