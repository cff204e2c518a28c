// The config table, its parsers, CONFIG SET/GET semantics, the file loader and conf/basalt.conf.
#include "config/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/redis_keys.h"

namespace basalt {
namespace {

namespace fs = std::filesystem;

// A file of the source tree: $BASALT_SOURCE_DIR, else the nearest ancestor of the working
// directory that has it, else relative to this file's compile-time path.
fs::path FindSourceFile(const fs::path& rel) {
  if (const char* env = std::getenv("BASALT_SOURCE_DIR")) {
    if (fs::exists(fs::path(env) / rel)) return fs::path(env) / rel;
  }
  std::error_code ec;
  for (fs::path dir = fs::current_path(ec); !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / rel)) return dir / rel;
    if (dir == dir.parent_path()) break;
  }
  fs::path from_source = fs::path(__FILE__).parent_path().parent_path().parent_path() / rel;
  if (fs::exists(from_source)) return from_source;
  return {};
}

fs::path FindConfFile() {
  return FindSourceFile(fs::path("conf") / "basalt.conf");
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/basalt-conf-XXXXXX";
    if (mkdtemp(tmpl) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, const std::string& content) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file) << content;
    return file;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Canonical(const Config& c, const std::string& name) {
  auto m = c.Match(name);
  return m.size() == 1 ? m[0].second : "<missing>";
}

// ---------------------------------------------------------------------------------------------
// The table

TEST(ConfigTest, EveryDefaultParses) {
  Config config;  // aborts on a bad default
  auto all = config.Match("*");
  size_t hidden = 0;
  for (const auto& key : Config::Keys()) hidden += key.hidden;
  EXPECT_EQ(hidden, 3u);  // Redis's test hooks
  EXPECT_EQ(all.size(), Config::Keys().size() + RedisAliases().size() - hidden);
  for (const auto& key : Config::Keys()) {
    EXPECT_TRUE(config.SetAtStartup(key.name, key.default_value).ok()) << key.name;
    EXPECT_EQ(config.Match(key.name).size(), 1u) << key.name;
  }
}

TEST(ConfigTest, AliasReadsAndWritesItsTarget) {
  Config config;
  EXPECT_TRUE(Config::IsKnown("LUA-TIME-LIMIT"));
  EXPECT_TRUE(config.SetLive("lua-time-limit", "250").ok());
  EXPECT_EQ(config.GetInt("busy-reply-threshold"), 250);
  EXPECT_EQ(config.busy_reply_threshold.load(), 250);
  auto alias = config.Match("lua-time-limit");
  ASSERT_EQ(alias.size(), 1u);
  EXPECT_EQ(alias[0], std::make_pair(std::string("lua-time-limit"), std::string("250")));
}

TEST(ConfigTest, KeyNamesAreUniqueLowercaseAndDocumented) {
  std::set<std::string> names;
  for (const auto& key : Config::Keys()) {
    std::string name = key.name;
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
    for (char c : name) EXPECT_FALSE(c >= 'A' && c <= 'Z') << name;
    EXPECT_STRNE(key.help, "") << name;
    if (key.kind == ConfigKind::kEnum) {
      EXPECT_STRNE(key.choices, "") << name;
    }
  }
}

TEST(ConfigTest, DefaultValuesAreReadable) {
  Config config;
  EXPECT_EQ(config.GetInt("port"), 6379);
  EXPECT_EQ(config.GetString("bind"), "127.0.0.1");
  EXPECT_TRUE(config.GetBool("protected-mode"));
  EXPECT_FALSE(config.GetBool("appendonly"));
  EXPECT_EQ(config.GetString("durability"), "lazy");
  EXPECT_EQ(config.GetInt("proto-max-bulk-len"), 512LL * 1024 * 1024);
  EXPECT_EQ(config.proto_max_bulk_len.load(), 512LL * 1024 * 1024);
  EXPECT_EQ(config.maxclients.load(), 10000);
  EXPECT_DOUBLE_EQ(config.GetDouble("rocksdb.block-cache-high-pri-ratio"), 0.5);
  EXPECT_EQ(Canonical(config, "rocksdb.block-size"), "16384");
}

// ---------------------------------------------------------------------------------------------
// SetAtStartup

TEST(ConfigTest, SetAtStartupRejectsUnknownKeys) {
  Config config;
  Status s = config.SetAtStartup("no-such-key", "1");
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_TRUE(config.SetAtStartup("", "1").IsNotFound());
}

TEST(ConfigTest, SetAtStartupAcceptsAnyCaseName) {
  Config config;
  EXPECT_TRUE(config.SetAtStartup("PORT", "7000").ok());
  EXPECT_EQ(config.GetInt("port"), 7000);
}

TEST(ConfigTest, SetAtStartupRejectsBadInts) {
  Config config;
  for (const char* bad : {"70000", "65536", "-1", "abc", "", "+1", "01", "1.5"}) {
    Status s = config.SetAtStartup("port", bad);
    EXPECT_EQ(s.code(), Status::kInvalidArgument) << bad;
  }
  EXPECT_EQ(config.GetInt("port"), 6379);  // unchanged
  EXPECT_TRUE(config.SetAtStartup("port", "65535").ok());
  EXPECT_TRUE(config.SetAtStartup("port", "0").ok());
  EXPECT_EQ(config.SetAtStartup("port", "70000").message(),
            "argument must be between 0 and 65535 inclusive");
}

