// Random members of sets, hashes and sorted sets: samples (SRANDMEMBER, HRANDFIELD,
// ZRANDMEMBER) and pops (SPOP), by probes at random points of a collection's member space, and,
// for long runs of single pops of one large set, from a pool of members picked ahead
// (PopFromPool).
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <random>
#include <unordered_set>

#include "common/hash.h"
#include "common/strutil.h"
#include "types/empty_stretches.h"
#include "types/set.h"
#include "types/set_removals.h"
#include "types/zset.h"

namespace basalt {

namespace {

// Collections up to this size are sampled from a full read.
constexpr uint64_t kSampleFromFullRead = 512;
// A sample of a larger collection is read in full too when it would take a probe per this many
// members or fewer: a probe (a seek) costs about as much as reading that many in a row.
constexpr uint64_t kMembersPerProbe = 8;
// Sets up to this size are popped from a full read. Lower: every pop reads the whole set and
// the tombstones the pops before it left (with 512 here, the last 512 pops would be a quarter of
// an unpipelined drain of 95k members), where a probe takes one seek.
constexpr uint64_t kPopFromFullRead = 64;
// SPOP moves the rest of a tombstone-ridden set to a fresh incarnation up to this size (or
// more, when the pop stepped over even more tombstones than that).
constexpr uint64_t kReincarnateMax = 4096;
// Random points a probe draws at most before it takes the member after the last one (ProbeWalk),
// and, for a pop, the first draws of those that may land inside a known stretch and be drawn
// again: a draw costs a lookup in the stretches, and once pops have drained most of a set nearly
// every draw lands in one (64 such draws made pipelined SPOP a third slower). After them a point
// inside a stretch walks on from its end.
constexpr int kMaxDraws = 64;
constexpr int kPopStretchDraws = 4;
// Single pops of one large set, many in a row, come from a pool of members picked ahead
// (PopFromPool): each probe that fills it takes kPoolRun members in a row, so a seek through
// every sorted run serves that many pops instead of one (with runs of 16, refilling takes 35% of
// a pipelined drain's instructions, its seeks 13%). The pool holds
// kPoolTarget members, drawn from it at random, so that the members of one run leave it far
// apart in time (about kPoolRun / kPoolTarget of pairs of pops in a row come from one run). A set
// gets one after kPoolAfterPops single pops in a row, if it has at least kPoolMinSize members, of
// which the pool then holds a quarter at most: filling it takes kPoolTarget / kPoolRun probes at
// once, which those pops pay back, where pops that move between sets would pay it again and
// again. The pool stays in use as the pops drain the set, down to the last members, which it
// then holds all of.
constexpr uint64_t kPoolMinSize = 16384;
constexpr uint64_t kPoolAfterPops = 1024;
constexpr size_t kPoolTarget = 4096;
constexpr int kPoolRun = 64;
// A pool's members may total this many bytes: a set of larger members pops without one.
constexpr size_t kPoolMaxBytes = 512 << 10;
// Pool members a pop may find gone (popped or removed by someone else) before it probes instead.
constexpr int kPoolMisses = 64;

// Counts the deletion tombstones RocksDB steps over on this thread while it lives.
class TombstoneCounter {
 public:
  TombstoneCounter() : saved_(rocksdb::GetPerfLevel()) {
    if (saved_ < rocksdb::PerfLevel::kEnableCount)
      rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
    start_ = rocksdb::get_perf_context()->internal_delete_skipped_count;
  }
  ~TombstoneCounter() { rocksdb::SetPerfLevel(saved_); }
  TombstoneCounter(const TombstoneCounter&) = delete;
  TombstoneCounter& operator=(const TombstoneCounter&) = delete;
  uint64_t skipped() const {
    return rocksdb::get_perf_context()->internal_delete_skipped_count - start_;
  }

