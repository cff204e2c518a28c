// Consumer group commands: XGROUP, XACK, XPENDING, XCLAIM and XAUTOCLAIM.
//
// A group, its consumers and its pending entries are `subkey` entries of the stream
// (types/stream.h): each command reads the group record, changes the few consumer records and
// pending entries it names through a StreamGroupEditor, and writes them back. The stream's
// metadata changes only when a group comes or goes (its group count) or XGROUP CREATE MKSTREAM
// creates the stream.
#include <algorithm>

#include "commands/stream_util.h"

namespace basalt {

namespace {

std::string NoGroupError(std::string_view key, std::string_view group) {
  return "NOGROUP No such key '" + std::string(key) + "' or consumer group '" + std::string(group) +
         "'";
}

// The group `group` of the stream at `key`; nullopt after replying (WRONGTYPE, I/O, or the
// NOGROUP error when the key or group is absent).
struct GroupRef {
  KeyState state;
  StreamGroup group;
};
std::optional<GroupRef> LookupGroup(CommandContext& c, std::string_view key,
                                    std::string_view group) {
  auto state = LookupStream(c, key);
  if (!state) return std::nullopt;
  if (state->live()) {
    StreamStore store(c.ctx, c.db(), key, state->meta.version);
    auto g = store.GetGroup(group);
    if (ReplyIfError(c, g.status())) return std::nullopt;
    if (g->has_value()) return GroupRef{*state, **g};
  }
  c.reply.Error(NoGroupError(key, group));
  return std::nullopt;
}

// XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n]
void GroupCreate(CommandContext& c, const std::optional<KeyState>& state, int64_t entries_read) {
  StreamId id;
  if (c.arg(4) == "$") {
    if (state->live()) id = state->meta.stream.last_id;
  } else {
    auto parsed = StreamIdArg(c, c.arg(4), 0, true);
    if (!parsed) return;
    id = *parsed;
  }
  Metadata meta = state->live() ? state->meta : NewCollection(RedisType::kStream);
  StreamStore store(c.ctx, c.db(), c.arg(2), meta.version);
  auto existing = store.GetGroup(c.arg(3));
  if (ReplyIfError(c, existing.status())) return;
  if (existing->has_value()) return c.reply.Error("BUSYGROUP Consumer Group name already exists");
  StreamGroup g;
  g.last_id = id;
  g.entries_read = entries_read;
  store.PutGroup(c.arg(3), g);
  meta.stream.groups++;
  c.ctx.Write(c.db(), c.arg(2), meta, *state);
  c.reply.Ok();
  Notify(c, notify::kStream, "xgroup-create", c.arg(2));
}

void XGroupHelp(CommandContext& c) {
  static const char* const kHelp[] = {
      "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CREATE <key> <groupname> <id|$> [option]",
      "    Create a new consumer group. Options are:",
      "    * MKSTREAM",
      "      Create the empty stream if it does not exist.",
      "    * ENTRIESREAD entries_read",
      "      Set the group's entries_read counter (internal use).",
      "CREATECONSUMER <key> <groupname> <consumer>",
      "    Create a new consumer in the specified group.",
      "DELCONSUMER <key> <groupname> <consumer>",
      "    Remove the specified consumer.",
      "DESTROY <key> <groupname>",
      "    Remove the specified group.",
      "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
      "    Set the current group ID and entries_read counter.",
      "HELP",
      "    Print this help.",
  };
  c.reply.Array(std::size(kHelp));
  for (const char* line : kHelp) c.reply.Simple(line);
}

std::string XGroupSyntaxError(CommandContext& c) {
  return "ERR unknown subcommand or wrong number of arguments for '" + c.arg(1).substr(0, 128) +
         "'. Try XGROUP HELP.";
}

// XGROUP SETID key group id|$ [ENTRIESREAD n]
void GroupSetId(CommandContext& c, const KeyState& state, StreamGroup group, int64_t entries_read) {
  StreamId id = state.meta.stream.last_id;
  if (c.arg(4) != "$") {
    auto parsed = StreamIdArg(c, c.arg(4), 0, false);
    if (!parsed) return;
    id = *parsed;
  }
  group.last_id = id;
  group.entries_read = entries_read;
  StreamStore(c.ctx, c.db(), c.arg(2), state.meta.version).PutGroup(c.arg(3), group);
  c.ctx.AddChanges(1);  // a group's record is not a key write, but Redis counts the change
  c.reply.Ok();
  Notify(c, notify::kStream, "xgroup-setid", c.arg(2));
}

// XGROUP DESTROY key group: the group with its consumers and pending entries. The metadata write
// (the group count) also wakes the XREADGROUP clients blocked on the key, which then fail.
void GroupDestroy(CommandContext& c, const KeyState& state, bool exists) {
  if (!exists) return c.reply.Integer(0);
  StreamStore store(c.ctx, c.db(), c.arg(2), state.meta.version);
  if (ReplyIfError(c, store.DeleteGroup(c.arg(3)))) return;
  Metadata meta = state.meta;
  meta.stream.groups--;
  c.ctx.Write(c.db(), c.arg(2), meta, state);
  c.reply.Integer(1);
  Notify(c, notify::kStream, "xgroup-destroy", c.arg(2));
}

// XGROUP CREATECONSUMER key group consumer
void GroupCreateConsumer(CommandContext& c, StreamGroupEditor& editor) {
  bool created = false;
  auto consumer = editor.Consumer(c.arg(4), true, c.ctx.now_ms(), &created);
  if (ReplyIfError(c, consumer.status())) return;
  if (created) {
    editor.Flush();
    c.ctx.AddChanges(1);
    Notify(c, notify::kStream, "xgroup-createconsumer", c.arg(2));
  }
  c.reply.Integer(created ? 1 : 0);
}

// XGROUP DELCONSUMER key group consumer: replies how many pending entries it took along.
void GroupDelConsumer(CommandContext& c, StreamGroupEditor& editor) {
  auto existing = editor.Consumer(c.arg(4), false, c.ctx.now_ms());
  if (ReplyIfError(c, existing.status())) return;
  if (*existing == nullptr) return c.reply.Integer(0);
  auto pending = editor.DeleteConsumer(c.arg(4));
  if (ReplyIfError(c, pending.status())) return;
  editor.Flush();
  c.ctx.AddChanges(1);
  c.reply.Integer(static_cast<int64_t>(*pending));
  Notify(c, notify::kStream, "xgroup-delconsumer", c.arg(2));
}

void XGroupCommand(CommandContext& c) {
  const std::string sub = ToLower(c.arg(1));
  if (sub == "help" && c.argc() == 2) return XGroupHelp(c);
  if (c.argc() < 4) return c.reply.Error(XGroupSyntaxError(c));
  const bool create = sub == "create", setid = sub == "setid";
  bool mkstream = false;
  int64_t entries_read = -1;
  for (size_t i = 5; i < c.argc();) {
    if (create && EqualsIgnoreCase(c.arg(i), "mkstream")) {
      mkstream = true;
      i++;
    } else if ((create || setid) && EqualsIgnoreCase(c.arg(i), "entriesread") && i + 1 < c.argc()) {
      auto n = IntArg(c, i + 1);
      if (!n) return;
      if (*n < 0 && *n != -1)
        return c.reply.Error("ERR value for ENTRIESREAD must be positive or -1");
      entries_read = *n;
      i += 2;
    } else {
      return c.reply.Error(XGroupSyntaxError(c));
    }
  }
  const std::string& key = c.arg(2);
  const std::string& group_name = c.arg(3);
  auto state = LookupStream(c, key);
  if (!state) return;
  std::optional<StreamGroup> group;
  if (state->live()) {
    StreamStore store(c.ctx, c.db(), key, state->meta.version);
    auto g = store.GetGroup(group_name);
    if (ReplyIfError(c, g.status())) return;
    group = *g;
  }
  if (!mkstream) {
    if (!state->live()) {
      return c.reply.Error(
          "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
          "to use the MKSTREAM option to create an empty stream automatically.");
    }
    if (!group && (setid || sub == "createconsumer" || sub == "delconsumer")) {
      return c.reply.Error("NOGROUP No such consumer group '" + group_name + "' for key name '" +
                           key + "'");
    }
  }
  if (create && c.argc() >= 5 && c.argc() <= 8) return GroupCreate(c, state, entries_read);
  if (setid && (c.argc() == 5 || c.argc() == 7)) return GroupSetId(c, *state, *group, entries_read);
  if (sub == "destroy" && c.argc() == 4) return GroupDestroy(c, *state, group.has_value());
  StreamStore store(c.ctx, c.db(), key, state->meta.version);
  StreamGroupEditor editor(store, group_name, group.value_or(StreamGroup{}));
  if (sub == "createconsumer" && c.argc() == 5) return GroupCreateConsumer(c, editor);
  if (sub == "delconsumer" && c.argc() == 5) return GroupDelConsumer(c, editor);
  c.reply.Error(XGroupSyntaxError(c));
}

// XACK key group id [id ...]
void XAckCommand(CommandContext& c) {
  auto state = LookupStream(c, c.arg(1));
  if (!state) return;
  std::optional<StreamGroup> group;
  if (state->live()) {
    StreamStore store(c.ctx, c.db(), c.arg(1), state->meta.version);
    auto g = store.GetGroup(c.arg(2));
    if (ReplyIfError(c, g.status())) return;
    group = *g;
  }
  if (!group) return c.reply.Integer(0);
  std::vector<StreamId> ids;
  for (size_t j = 3; j < c.argc(); j++) {
    auto id = StreamIdArg(c, c.arg(j), 0, true);
    if (!id) return;
    ids.push_back(*id);
  }
  // Each ID once (a repeated one acks nothing more), so that the removals can wait for Flush().
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  StreamStore store(c.ctx, c.db(), c.arg(1), state->meta.version);
  StreamGroupEditor editor(store, c.arg(2), *group);
  int64_t acked = 0;
  for (StreamId id : ids) {
    auto p = store.GetPending(c.arg(2), id);
    if (ReplyIfError(c, p.status())) return;
    if (!p->has_value()) continue;
    if (ReplyIfError(c, editor.RemovePendingLater(**p))) return;
    acked++;
  }
  if (acked > 0) editor.Flush();
  c.reply.Integer(acked);
}

// An interval bound of XPENDING and XAUTOCLAIM: "(" makes it exclusive.
std::optional<StreamId> IntervalIdArg(CommandContext& c, const std::string& arg,
                                      uint64_t missing_seq, bool start) {
  const bool exclusive = arg.size() > 1 && arg[0] == '(';
  auto id = exclusive ? StreamIdArg(c, std::string_view(arg).substr(1), missing_seq, true)
                      : StreamIdArg(c, arg, missing_seq, false);
  if (!id || !exclusive) return id;
  StreamId moved;
  if (start ? NextStreamId(*id, &moved) : PrevStreamId(*id, &moved)) return moved;
  c.reply.Error(start ? "ERR invalid start ID for the interval"
                      : "ERR invalid end ID for the interval");
  return std::nullopt;
}

void PendingSummary(CommandContext& c, StreamStore& store) {
  auto pending = store.ListPending(c.arg(2), StreamId{}, kMaxStreamId, 0);
  if (ReplyIfError(c, pending.status())) return;
  c.reply.Array(4);
  c.reply.Integer(static_cast<int64_t>(pending->size()));
  if (pending->empty()) {
    c.reply.Null();
    c.reply.Null();
    return c.reply.NullArray();
  }
  ReplyStreamId(c, pending->front().id);
  ReplyStreamId(c, pending->back().id);
  auto consumers = store.ListConsumers(c.arg(2));
  if (ReplyIfError(c, consumers.status())) return;
  size_t holding = 0;
  for (const auto& [name, consumer] : *consumers) holding += consumer.pending > 0 ? 1 : 0;
  c.reply.Array(holding);
  for (const auto& [name, consumer] : *consumers) {
    if (consumer.pending == 0) continue;
    c.reply.Array(2);
    c.reply.Bulk(name);
    c.reply.Bulk(std::to_string(consumer.pending));
  }
}

// XPENDING key group [[IDLE min-idle] start end count [consumer]]
void XPendingCommand(CommandContext& c) {
  if (c.argc() != 3 && (c.argc() < 6 || c.argc() > 9)) return c.reply.Error(kSyntaxError);
  int64_t min_idle = 0, count = 0;
  StreamId start, end;
  std::optional<std::string> consumer_name;
  if (c.argc() >= 6) {
    size_t start_index = 3;
    if (EqualsIgnoreCase(c.arg(3), "idle")) {
      auto idle = IntArg(c, 4);
      if (!idle) return;
      min_idle = *idle;
      if (c.argc() < 8) return c.reply.Error(kSyntaxError);
      start_index += 2;
    }
    auto n = IntArg(c, start_index + 2);
    if (!n) return;
    count = *n < 0 ? 0 : *n;
    auto s = IntervalIdArg(c, c.arg(start_index), 0, true);
    if (!s) return;
    auto e = IntervalIdArg(c, c.arg(start_index + 1), UINT64_MAX, false);
    if (!e) return;
    start = *s;
    end = *e;
    if (start_index + 3 < c.argc()) consumer_name = c.arg(start_index + 3);
  }
  auto ref = LookupGroup(c, c.arg(1), c.arg(2));
  if (!ref) return;
  StreamStore store(c.ctx, c.db(), c.arg(1), ref->state.meta.version);
  if (c.argc() == 3) return PendingSummary(c, store);
  if (count == 0 || start > end) return c.reply.Array(0);
  std::vector<PendingEntry> entries;
  if (consumer_name) {
    auto consumer = store.GetConsumer(c.arg(2), *consumer_name);
    if (ReplyIfError(c, consumer.status())) return;
    if (!consumer->has_value()) return c.reply.Array(0);
    auto ids = store.ListConsumerPending(c.arg(2), *consumer_name, start, end, 0);
    if (ReplyIfError(c, ids.status())) return;
    for (StreamId id : *ids) {
      if (static_cast<int64_t>(entries.size()) == count) break;
      auto p = store.GetPending(c.arg(2), id);
      if (ReplyIfError(c, p.status())) return;
      if (p->has_value() && c.ctx.now_ms() - (*p)->delivery_ms >= min_idle) {
        entries.push_back(**p);
      }
    }
  } else {
    auto all = store.ListPending(c.arg(2), start, end, 0);
    if (ReplyIfError(c, all.status())) return;
    for (PendingEntry& p : *all) {
      if (static_cast<int64_t>(entries.size()) == count) break;
      if (min_idle != 0 && c.ctx.now_ms() - p.delivery_ms < min_idle) continue;
      entries.push_back(std::move(p));
    }
  }
  c.reply.Array(entries.size());
  for (const PendingEntry& p : entries) {
    c.reply.Array(4);
    ReplyStreamId(c, p.id);
    c.reply.Bulk(p.consumer);
    c.reply.Integer(std::max<int64_t>(c.ctx.now_ms() - p.delivery_ms, 0));
    c.reply.Integer(static_cast<int64_t>(p.delivery_count));
  }
}

// One claimed entry of XCLAIM/XAUTOCLAIM's reply: the entry, or its ID alone with JUSTID.
void ReplyClaimed(CommandContext& c, const std::vector<StreamEntry>& claimed, bool justid) {
  c.reply.Array(claimed.size());
  for (const StreamEntry& e : claimed) {
    if (justid) {
      ReplyStreamId(c, e.id);
    } else {
      ReplyStreamEntry(c, e);
    }
  }
}

struct ClaimOptions {
  std::vector<StreamId> ids;
  int64_t min_idle = 0;
  int64_t delivery_ms = -1;  // IDLE/TIME; -1: now
  int64_t retry_count = -1;
  bool force = false;
  bool justid = false;
  StreamId last_id;
};

// XCLAIM's IDs (up to the first argument that is not one) and options; nullopt after replying.
std::optional<ClaimOptions> ParseClaimOptions(CommandContext& c, int64_t now) {
  ClaimOptions opt;
  auto min_idle = IntArg(c, 4, "ERR Invalid min-idle-time argument for XCLAIM");
  if (!min_idle) return std::nullopt;
  opt.min_idle = std::max<int64_t>(*min_idle, 0);
  size_t j = 5;
  for (; j < c.argc(); j++) {
    StreamId id;
    std::string_view arg = c.arg(j);
    size_t dash = arg.find('-');
    if (arg.size() > 127 || !ParseStreamIdPart(arg.substr(0, dash), &id.ms) ||
        (dash != std::string_view::npos && !ParseStreamIdPart(arg.substr(dash + 1), &id.seq))) {
      break;
    }
    opt.ids.push_back(id);
  }
  for (; j < c.argc(); j++) {
    const bool more = j + 1 < c.argc();
    const std::string& o = c.arg(j);
    std::optional<int64_t> n;
    if (EqualsIgnoreCase(o, "force")) {
      opt.force = true;
    } else if (EqualsIgnoreCase(o, "justid")) {
      opt.justid = true;
    } else if (EqualsIgnoreCase(o, "idle") && more) {
      if (!(n = IntArg(c, ++j, "ERR Invalid IDLE option argument for XCLAIM"))) return std::nullopt;
      opt.delivery_ms = now - *n;
    } else if (EqualsIgnoreCase(o, "time") && more) {
      if (!(n = IntArg(c, ++j, "ERR Invalid TIME option argument for XCLAIM"))) return std::nullopt;
      opt.delivery_ms = *n;
    } else if (EqualsIgnoreCase(o, "retrycount") && more) {
      n = IntArg(c, ++j, "ERR Invalid RETRYCOUNT option argument for XCLAIM");
      if (!n) return std::nullopt;
      opt.retry_count = *n;
    } else if (EqualsIgnoreCase(o, "lastid") && more) {
      auto id = StreamIdArg(c, c.arg(++j), 0, true);
      if (!id) return std::nullopt;
      opt.last_id = *id;
    } else {
      c.reply.Error("ERR Unrecognized XCLAIM option '" + o + "'");
      return std::nullopt;
    }
  }
  if (opt.delivery_ms < 0 || opt.delivery_ms > now) opt.delivery_ms = now;
  return opt;
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms] [RETRYCOUNT n]
//        [FORCE] [JUSTID] [LASTID id]
void XClaimCommand(CommandContext& c) {
  auto ref = LookupGroup(c, c.arg(1), c.arg(2));
  if (!ref) return;
  const int64_t now = c.ctx.now_ms();
  auto parsed = ParseClaimOptions(c, now);
  if (!parsed) return;
  const ClaimOptions& opt = *parsed;
  StreamStore store(c.ctx, c.db(), c.arg(1), ref->state.meta.version);
  StreamGroupEditor editor(store, c.arg(2), ref->group);
  // XCLAIM reaches replicas as what it did (ReplicateClaim), never itself.
  ReplicateNothing(c);
  const bool moves_group = opt.last_id > editor.group().last_id;
  if (moves_group) editor.group().last_id = opt.last_id;
  bool claim_replicated = false;
  bool created = false;
  auto consumer = editor.Consumer(c.arg(3), true, now, &created);
  if (ReplyIfError(c, consumer.status())) return;
  (*consumer)->seen_ms = now;
  if (created) Notify(c, notify::kStream, "xgroup-createconsumer", c.arg(1));
  std::vector<StreamEntry> claimed;
  for (StreamId id : opt.ids) {
    auto pending = store.GetPending(c.arg(2), id);
    if (ReplyIfError(c, pending.status())) return;
    auto entry = store.GetEntry(id);
    if (ReplyIfError(c, entry.status())) return;
    if (!entry->has_value()) {
      if (!pending->has_value()) continue;
      ReplicateClaim(c, c.arg(1), c.arg(2), **pending, editor.group().last_id);
      claim_replicated = true;
      if (ReplyIfError(c, editor.RemovePending(**pending))) return;
      continue;
    }
    std::optional<PendingEntry> previous = *pending;
    PendingEntry p;
    if (previous) {
      p = *previous;
      if (opt.min_idle != 0 && now - p.delivery_ms < opt.min_idle) continue;
    } else if (opt.force) {
      p = PendingEntry{id, now, 1, ""};
    } else {
      continue;
    }
    p.delivery_ms = opt.delivery_ms;
    if (opt.retry_count >= 0) {
      p.delivery_count = static_cast<uint64_t>(opt.retry_count);
    } else if (!opt.justid) {
      p.delivery_count++;
    }
    p.consumer = c.arg(3);
    if (ReplyIfError(c, editor.SetPending(p, previous ? &*previous : nullptr))) return;
    (*consumer)->active_ms = now;
    ReplicateClaim(c, c.arg(1), c.arg(2), p, editor.group().last_id);
    claim_replicated = true;
    claimed.push_back(std::move(**entry));
  }
  if (moves_group && !claim_replicated) {
    ReplicateGroupPosition(c, c.arg(1), c.arg(2), editor.group());
  }
  editor.Flush();
  ReplyClaimed(c, claimed, opt.justid);
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
void XAutoClaimCommand(CommandContext& c) {
  auto min_idle = IntArg(c, 4, "ERR Invalid min-idle-time argument for XAUTOCLAIM");
  if (!min_idle) return;
  if (*min_idle < 0) *min_idle = 0;
  auto start = IntervalIdArg(c, c.arg(5), 0, true);
  if (!start) return;
  int64_t count = 100;
  bool justid = false;
  for (size_t j = 6; j < c.argc(); j++) {
    if (EqualsIgnoreCase(c.arg(j), "count") && j + 1 < c.argc()) {
      auto n = ParseInt64(c.arg(j + 1));
      constexpr int64_t kMaxCount = INT64_MAX / 16;
      if (!n || *n < 1 || *n > kMaxCount) return c.reply.Error("ERR COUNT must be > 0");
      count = *n;
      j++;
    } else if (EqualsIgnoreCase(c.arg(j), "justid")) {
      justid = true;
    } else {
      return c.reply.Error(kSyntaxError);
    }
  }
  auto ref = LookupGroup(c, c.arg(1), c.arg(2));
  if (!ref) return;
  StreamStore store(c.ctx, c.db(), c.arg(1), ref->state.meta.version);
  StreamGroupEditor editor(store, c.arg(2), ref->group);
  ReplicateNothing(c);  // it reaches replicas as its claims (ReplicateClaim)
  const int64_t now = c.ctx.now_ms();
  bool created = false;
  auto consumer = editor.Consumer(c.arg(3), true, now, &created);
  if (ReplyIfError(c, consumer.status())) return;
  (*consumer)->seen_ms = now;
  if (created) Notify(c, notify::kStream, "xgroup-createconsumer", c.arg(1));
  // Redis examines at most count * 10 pending entries; one more tells where the next call starts.
  const uint64_t attempts = static_cast<uint64_t>(count) * 10;
  auto pending = store.ListPending(c.arg(2), *start, kMaxStreamId, attempts + 1);
  if (ReplyIfError(c, pending.status())) return;
  std::vector<StreamEntry> claimed;
  std::vector<StreamId> deleted;
  size_t examined = 0;
  for (; examined < pending->size() && examined < attempts && count > 0; examined++) {
    const PendingEntry& previous = (*pending)[examined];
    auto entry = store.GetEntry(previous.id);
    if (ReplyIfError(c, entry.status())) return;
    if (!entry->has_value()) {
      ReplicateClaim(c, c.arg(1), c.arg(2), previous, editor.group().last_id);
      if (ReplyIfError(c, editor.RemovePending(previous))) return;
      deleted.push_back(previous.id);
      count--;
      continue;
    }
    if (*min_idle != 0 && now - previous.delivery_ms < *min_idle) continue;
    PendingEntry p = previous;
    p.delivery_ms = now;
    if (!justid) p.delivery_count++;
    p.consumer = c.arg(3);
    if (ReplyIfError(c, editor.SetPending(p, &previous))) return;
    (*consumer)->active_ms = now;
    ReplicateClaim(c, c.arg(1), c.arg(2), p, editor.group().last_id);
    claimed.push_back(std::move(**entry));
    count--;
  }
  editor.Flush();
  StreamId next = examined < pending->size() ? (*pending)[examined].id : StreamId{};
  c.reply.Array(3);
  ReplyStreamId(c, next);
  ReplyClaimed(c, claimed, justid);
  c.reply.Array(deleted.size());
  for (StreamId id : deleted) ReplyStreamId(c, id);
}

const std::vector<CommandSpec> kStreamGroupCommands = {
    {"xgroup", -2, kCmdWrite, 2, 2, 1, XGroupCommand, "stream",
     "A container for consumer groups commands.", "@slow", nullptr,
     "create:-5:@write@stream@slow:denyoom,write "
     "createconsumer:5:@write@stream@slow:denyoom,write "
     "delconsumer:5:@write@stream@slow destroy:4:@write@stream@slow "
     "setid:-5:@write@stream@slow help:2:@stream@slow"},
    {"xack", -4, kCmdWrite | kCmdFast, 1, 1, 1, XAckCommand, "stream",
     "Returns the number of messages that were successfully acknowledged by the consumer group "
     "member of a stream.",
     "@write @stream @fast"},
    {"xpending", -3, kCmdReadOnly, 1, 1, 1, XPendingCommand, "stream",
     "Returns the information and entries from a stream consumer group's pending entries list.",
     "@read @stream @slow"},
    {"xclaim", -6, kCmdWrite | kCmdFast, 1, 1, 1, XClaimCommand, "stream",
     "Changes, or acquires, ownership of a message in a consumer group, as if the message was "
     "delivered a consumer group member.",
     "@write @stream @fast"},
    {"xautoclaim", -6, kCmdWrite | kCmdFast, 1, 1, 1, XAutoClaimCommand, "stream",
     "Changes, or acquires, ownership of messages in a consumer group, as if the messages were "
     "delivered to as consumer group member.",
     "@write @stream @fast"},
};

}  // namespace

const std::vector<CommandSpec>& StreamGroupCommands() {
  return kStreamGroupCommands;
}

}  // namespace basalt