TEST(ConfigTest, SetAtStartupRejectsBadEnums) {
  Config config;
  Status s = config.SetAtStartup("durability", "fast");
  EXPECT_EQ(s.code(), Status::kInvalidArgument);
  EXPECT_EQ(s.message(), "argument(s) must be one of the following: sync, lazy, nosync");
  EXPECT_EQ(config.GetString("durability"), "lazy");
  EXPECT_TRUE(config.SetAtStartup("durability", "SYNC").ok());
  EXPECT_EQ(config.GetString("durability"), "sync");
  EXPECT_FALSE(config.SetAtStartup("loglevel", "loud").ok());
  EXPECT_FALSE(config.SetAtStartup("rocksdb.compression", "snappy").ok());
}

TEST(ConfigTest, BoolsAcceptOnlyYesNo) {
  Config config;
  EXPECT_TRUE(config.SetAtStartup("appendonly", "yes").ok());
  EXPECT_TRUE(config.GetBool("appendonly"));
  EXPECT_TRUE(config.SetAtStartup("appendonly", "NO").ok());
  EXPECT_FALSE(config.GetBool("appendonly"));
  EXPECT_EQ(Canonical(config, "appendonly"), "no");
  for (const char* bad : {"true", "false", "1", "0", "on", "", "yess"}) {
    EXPECT_EQ(config.SetAtStartup("appendonly", bad).code(), Status::kInvalidArgument) << bad;
  }
}

TEST(ConfigTest, MemoryValuesParseUnitsAndRanges) {
  Config config;
  ASSERT_TRUE(config.SetAtStartup("proto-max-bulk-len", "2mb").ok());
  EXPECT_EQ(config.GetInt("proto-max-bulk-len"), 2 * 1024 * 1024);
  EXPECT_EQ(config.proto_max_bulk_len.load(), 2 * 1024 * 1024);  // published to the atomic
  EXPECT_EQ(Canonical(config, "proto-max-bulk-len"), "2097152");
  EXPECT_FALSE(config.SetAtStartup("proto-max-bulk-len", "1kb").ok());  // below the 1mb minimum
  EXPECT_FALSE(config.SetAtStartup("proto-max-bulk-len", "lots").ok());
  EXPECT_FALSE(config.SetAtStartup("rocksdb.block-size", "128mb").ok());
}

TEST(ConfigTest, DoublesMustBeBetweenZeroAndOne) {
  Config config;
  EXPECT_TRUE(config.SetAtStartup("rocksdb.blob-gc-age-cutoff", "0.5").ok());
  EXPECT_DOUBLE_EQ(config.GetDouble("rocksdb.blob-gc-age-cutoff"), 0.5);
  for (const char* bad : {"1.5", "-0.1", "nan", "inf", "x", ""}) {
    EXPECT_FALSE(config.SetAtStartup("rocksdb.blob-gc-age-cutoff", bad).ok()) << bad;
  }
}

// ---------------------------------------------------------------------------------------------
// SetLive and hooks

TEST(ConfigTest, SetLiveRefusesNonLiveKeys) {
  Config config;
  for (const auto& key : Config::Keys()) {
    if (key.live || key.basalt_only) continue;
    Status s = config.SetLive(key.name, key.default_value);
    EXPECT_EQ(s.code(), Status::kInvalidArgument) << key.name;
    EXPECT_EQ(s.message(), "can't set immutable config") << key.name;
  }
  EXPECT_FALSE(config.SetLive("databases", "8").ok());
  EXPECT_EQ(config.GetInt("databases"), 16);
  EXPECT_TRUE(config.SetLive("no-such-key", "1").IsNotFound());
}

// A tool that writes back all of CONFIG GET * knows Redis's immutable keys but not Basalt's.
TEST(ConfigTest, NonLiveBasaltKeysAcceptOnlyTheirCurrentValue) {
  Config config;
  int seen = 0;
  for (const auto& key : Config::Keys()) {
    if (key.live || !key.basalt_only) continue;
    seen++;
    std::string current = config.GetString(key.name);
    EXPECT_TRUE(config.SetLive(key.name, current).ok()) << key.name;
    EXPECT_TRUE(config.Validate(key.name, current).ok()) << key.name;
    EXPECT_EQ(config.GetString(key.name), current) << key.name;
  }
  EXPECT_GE(seen, 10);
  ASSERT_TRUE(config.SetAtStartup("rocksdb.block-size", "32kb").ok());
  // The same value written differently.
  EXPECT_TRUE(config.SetLive("rocksdb.block-size", "32768").ok());
  EXPECT_EQ(config.SetLive("rocksdb.block-size", "16kb").message(), "can't set immutable config");
  EXPECT_EQ(config.Validate("workers", "7").message(), "can't set immutable config");
  EXPECT_EQ(config.GetInt("rocksdb.block-size"), 32768);
  std::string bad;
  Status s = config.SetLiveMany({{"maxclients", "5"}, {"workers", "9"}}, true, &bad);
  EXPECT_EQ(s.message(), "can't set immutable config");
  EXPECT_EQ(bad, "workers");
  EXPECT_EQ(config.GetInt("maxclients"), 10000);
  EXPECT_EQ(config.SetLive("rocksdb.memtable", "nonsense").code(), Status::kInvalidArgument);
}

