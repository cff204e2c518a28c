// XINFO STREAM [FULL [COUNT n]], XINFO GROUPS and XINFO CONSUMERS, with Redis 7.2's fields.
//
// Everything but the radix-tree figures comes from the stream's metadata counters and its group,
// consumer and pending sub keys (types/stream.h). Basalt keeps no radix tree; radix-tree-keys
// and radix-tree-nodes describe the tree Redis would hold for the same entries added in order:
// one key per block of stream-node-max-entries the live entries span (the blocks `~` trims by,
// HeadBlockEntries) and one node more than keys (the root), so that tools and tests that add
// entries until the tree has grown see it grow.
#include "commands/stream_util.h"

namespace basalt {

namespace {

std::string XInfoSyntaxError(CommandContext& c) {
  return "ERR unknown subcommand or wrong number of arguments for '" + c.arg(1).substr(0, 128) +
         "'. Try XINFO HELP.";
}

void ReplyEntriesRead(CommandContext& c, const StreamGroup& g) {
  if (g.entries_read == -1) return c.reply.Null();
  c.reply.Integer(g.entries_read);
}

void ReplyLag(CommandContext& c, const Metadata& meta, const StreamGroup& g) {
  std::optional<int64_t> lag = StreamGroupLag(meta, g);
  if (!lag) return c.reply.Null();
  c.reply.Integer(*lag);
}

// The entry at one end of the stream, or a null.
bool ReplyEdgeEntry(CommandContext& c, StreamStore& store, const Metadata& meta, bool last) {
  auto entries = ReadStreamEntries(c, store, meta, StreamId{}, kMaxStreamId, last, 1);
  if (!entries) return false;
  if (entries->empty()) {
    c.reply.Null();
  } else {
    ReplyStreamEntry(c, entries->front());
  }
  return true;
}

// One group of XINFO STREAM FULL: its fields, pending entries and consumers, each list at most
// `count` long (0: all).
bool ReplyFullGroup(CommandContext& c, StreamStore& store, const Metadata& meta,
                    const std::string& name, const StreamGroup& g, uint64_t count) {
  auto pending = store.ListPending(name, StreamId{}, kMaxStreamId, count);
  if (ReplyIfError(c, pending.status())) return false;
  auto consumers = store.ListConsumers(name);
  if (ReplyIfError(c, consumers.status())) return false;
  c.reply.Map(7);
  c.reply.Bulk("name");
  c.reply.Bulk(name);
  c.reply.Bulk("last-delivered-id");
  ReplyStreamId(c, g.last_id);
  c.reply.Bulk("entries-read");
  ReplyEntriesRead(c, g);
  c.reply.Bulk("lag");
  ReplyLag(c, meta, g);
  c.reply.Bulk("pel-count");
  c.reply.Integer(static_cast<int64_t>(g.pending));
  c.reply.Bulk("pending");
  c.reply.Array(pending->size());
  for (const PendingEntry& p : *pending) {
    c.reply.Array(4);
    ReplyStreamId(c, p.id);
    c.reply.Bulk(p.consumer);
    c.reply.Integer(p.delivery_ms);
    c.reply.Integer(static_cast<int64_t>(p.delivery_count));
  }
  c.reply.Bulk("consumers");
  c.reply.Array(consumers->size());
  for (const auto& [consumer_name, consumer] : *consumers) {
    auto ids = store.ListConsumerPending(name, consumer_name, StreamId{}, kMaxStreamId, count);
    if (ReplyIfError(c, ids.status())) return false;
    c.reply.Map(5);
    c.reply.Bulk("name");
    c.reply.Bulk(consumer_name);
    c.reply.Bulk("seen-time");
    c.reply.Integer(consumer.seen_ms);
    c.reply.Bulk("active-time");
    c.reply.Integer(consumer.active_ms);
    c.reply.Bulk("pel-count");
    c.reply.Integer(static_cast<int64_t>(consumer.pending));
    c.reply.Bulk("pending");
    c.reply.Array(ids->size());
    for (StreamId id : *ids) {
      auto p = store.GetPending(name, id);
      if (ReplyIfError(c, p.status())) return false;
      PendingEntry entry = p->value_or(PendingEntry{id, 0, 0, consumer_name});
      c.reply.Array(3);
      ReplyStreamId(c, id);
      c.reply.Integer(entry.delivery_ms);
      c.reply.Integer(static_cast<int64_t>(entry.delivery_count));
    }
  }
  return true;
}

void InfoStream(CommandContext& c, const KeyState& state) {
  bool full = false;
  int64_t count = 10;
  const size_t options = c.argc() - 3;
  if (options != 0) {
    if ((options != 1 && options != 3) || !EqualsIgnoreCase(c.arg(3), "full")) {
      return c.reply.Error(XInfoSyntaxError(c));
    }
    full = true;
    if (options == 3) {
      if (!EqualsIgnoreCase(c.arg(4), "count")) return c.reply.Error(XInfoSyntaxError(c));
      auto n = IntArg(c, 5);
      if (!n) return;
      count = *n < 0 ? 10 : *n;
    }
  }
  const Metadata& meta = state.meta;
  StreamStore store(c.ctx, c.db(), c.arg(2), meta.version);
  // Everything that can fail is read before the reply starts.
  auto groups = store.ListGroups();
  if (ReplyIfError(c, groups.status())) return;
  std::vector<StreamEntry> entries;
  if (full) {
    auto read = ReadStreamEntries(c, store, meta, StreamId{}, kMaxStreamId, false,
                                  static_cast<uint64_t>(count));
    if (!read) return;
    entries = std::move(*read);
  }
  c.reply.Map(full ? 9 : 10);
  c.reply.Bulk("length");
  c.reply.Integer(static_cast<int64_t>(meta.size));
  const auto node_entries = static_cast<uint64_t>(c.server.config->stream_node_entries.load());
  const uint64_t head_block = std::min(meta.size, HeadBlockEntries(meta, node_entries));
  const uint64_t tree_keys =
      meta.size == 0 ? 0 : 1 + (meta.size - head_block + node_entries - 1) / node_entries;
  c.reply.Bulk("radix-tree-keys");
  c.reply.Integer(static_cast<int64_t>(tree_keys));
  c.reply.Bulk("radix-tree-nodes");
  c.reply.Integer(static_cast<int64_t>(tree_keys + 1));
  c.reply.Bulk("last-generated-id");
  ReplyStreamId(c, meta.stream.last_id);
  c.reply.Bulk("max-deleted-entry-id");
  ReplyStreamId(c, meta.stream.max_deleted_id);
  c.reply.Bulk("entries-added");
  c.reply.Integer(static_cast<int64_t>(meta.stream.entries_added));
  c.reply.Bulk("recorded-first-entry-id");
  ReplyStreamId(c, meta.stream.first_id);
  if (!full) {
    c.reply.Bulk("groups");
    c.reply.Integer(static_cast<int64_t>(groups->size()));
    c.reply.Bulk("first-entry");
    if (!ReplyEdgeEntry(c, store, meta, false)) return;
    c.reply.Bulk("last-entry");
    ReplyEdgeEntry(c, store, meta, true);
    return;
  }
  c.reply.Bulk("entries");
  ReplyStreamEntries(c, entries);
  c.reply.Bulk("groups");
  c.reply.Array(groups->size());
  for (const auto& [name, g] : *groups) {
    if (!ReplyFullGroup(c, store, meta, name, g, static_cast<uint64_t>(count))) return;
  }
}

void InfoGroups(CommandContext& c, const KeyState& state) {
  StreamStore store(c.ctx, c.db(), c.arg(2), state.meta.version);
  auto groups = store.ListGroups();
  if (ReplyIfError(c, groups.status())) return;
  c.reply.Array(groups->size());
  for (const auto& [name, g] : *groups) {
    c.reply.Map(6);
    c.reply.Bulk("name");
    c.reply.Bulk(name);
    c.reply.Bulk("consumers");
    c.reply.Integer(static_cast<int64_t>(g.consumers));
    c.reply.Bulk("pending");
    c.reply.Integer(static_cast<int64_t>(g.pending));
    c.reply.Bulk("last-delivered-id");
    ReplyStreamId(c, g.last_id);
    c.reply.Bulk("entries-read");
    ReplyEntriesRead(c, g);
    c.reply.Bulk("lag");
    ReplyLag(c, state.meta, g);
  }
}

void InfoConsumers(CommandContext& c, const KeyState& state) {
  StreamStore store(c.ctx, c.db(), c.arg(2), state.meta.version);
  auto group = store.GetGroup(c.arg(3));
  if (ReplyIfError(c, group.status())) return;
  if (!group->has_value()) {
    return c.reply.Error("NOGROUP No such consumer group '" + c.arg(3) + "' for key name '" +
                         c.arg(2) + "'");
  }
  auto consumers = store.ListConsumers(c.arg(3));
  if (ReplyIfError(c, consumers.status())) return;
  const int64_t now = c.ctx.now_ms();
  c.reply.Array(consumers->size());
  for (const auto& [name, consumer] : *consumers) {
    c.reply.Map(4);
    c.reply.Bulk("name");
    c.reply.Bulk(name);
    c.reply.Bulk("pending");
    c.reply.Integer(static_cast<int64_t>(consumer.pending));
    c.reply.Bulk("idle");
    c.reply.Integer(std::max<int64_t>(now - consumer.seen_ms, 0));
    c.reply.Bulk("inactive");
    c.reply.Integer(consumer.active_ms == -1 ? -1 : now - consumer.active_ms);
  }
}

void XInfoCommand(CommandContext& c) {
  if (EqualsIgnoreCase(c.arg(1), "help")) {
    static const char* const kHelp[] = {
        "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        "HELP",
        "    Print this help.",
    };
    c.reply.Array(std::size(kHelp));
    for (const char* line : kHelp) c.reply.Simple(line);
    return;
  }
  auto state = LookupStream(c, c.arg(2));
  if (!state) return;
  if (!state->live()) return c.reply.Error("ERR no such key");
  const std::string sub = ToLower(c.arg(1));
  if (sub == "consumers" && c.argc() == 4) return InfoConsumers(c, *state);
  if (sub == "groups" && c.argc() == 3) return InfoGroups(c, *state);
  if (sub == "stream") return InfoStream(c, *state);
  c.reply.Error(XInfoSyntaxError(c));
}

const std::vector<CommandSpec> kStreamInfoCommands = {
    {"xinfo", -2, kCmdReadOnly, 2, 2, 1, XInfoCommand, "stream",
     "A container for stream introspection commands.", "@slow", nullptr,
     "consumers:4:@read@stream@slow groups:3:@read@stream@slow stream:-3:@read@stream@slow "
     "help:2:@stream@slow"},
};

}  // namespace

const std::vector<CommandSpec>& StreamInfoCommands() {
  return kStreamInfoCommands;
}

}  // namespace basalt
