// SORT and SORT_RO: the elements of a list, set or sorted set, sorted as numbers (or as byte
// strings with ALPHA), optionally by weights read from other keys (BY pattern), replied as
// themselves or as values read from other keys (GET pattern, repeatable), or stored as a list
// (STORE, SORT only).
//
// Redis 7.0's rules, step by step: options are parsed before the key is read; a BY pattern
// without '*' means "do not sort", which keeps a list's or sorted set's own order (reversed by
// DESC) and applies LIMIT to it; a pattern's first '*' is replaced by the element, and a "->"
// after it names a hash field; "#" in GET is the element itself. Numeric weights are whole
// strings strtod accepts; equal weights fall back to comparing the elements' bytes, so the
// order is deterministic. BY and GET patterns read arbitrary keys, so they need a user with
// access to every key, and a call with such patterns runs alone under the exclusive keyspace
// lock (as COPY does): the keys they name are not known before it runs, so no key lock could
// cover them, and its reads must see one state of the database, as Redis's single thread gives
// them. Without patterns, SORT takes only its keys' locks.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "commands/acl_check.h"
#include "commands/command_util.h"
#include "commands/session.h"
#include "types/hash.h"
#include "types/list.h"
#include "types/set.h"
#include "types/zset.h"

namespace basalt {

namespace {

struct SortOptions {
  bool desc = false;
  bool alpha = false;
  int64_t limit_start = 0;
  int64_t limit_count = -1;
  std::optional<std::string> by;
  bool dont_sort = false;
  std::vector<std::string> gets;
  std::optional<std::string> store;
};

// One element on its way through the sort: its weight is a number, or bytes (ALPHA with BY),
// or missing (ALPHA with BY, when the weight key is absent).
struct SortItem {
  std::string element;
  double score = 0;
  std::optional<std::string> weight;
};

// BY and GET patterns may name any key, so they need a selector with access to all of them.
bool HasFullKeyAccess(CommandContext& c) {
  const AclUser& user = SessionUser(c.server, c.session);
  return std::any_of(user.selectors.begin(), user.selectors.end(),
                     [](const AclSelector& s) { return s.all_keys(); });
}

// Replies and returns false on an error, as Redis does while parsing.
bool ParseSortOptions(CommandContext& c, bool read_only, SortOptions* o) {
  for (size_t i = 2; i < c.argc(); i++) {
    const std::string& opt = c.arg(i);
    const size_t left = c.argc() - i - 1;
    if (EqualsIgnoreCase(opt, "asc")) {
      o->desc = false;
    } else if (EqualsIgnoreCase(opt, "desc")) {
      o->desc = true;
    } else if (EqualsIgnoreCase(opt, "alpha")) {
      o->alpha = true;
    } else if (EqualsIgnoreCase(opt, "limit") && left >= 2) {
      auto start = IntArg(c, i + 1);
      if (!start) return false;
      auto count = IntArg(c, i + 2);
      if (!count) return false;
      o->limit_start = *start;
      o->limit_count = *count;
      i += 2;
    } else if (!read_only && EqualsIgnoreCase(opt, "store") && left >= 1) {
      o->store = c.arg(++i);
    } else if (EqualsIgnoreCase(opt, "by") && left >= 1) {
      o->by = c.arg(++i);
      if (o->by->find('*') == std::string::npos) {
        o->dont_sort = true;
      } else if (!HasFullKeyAccess(c)) {
        c.reply.Error("ERR BY option of SORT denied due to insufficient ACL permissions.");
        return false;
      }
    } else if (EqualsIgnoreCase(opt, "get") && left >= 1) {
      if (!HasFullKeyAccess(c)) {
        c.reply.Error("ERR GET option of SORT denied due to insufficient ACL permissions.");
        return false;
      }
      o->gets.push_back(c.arg(++i));
    } else {
      c.reply.Error(kSyntaxError);
      return false;
    }
  }
  return true;
}

// The value a pattern names for `element`: "#" is the element; otherwise the first '*' takes
// the element and, when "->field" follows it, the field of that hash. nullopt when there is no
// '*', no such key, or a key of the wrong type. The pattern ends at a NUL byte, as in Redis.
StatusOr<std::optional<std::string>> LookupByPattern(CommandContext& c, std::string_view pattern,
                                                     std::string_view element) {
  pattern = pattern.substr(0, pattern.find('\0'));
  if (pattern == "#") return std::optional<std::string>(std::string(element));
  size_t star = pattern.find('*');
  if (star == std::string_view::npos) return std::optional<std::string>();
  std::string_view rest = pattern.substr(star + 1);
  std::optional<std::string_view> field;
  size_t arrow = rest.find("->");
  if (arrow != std::string_view::npos && arrow + 2 < rest.size()) {
    field = rest.substr(arrow + 2);
    rest = rest.substr(0, arrow);
  }
  std::string key;
  key.append(pattern.substr(0, star)).append(element).append(rest);
  auto state = c.ctx.Lookup(c.db(), key);
  if (!state.ok()) return state.status();
  if (!state->live()) return std::optional<std::string>();
  std::string value;
  if (field) {
    if (state->meta.type != RedisType::kHash) return std::optional<std::string>();
    Status s = GetFieldValue(c.ctx, c.db(), key, state->meta.version, *field, &value);
    if (s.IsNotFound()) return std::optional<std::string>();
    if (!s.ok()) return s;
    return std::optional<std::string>(std::move(value));
  }
  if (state->meta.type != RedisType::kString) return std::optional<std::string>();
  Status s = ReadString(c.ctx, c.db(), key, state->meta, &value);
  if (!s.ok()) return s;
  return std::optional<std::string>(std::move(value));
}

// The elements to sort, in the collection's own order (a set's is by member bytes).
StatusOr<std::vector<std::string>> ReadElements(CommandContext& c, const KeyState& state) {
  std::vector<std::string> out;
  if (!state.live()) return out;
  const Metadata& meta = state.meta;
  if (meta.type == RedisType::kList) {
    Status s = ListRead(c.ctx, c.db(), c.arg(1), meta, 0, meta.size, &out);
    if (!s.ok()) return s;
  } else if (meta.type == RedisType::kSet) {
    auto members = ReadMembers(c.ctx, c.db(), c.arg(1), meta);
    if (!members.ok()) return members.status();
    for (auto& m : *members) out.push_back(std::move(m.name));
  } else {
    auto members = ReadAll(c.ctx, c.db(), c.arg(1), meta);
    if (!members.ok()) return members.status();
    for (auto& m : *members) out.push_back(std::move(m.member));
  }
  return out;
}

// A weight as Redis reads it: the whole string must parse as a double (strtod: leading spaces,
// hex and "inf" included; an empty string is 0), and not NaN or out of range.
bool ParseWeight(const std::string& text, double* out) {
  errno = 0;
  char* end = nullptr;
  *out = strtod(text.c_str(), &end);
  return *end == '\0' && errno != ERANGE && !std::isnan(*out);
}

// Fills each item's weight; false when a numeric weight does not parse.
StatusOr<bool> LoadWeights(CommandContext& c, const SortOptions& o, std::vector<SortItem>* items) {
  bool all_numeric = true;
  for (SortItem& item : *items) {
    std::optional<std::string> by_value;
    if (o.by) {
      auto v = LookupByPattern(c, *o.by, item.element);
      if (!v.ok()) return v.status();
      if (!*v) continue;  // a missing weight: 0, or absent for ALPHA
      by_value = std::move(**v);
    }
    if (o.alpha) {
      if (o.by) item.weight = std::move(by_value);
    } else if (!ParseWeight(o.by ? *by_value : item.element, &item.score)) {
      all_numeric = false;
    }
  }
  return all_numeric;
}

void SortItems(const SortOptions& o, std::vector<SortItem>* items) {
  auto compare = [&o](const SortItem& a, const SortItem& b) {
    int cmp;
    if (!o.alpha) {
      cmp = a.score > b.score ? 1 : (a.score < b.score ? -1 : a.element.compare(b.element));
    } else if (o.by) {
      if (!a.weight || !b.weight) {
        cmp = a.weight.has_value() == b.weight.has_value() ? 0 : (a.weight ? 1 : -1);
      } else {
        cmp = a.weight->compare(*b.weight);
      }
    } else {
      cmp = a.element.compare(b.element);
    }
    return o.desc ? cmp > 0 : cmp < 0;
  };
  std::stable_sort(items->begin(), items->end(), compare);
}

// The output of one element: itself, or one value (or nil) per GET pattern.
StatusOr<std::vector<std::optional<std::string>>> Output(CommandContext& c, const SortOptions& o,
                                                         const std::vector<SortItem>& items) {
  std::vector<std::optional<std::string>> out;
  for (const SortItem& item : items) {
    if (o.gets.empty()) out.emplace_back(item.element);
    for (const std::string& pattern : o.gets) {
      auto v = LookupByPattern(c, pattern, item.element);
      if (!v.ok()) return v.status();
      out.push_back(std::move(*v));
    }
  }
  return out;
}

void Store(CommandContext& c, const std::string& key,
           const std::vector<std::optional<std::string>>& values) {
  auto old = c.ctx.Lookup(c.db(), key);
  if (ReplyIfError(c, old.status())) return;
  if (!values.empty()) {
    std::vector<std::string_view> items;
    for (const auto& v : values) items.push_back(v ? std::string_view(*v) : std::string_view());
    ListReplace(c.ctx, c.db(), key, *old, items);
    CountChanges(c, static_cast<int64_t>(items.size()));
    Notify(c, notify::kList, "sortstore", key);
  } else {
    c.ctx.Delete(c.db(), key, *old);
    if (old->live()) Notify(c, notify::kGeneric, "del", key);
  }
  c.reply.Integer(static_cast<int64_t>(values.size()));
}

void SortGeneric(CommandContext& c, bool read_only) {
  SortOptions o;
  if (!ParseSortOptions(c, read_only, &o)) return;
  auto state = c.ctx.Lookup(c.db(), c.arg(1));
  if (ReplyIfError(c, state.status())) return;
  CountHit(c, c.arg(1), state->live());
  RedisType type = state->live() ? state->meta.type : RedisType::kList;
  if (type != RedisType::kList && type != RedisType::kSet && type != RedisType::kZset) {
    return c.reply.Error(kWrongTypeError);
  }
  // A set has no order of its own in Redis: stored results are sorted so that they are the same
  // everywhere (Basalt's member order is that order already, but DESC must still reverse it).
  if (o.dont_sort && type == RedisType::kSet && o.store) {
    o.dont_sort = false;
    o.alpha = true;
    o.by.reset();
  }
  auto elements = ReadElements(c, *state);
  if (ReplyIfError(c, elements.status())) return;
  const int64_t n = static_cast<int64_t>(elements->size());
  int64_t start = std::max<int64_t>(o.limit_start, 0);
  int64_t end;
  if (start >= n) {
    start = n - 1;
    end = n - 2;
  } else {
    end = o.limit_count < 0 ? n - 1 : start + std::min(o.limit_count, n - start) - 1;
  }

  std::vector<SortItem> items;
  items.reserve(elements->size());
  for (auto& e : *elements) items.push_back({std::move(e), 0, std::nullopt});
  if (o.dont_sort) {
    // A list or sorted set keeps its order, walked from the other end with DESC.
    if (o.desc && type != RedisType::kSet) std::reverse(items.begin(), items.end());
  } else {
    auto numeric = LoadWeights(c, o, &items);
    if (ReplyIfError(c, numeric.status())) return;
    if (!*numeric) return c.reply.Error("ERR One or more scores can't be converted into double");
    SortItems(o, &items);
  }
  std::vector<SortItem> picked;
  for (int64_t i = start; i <= end; i++) picked.push_back(std::move(items[i]));
  auto out = Output(c, o, picked);
  if (ReplyIfError(c, out.status())) return;
  if (o.store) return Store(c, *o.store, *out);
  c.reply.Array(out->size());
  for (const auto& v : *out) {
    if (v) {
      c.reply.Bulk(*v);
    } else {
      c.reply.Null();
    }
  }
}

void SortCommand(CommandContext& c) {
  SortGeneric(c, false);
}
void SortRoCommand(CommandContext& c) {
  SortGeneric(c, true);
}

// SORT's keys: the sorted key and every STORE destination (the last one is written, but all
// are locked), skipping the arguments of LIMIT, GET and BY as Redis's key finder does.
std::vector<size_t> SortKeys(const std::vector<std::string>& argv) {
  std::vector<size_t> keys;
  if (argv.size() < 2) return keys;
  keys.push_back(1);
  size_t store = 0;
  for (size_t i = 2; i < argv.size(); i++) {
    if (EqualsIgnoreCase(argv[i], "limit")) {
      i += 2;
    } else if (EqualsIgnoreCase(argv[i], "get") || EqualsIgnoreCase(argv[i], "by")) {
      i += 1;
    } else if (EqualsIgnoreCase(argv[i], "store") && i + 1 < argv.size()) {
      store = ++i;  // the last STORE is the one that counts
    }
  }
  if (store != 0) keys.push_back(store);
  return keys;
}

// A BY pattern with '*' or a GET pattern other than "#" reads keys that only the sorted
// elements name: such a call runs alone, since no key lock can be taken for those in advance.
bool SortNeedsExclusive(const std::vector<std::string>& argv) {
  for (size_t i = 2; i + 1 < argv.size(); i++) {
    if (EqualsIgnoreCase(argv[i], "limit")) {
      i += 2;
    } else if (EqualsIgnoreCase(argv[i], "by")) {
      if (argv[++i].find('*') != std::string::npos) return true;
    } else if (EqualsIgnoreCase(argv[i], "get")) {
      if (argv[++i] != "#") return true;
    } else if (EqualsIgnoreCase(argv[i], "store")) {
      i++;
    }
  }
  return false;
}

const std::vector<CommandSpec> kSortCommands = {
    {"sort", -2, kCmdWrite | kCmdDenyOom | kCmdMovableKeys, 1, 1, 1, SortCommand, "generic",
     "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.",
     "@write @set @sortedset @list @slow @dangerous", SortKeys, "", SortNeedsExclusive},
    {"sort_ro", -2, kCmdReadOnly | kCmdMovableKeys, 1, 1, 1, SortRoCommand, "generic",
     "Returns the sorted elements of a list, a set, or a sorted set.",
     "@read @set @sortedset @list @slow @dangerous", nullptr, "", SortNeedsExclusive},
};

}  // namespace

const std::vector<CommandSpec>& SortCommands() {
  return kSortCommands;
}

}  // namespace basalt
