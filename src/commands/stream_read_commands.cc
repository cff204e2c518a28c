// XREAD and XREADGROUP, with BLOCK.
//
// Both parse [COUNT n] [BLOCK ms] (XREADGROUP: GROUP g c, NOACK) STREAMS key ... id ... as
// Redis's xreadCommand does, check every key (and group) first, then serve each stream that has
// something for the caller. When none has and BLOCK was given, the client parks on the keys
// (commands/blocking.h) while the command still holds their locks; an XADD (or any write of a
// key) wakes it and the command runs again. Before parking, `$` is replaced by the stream's
// last ID in the command kept for the rerun, so the rerun waits for entries after that one and
// not after whatever is last by then. Inside MULTI nothing blocks: the reply is a null array.
#include "commands/stream_util.h"

namespace basalt {

namespace {

struct ReadArgs {
  bool group_read = false;
  std::string group, consumer;
  bool noack = false;
  int64_t count = 0;
  std::optional<int64_t> block_deadline;  // absolute Unix ms, 0: forever
  size_t streams_arg = 0;
  size_t streams = 0;
};

// BLOCK's milliseconds, as Redis's getTimeoutFromObjectOrReply with UNIT_MILLISECONDS.
std::optional<int64_t> BlockArg(CommandContext& c, size_t i) {
  auto ms = ParseInt64(c.arg(i));
  if (!ms) {
    c.reply.Error("ERR timeout is not an integer or out of range");
    return std::nullopt;
  }
  if (*ms < 0) {
    c.reply.Error("ERR timeout is negative");
    return std::nullopt;
  }
  if (*ms == 0) return 0;
  if (*ms > INT64_MAX - c.ctx.now_ms()) {
    c.reply.Error("ERR timeout is out of range");
    return std::nullopt;
  }
  return c.ctx.now_ms() + *ms;
}

std::optional<ReadArgs> ParseReadArgs(CommandContext& c, bool group_read) {
  ReadArgs args;
  args.group_read = group_read;
  bool group_given = false;
  const char* name = group_read ? "xreadgroup" : "xread";
  for (size_t i = 1; i < c.argc(); i++) {
    const size_t more = c.argc() - i - 1;
    const std::string& opt = c.arg(i);
    if (EqualsIgnoreCase(opt, "block") && more > 0) {
      if (c.session.script_client) {
        c.reply.Error(std::string("ERR ") + c.arg(0) +
                      " command is not allowed with BLOCK option from scripts");
        return std::nullopt;
      }
      args.block_deadline = BlockArg(c, ++i);
      if (!args.block_deadline) return std::nullopt;
    } else if (EqualsIgnoreCase(opt, "count") && more > 0) {
      auto n = IntArg(c, ++i);
      if (!n) return std::nullopt;
      args.count = *n < 0 ? 0 : *n;
    } else if (EqualsIgnoreCase(opt, "streams") && more > 0) {
      args.streams_arg = i + 1;
      const size_t n = c.argc() - args.streams_arg;
      if (n % 2 != 0) {
        c.reply.Error(std::string("ERR Unbalanced '") + name +
                      "' list of streams: for each stream key an ID or '" +
                      (group_read ? ">" : "$") + "' must be specified.");
        return std::nullopt;
      }
      args.streams = n / 2;
      break;
    } else if (EqualsIgnoreCase(opt, "group") && more >= 2) {
      if (!group_read) {
        c.reply.Error(
            "ERR The GROUP option is only supported by XREADGROUP. You called XREAD "
            "instead.");
        return std::nullopt;
      }
      args.group = c.arg(i + 1);
      args.consumer = c.arg(i + 2);
      group_given = true;
      i += 2;
    } else if (EqualsIgnoreCase(opt, "noack")) {
      if (!group_read) {
        c.reply.Error(
            "ERR The NOACK option is only supported by XREADGROUP. You called XREAD "
            "instead.");
        return std::nullopt;
      }
      args.noack = true;
    } else {
      c.reply.Error(kSyntaxError);
      return std::nullopt;
    }
  }
  if (args.streams_arg == 0) {
    c.reply.Error(kSyntaxError);
    return std::nullopt;
  }
  if (group_read && !group_given) {
    c.reply.Error("ERR Missing GROUP option for XREADGROUP");
    return std::nullopt;
  }
  return args;
}

// One stream of the read: its state, the ID the caller has seen (`>`: new entries) and, for a
// group read, its group.
struct StreamSource {
  std::string key;
  KeyState state;
  StreamId after;
  bool new_entries = false;  // XREADGROUP's `>`
  std::optional<StreamGroup> group;
};

// Checks every key (and group) and parses every ID; nullopt after replying an error.
std::optional<std::vector<StreamSource>> ResolveSources(CommandContext& c, const ReadArgs& args) {
  std::vector<StreamSource> out;
  for (size_t k = 0; k < args.streams; k++) {
    StreamSource src;
    src.key = c.arg(args.streams_arg + k);
    const std::string& id_arg = c.arg(args.streams_arg + args.streams + k);
    auto state = LookupStream(c, src.key);
    if (!state) return std::nullopt;
    src.state = *state;
    if (args.group_read) {
      if (state->live()) {
        StreamStore store(c.ctx, c.db(), src.key, state->meta.version);
        auto g = store.GetGroup(args.group);
        if (ReplyIfError(c, g.status())) return std::nullopt;
        src.group = *g;
      }
      if (!src.group) {
        c.reply.Error("NOGROUP No such key '" + src.key + "' or consumer group '" + args.group +
                      "' in XREADGROUP with GROUP option");
        return std::nullopt;
      }
    }
    if (id_arg == "$") {
      if (args.group_read) {
        c.reply.Error(
            "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
            "history of this consumer by specifying a proper ID, or use the > ID to get new "
            "messages. The $ ID would just return an empty result set.");
        return std::nullopt;
      }
      src.after = state->live() ? state->meta.stream.last_id : StreamId{};
    } else if (id_arg == ">") {
      if (!args.group_read) {
        c.reply.Error(
            "ERR The > ID can be specified only when calling XREADGROUP using the "
            "GROUP <group> <consumer> option.");
        return std::nullopt;
      }
      src.new_entries = true;
    } else {
      auto id = StreamIdArg(c, id_arg, 0, true);
      if (!id) return std::nullopt;
      src.after = *id;
    }
    out.push_back(std::move(src));
  }
  return out;
}

// One entry of the reply; a history read replies a deleted entry as [id, nil].
struct ReadItem {
  StreamEntry entry;
  bool deleted = false;
};

// One stream's part of the reply.
struct Served {
  std::string key;
  std::vector<ReadItem> entries;
};

// XREADGROUP's `>` for one stream: the entries after the group's last delivered ID, which
// become pending for the consumer (unless NOACK) and advance the group as Redis's
// streamReplyWithRange does.
bool ReadNewForGroup(CommandContext& c, const ReadArgs& args, StreamSource& src,
                     StreamGroupEditor& editor, StreamConsumer* consumer,
                     std::vector<ReadItem>* out) {
  const Metadata& meta = src.state.meta;
  StreamStore store(c.ctx, c.db(), src.key, meta.version);
  StreamGroup& g = editor.group();
  StreamId start;
  if (!NextStreamId(g.last_id, &start)) return true;
  auto entries = ReadStreamEntries(c, store, meta, start, kMaxStreamId, false,
                                   static_cast<uint64_t>(args.count));
  if (!entries) return false;
  // An entry after the group's last ID is pending already only when XGROUP SETID moved the
  // group back or XCLAIM FORCE claimed ahead of it: one seek tells whether the group's list
  // holds any such entry, so a usual read looks up no pending entry per delivered entry.
  bool may_be_pending = false;
  if (!args.noack && !entries->empty()) {
    auto ahead = store.ListPending(args.group, start, kMaxStreamId, 1);
    if (ReplyIfError(c, ahead.status())) return false;
    may_be_pending = !ahead->empty();
  }
  const int64_t now = c.ctx.now_ms();
  const StreamId last_before = g.last_id;
  for (StreamEntry& e : *entries) {
    if (e.id > g.last_id) {
      if (g.entries_read != -1 && !StreamHasTombstonesFrom(meta, e.id)) {
        g.entries_read++;
      } else if (meta.stream.entries_added != 0) {
        g.entries_read = StreamEstimateDistance(meta, e.id);
      }
      g.last_id = e.id;
    }
    if (!args.noack) {
      std::optional<PendingEntry> previous;
      if (may_be_pending) {
        auto found = store.GetPending(args.group, e.id);
        if (ReplyIfError(c, found.status())) return false;
        previous = std::move(*found);
      }
      PendingEntry p{e.id, now, 1, args.consumer};
      Status s =
          previous.has_value() ? editor.SetPending(p, &*previous) : editor.AddPendingLater(p);
      if (ReplyIfError(c, s)) return false;
      consumer->active_ms = now;
      ReplicateClaim(c, src.key, args.group, p, g.last_id);
    }
    out->push_back(ReadItem{std::move(e), false});
  }
  // With NOACK no XCLAIM carries the group's new position.
  if (args.noack && g.last_id != last_before) ReplicateGroupPosition(c, src.key, args.group, g);
  return true;
}

// XREADGROUP with an ID: the consumer's own pending entries after it; a deleted entry comes
// back as its ID with a null.
bool ReadHistory(CommandContext& c, const ReadArgs& args, StreamSource& src,
                 StreamGroupEditor& editor, std::vector<ReadItem>* out) {
  StreamStore store(c.ctx, c.db(), src.key, src.state.meta.version);
  StreamId start;
  if (!NextStreamId(src.after, &start)) return true;
  auto ids = store.ListConsumerPending(args.group, args.consumer, start, kMaxStreamId,
                                       static_cast<uint64_t>(args.count));
  if (ReplyIfError(c, ids.status())) return false;
  for (StreamId id : *ids) {
    auto entry = store.GetEntry(id);
    if (ReplyIfError(c, entry.status())) return false;
    if (!entry->has_value()) {
      out->push_back(ReadItem{StreamEntry{id, {}}, true});
      continue;
    }
    auto pending = store.GetPending(args.group, id);
    if (ReplyIfError(c, pending.status())) return false;
    if (pending->has_value()) {
      PendingEntry p = **pending;
      p.delivery_ms = c.ctx.now_ms();
      p.delivery_count++;
      Status s = editor.SetPending(p, &**pending);
      if (ReplyIfError(c, s)) return false;
    }
    out->push_back(ReadItem{std::move(**entry), false});
  }
  return true;
}

// Serves one stream of an XREADGROUP; false after replying an error. *served says whether the
// stream is part of the reply.
bool ServeGroup(CommandContext& c, const ReadArgs& args, StreamSource& src, Served* served,
                bool* serve) {
  StreamStore store(c.ctx, c.db(), src.key, src.state.meta.version);
  StreamGroupEditor editor(store, args.group, *src.group);
  bool created = false;
  auto consumer = editor.Consumer(args.consumer, true, c.ctx.now_ms(), &created);
  if (ReplyIfError(c, consumer.status())) return false;
  (*consumer)->seen_ms = c.ctx.now_ms();
  if (created) Notify(c, notify::kStream, "xgroup-createconsumer", src.key);
  // Without NOACK the deliveries' XCLAIMs create the consumer on replicas.
  if (created && args.noack) {
    ReplicateAs(c, {"XGROUP", "CREATECONSUMER", src.key, args.group, args.consumer});
  }
  bool ok;
  if (src.new_entries) {
    ok = ReadNewForGroup(c, args, src, editor, *consumer, &served->entries);
    *serve = !served->entries.empty();
  } else {
    ok = ReadHistory(c, args, src, editor, &served->entries);
    *serve = true;
  }
  if (!ok) return false;
  editor.Flush();
  return true;
}

void ReplyServed(CommandContext& c, const std::vector<Served>& served) {
  if (c.session.resp >= 3) {
    c.reply.Map(served.size());
  } else {
    c.reply.Array(served.size());
  }
  for (const Served& s : served) {
    if (c.session.resp < 3) c.reply.Array(2);
    c.reply.Bulk(s.key);
    c.reply.Array(s.entries.size());
    for (const ReadItem& item : s.entries) {
      if (item.deleted) {
        c.reply.Array(2);
        ReplyStreamId(c, item.entry.id);
        c.reply.NullArray();
      } else {
        ReplyStreamEntry(c, item.entry);
      }
    }
  }
}

void ReadGeneric(CommandContext& c, bool group_read) {
  auto args = ParseReadArgs(c, group_read);
  if (!args) return;
  // XREADGROUP reaches replicas as what it did to its groups (ReplicateDelivery), never itself.
  if (group_read) ReplicateNothing(c);
  if (!group_read && args->block_deadline) {
    // Woken while none of its keys is a stream (deleted, or another type now): XREAD waits
    // on, as in Redis 7.2, rather than answer WRONGTYPE.
    std::vector<size_t> keys;
    for (size_t k = 0; k < args->streams; k++) keys.push_back(args->streams_arg + k);
    if (ParkAgainIfNotReady(c, keys, RedisType::kStream, *args->block_deadline, true)) return;
  }
  auto sources = ResolveSources(c, *args);
  if (!sources) return;
  std::vector<Served> served;
  for (StreamSource& src : *sources) {
    if (!src.state.live()) continue;
    Served s{src.key, {}};
    bool serve = false;
    if (group_read) {
      if (!ServeGroup(c, *args, src, &s, &serve)) return;
    } else {
      StreamStore store(c.ctx, c.db(), src.key, src.state.meta.version);
      StreamId start;
      if (NextStreamId(src.after, &start)) {
        auto entries = ReadStreamEntries(c, store, src.state.meta, start, kMaxStreamId, false,
                                         static_cast<uint64_t>(args->count));
        if (!entries) return;
        for (StreamEntry& e : *entries) s.entries.push_back(ReadItem{std::move(e), false});
      }
      serve = !s.entries.empty();
    }
    if (serve) served.push_back(std::move(s));
  }
  if (!served.empty()) return ReplyServed(c, served);
  if (!args->block_deadline || c.in_exec) return c.reply.NullArray();
  std::vector<size_t> keys;
  for (size_t k = 0; k < args->streams; k++) {
    keys.push_back(args->streams_arg + k);
    std::string& id_arg = c.argv[args->streams_arg + args->streams + k];
    if (id_arg == "$") id_arg = FormatStreamId((*sources)[k].after);
  }
  ParkClient(c, keys, *args->block_deadline, true, group_read);
}

void XReadCommand(CommandContext& c) {
  ReadGeneric(c, false);
}
void XReadGroupCommand(CommandContext& c) {
  ReadGeneric(c, true);
}

// The keys of XREAD/XREADGROUP: the first half of the arguments after STREAMS.
std::vector<size_t> ReadKeys(const std::vector<std::string>& argv) {
  std::vector<size_t> keys;
  for (size_t i = 1; i < argv.size(); i++) {
    if (EqualsIgnoreCase(argv[i], "streams")) {
      const size_t n = argv.size() - i - 1;
      if (n % 2 != 0) return keys;
      for (size_t k = 0; k < n / 2; k++) keys.push_back(i + 1 + k);
      return keys;
    }
  }
  return keys;
}

}  // namespace

const std::vector<CommandSpec>& StreamReadCommands() {
  static const std::vector<CommandSpec> all = {
      {"xread", -4, kCmdReadOnly | kCmdBlocking | kCmdMovableKeys, 0, 0, 0, XReadCommand, "stream",
       "Returns messages from multiple streams with IDs greater than the ones requested. Blocks "
       "until a message is available otherwise.",
       "@read @stream @slow @blocking", ReadKeys},
      {"xreadgroup", -7, kCmdWrite | kCmdBlocking | kCmdMovableKeys, 0, 0, 0, XReadGroupCommand,
       "stream",
       "Returns new or historical messages from a stream for a consumer in a group. Blocks until "
       "a message is available otherwise.",
       "@write @stream @slow @blocking", ReadKeys},
  };
  return all;
}

}  // namespace basalt