TEST(ConfigTest, SetLiveChangesLiveKeys) {
  Config config;
  ASSERT_TRUE(config.SetLive("maxclients", "50").ok());
  EXPECT_EQ(config.GetInt("maxclients"), 50);
  EXPECT_EQ(config.maxclients.load(), 50);
  ASSERT_TRUE(config.SetLive("slowlog-log-slower-than", "-1").ok());
  EXPECT_EQ(config.slowlog_slower_than.load(), -1);
  EXPECT_FALSE(config.SetLive("maxclients", "0").ok());
  EXPECT_EQ(config.GetInt("maxclients"), 50);
}

TEST(ConfigTest, ValidateChecksWithoutApplying) {
  Config config;
  EXPECT_TRUE(config.Validate("maxclients", "77").ok());
  EXPECT_EQ(config.GetInt("maxclients"), 10000);  // not applied
  EXPECT_EQ(config.Validate("maxclients", "0").code(), Status::kInvalidArgument);
  EXPECT_EQ(config.Validate("databases", "8").message(), "can't set immutable config");
  EXPECT_TRUE(config.Validate("no-such-key", "1").IsNotFound());
}

TEST(ConfigTest, ApplyHookRunsForLiveSetsAndCanRefuse) {
  Config config;
  std::vector<std::pair<std::string, std::string>> seen;
  config.AddApplyHook("slowlog-", [&](const std::string& name, const std::string& value) {
    seen.emplace_back(name, value);
    return value == "7" ? Status::InvalidArgument("refused") : Status::OK();
  });
  ASSERT_TRUE(config.SetLive("SLOWLOG-MAX-LEN", "5").ok());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], (std::pair<std::string, std::string>("slowlog-max-len", "5")));
  Status s = config.SetLive("slowlog-max-len", "7");
  EXPECT_EQ(s.message(), "refused");
  EXPECT_EQ(config.GetInt("slowlog-max-len"), 5);       // refused value not committed
  ASSERT_TRUE(config.SetLive("maxclients", "9").ok());  // other prefix: hook not called
  EXPECT_EQ(seen.size(), 2u);
  ASSERT_TRUE(config.SetAtStartup("slowlog-max-len", "7").ok());  // start-up: no hooks
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_EQ(config.GetInt("slowlog-max-len"), 7);
}

// ---------------------------------------------------------------------------------------------
// Match (CONFIG GET)

TEST(ConfigTest, MatchGlob) {
  Config config;
  auto port = config.Match("port");
  ASSERT_EQ(port.size(), 1u);
  EXPECT_EQ(port[0], (std::pair<std::string, std::string>("port", "6379")));
  EXPECT_EQ(config.Match("PORT").size(), 1u);  // case-insensitive like CONFIG GET
  EXPECT_TRUE(config.Match("nothing*").empty());

  std::set<std::string> blob;
  for (const auto& [name, value] : config.Match("rocksdb.blob*")) blob.insert(name);
  EXPECT_EQ(blob, (std::set<std::string>{"rocksdb.blob-file-size", "rocksdb.blob-gc-age-cutoff",
                                         "rocksdb.blob-gc-force-threshold",
                                         "rocksdb.blob-gc-garbage-ratio"}));
  std::set<std::string> slowlog;
  for (const auto& [name, value] : config.Match("slowlog-*")) slowlog.insert(name);
  EXPECT_EQ(slowlog, (std::set<std::string>{"slowlog-log-slower-than", "slowlog-max-len"}));
  for (const auto& [name, value] : config.Match("*max*"))
    EXPECT_NE(name.find("max"), std::string::npos);
  EXPECT_EQ(config.Match("?ort").size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// LoadFile

TEST(ConfigTest, LoadFileAppliesValues) {
  TempDir tmp;
  std::string file = tmp.Write("ok.conf",
                               "# comment\n"
                               "\n"
                               "port 7001\n"
                               "   maxclients   42   \n"
                               "requirepass \"a secret\"\n"
                               "logfile ''\n"
                               "save\n"
                               "DURABILITY nosync\n");
  Config config;
  Status s = config.LoadFile(file);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(config.GetInt("port"), 7001);
  EXPECT_EQ(config.GetInt("maxclients"), 42);
  EXPECT_EQ(config.GetString("requirepass"), "a secret");
  EXPECT_EQ(config.GetString("logfile"), "");
  EXPECT_EQ(config.GetString("save"), "");
  EXPECT_EQ(config.GetString("durability"), "nosync");
  EXPECT_EQ(config.file_path(), file);
}

TEST(ConfigTest, LoadFileReportsFileAndLineForUnknownKey) {
  TempDir tmp;
  std::string file = tmp.Write("unknown.conf", "port 7001\n# fine\nnosuchkey 1\nport 7002\n");
  Config config;
  Status s = config.LoadFile(file);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), file + ":3: unknown config key 'nosuchkey'");
}

TEST(ConfigTest, LoadFileReportsFileAndLineForBadValue) {
  TempDir tmp;
  std::string file = tmp.Write("bad.conf", "bind 0.0.0.0\nport 70000\n");
  Config config;
  Status s = config.LoadFile(file);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind(file + ":2: bad value for 'port': ", 0), 0u) << s.message();
  EXPECT_NE(s.message().find("between 0 and 65535"), std::string::npos) << s.message();
}