 private:
  rocksdb::PerfLevel saved_;
  uint64_t start_ = 0;
};

std::mt19937_64& Rng() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

// A random point of the member space between `lo` and `hi` (the first and last members): their
// common prefix, then a byte between theirs, then bytes drawn from the range of byte values the
// two use. Members made of digits or hex land on real members about uniformly, instead of
// most points falling into the gaps between byte values that no member uses.
std::string RandomPoint(std::string_view lo, std::string_view hi) {
  size_t p = 0;
  while (p < lo.size() && p < hi.size() && lo[p] == hi[p]) p++;
  if (p >= hi.size()) return std::string(lo);
  uint8_t min_b = 255, max_b = 0;
  for (std::string_view s : {lo.substr(std::min(p, lo.size())), hi.substr(p)}) {
    for (size_t i = 0; i < s.size() && i < 16; i++) {
      min_b = std::min(min_b, static_cast<uint8_t>(s[i]));
      max_b = std::max(max_b, static_cast<uint8_t>(s[i]));
    }
  }
  uint8_t first_lo = p < lo.size() ? static_cast<uint8_t>(lo[p]) : min_b;
  uint8_t first_hi = static_cast<uint8_t>(hi[p]);
  if (first_lo > first_hi) first_lo = first_hi;
  std::string out(hi.substr(0, p));
  std::uniform_int_distribution<int> first(first_lo, first_hi), rest(min_b, max_b);
  out.push_back(static_cast<char>(first(Rng())));
  for (int i = 0; i < 7; i++) out.push_back(static_cast<char>(rest(Rng())));
  return out;
}

// What this thread learned about the collection it probed last (a pipeline of pops works on
// one set): its first and last members, and the pops' empty stretches. Both hold while the
// collection only shrinks. Random points only need bounds that are about right, so probes reuse
// the first and last members rather than measure them again: each measurement steps over the
// tombstones pops left at the ends, backwards at the top, where every step back in a memtable is
// a search (measuring every 64 pops would be a fifth of a draining pop's instructions).
// Once the collection grew, both are learned again. A member added while another was removed
// (no growth) outside the measured range is still reached through the wrap-around.
// The members a pool of pops holds (PopFromPool) may lie inside the stretches.
struct ProbeHints {
  std::string prefix;  // the collection's subkey prefix: db, key and version
  uint64_t size = 0;   // its size at the last probe
  bool measured = false;
  std::string lo;
  std::string hi;
  EmptyStretches empty;
};

// The thread's hints, made current for this collection: reset for another collection or
// incarnation, or once the collection grew (members may have been added outside the measured
// range or inside the stretches).
ProbeHints& HintsFor(std::string_view prefix, const Metadata& meta) {
  static thread_local ProbeHints hints;
  if (hints.prefix != prefix) {
    hints.prefix = prefix;
    hints.measured = false;
    hints.empty.Clear();
  } else if (meta.size > hints.size) {
    hints.measured = false;
    hints.empty.Clear();
  }
  hints.size = meta.size;
  return hints;
}

// Sets *lo and *hi to the collection's first and last members (from the hints when they hold);
// false when the collection has no member.
StatusOr<bool> MemberRange(ProbeHints& hints, MemberIterator& it, std::string* lo,
                           std::string* hi) {
  if (hints.measured) {
    *lo = hints.lo;
    *hi = hints.hi;
    return true;
  }
  it.Seek();
  if (!it.Valid()) return it.status().ok() ? StatusOr<bool>(false) : it.status();
  lo->assign(it.member());
  it.SeekToLast();
  if (!it.Valid()) return it.status().ok() ? StatusOr<bool>(false) : it.status();
  hi->assign(it.member());
  hints.lo = *lo;
  hints.hi = *hi;
  hints.measured = true;
  return true;
}

// One probe's walk from a random point to the first member it may take. With stretches (pops),
// it starts at the end of the empty stretch holding its point, and goes in segments: each ends
// where the next known stretch starts, and the walk goes on from that stretch's end instead of
// stepping over the tombstones inside it.
//
// A probe takes the member after its point, so a member is picked in proportion to the empty
// space before it. Where that space is a known stretch, a walk past the last member, or a
// member this call already took, the walk asks for another point instead (within limits):
// starting from the stretch's end, wrapping around or stepping on to the next member instead
// makes the members right after a gap, and then their neighbours, come out one after another
// (SPOP of "1" ... "2000" and "zzzzzz" would give 1, 10, 100, 1000, 1001, 1002; SRANDMEMBER 10
// ten neighbours).
class ProbeWalk {
 public:
  enum class Landing { kFound, kDrawAgain, kNone };

  // `stretch_draws`: how many of a probe's first draws may land inside a stretch and be drawn
  // again.
  ProbeWalk(MemberIterator& it, EmptyStretches* empty, int stretch_draws)
      : it_(it), empty_(empty), stretch_draws_(stretch_draws) {}

