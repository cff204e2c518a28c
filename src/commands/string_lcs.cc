// LCS (see string_lcs.h). A table of the LCS lengths of every pair of prefixes, then one walk
// back from its far corner that reads off the subsequence and the runs in which both strings
// match contiguously. Where several subsequences are equally long, the walk steps back in the
// first string only when that keeps a strictly longer LCS, otherwise in the second: the choice
// Redis makes, so that the subsequence and the match list agree with Redis's byte for byte.
#include "commands/string_lcs.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "commands/command_util.h"

namespace basalt {

namespace {

constexpr const char* kLcsTypeError = "ERR The specified keys must contain string values";

struct LcsOptions {
  bool len = false;
  bool idx = false;
  bool with_match_len = false;
  uint64_t min_match_len = 0;
};

// One run of matching bytes, inclusive ranges in each string.
struct LcsMatch {
  uint32_t a_start, a_end, b_start, b_end;
  uint32_t length() const { return a_end - a_start + 1; }
};

// Replies and returns false on a syntax error or an ambiguous request.
bool ParseLcsOptions(CommandContext& c, LcsOptions* o) {
  for (size_t i = 3; i < c.argc(); i++) {
    const std::string& opt = c.arg(i);
    if (EqualsIgnoreCase(opt, "idx")) {
      o->idx = true;
    } else if (EqualsIgnoreCase(opt, "len")) {
      o->len = true;
    } else if (EqualsIgnoreCase(opt, "withmatchlen")) {
      o->with_match_len = true;
    } else if (EqualsIgnoreCase(opt, "minmatchlen") && i + 1 < c.argc()) {
      auto n = IntArg(c, ++i);
      if (!n) return false;
      o->min_match_len = static_cast<uint64_t>(std::max<int64_t>(*n, 0));
    } else {
      c.reply.Error(kSyntaxError);
      return false;
    }
  }
  if (o->idx && o->len) {
    c.reply.Error("ERR If you want both the length and indexes, please just use IDX.");
    return false;
  }
  return true;
}

// Reads both operands (a missing key is an empty string); replies and returns false when either
// holds another type or a read fails.
bool ReadOperands(CommandContext& c, std::string* a, std::string* b) {
  auto state_a = c.ctx.Lookup(c.db(), c.arg(1));
  if (ReplyIfError(c, state_a.status())) return false;
  auto state_b = c.ctx.Lookup(c.db(), c.arg(2));
  if (ReplyIfError(c, state_b.status())) return false;
  CountHit(c, c.arg(1), state_a->live());
  CountHit(c, c.arg(2), state_b->live());
  for (const KeyState* s : {&*state_a, &*state_b}) {
    if (s->live() && s->meta.type != RedisType::kString) {
      c.reply.Error(kLcsTypeError);
      return false;
    }
  }
  return ReadStringValue(c, c.arg(1), *state_a, a) && ReadStringValue(c, c.arg(2), *state_b, b);
}

// The table of prefix LCS lengths: at(i, j) is the LCS length of a[0, i) and b[0, j).
class LcsTable {
 public:
  LcsTable(std::string_view a, std::string_view b, uint32_t* cells)
      : a_(a), b_(b), width_(b.size() + 1), cells_(cells) {
    for (size_t i = 0; i <= a.size(); i++) {
      for (size_t j = 0; j <= b.size(); j++) {
        uint32_t v = 0;
        if (i > 0 && j > 0) {
          v = a[i - 1] == b[j - 1] ? at(i - 1, j - 1) + 1 : std::max(at(i - 1, j), at(i, j - 1));
        }
        cells_[i * width_ + j] = v;
      }
    }
  }

  uint32_t at(size_t i, size_t j) const { return cells_[i * width_ + j]; }
  uint32_t length() const { return at(a_.size(), b_.size()); }

  // Walks back from the far corner: fills *sequence (when given) and appends to *matches (when
  // given) every run at least min_match_len long, last run first.
  void WalkBack(std::string* sequence, std::vector<LcsMatch>* matches,
                uint64_t min_match_len) const {
    size_t i = a_.size(), j = b_.size();
    size_t k = length();
    if (sequence) sequence->assign(k, '\0');
    LcsMatch run{};
    bool open = false;
    auto close = [&] {
      if (open && matches && run.length() >= min_match_len) matches->push_back(run);
      open = false;
    };
    while (i > 0 && j > 0) {
      if (a_[i - 1] == b_[j - 1]) {
        if (sequence) (*sequence)[--k] = a_[i - 1];
        i--;
        j--;
        if (open && run.a_start == i + 1 && run.b_start == j + 1) {
          run.a_start--;
          run.b_start--;
        } else {
          close();
          run = {static_cast<uint32_t>(i), static_cast<uint32_t>(i), static_cast<uint32_t>(j),
                 static_cast<uint32_t>(j)};
          open = true;
        }
      } else {
        if (at(i - 1, j) > at(i, j - 1)) {
          i--;
        } else {
          j--;
        }
        close();
      }
    }
    close();
  }

 private:
  std::string_view a_, b_;
  size_t width_;
  uint32_t* cells_;
};

void ReplyMatches(CommandContext& c, const std::vector<LcsMatch>& matches, bool with_len,
                  uint32_t length) {
  c.reply.Map(2);
  c.reply.Bulk("matches");
  c.reply.Array(matches.size());
  for (const LcsMatch& m : matches) {
    c.reply.Array(with_len ? 3 : 2);
    c.reply.Array(2);
    c.reply.Integer(m.a_start);
    c.reply.Integer(m.a_end);
    c.reply.Array(2);
    c.reply.Integer(m.b_start);
    c.reply.Integer(m.b_end);
    if (with_len) c.reply.Integer(m.length());
  }
  c.reply.Bulk("len");
  c.reply.Integer(length);
}

}  // namespace

void LcsCommand(CommandContext& c) {
  std::string a, b;
  if (!ReadOperands(c, &a, &b)) return;
  LcsOptions o;
  if (!ParseLcsOptions(c, &o)) return;
  // Indexes are 32-bit, as in Redis; the strings are far shorter under the default limits.
  if (a.size() >= UINT32_MAX - 1 || b.size() >= UINT32_MAX - 1) {
    return c.reply.Error("ERR String too long for LCS");
  }
  const uint64_t cells = (a.size() + 1) * (b.size() + 1);
  const uint64_t bytes = cells * sizeof(uint32_t);
  if (bytes / sizeof(uint32_t) != cells) {
    return c.reply.Error("ERR Insufficient memory, failed allocating transient memory for LCS");
  }
  if (bytes > static_cast<uint64_t>(c.server.config->proto_max_bulk_len.load())) {
    return c.reply.Error(
        "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
  }
  std::unique_ptr<uint32_t[]> storage(new (std::nothrow) uint32_t[cells]);
  if (!storage) {
    return c.reply.Error("ERR Insufficient memory, failed allocating transient memory for LCS");
  }
  LcsTable table(a, b, storage.get());
  if (o.len) return c.reply.Integer(table.length());
  if (o.idx) {
    std::vector<LcsMatch> matches;
    table.WalkBack(nullptr, &matches, o.min_match_len);
    return ReplyMatches(c, matches, o.with_match_len, table.length());
  }
  std::string sequence;
  table.WalkBack(&sequence, nullptr, 0);
  c.reply.Bulk(sequence);
}

}  // namespace basalt