TEST(ConfigTest, LoadFileRejectsMalformedLines) {
  TempDir tmp;
  Config config;
  std::string extra = tmp.Write("extra.conf", "port 1 2\n");
  EXPECT_EQ(config.LoadFile(extra).message(),
            extra + ":1: wrong number of arguments for 'port': expected one value, got 2");
  std::string quotes = tmp.Write("quotes.conf", "\nrequirepass \"open\n");
  EXPECT_EQ(config.LoadFile(quotes).message(), quotes + ":2: unbalanced quotes");
  EXPECT_EQ(config.LoadFile(tmp.path() + "/missing.conf").code(), Status::kIOError);
}

// client-output-buffer-limit: several words per line, several lines, each amending the last.
TEST(ConfigTest, LoadFileAmendsOutputBufferLimitsClassByClass) {
  TempDir tmp;
  std::string file = tmp.Write("obuf.conf",
                               "client-output-buffer-limit pubsub 1mb 512kb 10\n"
                               "client-output-buffer-limit replica 1 2 3 normal 4 5 6\n");
  Config config;
  Status s = config.LoadFile(file);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(config.GetString("client-output-buffer-limit"),
            "normal 4 5 6 slave 1 2 3 pubsub 1048576 524288 10");
  OutputBufferLimit pubsub = config.output_buffer_limit(ClientClass::kPubsub);
  EXPECT_EQ(pubsub.hard_bytes, 1048576);
  EXPECT_EQ(pubsub.soft_bytes, 524288);
  EXPECT_EQ(pubsub.soft_seconds, 10);
  std::string bad = tmp.Write("bad-obuf.conf", "client-output-buffer-limit pubsub 1mb 0\n");
  EXPECT_EQ(Config().LoadFile(bad).message(),
            bad +
                ":1: bad value for 'client-output-buffer-limit': Wrong number of arguments in "
                "buffer limit configuration.");
}

TEST(ConfigTest, OutputBufferLimitsSetLiveAmendsAndRewriteReloads) {
  TempDir tmp;
  std::string file = tmp.Write("rw-obuf.conf", "port 7001\n");
  Config config;
  ASSERT_TRUE(config.LoadFile(file).ok());
  EXPECT_EQ(config.output_buffer_limit(ClientClass::kReplica).hard_bytes, 256LL << 20);
  ASSERT_TRUE(config.SetLive("client-output-buffer-limit", "pubsub 0 0 0").ok());
  EXPECT_FALSE(config.output_buffer_limit(ClientClass::kPubsub).enabled());
  EXPECT_FALSE(config.SetLive("client-output-buffer-limit", "master 1 1 1").ok());
  EXPECT_EQ(config.GetString("client-output-buffer-limit"),
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 0 0 0");
  ASSERT_TRUE(config.Rewrite().ok());
  Config reloaded;
  ASSERT_TRUE(reloaded.LoadFile(file).ok());
  EXPECT_EQ(reloaded.GetString("client-output-buffer-limit"),
            config.GetString("client-output-buffer-limit"));
}

TEST(ConfigTest, RewriteKeepsCommentsAndWritesCurrentValues) {
  TempDir tmp;
  std::string file = tmp.Write("rw.conf", "# my settings\nport 7001\nmaxclients 42\n");
  Config config;
  ASSERT_TRUE(config.LoadFile(file).ok());
  ASSERT_TRUE(config.SetLive("maxclients", "43").ok());
  ASSERT_TRUE(config.SetLive("requirepass", "two words").ok());
  ASSERT_TRUE(config.Rewrite().ok());
  std::ifstream in(file);
  std::stringstream content;
  content << in.rdbuf();
  EXPECT_EQ(content.str(),
            "# my settings\nport 7001\nmaxclients 43\n# Generated by CONFIG REWRITE\n"
            "requirepass \"two words\"\n");
  Config reloaded;
  ASSERT_TRUE(reloaded.LoadFile(file).ok());
  EXPECT_EQ(reloaded.GetString("requirepass"), "two words");
  EXPECT_EQ(reloaded.GetInt("maxclients"), 43);
}

// Whatever a value holds (tabs, quotes, backslashes, control bytes), CONFIG REWRITE writes it so
// that the server starts again from its own file with the same value.
TEST(ConfigTest, RewriteOutputReloadsForAnyValue) {
  TempDir tmp;
  for (const char* value : {"a\tb", "a \"b", "it's \"quoted\"", "back\\slash", "\x01\x7f#", ""}) {
    std::string file = tmp.Write("any.conf", "port 7001\n");
    Config config;
    ASSERT_TRUE(config.LoadFile(file).ok());
    ASSERT_TRUE(config.SetLive("requirepass", value).ok());
    ASSERT_TRUE(config.Rewrite().ok());
    Config reloaded;
    Status s = reloaded.LoadFile(file);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(reloaded.GetString("requirepass"), value);
  }
}

// ---------------------------------------------------------------------------------------------
// conf/basalt.conf

TEST(ConfigTest, EveryKeyIsInShippedConfFile) {
  fs::path conf = FindConfFile();
  ASSERT_FALSE(conf.empty()) << "conf/basalt.conf not found; set BASALT_SOURCE_DIR";
  std::ifstream in(conf);
  ASSERT_TRUE(in.good()) << conf;
  std::map<std::string, std::string> lines;  // name -> rest of the line
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    lines[line.substr(0, space)] = line.substr(space + 1);
  }
  // Keys with an effect are documented there; the Redis keys accepted without effect would
  // drown them, so docs/configuration.md lists those (checked below).
  for (const auto& key : Config::Keys()) {
    if (key.no_effect) continue;
    auto it = lines.find(key.name);
    EXPECT_NE(it, lines.end()) << "conf/basalt.conf lacks a '" << key.name << " value' line";
    if (it != lines.end()) {
      EXPECT_FALSE(it->second.empty()) << key.name;
    }
  }
  for (const auto& [name, value] : lines) {
    EXPECT_EQ(Config().Match(name).size(), 1u) << "conf/basalt.conf has unknown key " << name;
  }
}