  // Positions the iterator at the first member at or after `point` that is neither `stale()`
  // (stepped over) nor `taken()`; kNone when there is none, or on an iterator error (the
  // iterator's status tells).
  template <typename Stale, typename Taken>
  Landing Find(const std::string& point, const Stale& stale, const Taken& taken, int draw) {
    const bool settle = draw + 1 >= kMaxDraws;
    std::optional<std::string> target = Locate(point);
    if (draw < stretch_draws_ && from_ != point) return Landing::kDrawAgain;  // in a stretch
    bool positioned = Start(target);
    bool wrapped = false;
    while (true) {
      if (positioned && !it_.Valid() && it_.status().ok() && bounded_ && resume_) {
        std::string next = *resume_;
        SeekSegment(next);
        continue;
      }
      if (!positioned || !it_.Valid()) {
        if (!it_.status().ok()) return Landing::kNone;
        if (empty_ != nullptr) empty_->Add(from_, std::nullopt);
        if (!settle) return Landing::kDrawAgain;
        if (wrapped) return Landing::kNone;
        wrapped = true;
        positioned = Start(Locate(std::string()));
        continue;
      }
      if (!stale()) {
        if (!taken()) return Landing::kFound;
        if (!settle) return Landing::kDrawAgain;
      }
      it_.Next();
    }
  }
  // Where the walk that found the current member started: its point, or the start of the
  // stretch holding it. Everything from there up to the member is empty.
  const std::string& from() const { return from_; }

 private:
  // Where the walk for `point` seeks (nullopt: a stretch holds it and reaches the end of the
  // member space); sets from_.
  std::optional<std::string> Locate(const std::string& point) {
    from_ = point;
    if (empty_ == nullptr) return point;
    return empty_->WalkFrom(point, &from_);
  }
  // Seeks `target`, if any; false when there is none.
  bool Start(const std::optional<std::string>& target) {
    if (target) SeekSegment(*target);
    return target.has_value();
  }
  void SeekSegment(const std::string& position) {
    std::string limit;
    bounded_ = empty_ != nullptr && empty_->NextAfter(position, &limit, &resume_);
    if (bounded_) {
      it_.SeekBelow(position, limit);
    } else {
      it_.Seek(position);
    }
  }

  MemberIterator& it_;
  EmptyStretches* empty_;
  const int stretch_draws_;
  std::string from_;
  bool bounded_ = false;               // the segment ends where a known stretch starts
  std::optional<std::string> resume_;  // that stretch's end (nullopt: the end of the space)
};

// A pool of one set's members picked ahead for single pops (PopFromPool), shared by the
// threads: the set's lock keeps two from using it at once, the slot's mutex two sets that hash
// to one slot. Another set evicts it.
struct PoolEntry {
  std::string member;
  uint64_t trust = 0;  // the pool's trust when it was found
};

struct PopPool {
  std::mutex mu;
  std::string prefix;        // the set's subkey prefix: db, key and version
  uint64_t single_pops = 0;  // of the set since it took the slot
  uint64_t dry_at = 0;       // the set's size when a fill last found nothing more to take
  bool too_large = false;    // its members took more than kPoolMaxBytes
  size_t bytes = 0;          // of the members pooled
  std::vector<PoolEntry> entries;
  std::unordered_set<std::string, StringViewHash, std::equal_to<>> members;  // the same ones
  // Moves on whenever the set's counts of removals or untracked writes moved other than by the
  // pool's own pops: entries found before are looked up before they are popped.
  uint64_t trust = 0;
  uint64_t removals_seen = 0;
  uint64_t untracked_seen = 0;

