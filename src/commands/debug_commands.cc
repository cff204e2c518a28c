// DEBUG, LOLWUT and MODULE: the diagnostics Redis 7.2 offers, answered with Basalt's own
// figures.
//
// DEBUG runs with the exclusive keyspace lock: every other command, on every worker, waits for
// it, which is what DEBUG SLEEP means in Redis (the whole server stops) and what gives DEBUG
// DIGEST one consistent view of all databases. Like Redis 7, DEBUG is refused unless
// enable-debug-command allows it (for every client, or for loopback clients with "local");
// MODULE LOAD/LOADEX/UNLOAD likewise with enable-module-command, and then they fail, since
// Basalt loads no modules.
#include <glog/logging.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "commands/command_util.h"
#include "commands/object_encoding.h"
#include "common/sha256.h"
#include "common/version.h"

namespace basalt {

namespace {

// A client on the loopback interface, which "local" admits, as Redis's islocalClient.
bool IsLocalClient(const Session& session) {
  const std::string& addr = session.addr;
  return addr.rfind("127.", 0) == 0 || addr.rfind("::1", 0) == 0 || addr.rfind("[::1]", 0) == 0;
}

// Redis's check of a protected command; false after replying its refusal.
bool ProtectedCommandAllowed(CommandContext& c, const char* command, const char* option) {
  const std::string mode = c.server.config->GetString(option);
  if (mode == "yes" || (mode == "local" && IsLocalClient(c.session))) return true;
  c.reply.Error(std::string("ERR ") + command + " command not allowed. If the " + option +
                " option is set to \"local\", you can run it from a local connection, otherwise "
                "you need to set this option in the configuration file, and then restart the "
                "server.");
  return false;
}

std::string SubcommandError(CommandContext& c, const char* container) {
  return "ERR unknown subcommand or wrong number of arguments for '" + c.arg(1).substr(0, 128) +
         "'. Try " + container + " HELP.";
}

// ---------------------------------------------------------------------------------------------
// Digests: of a value, from what the family's full read returns (members of sets and fields of
// hashes sorted, so that the stored order never matters), and of the data set, the XOR of one
// digest per key (database, name, value, whether it expires), so that the key order does not matter
// either and an empty data set digests to zeros, as in Redis.

constexpr size_t kDigestBytes = 20;
using Digest = std::array<uint8_t, kDigestBytes>;

std::string Hex(const Digest& d) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : d) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

// The bulk strings of a RESP2 reply that is one bulk string or a flat array of them.
StatusOr<std::vector<std::string>> BulkStrings(const std::string& resp) {
  std::vector<std::string> out;
  size_t pos = 0;
  auto line = [&](std::string* text) {
    size_t end = resp.find("\r\n", pos);
    if (end == std::string::npos) return false;
    *text = resp.substr(pos, end - pos);
    pos = end + 2;
    return true;
  };
  std::string head;
  if (!line(&head) || head.empty()) return Status::InvalidArgument("empty reply");
  if (head[0] == '-') return Status::RedisError(head.substr(1));
  int64_t count = 1;
  if (head[0] == '*') {
    count = ParseInt64(head.substr(1)).value_or(0);
    if (!line(&head)) head.clear();
  }
  for (int64_t i = 0; i < count; i++) {
    if (i > 0 && !line(&head)) return Status::InvalidArgument("short reply");
    if (head.empty() || head[0] != '$') return Status::InvalidArgument("not a bulk string");
    int64_t len = ParseInt64(head.substr(1)).value_or(-1);
    if (len < 0) continue;
    out.push_back(resp.substr(pos, static_cast<size_t>(len)));
    pos += static_cast<size_t>(len) + 2;
  }
  return out;
}

// Runs a read command for `key` in database `db` within c's Context and returns its bulks.
StatusOr<std::vector<std::string>> ReadWhole(CommandContext& c, int db,
                                             std::vector<std::string> argv) {
  const CommandSpec* spec = CommandTable::Get().FindOriginal(argv[0]);
  if (spec == nullptr) return Status::InvalidArgument("no " + argv[0] + " command");
  Session reader;
  reader.db = db;
  reader.authenticated = true;
  std::string out;
  Reply reply(&out, 2);
  CommandContext inner{c.server, reader, argv, reply, c.ctx, true};
  spec->handler(inner);
  return BulkStrings(out);
}

// The digest of the value of a live key, or nullopt after replying with an error.
StatusOr<Digest> ValueDigest(CommandContext& c, int db, const std::string& key, RedisType type) {
  std::vector<std::string> read;
  switch (type) {
    case RedisType::kString:
      read = {"get", key};
      break;
    case RedisType::kList:
      read = {"lrange", key, "0", "-1"};
      break;
    case RedisType::kSet:
      read = {"smembers", key};
      break;
    case RedisType::kHash:
      read = {"hgetall", key};
      break;
    case RedisType::kZset:
      read = {"zrange", key, "0", "-1", "withscores"};
      break;
    case RedisType::kStream:
      read = {"xrange", key, "-", "+"};
      break;
    default:
      return Status::InvalidArgument("unknown type");
  }
  auto items = ReadWhole(c, db, std::move(read));
  if (!items.ok()) return items.status();
  std::vector<std::string>& v = *items;
  if (type == RedisType::kSet) std::sort(v.begin(), v.end());
  if (type == RedisType::kHash) {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (size_t i = 0; i + 1 < v.size(); i += 2) pairs.emplace_back(v[i], v[i + 1]);
    std::sort(pairs.begin(), pairs.end());
    v.clear();
    for (auto& [field, value] : pairs) {
      v.push_back(std::move(field));
      v.push_back(std::move(value));
    }
  }
  Sha256 sha;
  sha.Update(RedisTypeName(type));
  for (const std::string& item : v) {
    sha.Update(std::to_string(item.size()));
    sha.Update(":");
    sha.Update(item);
  }
  Digest out;
  auto full = sha.Final();
  std::copy_n(full.begin(), kDigestBytes, out.begin());
  return out;
}

void DebugDigest(CommandContext& c) {
  Digest total{};
  Keyspace* ks = c.server.keyspace;
  for (int db = 0; db < ks->databases(); db++) {
    const uint8_t pdb = ks->Physical(db);
    std::vector<std::string> keys;
    std::string upper = DatabaseEnd(pdb);
    rocksdb::ReadOptions ro;
    rocksdb::Slice upper_slice(upper);
    ro.iterate_upper_bound = &upper_slice;
    auto it = c.ctx.batch().NewIterator(ColumnFamily::kMetadata, &ro);
    for (it->Seek(DatabaseBegin(pdb)); it->Valid(); it->Next()) {
      keys.emplace_back(it->key().data() + 1, it->key().size() - 1);
    }
    if (!it->status().ok()) return c.reply.Error("ERR " + it->status().ToString());
    for (const std::string& key : keys) {
      auto state = c.ctx.Lookup(db, key);
      if (ReplyIfError(c, state.status())) return;
      if (!state->live()) continue;
      auto value = ValueDigest(c, db, key, state->meta.type);
      if (ReplyIfError(c, value.status())) return;
      Sha256 sha;
      sha.Update(std::to_string(db) + ":" + std::to_string(key.size()) + ":");
      sha.Update(key);
      sha.Update(std::string_view(reinterpret_cast<const char*>(value->data()), kDigestBytes));
      // As in Redis, whether the key expires, not when: copies made at different moments agree.
      sha.Update(state->meta.expire_ms != 0 ? ":expires" : ":persists");
      auto full = sha.Final();
      for (size_t i = 0; i < kDigestBytes; i++) total[i] ^= full[i];
    }
  }
  c.reply.Simple(Hex(total));
}

void DebugDigestValue(CommandContext& c) {
  c.reply.Array(c.argc() - 2);
  for (size_t j = 2; j < c.argc(); j++) {
    Digest digest{};
    auto state = c.ctx.Lookup(c.db(), c.arg(j));
    if (state.ok() && state->live()) {
      auto value = ValueDigest(c, c.db(), c.arg(j), state->meta.type);
      if (value.ok()) digest = *value;
    }
    c.reply.Simple(Hex(digest));
  }
}

// DEBUG OBJECT: Redis's line. Values live on disk, so there is no address (0x0) and one
// reference; lru is Redis's LRU clock of the last access (Unix seconds modulo 2^24) and
// lru_seconds_idle OBJECT IDLETIME's (types/key_access.h); serializedlength is the bytes of the
// value's elements.
void DebugObject(CommandContext& c) {
  auto state = c.ctx.Lookup(c.db(), c.arg(2));
  if (ReplyIfError(c, state.status())) return;
  // As in Redis, which looks in its dictionary without the expiry check, a key past its TTL
  // that is not deleted yet is found; its value is no longer readable, so its serialized
  // length is 0.
  if (!state->present) return c.reply.Error("ERR no such key");
  std::string read_type = RedisTypeName(state->meta.type);
  std::vector<std::string> read;
  size_t bytes = 0;
  switch (state->meta.type) {
    case RedisType::kString:
      read = {"get", c.arg(2)};
      break;
    case RedisType::kList:
      read = {"lrange", c.arg(2), "0", "-1"};
      break;
    case RedisType::kSet:
      read = {"smembers", c.arg(2)};
      break;
    case RedisType::kHash:
      read = {"hgetall", c.arg(2)};
      break;
    case RedisType::kStream:
      read = {"xrange", c.arg(2), "-", "+"};
      break;
    default:
      read = {"zrange", c.arg(2), "0", "-1", "withscores"};
  }
  if (state->live()) {
    auto items = ReadWhole(c, c.db(), std::move(read));
    if (ReplyIfError(c, items.status())) return;
    for (const std::string& item : *items) bytes += item.size();
  }
  auto encoding = ObjectEncoding(c, c.db(), c.arg(2), *state);
  if (ReplyIfError(c, encoding.status())) return;
  KeyAccessTable& access = c.server.keyspace->access();
  const uint8_t pdb = c.server.keyspace->Physical(c.db());
  const int64_t idle = access.IdleSeconds(pdb, c.arg(2), c.ctx.now_ms());
  const int64_t lru = (c.ctx.now_ms() / 1000 - idle) & ((int64_t{1} << 24) - 1);
  c.reply.Simple(
      "Value at:0x0 refcount:" + std::to_string(ObjectRefcount(*c.server.config, *state)) +
      " encoding:" + *encoding + " serializedlength:" + std::to_string(bytes) +
      " lru:" + std::to_string(lru) + " lru_seconds_idle:" + std::to_string(idle));
}

void DebugProtocol(CommandContext& c) {
  const std::string name = ToLower(c.arg(2));
  const bool resp3 = c.reply.resp() >= 3;
  if (name == "string") return c.reply.Bulk("Hello World");
  if (name == "integer") return c.reply.Integer(12345);
  if (name == "double") {
    // Redis 7.2 writes the shortest form that reads back the same.
    if (resp3) return c.reply.Raw(",3.141\r\n");
    return c.reply.Bulk("3.141");
  }
  if (name == "bignum") {
    if (resp3) return c.reply.Raw("(1234567999999999999999999999999999999\r\n");
    return c.reply.Bulk("1234567999999999999999999999999999999");
  }
  if (name == "null") return c.reply.Null();
  if (name == "array" || name == "set") {
    name == "array" ? c.reply.Array(3) : c.reply.Set(3);
    for (int j = 0; j < 3; j++) c.reply.Integer(j);
    return;
  }
  if (name == "map") {
    c.reply.Map(3);
    for (int j = 0; j < 3; j++) {
      c.reply.Integer(j);
      c.reply.Bool(j == 1);
    }
    return;
  }
  if (name == "attrib") {
    if (resp3) {
      c.reply.Raw("|1\r\n");
      c.reply.Bulk("key-popularity");
      c.reply.Array(2);
      c.reply.Bulk("key:123");
      c.reply.Integer(90);
    }
    return c.reply.Bulk("Some real reply following the attribute");
  }
  if (name == "push") {
    if (!resp3) return c.reply.Error("ERR RESP2 is not supported by this command");
    c.reply.Push(2);
    c.reply.Bulk("server-cpu-usage");
    c.reply.Integer(42);
    return c.reply.Bulk("Some real reply following the push reply");
  }
  if (name == "true") return c.reply.Bool(true);
  if (name == "false") return c.reply.Bool(false);
  if (name == "verbatim") return c.reply.Verbatim("This is a verbatim\nstring");
  c.reply.Error(
      "ERR Wrong protocol type name. Please use one of the following: "
      "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
}

// DEBUG SLEEP: sleeps holding the exclusive keyspace lock, so the whole server waits, as Redis
// does (connections of this worker, and every command of the others, wait for it).
void DebugSleep(CommandContext& c) {
  double seconds = strtod(c.arg(2).c_str(), nullptr);
  int64_t us = static_cast<int64_t>(seconds * 1000000);
  if (us > 0) {
    timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>((us % 1000000) * 1000)};
    nanosleep(&ts, nullptr);
  }
  c.reply.Ok();
}

// STRINGMATCH-TEST: Redis fuzzes its glob matcher for crashes; this runs Basalt's over random
// patterns and subjects the same way.
void DebugStringmatchTest(CommandContext& c) {
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  auto next = [&seed] {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
  };
  for (int i = 0; i < 100000; i++) {
    std::string pattern(next() % 32, '\0'), subject(next() % 32, '\0');
    for (char& ch : pattern) ch = static_cast<char>(next() % 256);
    for (char& ch : subject) ch = static_cast<char>(next() % 256);
    GlobMatch(pattern, subject);
  }
  c.reply.Simple("Apparently Redis did not crash: test passed");
}

void DebugHelp(CommandContext& c) {
  static const std::string kHelp[] = {
      "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANGE-REPL-ID",
      "    Change the replication IDs of the instance.",
      "    Dangerous: should be used only for testing the replication subsystem.",
      "DIGEST",
      "    Output a hex signature representing the current DB content.",
      "DIGEST-VALUE <key> [<key> ...]",
      "    Output a hex signature of the values of all the specified keys.",
      "ERROR <string>",
      "    Return a Redis protocol error with <string> as message. Useful for clients",
      "    unit tests to simulate Redis errors.",
      "LOADAOF",
      "    Reload the AOF in memory (Basalt's WAL is always applied: nothing to do).",
      "LOG <message>",
      "    Write <message> to the server log.",
      "OBJECT <key>",
      "    Show low level info about `key` and associated value.",
      "PAUSE-CRON <0|1>",
      "    Stop periodic cron job processing (in Basalt: the active expiry rounds).",
      "PROTOCOL <type>",
      "    Reply with a test value of the specified type. <type> can be: string,",
      "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
      "    true, false.",
      "SET-ACTIVE-EXPIRE <0|1>",
      "    Setting it to 0 disables expiring keys in background when they are not",
      "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
      "    default.",
      "QUICKLIST-PACKED-THRESHOLD <size>",
      "    Sets the threshold for elements to be inserted as plain vs packed nodes",
      "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
      "SLEEP <seconds>",
      "    Stop the server for <seconds>. Decimals allowed.",
      "STRINGMATCH-TEST",
      "    Run a fuzz tester against the stringmatchlen() function.",
      "LISTPACK <key>",
      "    Show low level info about the listpack encoding of <key>.",
      "HTSTATS <dbid> [full]",
      "HTSTATS-KEY <key> [full]",
      "    Redis's hash table statistics; Basalt keeps keys and members in RocksDB, not in",
      "    hash tables, and says so.",
      "HELP",
      "    Print this help."};
  c.reply.SimpleLines(kHelp);
}

// Whether the server holds a function library or a key in any database.
bool HoldsData(const ServerState& server) {
  if (server.function_libraries.load(std::memory_order_relaxed) > 0) return true;
  for (int db = 0; db < server.keyspace->databases(); db++) {
    if (server.keyspace->KeyCount(db) > 0) return true;
  }
  return false;
}

void DebugCommand(CommandContext& c) {
  if (!ProtectedCommandAllowed(c, "DEBUG", "enable-debug-command")) return;
  const std::string sub = ToLower(c.arg(1));
  const size_t n = c.argc();
  // DEBUG's reads are no access of the keys (OBJECT IDLETIME / FREQ), as in Redis.
  c.ctx.set_touches_keys(false);
  if (sub == "help" && n == 2) return DebugHelp(c);
  if (sub == "sleep" && n == 3) return DebugSleep(c);
  if (sub == "object" && n == 3) return DebugObject(c);
  if (sub == "protocol" && n == 3) return DebugProtocol(c);
  if (sub == "digest" && n == 2) return DebugDigest(c);
  if (sub == "digest-value") return DebugDigestValue(c);
  if (sub == "stringmatch-test" && n == 2) return DebugStringmatchTest(c);
  if (sub == "set-active-expire" && n == 3) {
    Status s = c.server.config->SetLive("active-expire", atoi(c.arg(2).c_str()) ? "yes" : "no");
    if (ReplyIfError(c, s)) return;
    return c.reply.Ok();
  }
  if (sub == "pause-cron" && n == 3) {
    if (c.server.expirer != nullptr) c.server.expirer->SetRoundsPaused(atoi(c.arg(2).c_str()) != 0);
    return c.reply.Ok();
  }
  if (sub == "set-disable-deny-scripts" && n == 3) {
    c.server.scripts_call_noscript.store(atoi(c.arg(2).c_str()) != 0, std::memory_order_relaxed);
    return c.reply.Ok();
  }
  if (sub == "change-repl-id" && n == 2) {
    LOG(INFO) << "Changing replication IDs after receiving DEBUG change-repl-id";
    if (ReplyIfError(c, c.server.replication->ChangeReplid())) return;
    return c.reply.Ok();
  }
  if (sub == "reload") {
    // Redis saves an RDB and loads it back. Every write is already in RocksDB and reads come
    // from it, so the data after a reload is the data now: nothing to do but check the options.
    bool merge = false, noflush = false;
    for (size_t i = 2; i < n; i++) {
      const std::string opt = ToLower(c.arg(i));
      if (opt == "merge") {
        merge = true;
      } else if (opt == "noflush") {
        noflush = true;
      } else if (opt != "nosave") {
        return c.reply.Error(
            "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
      }
    }
    // Without the flush and without MERGE, Redis loads the file over the data it came from: a
    // library or key it holds already stops the load.
    if (noflush && !merge && HoldsData(c.server)) {
      return c.reply.Error("ERR Error trying to load the RDB dump, check server logs.");
    }
    return c.reply.Ok();
  }
  if (sub == "loadaof" && n == 2) {
    // Redis reloads its AOF; Basalt's log is the WAL, already applied to the data it reads.
    return c.reply.Ok();
  }
  if (sub == "quicklist-packed-threshold" && n == 3) {
    // Accepted for Redis's test suites; lists on disk have no packed nodes to tune.
    auto size = ParseMemory(c.arg(2));
    if (!size || *size < 0 || *size > (int64_t{1} << 32) - (1 << 20))
      return c.reply.Error(
          "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
    return c.reply.Ok();
  }
  if (sub == "listpack" && n == 3) {
    auto state = c.ctx.Lookup(c.db(), c.arg(2));
    if (ReplyIfError(c, state.status())) return;
    if (!state->live()) return c.reply.Error("ERR no such key");
    return c.reply.Error("ERR Not a listpack encoded object.");
  }
  // Redis describes its in-memory hash tables here. Tools and test suites read the text, so it
  // is a text that says there is none, not an error.
  if (sub == "htstats" && (n == 3 || n == 4)) {
    if (!IntArg(c, 2)) return;
    return c.reply.Verbatim("[Dictionary HT]\nNo hash table: Basalt keeps the keys in RocksDB.\n");
  }
  if (sub == "htstats-key" && (n == 3 || n == 4)) {
    auto state = c.ctx.Peek(c.db(), c.arg(2));
    if (ReplyIfError(c, state.status())) return;
    if (!state->live()) return c.reply.Error("ERR no such key");
    return c.reply.Verbatim("No hash table: Basalt keeps this key's members in RocksDB.\n");
  }
  if (sub == "error" && n == 3) return c.reply.Error(c.arg(2));  // verbatim, as Redis sends it
  if (sub == "log" && n == 3) {
    LOG(WARNING) << "DEBUG LOG: " << c.arg(2);
    return c.reply.Ok();
  }
  c.reply.Error(SubcommandError(c, "DEBUG"));
}

// ---------------------------------------------------------------------------------------------
// LOLWUT and MODULE

// LOLWUT [VERSION v]: Redis 7.2 draws no art for its own version, only names it; Basalt names
// itself and the Redis version it follows, whatever version is asked for.
void LolwutCommand(CommandContext& c) {
  if (c.argc() >= 3 && EqualsIgnoreCase(c.arg(1), "version")) {
    if (!IntArg(c, 2)) return;
  }
  c.reply.Verbatim(std::string("Basalt ver. ") + kServerVersion + ", Redis ver. " + kRedisVersion +
                   "\n");
}

void ModuleCommand(CommandContext& c) {
  const std::string sub = ToLower(c.arg(1));
  if (sub == "help" && c.argc() == 2) {
    static const std::string kHelp[] = {
        "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LIST",
        "    Return a list of loaded modules.",
        "LOAD <path> [<arg> ...]",
        "    Load a module library from <path>, passing to it any optional arguments.",
        "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
        "    Load a module library from <path>, while passing it module configurations and "
        "optional arguments.",
        "UNLOAD <name>",
        "    Unload a module.",
        "HELP",
        "    Print this help."};
    return c.reply.SimpleLines(kHelp);
  }
  if (sub == "list" && c.argc() == 2) return c.reply.Array(0);
  if ((sub == "load" || sub == "loadex") && c.argc() >= 3) {
    if (!ProtectedCommandAllowed(c, "MODULE", "enable-module-command")) return;
    LOG(WARNING) << "Module " << c.arg(2) << " failed to load: Basalt does not load modules";
    return c.reply.Error("ERR Error loading the extension. Please check the server logs.");
  }
  if (sub == "unload" && c.argc() == 3) {
    if (!ProtectedCommandAllowed(c, "MODULE", "enable-module-command")) return;
    return c.reply.Error("ERR Error unloading module: no such module with that name");
  }
  c.reply.Error(SubcommandError(c, "MODULE"));
}

const std::vector<CommandSpec> kDebugCommands = {
    {"debug", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdExclusive, 0, 0, 0,
     DebugCommand, "server", "A container for debugging commands.", "@admin @slow @dangerous"},
    {"lolwut", -1, kCmdReadOnly | kCmdFast, 0, 0, 0, LolwutCommand, "server",
     "Displays computer art and the Redis version", "@read @fast"},
    {"module", -2, kCmdNoScript, 0, 0, 0, ModuleCommand, "server",
     "A container for module commands.", "@slow", nullptr,
     "help:2:@slow list:2:@admin@slow@dangerous "
     "load:-3:@admin@slow@dangerous:admin,no_async_loading,noscript "
     "loadex:-3:@admin@slow@dangerous:admin,no_async_loading,noscript "
     "unload:3:@admin@slow@dangerous:admin,no_async_loading,noscript"},
};

}  // namespace

const std::vector<CommandSpec>& DebugCommands() {
  return kDebugCommands;
}

}  // namespace basalt