TEST(ConfigTest, ShippedConfFileLoadsAndStatesTheDefaults) {
  fs::path conf = FindConfFile();
  ASSERT_FALSE(conf.empty());
  Config loaded;
  Status s = loaded.LoadFile(conf.string());
  ASSERT_TRUE(s.ok()) << s.message();
  Config defaults;
  for (const auto& key : Config::Keys()) {
    EXPECT_EQ(Canonical(loaded, key.name), Canonical(defaults, key.name)) << key.name;
  }
}

// docs/configuration.md names every Redis key accepted without effect.
TEST(ConfigTest, EveryKeyWithoutEffectIsInTheDocs) {
  fs::path doc = FindSourceFile(fs::path("docs") / "configuration.md");
  ASSERT_FALSE(doc.empty());
  std::string text = ReadFile(doc.string());
  for (const auto& key : Config::Keys()) {
    if (!key.no_effect) continue;
    EXPECT_NE(text.find(std::string("`") + key.name + "`"), std::string::npos)
        << "docs/configuration.md does not name `" << key.name << "`";
  }
}

// ---------------------------------------------------------------------------------------------
// Redis's directive syntax

TEST(ConfigTest, MultiArgumentLines) {
  TempDir tmp;
  std::string file = tmp.Write("multi.conf",
                               "bind 127.0.0.1 -::1\n"
                               "save 900 1\n"
                               "save 300 10\n"
                               "slaveof example.org 6380\n"
                               "client-output-buffer-limit normal 0 0 0\n"
                               "client-output-buffer-limit replica 1mb 1mb 1 pubsub 2mb 1mb 2\n"
                               "oom-score-adj-values 0 100 900\n"
                               "shutdown-on-sigterm NOW save\n");
  Config config;
  Status s = config.LoadFile(file);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(config.GetString("bind"), "127.0.0.1 -::1");
  EXPECT_EQ(config.GetString("save"), "900 1 300 10");  // later save lines add to the first
  EXPECT_EQ(config.GetString("replicaof"), "example.org 6380");
  EXPECT_EQ(Canonical(config, "slaveof"), "example.org 6380");
  EXPECT_EQ(config.GetString("client-output-buffer-limit"),
            "normal 0 0 0 slave 1048576 1048576 1 pubsub 2097152 1048576 2");
  EXPECT_EQ(config.GetString("oom-score-adj-values"), "0 100 900");
  EXPECT_EQ(config.GetString("shutdown-on-sigterm"), "save now");
  // One quoted argument holding the words means the same (redis-server's --bind "a b").
  ASSERT_TRUE(config.ApplyDirective({"bind", "127.0.0.1 ::1"}, "command line: ").ok());
  EXPECT_EQ(config.GetString("bind"), "127.0.0.1 ::1");
  ASSERT_TRUE(config.ApplyDirective({"save", ""}, "command line: ").ok());
  EXPECT_EQ(config.GetString("save"), "");
  ASSERT_TRUE(config.ApplyDirective({"replicaof", "no", "one"}, "x: ").ok());
  EXPECT_EQ(config.GetString("replicaof"), "");
}