  // Whether a fill should go on: the pool holds fewer than kPoolTarget members (or than the
  // whole set) and no more than kPoolMaxBytes.
  bool Wants(uint64_t set_size) const {
    return entries.size() < std::min<uint64_t>(kPoolTarget, set_size) && bytes <= kPoolMaxBytes;
  }
  void Clear() {
    entries.clear();
    members.clear();
    bytes = 0;
  }
};

constexpr size_t kPoolSlots = 16;

// The slot of the set with subkey prefix `prefix`, locked, made the set's own (and emptied) if
// another set held it; with `claim` false, *out is nullptr instead when another set holds it.
std::unique_lock<std::mutex> PoolSlot(std::string_view prefix, bool claim, PopPool** out) {
  static PopPool slots[kPoolSlots];
  PopPool& pool = slots[HashBytes(prefix) % kPoolSlots];
  std::unique_lock<std::mutex> lock(pool.mu);
  *out = &pool;
  if (pool.prefix != prefix && !claim) {
    *out = nullptr;
    return {};
  }
  if (pool.prefix != prefix) {
    pool.prefix = prefix;
    pool.single_pops = 0;
    pool.dry_at = 0;
    pool.too_large = false;
    pool.Clear();
    pool.trust++;
  }
  return lock;
}

// Takes up to `run` members in a row, from the one the iterator is at on, that are neither stale
// nor pooled, into the pool; returns the last one taken. Stops at the end of the walk's segment.
std::string TakeRun(MemberIterator& it, PopPool& pool, int run) {
  std::string last;
  for (int taken = 0; taken < run && it.Valid();) {
    if (!it.MayBeStale() && !pool.members.contains(it.member())) {
      last.assign(it.member());
      pool.entries.push_back({last, pool.trust});
      pool.members.insert(last);
      pool.bytes += last.size();
      taken++;
    }
    if (taken < run) it.Next();
  }
  return last;
}

// Probes the set until its pool holds kPoolTarget members (or the whole set), or none is left
// to take: then the pool is dry (dry_at) until the set grows. Each probe takes the members of a
// run (TakeRun) and marks the stretch up to its last one as empty in the thread's hints (pooled
// members are not taken twice, whichever thread found them).
Status FillPool(Context& ctx, int db, std::string_view key, const Metadata& meta, PopPool& pool) {
  MemberIterator it(ctx, MemberIterator::DatabaseOnly{}, db, key, meta.version);
  ProbeHints& hints = HintsFor(it.prefix(), meta);
  std::string lo, hi;
  StatusOr<bool> found = MemberRange(hints, it, &lo, &hi);
  if (!found.ok()) return found.status();
  if (!*found) return Status::OK();
  auto stale = [&] { return it.MayBeStale(); };
  auto pooled = [&] { return pool.members.contains(it.member()); };
  ProbeWalk walk(it, &hints.empty, kPopStretchDraws);
  while (pool.Wants(meta.size)) {
    ProbeWalk::Landing landing = ProbeWalk::Landing::kDrawAgain;
    for (int draw = 0; landing == ProbeWalk::Landing::kDrawAgain; draw++) {
      landing = walk.Find(RandomPoint(lo, hi), stale, pooled, draw);
    }
    if (landing == ProbeWalk::Landing::kNone) {
      // The stretches may hide members added since: learned again by the next probes.
      hints.empty.Clear();
      pool.dry_at = meta.size;
      return it.status();
    }
    std::string last = TakeRun(it, pool, kPoolRun);
    if (!it.status().ok()) return it.status();
    hints.empty.Add(walk.from(), last + '\0');
  }
  return Status::OK();
}

// What PopFromPool took: a member (none when the pool is not in use or found nothing the set
// still holds), with the pool's slot locked until the caller, having removed it, calls Removed().
class PoolPop {
 public:
  std::optional<Member> member;

  // The caller removed `member`: that removal leaves the pool's other members trusted. Any other
  // removal counted in the stripe meanwhile was of another set, since the caller holds this
  // one's lock; the slot's lock, held until now, kept other sets from taking the slot.
  void Removed() {
    if (pool_ != nullptr) pool_->removals_seen = SetRemovals(pool_->prefix);
    slot_ = {};
  }

