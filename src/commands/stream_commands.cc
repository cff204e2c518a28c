// Stream commands on entries: XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM and XSETID.
//
// A stream is a collection whose metadata carries Redis's counters and whose entries are
// `subkey` entries keyed by ID (types/stream.h). Each command looks the stream up once,
// changes entries through a StreamStore and writes the metadata once; unlike other collections
// a stream stays when its last entry goes, as in Redis. The shared helpers are at the top; the
// group commands are in stream_group_commands.cc, XREAD/XREADGROUP in stream_read_commands.cc
// and XINFO in stream_info_commands.cc.
#include "commands/stream_util.h"

namespace basalt {

std::optional<KeyState> LookupStream(CommandContext& c, std::string_view key) {
  auto state = LookupCollection(c.ctx, c.db(), key, RedisType::kStream);
  if (ReplyIfError(c, state.status())) return std::nullopt;
  return *state;
}

std::optional<StreamId> StreamIdArg(CommandContext& c, std::string_view arg, uint64_t missing_seq,
                                    bool strict, bool* seq_given) {
  auto invalid = [&c]() -> std::optional<StreamId> {
    c.reply.Error(kInvalidStreamId);
    return std::nullopt;
  };
  if (arg.size() > 127) return invalid();
  if (seq_given != nullptr) *seq_given = true;
  if (arg == "-" || arg == "+") {
    if (strict) return invalid();
    return arg == "-" ? StreamId{} : kMaxStreamId;
  }
  StreamId id;
  size_t dash = arg.find('-');
  if (!ParseStreamIdPart(arg.substr(0, dash), &id.ms)) return invalid();
  if (dash == std::string_view::npos) {
    id.seq = missing_seq;
    return id;
  }
  std::string_view seq = arg.substr(dash + 1);
  if (seq_given != nullptr && seq == "*") {
    *seq_given = false;
    return id;
  }
  if (!ParseStreamIdPart(seq, &id.seq)) return invalid();
  return id;
}

void ReplyStreamId(CommandContext& c, StreamId id) {
  c.reply.Bulk(FormatStreamId(id));
}

void ReplicateClaim(CommandContext& c, std::string_view key, std::string_view group,
                    const PendingEntry& p, StreamId last_id) {
  if (!Replicating(c)) return;
  ReplicateAs(c, {"XCLAIM", key, group, p.consumer, "0", FormatStreamId(p.id), "TIME",
                  std::to_string(p.delivery_ms), "RETRYCOUNT", std::to_string(p.delivery_count),
                  "FORCE", "JUSTID", "LASTID", FormatStreamId(last_id)});
}

void ReplicateGroupPosition(CommandContext& c, std::string_view key, std::string_view group,
                            const StreamGroup& g) {
  if (!Replicating(c)) return;
  ReplicateAs(c, {"XGROUP", "SETID", key, group, FormatStreamId(g.last_id), "ENTRIESREAD",
                  std::to_string(g.entries_read)});
}

void ReplyStreamEntry(CommandContext& c, const StreamEntry& entry) {
  c.reply.Array(2);
  ReplyStreamId(c, entry.id);
  c.reply.Array(entry.fields.size() * 2);
  for (const auto& [field, value] : entry.fields) {
    c.reply.Bulk(field);
    c.reply.Bulk(value);
  }
}

void ReplyStreamEntries(CommandContext& c, const std::vector<StreamEntry>& entries) {
  c.reply.Array(entries.size());
  for (const StreamEntry& entry : entries) ReplyStreamEntry(c, entry);
}

std::optional<std::vector<StreamEntry>> ReadStreamEntries(CommandContext& c, StreamStore& store,
                                                          const Metadata& meta, StreamId start,
                                                          StreamId end, bool reverse,
                                                          uint64_t count) {
  std::vector<StreamEntry> out;
  Status s = store.ScanEntries(meta, start, end, reverse, count, [&out](StreamEntry&& e) {
    out.push_back(std::move(e));
    return true;
  });
  if (ReplyIfError(c, s)) return std::nullopt;
  return out;
}

namespace {

// The trimming options of XADD and XTRIM, parsed as Redis's streamParseAddOrTrimArgsOrReply.
struct TrimArgs {
  std::optional<uint64_t> max_len;
  std::optional<StreamId> min_id;
  bool approx = false;
  uint64_t limit = 0;
  uint64_t node_entries = 100;  // stream-node-max-entries, the blocks `~` takes
  bool no_mkstream = false;
  // XADD: the ID argument's index, the ID and whether its sequence was given.
  size_t id_index = 0;
  bool id_given = false;
  bool seq_given = true;
  StreamId id;
};

std::optional<TrimArgs> ParseTrimArgs(CommandContext& c, bool xadd) {
  TrimArgs args;
  bool limit_given = false;
  size_t i = 2;
  for (; i < c.argc(); i++) {
    const bool more = i + 1 < c.argc();
    const std::string& opt = c.arg(i);
    if (xadd && opt == "*") {
      break;
    } else if ((EqualsIgnoreCase(opt, "maxlen") || EqualsIgnoreCase(opt, "minid")) && more) {
      if (args.max_len || args.min_id) {
        c.reply.Error(
            "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return std::nullopt;
      }
      const bool by_len = EqualsIgnoreCase(opt, "maxlen");
      args.approx = false;
      if (i + 2 < c.argc() && (c.arg(i + 1) == "~" || c.arg(i + 1) == "=")) {
        args.approx = c.arg(i + 1) == "~";
        i++;
      }
      if (by_len) {
        auto n = IntArg(c, i + 1);
        if (!n) return std::nullopt;
        if (*n < 0) {
          c.reply.Error("ERR The MAXLEN argument must be >= 0.");
          return std::nullopt;
        }
        args.max_len = static_cast<uint64_t>(*n);
      } else {
        args.min_id = StreamIdArg(c, c.arg(i + 1), 0, true);
        if (!args.min_id) return std::nullopt;
      }
      i++;
    } else if (EqualsIgnoreCase(opt, "limit") && more) {
      auto n = IntArg(c, i + 1);
      if (!n) return std::nullopt;
      if (*n < 0) {
        c.reply.Error("ERR The LIMIT argument must be >= 0.");
        return std::nullopt;
      }
      args.limit = static_cast<uint64_t>(*n);
      limit_given = true;
      i++;
    } else if (xadd && EqualsIgnoreCase(opt, "nomkstream")) {
      args.no_mkstream = true;
    } else if (xadd) {
      auto id = StreamIdArg(c, opt, 0, true, &args.seq_given);
      if (!id) return std::nullopt;
      args.id = *id;
      args.id_given = true;
      break;
    } else {
      c.reply.Error(kSyntaxError);
      return std::nullopt;
    }
  }
  args.id_index = i;
  const bool trims = args.max_len || args.min_id;
  if (args.limit != 0 && !trims) {
    c.reply.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return std::nullopt;
  }
  if (!xadd && !trims) {
    c.reply.Error("ERR syntax error, XTRIM must be called with a trimming strategy");
    return std::nullopt;
  }
  if (limit_given && !args.approx) {
    c.reply.Error("ERR syntax error, LIMIT cannot be used without the special ~ option");
    return std::nullopt;
  }
  args.node_entries = static_cast<uint64_t>(c.server.config->stream_node_entries.load());
  // The default LIMIT of a `~` trim, Redis's.
  if (!limit_given && args.approx) args.limit = 100 * args.node_entries;
  return args;
}

// Applies the trimming of `args` to the stream; false after replying an error.
bool Trim(CommandContext& c, StreamStore& store, Metadata* meta, const TrimArgs& args,
          uint64_t* removed) {
  *removed = 0;
  if (!args.max_len && !args.min_id) return true;
  auto n =
      store.TrimHead(meta, args.max_len, args.min_id, args.approx, args.limit, args.node_entries);
  if (ReplyIfError(c, n.status())) return false;
  *removed = *n;
  return true;
}

// The trimming of `args` as replicas get it: exact, so that they trim what this server trimmed.
// A `~` trim stops where it likes; its exact equivalent is the length (or first ID) it left.
void AppendExactTrim(const TrimArgs& args, const Metadata& meta, std::vector<std::string>* sent) {
  if (args.max_len) {
    sent->insert(sent->end(),
                 {"MAXLEN", "=", std::to_string(args.approx ? meta.size : *args.max_len)});
  } else if (args.min_id) {
    const StreamId threshold = args.approx && meta.size > 0 ? meta.stream.first_id : *args.min_id;
    sent->insert(sent->end(), {"MINID", "=", FormatStreamId(threshold)});
  }
}

// The ID XADD gives its entry, as Redis's streamAppendItem; nullopt after replying.
std::optional<StreamId> NewEntryId(CommandContext& c, const StreamCounters& s,
                                   const TrimArgs& args) {
  StreamId id;
  bool ok = true;
  if (args.id_given && args.seq_given) {
    id = args.id;
  } else if (args.id_given) {
    if (s.last_id.ms == args.id.ms) {
      ok = s.last_id.seq != UINT64_MAX;
      id = {s.last_id.ms, s.last_id.seq + 1};
    } else {
      id = {args.id.ms, 0};
    }
  } else {
    const uint64_t now = static_cast<uint64_t>(c.ctx.now_ms());
    if (now > s.last_id.ms) {
      id = {now, 0};
    } else {
      ok = NextStreamId(s.last_id, &id);
    }
  }
  if (!ok || id <= s.last_id) {
    c.reply.Error(
        "ERR The ID specified in XADD is equal or smaller than the target stream top item");
    return std::nullopt;
  }
  return id;
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value ...
void XAddCommand(CommandContext& c) {
  auto args = ParseTrimArgs(c, true);
  if (!args) return;
  const size_t field_pos = args->id_index + 1;
  if (field_pos > c.argc() || c.argc() - field_pos < 2 || (c.argc() - field_pos) % 2 == 1) {
    return c.reply.Error(WrongArityError("xadd"));
  }
  if (args->id_given && args->seq_given && args->id.IsZero()) {
    return c.reply.Error("ERR The ID specified in XADD must be greater than 0-0");
  }
  auto state = LookupStream(c, c.arg(1));
  if (!state) return;
  if (!state->live() && args->no_mkstream) return c.reply.Null();
  Metadata meta = state->live() ? state->meta : NewCollection(RedisType::kStream);
  if (meta.stream.last_id == kMaxStreamId) {
    return c.reply.Error(
        "ERR The stream has exhausted the last possible ID, unable to add more items");
  }
  auto id = NewEntryId(c, meta.stream, *args);
  if (!id) return;
  StreamStore store(c.ctx, c.db(), c.arg(1), meta.version);
  store.PutEntry(*id, EncodeStreamFields(c.argv, field_pos));
  if (meta.size == 0) meta.stream.block_origin = meta.stream.entries_added;
  meta.size++;
  meta.stream.last_id = *id;
  meta.stream.entries_added++;
  if (meta.size == 1) meta.stream.first_id = *id;
  uint64_t removed = 0;
  // The trim reads through the batch after the put: it sees the new entry, as Redis trims after
  // appending.
  if (!Trim(c, store, &meta, *args, &removed)) return;
  if (Replicating(c)) {
    // With the ID it got, and the trim it did, so that a replica's entry and length are these.
    std::vector<std::string> sent = {"XADD", c.arg(1)};
    AppendExactTrim(*args, meta, &sent);
    sent.push_back(FormatStreamId(*id));
    sent.insert(sent.end(), c.argv.begin() + static_cast<std::ptrdiff_t>(field_pos), c.argv.end());
    ReplicateAs(c, std::move(sent));
  }
  c.ctx.Write(c.db(), c.arg(1), meta, *state);
  ReplyStreamId(c, *id);
  Notify(c, notify::kStream, "xadd", c.arg(1));
  if (removed > 0) Notify(c, notify::kStream, "xtrim", c.arg(1));
}

// XRANGE key start end [COUNT n] and XREVRANGE key end start [COUNT n].
void RangeGeneric(CommandContext& c, bool reverse) {
  const std::string& start_arg = reverse ? c.arg(3) : c.arg(2);
  const std::string& end_arg = reverse ? c.arg(2) : c.arg(3);
  auto parse = [&c](const std::string& arg, uint64_t missing_seq, bool* exclusive) {
    *exclusive = arg.size() > 1 && arg[0] == '(';
    return *exclusive ? StreamIdArg(c, std::string_view(arg).substr(1), missing_seq, true)
                      : StreamIdArg(c, arg, missing_seq, false);
  };
  bool start_ex, end_ex;
  auto start = parse(start_arg, 0, &start_ex);
  if (!start) return;
  if (start_ex && !NextStreamId(*start, &*start)) {
    return c.reply.Error("ERR invalid start ID for the interval");
  }
  auto end = parse(end_arg, UINT64_MAX, &end_ex);
  if (!end) return;
  if (end_ex && !PrevStreamId(*end, &*end)) {
    return c.reply.Error("ERR invalid end ID for the interval");
  }
  int64_t count = -1;
  for (size_t j = 4; j < c.argc(); j++) {
    if (EqualsIgnoreCase(c.arg(j), "count") && j + 1 < c.argc()) {
      auto n = IntArg(c, ++j);
      if (!n) return;
      count = *n < 0 ? 0 : *n;
    } else {
      return c.reply.Error(kSyntaxError);
    }
  }
  auto state = LookupStream(c, c.arg(1));
  if (!state) return;
  if (!state->live()) return c.reply.Array(0);
  if (count == 0) return c.reply.NullArray();
  StreamStore store(c.ctx, c.db(), c.arg(1), state->meta.version);
  auto entries = ReadStreamEntries(c, store, state->meta, *start, *end, reverse,
                                   count < 0 ? 0 : static_cast<uint64_t>(count));
  if (entries) ReplyStreamEntries(c, *entries);
}

void XRangeCommand(CommandContext& c) {
  RangeGeneric(c, false);
}
void XRevRangeCommand(CommandContext& c) {
  RangeGeneric(c, true);
}

void XLenCommand(CommandContext& c) {
  auto state = LookupStream(c, c.arg(1));
  if (!state) return;
  c.reply.Integer(state->live() ? static_cast<int64_t>(state->meta.size) : 0);
}

// XDEL key id [id ...]: every ID is checked before any entry goes.
void XDelCommand(CommandContext& c) {
  auto state = LookupStream(c, c.arg(1));
  if (!state) return;
  if (!state->live()) return c.reply.Integer(0);
  std::vector<StreamId> ids;
  for (size_t j = 2; j < c.argc(); j++) {
    auto id = StreamIdArg(c, c.arg(j), 0, true);
    if (!id) return;
    ids.push_back(*id);
  }
  Metadata meta = state->meta;
  StreamStore store(c.ctx, c.db(), c.arg(1), meta.version);
  int64_t deleted = 0;
  bool first_deleted = false;
  for (StreamId id : ids) {
    auto entry = store.GetEntry(id);
    if (ReplyIfError(c, entry.status())) return;
    if (!entry->has_value()) continue;
    store.DeleteEntry(id);
    meta.size--;
    deleted++;
    if (id == meta.stream.first_id) first_deleted = true;
    if (id > meta.stream.max_deleted_id) meta.stream.max_deleted_id = id;
  }
  if (deleted > 0) {
    if (meta.size == 0 || first_deleted) {
      if (ReplyIfError(c, store.RefreshFirstId(&meta, meta.stream.first_id))) return;
    }
    c.ctx.Write(c.db(), c.arg(1), meta, *state);
    CountChanges(c, deleted);
    Notify(c, notify::kStream, "xdel", c.arg(1));
  }
  c.reply.Integer(deleted);
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
void XTrimCommand(CommandContext& c) {
  auto args = ParseTrimArgs(c, false);
  if (!args) return;
  auto state = LookupStream(c, c.arg(1));
  if (!state) return;
  if (!state->live()) return c.reply.Integer(0);
  Metadata meta = state->meta;
  StreamStore store(c.ctx, c.db(), c.arg(1), meta.version);
  uint64_t removed = 0;
  if (!Trim(c, store, &meta, *args, &removed)) return;
  if (removed > 0) {
    if (Replicating(c)) {
      std::vector<std::string> sent = {"XTRIM", c.arg(1)};
      AppendExactTrim(*args, meta, &sent);
      ReplicateAs(c, std::move(sent));
    }
    c.ctx.Write(c.db(), c.arg(1), meta, *state);
    CountChanges(c, static_cast<int64_t>(removed));
    Notify(c, notify::kStream, "xtrim", c.arg(1));
  }
  c.reply.Integer(static_cast<int64_t>(removed));
}

// XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]
void XSetIdCommand(CommandContext& c) {
  auto id = StreamIdArg(c, c.arg(2), 0, true);
  if (!id) return;
  int64_t entries_added = -1;
  StreamId max_deleted;
  for (size_t i = 3; i < c.argc(); i += 2) {
    const bool more = i + 1 < c.argc();
    if (EqualsIgnoreCase(c.arg(i), "entriesadded") && more) {
      auto n = IntArg(c, i + 1);
      if (!n) return;
      if (*n < 0) return c.reply.Error("ERR entries_added must be positive");
      entries_added = *n;
    } else if (EqualsIgnoreCase(c.arg(i), "maxdeletedid") && more) {
      auto m = StreamIdArg(c, c.arg(i + 1), 0, true);
      if (!m) return;
      if (*id < *m) {
        return c.reply.Error(
            "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
      }
      max_deleted = *m;
    } else {
      return c.reply.Error(kSyntaxError);
    }
  }
  auto state = LookupStream(c, c.arg(1));
  if (!state) return;
  if (!state->live()) return c.reply.Error("ERR no such key");
  Metadata meta = state->meta;
  if (*id < meta.stream.max_deleted_id) {
    return c.reply.Error(
        "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id");
  }
  if (meta.size > 0) {
    StreamStore store(c.ctx, c.db(), c.arg(1), meta.version);
    auto last = store.LastLiveId(meta);
    if (ReplyIfError(c, last.status())) return;
    if (*id < *last) {
      return c.reply.Error(
          "ERR The ID specified in XSETID is smaller than the target stream top item");
    }
    if (entries_added != -1 && meta.size > static_cast<uint64_t>(entries_added)) {
      return c.reply.Error(
          "ERR The entries_added specified in XSETID is smaller than the target stream length");
    }
  }
  meta.stream.last_id = *id;
  if (entries_added != -1) meta.stream.entries_added = static_cast<uint64_t>(entries_added);
  if (!max_deleted.IsZero()) meta.stream.max_deleted_id = max_deleted;
  c.ctx.Write(c.db(), c.arg(1), meta, *state);
  c.reply.Ok();
  Notify(c, notify::kStream, "xsetid", c.arg(1));
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const std::vector<CommandSpec> kStreamCommands = {
    {"xadd", -5, kW | kCmdFast, 1, 1, 1, XAddCommand, "stream",
     "Appends a new message to a stream. Creates the key if it doesn't exist.",
     "@write @stream @fast"},
    {"xrange", -4, kR, 1, 1, 1, XRangeCommand, "stream",
     "Returns the messages from a stream within a range of IDs.", "@read @stream @slow"},
    {"xrevrange", -4, kR, 1, 1, 1, XRevRangeCommand, "stream",
     "Returns the messages from a stream within a range of IDs in reverse order.",
     "@read @stream @slow"},
    {"xlen", 2, kR | kCmdFast, 1, 1, 1, XLenCommand, "stream",
     "Return the number of messages in a stream.", "@read @stream @fast"},
    {"xdel", -3, kCmdWrite | kCmdFast, 1, 1, 1, XDelCommand, "stream",
     "Returns the number of messages after removing them from a stream.", "@write @stream @fast"},
    {"xtrim", -4, kCmdWrite, 1, 1, 1, XTrimCommand, "stream",
     "Deletes messages from the beginning of a stream.", "@write @stream @slow"},
    {"xsetid", -3, kW | kCmdFast, 1, 1, 1, XSetIdCommand, "stream",
     "An internal command for replicating stream values.", "@write @stream @fast"},
};

}  // namespace

const std::vector<CommandSpec>& StreamCommands() {
  static const std::vector<CommandSpec> all = [] {
    std::vector<CommandSpec> out = kStreamCommands;
    for (const auto* more :
         {&StreamReadCommands(), &StreamGroupCommands(), &StreamInfoCommands()}) {
      out.insert(out.end(), more->begin(), more->end());
    }
    return out;
  }();
  return all;
}

}  // namespace basalt