TEST(ConfigTest, MultiArgumentValidation) {
  Config config;
  EXPECT_EQ(config.SetAtStartup("save", "900").message(), "Invalid save parameters");
  EXPECT_EQ(config.SetAtStartup("save", "0 1").message(), "Invalid save parameters");
  EXPECT_EQ(config.SetAtStartup("save", "10 x").message(), "Invalid save parameters");
  EXPECT_EQ(config.SetAtStartup("replicaof", "host").message(), "wrong number of arguments");
  EXPECT_EQ(config.SetAtStartup("replicaof", "host 70000").message(), "Invalid master port");
  EXPECT_EQ(config.SetAtStartup("oom-score-adj-values", "0 1 3000").message(),
            "Invalid oom-score-adj-values, elements must be between -2000 and 2000.");
  EXPECT_EQ(config.SetAtStartup("shutdown-on-sigint", "save nosave").message(),
            "shutdown options SAVE and NOSAVE can't be used simultaneously");
  EXPECT_EQ(config.SetAtStartup("latency-tracking-info-percentiles", "50 101").message(),
            "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
  ASSERT_TRUE(config.SetAtStartup("latency-tracking-info-percentiles", "50.50 99").ok());
  EXPECT_EQ(config.GetString("latency-tracking-info-percentiles"), "50.5 99");
  EXPECT_EQ(config.GetString("save"), "3600 1 300 100 60 10000");  // nothing applied
}

TEST(ConfigTest, RedisValueKinds) {
  Config config;
  ASSERT_TRUE(config.SetAtStartup("maxmemory-clients", "10%").ok());
  EXPECT_EQ(config.GetString("maxmemory-clients"), "10%");
  ASSERT_TRUE(config.SetAtStartup("maxmemory-clients", "1mb").ok());
  EXPECT_EQ(config.GetString("maxmemory-clients"), "1048576");
  EXPECT_EQ(config.SetAtStartup("maxmemory-clients", "x%").message(),
            "argument must be a memory or percent value");
  EXPECT_EQ(config.SetAtStartup("maxmemory-clients", "101%").message(),
            "percentage argument must be less or equal to 100");
  EXPECT_EQ(config.SetAtStartup("maxmemory-clients", "-5").message(),
            "argument must be a memory or percent value");
  ASSERT_TRUE(config.SetAtStartup("unixsocketperm", "0700").ok());
  EXPECT_EQ(config.GetString("unixsocketperm"), "700");
  EXPECT_FALSE(config.SetAtStartup("unixsocketperm", "0800").ok());
  EXPECT_FALSE(config.SetAtStartup("unixsocketperm", "1000").ok());
  EXPECT_EQ(config.SetAtStartup("maxmemory-policy", "lru").message(),
            "argument(s) must be one of the following: volatile-lru, volatile-lfu, "
            "volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction");
  ASSERT_TRUE(config.SetAtStartup("oom-score-adj", "Relative").ok());
  EXPECT_EQ(config.GetString("oom-score-adj"), "yes");  // Redis shows an enum's first name
  EXPECT_EQ(config.SetAtStartup("oom-score-adj", "x").message(),
            "argument(s) must be one of the following: no, yes, relative, absolute");
  ASSERT_TRUE(config.SetAtStartup("hz", "1000").ok());
  EXPECT_EQ(config.GetInt("hz"), 500);                         // clamped as Redis clamps it
  ASSERT_TRUE(config.SetAtStartup("maxmemory", "0777").ok());  // memtoull's leading zeros
  EXPECT_EQ(config.GetInt("maxmemory"), 777);
  ASSERT_TRUE(config.SetAtStartup("maxmemory", "").ok());
  EXPECT_EQ(config.GetInt("maxmemory"), 0);
  EXPECT_EQ(config.SetAtStartup("repl-backlog-size", "").message(),
            "argument must be between 1 and 9223372036854775807 inclusive");
  ASSERT_TRUE(config.SetAtStartup("hash-max-ziplist-value", "1kb").ok());
  EXPECT_EQ(config.GetString("hash-max-listpack-value"), "1024");
  EXPECT_EQ(config.SetAtStartup("list-max-listpack-size", "x").message(),
            "argument couldn't be parsed into an integer");
}

TEST(ConfigTest, NotifyKeyspaceEventsKeepsRedisLetters) {
  Config config;
  EXPECT_EQ(config.notify_keyspace_events(), 0);
  ASSERT_TRUE(config.SetLive("notify-keyspace-events", "Ex").ok());
  EXPECT_EQ(config.GetString("notify-keyspace-events"), "xE");  // Redis's order
  EXPECT_EQ(config.notify_keyspace_events(), kNotifyExpired | kNotifyKeyevent);
  ASSERT_TRUE(config.SetLive("notify-keyspace-events", "KEg$lshzxetd").ok());
  EXPECT_EQ(config.GetString("notify-keyspace-events"), "AKE");
  ASSERT_TRUE(config.SetLive("notify-keyspace-events", "Km").ok());
  EXPECT_EQ(config.notify_keyspace_events(), kNotifyKeyspace | kNotifyKeyMiss);
  EXPECT_EQ(config.SetLive("notify-keyspace-events", "KQ").message(),
            "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
  EXPECT_EQ(config.GetString("notify-keyspace-events"), "Km");
}

TEST(ConfigTest, AppendfsyncIsDurability) {
  Config config;
  std::vector<std::string> applied;
  config.AddApplyHook("durability", [&](const std::string&, const std::string& value) {
    applied.push_back(value);
    return Status::OK();
  });
  ASSERT_TRUE(config.SetLive("appendfsync", "always").ok());
  EXPECT_EQ(config.GetString("durability"), "sync");
  EXPECT_EQ(applied, std::vector<std::string>{"sync"});  // the durability hook saw it
  ASSERT_TRUE(config.SetLive("durability", "nosync").ok());
  EXPECT_EQ(config.GetString("appendfsync"), "no");
  ASSERT_TRUE(config.SetAtStartup("appendfsync", "everysec").ok());
  EXPECT_EQ(config.GetString("durability"), "lazy");
}

TEST(ConfigTest, DeprecatedAndUnknownDirectives) {
  TempDir tmp;
  Config config;
  std::string old = tmp.Write("old.conf",
                              "list-max-ziplist-entries 512\nlua-replicate-commands yes\n"
                              "hash-max-ziplist-entries 100\nvm-enabled no\n");
  ASSERT_TRUE(config.LoadFile(old).ok());
  EXPECT_EQ(config.GetInt("hash-max-listpack-entries"), 100);
  EXPECT_EQ(config.no_effect_keys_set(),
            (std::vector<std::string>{"hash-max-listpack-entries", "vm-enabled (obsolete)"}));
  EXPECT_TRUE(config.Match("vm-enabled").empty());
  std::string module = tmp.Write("module.conf", "port 1\nloadmodule /x.so\n");
  EXPECT_EQ(Config().LoadFile(module).message(), module + ":2: Basalt does not load Redis modules");
}

TEST(ConfigTest, UserAndRenameDirectivesAreRecorded) {
  TempDir tmp;
  std::string file =
      tmp.Write("users.conf", "user alice on >pw ~* +@all\nrename-command FLUSHALL \"\"\n");
  Config config;
  ASSERT_TRUE(config.LoadFile(file).ok());
  ASSERT_EQ(config.user_directives().size(), 1u);
  EXPECT_EQ(config.user_directives()[0].words,
            (std::vector<std::string>{"alice", "on", ">pw", "~*", "+@all"}));
  ASSERT_EQ(config.command_renames().size(), 1u);
  EXPECT_EQ(config.command_renames()[0].new_name, "");
}

TEST(ConfigTest, IncludeNestedRelativeAndGlob) {
  TempDir tmp;
  fs::create_directories(tmp.path() + "/conf.d");
  tmp.Write("conf.d/a.conf", "maxclients 11\n");
  tmp.Write("conf.d/b.conf", "maxclients 12\ninclude " + tmp.path() + "/leaf.conf\n");
  tmp.Write("leaf.conf", "timeout 5\n");
  std::string main = tmp.Write(
      "main.conf", "port 7001\ninclude " + tmp.path() + "/conf.d/*.conf\nslowlog-max-len 9\n");
  Config config;
  Status s = config.LoadFile(main);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(config.GetInt("maxclients"), 12);  // files of a pattern in name order
  EXPECT_EQ(config.GetInt("timeout"), 5);
  EXPECT_EQ(config.GetInt("slowlog-max-len"), 9);
  EXPECT_EQ(config.file_path(), main);  // CONFIG REWRITE writes the main file

  // A relative path is relative to the working directory, as in Redis.
  fs::path cwd = fs::current_path();
  fs::current_path(tmp.path());
  Config relative;
  std::string rel = tmp.Write("rel.conf", "include leaf.conf\n");
  Status r = relative.LoadFile(rel);
  fs::current_path(cwd);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(relative.GetInt("timeout"), 5);

  std::string loop = tmp.Write("loop.conf", "include " + tmp.path() + "/loop2.conf\n");
  tmp.Write("loop2.conf", "port 1\ninclude " + loop + "\n");
  Status l = Config().LoadFile(loop);
  EXPECT_EQ(l.message(), tmp.path() + "/loop2.conf:2: '" + loop + "' includes itself");
  std::string missing = tmp.Write("missing.conf", "\ninclude /nonexistent/x.conf\n");
  EXPECT_EQ(Config().LoadFile(missing).message(),
            missing + ":2: can't open included file '/nonexistent/x.conf'");
  std::string bad = tmp.Write("bad-inner.conf", "include " + tmp.path() + "/inner.conf\n");
  tmp.Write("inner.conf", "port 1\nport x\n");
  EXPECT_EQ(Config().LoadFile(bad).message().rfind(tmp.path() + "/inner.conf:2: bad value", 0), 0u);
}

// ---------------------------------------------------------------------------------------------
// CONFIG SET with several pairs

TEST(ConfigTest, SetLiveManyIsAllOrNothing) {
  Config config;
  std::string bad;
  Status s = config.SetLiveMany({{"maxclients", "5"}, {"timeout", "x"}}, true, &bad);
  EXPECT_EQ(s.message(), "argument couldn't be parsed into an integer");
  EXPECT_EQ(bad, "timeout");
  EXPECT_EQ(config.GetInt("maxclients"), 10000);
  s = config.SetLiveMany({{"maxclients", "5"}, {"MAXCLIENTS", "6"}}, true, &bad);
  EXPECT_EQ(s.message(), "duplicate parameter");
  EXPECT_EQ(bad, "MAXCLIENTS");
  s = config.SetLiveMany({{"maxclients", "5"}, {"nosuch", "6"}}, true, &bad);
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_EQ(bad, "nosuch");
  s = config.SetLiveMany({{"maxclients", "5"}, {"daemonize", "yes"}}, true, &bad);
  EXPECT_EQ(s.message(), "can't set immutable config");
  EXPECT_EQ(bad, "daemonize");
  s = config.SetLiveMany({{"dbfilename", "x.rdb"}}, true, &bad);
  EXPECT_EQ(s.message(), "can't set protected config");
  EXPECT_EQ(config.GetInt("maxclients"), 10000);
  // An alias and its key are two names to Redis: both may be given, the last one wins.
  s = config.SetLiveMany({{"hash-max-ziplist-value", "1"}, {"hash-max-listpack-value", "2"}}, true,
                         &bad);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(config.GetInt("hash-max-listpack-value"), 2);
  ASSERT_TRUE(config.SetLiveMany({{"maxclients", "5"}, {"timeout", "7"}}, true, &bad).ok());
  EXPECT_EQ(config.GetInt("maxclients"), 5);
  EXPECT_EQ(config.GetInt("timeout"), 7);
}

TEST(ConfigTest, SetLiveManyUndoesHooksWhenOneRefuses) {
  Config config;
  std::vector<std::string> calls;
  config.AddApplyHook("maxclients", [&](const std::string&, const std::string& value) {
    calls.push_back("maxclients=" + value);
    return Status::OK();
  });
  config.AddApplyHook("timeout", [&](const std::string&, const std::string& value) {
    calls.push_back("timeout=" + value);
    return Status::InvalidArgument("no");
  });
  std::string bad;
  Status s = config.SetLiveMany({{"maxclients", "5"}, {"timeout", "7"}}, true, &bad);
  EXPECT_EQ(s.message(), "no");
  EXPECT_EQ(bad, "timeout");
  EXPECT_EQ(calls, (std::vector<std::string>{"maxclients=5", "timeout=7", "maxclients=10000"}));
  EXPECT_EQ(config.GetInt("maxclients"), 10000);
}

TEST(ConfigTest, ProtectedKeysFollowEnableProtectedConfigs) {
  std::string bad;
  Config local;
  ASSERT_TRUE(local.SetAtStartup("enable-protected-configs", "local").ok());
  EXPECT_FALSE(local.SetLiveMany({{"dbfilename", "a.rdb"}}, false, &bad).ok());
  EXPECT_TRUE(local.SetLiveMany({{"dbfilename", "a.rdb"}}, true, &bad).ok());
  Config yes;
  ASSERT_TRUE(yes.SetAtStartup("enable-protected-configs", "yes").ok());
  EXPECT_TRUE(yes.SetLiveMany({{"dbfilename", "b.rdb"}}, false, &bad).ok());
  EXPECT_EQ(yes.GetString("dbfilename"), "b.rdb");
}

// ---------------------------------------------------------------------------------------------
// CONFIG REWRITE in Redis's syntax

TEST(ConfigTest, RewriteWritesRedisSyntaxInPlace) {
  TempDir tmp;
  std::string file = tmp.Write("redis.conf",
                               "# top\n"
                               "bind 127.0.0.1\n"
                               "save 900 1\n"
                               "save 300 10\n"
                               "include " +
                                   tmp.path() +
                                   "/empty.conf\n"
                                   "rename-command KEYS \"\"\n"
                                   "client-output-buffer-limit normal 0 0 0\n"
                                   "hash-max-ziplist-value 64\n");
  tmp.Write("empty.conf", "# nothing\n");
  Config config;
  ASSERT_TRUE(config.LoadFile(file).ok());
  ASSERT_TRUE(config.SetAtStartup("bind", "127.0.0.1 -::1").ok());
  ASSERT_TRUE(config.SetLive("save", "60 5").ok());
  ASSERT_TRUE(config.SetLive("client-output-buffer-limit", "pubsub 64mb 16mb 90").ok());
  ASSERT_TRUE(config.SetLive("hash-max-listpack-value", "1kb").ok());
  ASSERT_TRUE(config.SetAtStartup("replicaof", "10.0.0.1 6380").ok());
  ASSERT_TRUE(config.SetLive("maxmemory", "2gb").ok());
  ASSERT_TRUE(config.Rewrite().ok());
  EXPECT_EQ(ReadFile(file),
            "# top\n"
            "bind 127.0.0.1 -::1\n"
            "save 60 5\n"
            "include " +
                tmp.path() +
                "/empty.conf\n"
                "rename-command KEYS \"\"\n"
                "client-output-buffer-limit normal 0 0 0\n"
                "hash-max-listpack-value 1kb\n"
                "# Generated by CONFIG REWRITE\n"
                "client-output-buffer-limit pubsub 64mb 16mb 90\n"
                "maxmemory 2gb\n"
                "replicaof 10.0.0.1 6380\n");
  Config reloaded;
  ASSERT_TRUE(reloaded.LoadFile(file).ok());
  for (const auto& key : Config::Keys()) {
    EXPECT_EQ(Canonical(reloaded, key.name), Canonical(config, key.name)) << key.name;
  }
  // A second rewrite of an unchanged configuration changes nothing.
  std::string once = ReadFile(file);
  ASSERT_TRUE(reloaded.Rewrite().ok());
  EXPECT_EQ(ReadFile(file), once);
  // Back to a master: the replicaof line goes.
  ASSERT_TRUE(reloaded.SetAtStartup("replicaof", "").ok());
  ASSERT_TRUE(reloaded.Rewrite().ok());
  EXPECT_EQ(ReadFile(file).find("replicaof"), std::string::npos);
}

}  // namespace
TEST(ConfigTest, NotifyClassLettersParseAndFormatAsRedis) {
  EXPECT_EQ(ParseNotifyFlags(""), 0);
  EXPECT_EQ(ParseNotifyFlags("KE"), kNotifyKeyspace | kNotifyKeyevent);
  EXPECT_EQ(ParseNotifyFlags("A"), kNotifyAll);
  EXPECT_EQ(ParseNotifyFlags("g$lshzxetd"), kNotifyAll);
  EXPECT_EQ(ParseNotifyFlags("mn"), kNotifyKeyMiss | kNotifyNew);
  EXPECT_EQ(ParseNotifyFlags("KEq"), -1);
  EXPECT_EQ(ParseNotifyFlags("k"), -1);  // letters are case-sensitive
  EXPECT_EQ(ParseNotifyFlags(" "), -1);
  EXPECT_EQ(FormatNotifyFlags(ParseNotifyFlags("KEA")), "AKE");
  EXPECT_EQ(FormatNotifyFlags(ParseNotifyFlags("EKl")), "lKE");
  EXPECT_EQ(FormatNotifyFlags(ParseNotifyFlags("mxg")), "gxm");
  EXPECT_EQ(FormatNotifyFlags(ParseNotifyFlags("nK")), "nK");
  // Redis's text drops n beside A; Basalt keeps it so that the value reads back as set.
  EXPECT_EQ(FormatNotifyFlags(ParseNotifyFlags("AnE")), "AnE");
  EXPECT_EQ(FormatNotifyFlags(0), "");
}

}  // namespace basalt