 private:
  friend Status PopFromPool(Context& ctx, int db, std::string_view key, const Metadata& meta,
                            bool claim, PoolPop* out);
  PopPool* pool_ = nullptr;
  std::unique_lock<std::mutex> slot_;
};

// One single pop through the set's pool, once it has one or the set qualifies for one (see
// kPoolAfterPops): a member drawn from the pool at random. A member found before someone else
// may have removed members of the set is looked up through the batch first. Without `claim`,
// only a pool the set already has in its slot is used.
Status PopFromPool(Context& ctx, int db, std::string_view key, const Metadata& meta, bool claim,
                   PoolPop* out) {
  PopPool* pool;
  std::unique_lock<std::mutex> slot =
      PoolSlot(SubkeyPrefix(ctx.keyspace()->Physical(db), key, meta.version), claim, &pool);
  if (pool == nullptr || pool->too_large ||
      (pool->single_pops <= kPoolAfterPops &&
       (meta.size < kPoolMinSize || ++pool->single_pops <= kPoolAfterPops))) {
    return Status::OK();
  }
  const uint64_t removals = SetRemovals(pool->prefix);
  const uint64_t untracked = UntrackedSetWrites();
  if (removals != pool->removals_seen || untracked != pool->untracked_seen) {
    pool->trust++;
    pool->removals_seen = removals;
    pool->untracked_seen = untracked;
  }
  for (int misses = 0; misses < kPoolMisses;) {
    if (pool->Wants(meta.size) && meta.size > pool->dry_at) {
      Status s = FillPool(ctx, db, key, meta, *pool);
      if (!s.ok()) return s;
      if (pool->bytes > kPoolMaxBytes) {
        pool->too_large = true;
        pool->Clear();
      }
    }
    if (pool->entries.empty()) return Status::OK();
    std::uniform_int_distribution<size_t> pick(0, pool->entries.size() - 1);
    std::swap(pool->entries[pick(Rng())], pool->entries.back());
    PoolEntry entry = std::move(pool->entries.back());
    pool->entries.pop_back();
    pool->members.erase(entry.member);
    pool->bytes -= entry.member.size();
    Member m{std::move(entry.member), {}};  // a set member's value is empty
    Status s = entry.trust == pool->trust ? Status::OK()
                                          : GetMember(ctx, db, key, meta.version, m.name, &m.value);
    if (s.ok()) {
      out->member = std::move(m);
      out->pool_ = pool;
      out->slot_ = std::move(slot);
      return s;
    }
    if (!s.IsNotFound()) return s;
    misses++;
  }
  return Status::OK();
}

// Random probes into a large collection: each probe seeks a random point and takes the first
// member at or after it, skipping members already taken unless `repeats`. With `pops`, the
// probes go through the batch's held iterator (MemberIterator::DatabaseOnly), skip the members
// the batch may have written, can find fewer than `count`, and use and learn the empty
// stretches (ProbeWalk), which last while the collection only shrinks. Other probes learn
// stretches of their own for the call: the space past the last member and, without repeats,
// the space up to each member taken.
StatusOr<std::vector<Member>> ProbeMembers(Context& ctx, int db, std::string_view key,
                                           const Metadata& meta, uint64_t count, bool repeats,
                                           bool pops) {
  std::optional<MemberIterator> it;
  if (pops) {
    it.emplace(ctx, MemberIterator::DatabaseOnly{}, db, key, meta.version);
  } else {
    it.emplace(ctx, ColumnFamily::kSubkey, db, key, meta.version);
  }
  ProbeHints& hints = HintsFor(it->prefix(), meta);
  EmptyStretches this_call;
  EmptyStretches* empty = pops ? &hints.empty : &this_call;
  std::vector<Member> out;
  std::string lo, hi;
  StatusOr<bool> found = MemberRange(hints, *it, &lo, &hi);
  if (!found.ok()) return found.status();
  if (!*found) return out;
  // The members this call took, for a count above one (a single pop takes one).
  std::unordered_set<std::string> taken;
  const bool skip_taken = !repeats && count > 1;
  // A sorted set's popped members keep their entries (ZsetMemberLive): stepped over like those
  // the batch may have written.
  Status dead_check;
  auto stale = [&] {
    if (it->MayBeStale()) return true;
    if (meta.type != RedisType::kZset) return false;
    StatusOr<bool> live = ZsetMemberLive(ctx, db, key, meta, it->member(), it->value());
    if (!live.ok()) dead_check = live.status();
    return !live.ok() || !*live;
  };
  auto is_taken = [&] { return skip_taken && taken.count(std::string(it->member())) > 0; };
  ProbeWalk walk(*it, empty, pops ? kPopStretchDraws : kMaxDraws);
  while (out.size() < count) {
    ProbeWalk::Landing landing = ProbeWalk::Landing::kDrawAgain;
    for (int draw = 0; landing == ProbeWalk::Landing::kDrawAgain; draw++) {
      landing = walk.Find(RandomPoint(lo, hi), stale, is_taken, draw);
    }
    if (!dead_check.ok()) return dead_check;
    if (landing == ProbeWalk::Landing::kNone) {
      Status s = it->status();
      if (!s.ok()) return s;
      // Nothing this pass may take: the batch took the rest, or members were added inside the
      // stretches. The caller reads through the batch; the stretches are learned again.
      empty->Clear();
      return out;
    }
    if (skip_taken) taken.emplace(it->member());
    // The pop deletes this member next: its warming starts where the walk's seek left off.
    if (pops) ctx.batch().engine()->KeepLastSeekFor(ColumnFamily::kSubkey, it->key());
    out.push_back({std::string(it->member()), std::string(it->value())});
    // The walk crossed only dead (or taken) members, and this one is popped (or taken): the
    // stretch ends just past it (a key followed by a zero byte is the next possible key).
    if (pops || !repeats) empty->Add(walk.from(), out.back().name + '\0');
  }
  return out;
}

}  // namespace

StatusOr<std::vector<Member>> RandomMembers(Context& ctx, int db, std::string_view key,
                                            const Metadata& meta, uint64_t count, bool repeats) {
  bool full_read = meta.size <= kSampleFromFullRead || count * kMembersPerProbe >= meta.size;
  if (!full_read) return ProbeMembers(ctx, db, key, meta, count, repeats, false);
  auto all = ReadMembers(ctx, db, key, meta);
  if (!all.ok() || all->empty()) return all;
  std::vector<Member> out;
  if (repeats) {
    std::uniform_int_distribution<size_t> pick(0, all->size() - 1);
    out.reserve(count);
    for (uint64_t i = 0; i < count; i++) out.push_back((*all)[pick(Rng())]);
    return out;
  }
  std::shuffle(all->begin(), all->end(), Rng());
  if (all->size() > count) all->resize(count);
  return all;
}

StatusOr<std::vector<Member>> PopRandomMembers(Context& ctx, int db, std::string_view key,
                                               const KeyState& state, uint64_t count) {
  const Metadata& meta = state.meta;
  const bool probe = meta.size > kPopFromFullRead && count * 2 < meta.size;
  StatusOr<std::vector<Member>> picked = std::vector<Member>{};
  StatusOr<std::vector<Member>> rest = std::vector<Member>{};
  uint64_t tombstones = 0;
  PoolPop pool_pop;
  // A set drained through its pool pops from it to the last member: a full read of its last
  // kPopFromFullRead members would step over the tombstones of every pop before them (181k at
  // the end of a drain of 181k members, a tenth of the drain's instructions). A small set
  // does not take the slot of another set's pool.
  if (count == 1) {
    Status s = PopFromPool(ctx, db, key, meta, /*claim=*/probe, &pool_pop);
    if (!s.ok()) return s;
  }
  const bool from_pool = pool_pop.member.has_value();
  if (from_pool) {
    picked->push_back(std::move(*pool_pop.member));
  } else {
    // Only pops that read the set count the tombstones they step over (see reincarnate below).
    TombstoneCounter counter;
    if (probe) {
      // A pipeline's pops in one write group seek one held iterator. It does not see members
      // the batch added, so when the set has no other member left, the batch is read too.
      picked = ProbeMembers(ctx, db, key, meta, count, false, true);
      if (picked.ok() && picked->size() < count) {
        picked = ProbeMembers(ctx, db, key, meta, count, false, false);
      }
    } else {
      rest = ReadMembers(ctx, db, key, meta);
      if (rest.ok()) {
        std::shuffle(rest->begin(), rest->end(), Rng());
        size_t n = std::min<size_t>(count, rest->size());
        picked->assign(std::make_move_iterator(rest->begin()),
                       std::make_move_iterator(rest->begin() + n));
        rest->erase(rest->begin(), rest->begin() + n);
      }
    }
    tombstones = counter.skipped();
  }
  if (!picked.ok()) return picked;
  if (!rest.ok()) return rest;
  const uint64_t remaining = meta.size - picked->size();
  // A pop that stepped over many tombstones means the set is mostly dead entries: moving the
  // remaining members costs one write each, paid for by the crawls it spares later pops. Not
  // for a pop from a pool, which serves the rest of the drain without crawling: the move reads
  // every tombstone of the drain first (628k at 3,962 members left of a drained 632k, one pop of
  // a few hundred milliseconds), and the fresh incarnation starts without a pool.
  const bool reincarnate = !from_pool && tombstones >= 64 && remaining > 0 &&
                           remaining <= std::max<uint64_t>(kReincarnateMax, tombstones);
  if (reincarnate && probe) {
    rest = ReadMembers(ctx, db, key, meta);
    if (!rest.ok()) return rest;
    std::unordered_set<std::string> taken;
    for (const auto& m : *picked) taken.insert(m.name);
    std::erase_if(*rest, [&](const Member& m) { return taken.count(m.name) > 0; });
  }
  if (reincarnate) {
    CollectionWriter w = CollectionWriter::Reincarnate(ctx, db, key, state, RedisType::kSet);
    for (const auto& m : *rest) w.Put(m.name, m.value, true);
    w.Finish();
  } else {
    CollectionWriter w(ctx, db, key, state, RedisType::kSet);
    for (const auto& m : *picked) w.Remove(m.name);
    w.Finish();
    pool_pop.Removed();
  }
  return picked;
}

}  // namespace basalt
