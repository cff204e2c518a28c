// SkipList's warming walks (SkipListMemTableFactory::WarmInsertPaths): bring the nodes a batch's
// inserts will visit into the CPU cache, several searches at once, and leave their paths to the
// thread for the inserts to start from.
#include <cstdint>
#include <vector>

#include "storage/skiplist_list.h"

namespace basalt::skiplist {

size_t SkipList::WarmInsertPaths(const std::vector<Slice>& keys) const {
  if (!bytewise_) return 0;
  // Each lane is one search, advanced a node at a time in turn with the others: the node a lane
  // compares next was prefetched when the lane last ran, `searching` - 1 steps earlier. The
  // lanes searching are lanes[0, searching): a batch of a few keys steps only through those
  // (stepping over idle lanes cost more than the searches of a short batch).
  constexpr size_t kLanes = SkipListMemTableFactory::kWarmingLanes;
  constexpr size_t kFewLanes = 2;
  struct Lane {
    const Slice* key = nullptr;
    const char* prev = nullptr;
    // The node the lane went down before (at or after its key): met again a level lower, as it
    // is half the time, it needs no comparison.
    const char* bound = nullptr;
    int level = 0;
    uint32_t path = 0;
  };
  Lane lanes[kLanes];
  size_t searching = 0;
  size_t next_key = 0;
  size_t searches = 0;
  // The level-0 neighbours of the last finished search: a key between them needs no search of
  // its own (a run of pushes to one list lands in one gap).
  const char* gap_prev = nullptr;
  const char* gap_next = nullptr;
  uint32_t gap_path = 0;
  // The inserts also chain each node to its bucket in the index.
  if (index_ != nullptr) {
    for (const Slice& key : keys) index_->Prefetch(key);
  }
  int top = max_height_.load(std::memory_order_relaxed) - 1;
  WarmedPaths& paths = ThreadWarmedPaths::Start(id_, top + 1);
  const Summit* summit = CurrentSummit();
  if (summit != nullptr && summit->level() >= top) summit = nullptr;
  int direction = keys.size() >= kMinSortedRun ? SortedDirection(keys) : 0;
  if (direction != 0) return WarmSortedRun(keys, direction > 0, top, paths);
  // Gives `lane` the next key that needs a search of its own; false when none is left.
  auto start_search = [&](Lane& lane) {
    while (next_key < keys.size() && InGap(gap_prev, gap_next, keys[next_key])) {
      paths.AddKey(keys[next_key++], gap_path);
    }
    if (next_key == keys.size()) return false;
    const Slice& key = keys[next_key++];
    lane = Lane{&key, head(), nullptr, top, paths.NewPath()};
    paths.AddKey(key, lane.path);
    searches++;
    // A seek that found this key (a pop's) already walked most of the way.
    const SearchPath* kept = ThreadSeekPaths::Take(id_, key);
    if (kept != nullptr && (kept->nodes[0] == head() || UserKeyBefore(kept->nodes[0], key))) {
      auto node_at = [&](int level) { return level < kept->height ? kept->nodes[level] : head(); };
      lane.level = LevelLeadingTo(node_at, top, key);
      lane.prev = node_at(lane.level);
      for (int level = lane.level + 1; level <= top; level++) {
        paths.SetNode(lane.path, level, node_at(level));
      }
    } else if (summit != nullptr) {
      // The search starts at the summit's level. Above it the path is the head: right for
      // every level, if a long walk for the rare insert that links that high.
      const char* before = summit->LastBefore(key);
      lane.level = summit->level();
      lane.prev = before != nullptr ? before : head();
      for (int level = lane.level + 1; level <= top; level++)
        paths.SetNode(lane.path, level, head());
    }
    return true;
  };
  while (searching < kLanes && start_search(lanes[searching])) searching++;
  uint64_t steps = 0;
  while (searching > 0) {
    for (size_t i = 0; i < searching;) {
      Lane& lane = lanes[i];
      steps++;
      const char* node = NextOf(lane.prev, lane.level);
      if (node != nullptr && node != lane.bound && UserKeyBefore(node, *lane.key)) {
        lane.prev = node;
      } else if (lane.level > 0) {
        paths.SetNode(lane.path, lane.level--, lane.prev);
        lane.bound = node;
      } else {
        paths.SetNode(lane.path, 0, lane.prev);
        gap_prev = lane.prev;
        gap_next = node;
        gap_path = lane.path;
        // The lane's next search starts in the next round; with no key left, the last lane
        // takes this one's place and steps now, as it would have later in this round.
        if (start_search(lane)) {
          i++;
        } else {
          lane = lanes[--searching];
        }
        continue;
      }
      // With few lanes, a lane's turns come back to back and each waits for its node: fetch
      // the node it steps to if it goes down as well, as a lookup does (FindInLevel).
      if (searching <= kFewLanes && lane.level > 0) {
        const char* below = NextOf(lane.prev, lane.level - 1);
        if (below != nullptr) {
          __builtin_prefetch(below);
          __builtin_prefetch(LinkOf(below, lane.level - 1));
        }
      }
      if (const char* ahead = NextOf(lane.prev, lane.level)) {
        __builtin_prefetch(ahead);
        __builtin_prefetch(LinkOf(ahead, lane.level));
        // The comparison reads up to the key's length into the entry: for a member of a
        // collection that is often past the entry's first cache line, which nothing else
        // fetches (docs/benchmarks.md, "The memtable skip list").
        __builtin_prefetch(ahead + lane.key->size());
      }
      i++;
    }
  }
  ThreadWarmedPaths::CountSteps(steps);
  return searches;
}

const Summit* SkipList::CurrentSummit() const {
  constexpr size_t kMinCounted = 16;      // ~1,000 entries
  constexpr size_t kMinLevelNodes = 512;  // the summit's level: the highest with this many
  constexpr size_t kMaxLevelNodes = 1 << 16;
  size_t counted = counted_nodes_.load(std::memory_order_relaxed);
  const Summit* summit = summit_.load(std::memory_order_acquire);
  size_t made_at = summit_counted_.load(std::memory_order_relaxed);
  if (counted < kMinCounted || counted < made_at + made_at / 4) return summit;
  if (making_summit_.exchange(true, std::memory_order_acquire)) return summit;
  std::vector<const char*> nodes;
  int level = max_height_.load(std::memory_order_relaxed) - 1;
  for (; level > 0; level--) {
    nodes.clear();
    for (const char* node = NextOf(head(), level); node != nullptr && nodes.size() < kMaxLevelNodes;
         node = NextOf(node, level)) {
      nodes.push_back(node);
    }
    if (nodes.size() >= kMinLevelNodes) break;
  }
  if (level > 0 && nodes.size() < kMaxLevelNodes) {
    std::vector<Slice> keys;
    keys.reserve(nodes.size());
    for (const char* node : nodes) keys.push_back(UserKeyOf(node));
    summits_.push_back(std::make_unique<Summit>(level, std::move(nodes), std::move(keys)));
    summit = summits_.back().get();
    summit_.store(summit, std::memory_order_release);
  }
  summit_counted_.store(counted, std::memory_order_relaxed);
  making_summit_.store(false, std::memory_order_release);
  return summit;
}

int SkipList::SortedDirection(const std::vector<Slice>& keys) {
  int direction = 0;
  for (size_t i = 1; i < keys.size(); i++) {
    int c = CompareUserKeys(keys[i - 1], keys[i]);
    if (c == 0) continue;
    if (direction != 0 && (c < 0) != (direction > 0)) return 0;
    direction = c < 0 ? 1 : -1;
  }
  return direction;
}

size_t SkipList::WarmSortedRun(const std::vector<Slice>& keys, bool ascending, int top,
                               WarmedPaths& paths) const {
  // Each search starts from the path of the key before it: it climbs only as high as the
  // distance between the two keys needs, over nodes the last search just brought into the
  // cache, then walks down. A run of neighbours (pops from one end of a list, one element after
  // another) costs a few comparisons per key instead of a search from the head.
  const char* last[kMaxHeight];
  size_t searches = 0;
  const char* gap_prev = nullptr;
  const char* gap_next = nullptr;
  uint32_t gap_path = 0;
  for (const Slice& key : keys) {
    if (InGap(gap_prev, gap_next, key)) {
      paths.AddKey(key, gap_path);
      continue;
    }
    uint32_t path = paths.NewPath();
    paths.AddKey(key, path);
    searches++;
    int level = top;
    const char* prev = head();
    if (gap_prev != nullptr) {
      // The lowest level from which the last path still leads to this key. Above it, the last
      // path's nodes are this key's too: no node of those levels lies between the two keys.
      int from = 0;
      if (ascending) {
        from = LevelLeadingTo([&](int level) { return last[level]; }, top, key);
      } else {
        while (from <= top && last[from] != head() && !UserKeyBefore(last[from], key)) from++;
      }
      if (from <= top) {
        level = from;
        prev = last[from];
        for (int i = from + 1; i <= top; i++) paths.SetNode(path, i, last[i]);
      }
    }
    const char* bound = nullptr;  // as a lane's in WarmInsertPaths
    while (true) {
      const char* node = NextOf(prev, level);
      if (node != nullptr && node != bound && UserKeyBefore(node, key)) {
        prev = node;
        continue;
      }
      bound = node;
      paths.SetNode(path, level, prev);
      last[level] = prev;
      if (level == 0) {
        gap_prev = prev;
        gap_next = node;
        gap_path = path;
        break;
      }
      level--;
    }
  }
  return searches;
}

}  // namespace basalt::skiplist
