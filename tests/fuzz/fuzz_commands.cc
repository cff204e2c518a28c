// libFuzzer target: argument vectors through the command table and dispatcher, over a real
// RocksDB in a temporary directory.
//
// The input is a RESP (or inline) stream; each command it holds runs through Dispatch() exactly
// as a connection would run it (consecutive writes in one write group, as in a pipeline), with a
// fresh session per input and empty databases at the start of each input, so every crash reproduces
// from its input alone. (The databases are emptied by deleting the keys the last input left, not by
// FLUSHALL: its range tombstones pile up in the memtable and RocksDB 7.8 re-fragments them on every
// read, which slowed the run to a crawl.) What a connection would do around a command is done here
// too: a blocking command that parks is released at once (as if its timeout passed), QUIT/protocol
// errors/CLIENT KILL end the input, and SHUTDOWN only records the request.
//
// Not run: CONFIG SET and CONFIG REWRITE (they would change the fuzzer's own environment: a
// `durability sync` makes every later input fsync, larger size limits let one input allocate
// gigabytes), SAVE, BGSAVE, BGREWRITEAOF and COMPACT (disk flushes that find no bugs, only slow
// the run), BACKUP and IMPORT (they create directories or read files anywhere), and
// the EVAL family: a Lua script may loop forever by design (that is what SCRIPT KILL is for),
// which libFuzzer would report as a hang; SCRIPT LOAD/EXISTS/FLUSH do run. Nor REPLICAOF,
// SLAVEOF, REPLSYNC, SYNC, PSYNC and MIGRATE: they connect to other hosts or take over the
// socket.
// The limits are small (proto-max-bulk-len and max-reply-size 1mb) so that an input cannot
// make the fuzzer allocate more than the sanitizers allow.
#include <glog/logging.h>
#include <rocksdb/db.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "commands/command_table.h"
#include "commands/dispatcher.h"
#include "commands/info.h"
#include "commands/saves.h"
#include "commands/server_state.h"
#include "commands/transactions.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "config/config.h"
#include "net/resp_reader.h"
#include "repl/replication.h"
#include "scripting/scripting.h"
#include "types/expirer.h"
#include "types/keyspace.h"
#include "types/metadata.h"

namespace {

using namespace basalt;

constexpr int kMaxCommandsPerInput = 64;
constexpr size_t kMaxHeldReplies = 64 * 1024;
constexpr int kCompactEvery = 2000;  // inputs; drops the tombstones of the keys reset deletes

class FuzzServer {
 public:
  FuzzServer() {
    char tmpl[] = "/tmp/basalt-fuzz-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) abort();
    dir_ = tmpl;
    Must(config_.SetAtStartup("dir", dir_));
    Must(config_.SetAtStartup("durability", "nosync"));
    Must(config_.SetAtStartup("proto-max-bulk-len", "1mb"));
    Must(config_.SetAtStartup("max-reply-size", "1mb"));
    Must(config_.SetAtStartup("rocksdb.block-cache-size", "8mb"));
    Must(config_.SetAtStartup("rocksdb.write-buffer-size", "4mb"));
    Must(config_.SetAtStartup("loglevel", "warning"));
    auto ks = Keyspace::Open(&config_);
    if (!ks.ok()) {
      fprintf(stderr, "fuzz_commands: %s\n", ks.status().message().c_str());
      abort();
    }
    keyspace_ = std::move(*ks);
    expirer_ = std::make_unique<ActiveExpirer>(keyspace_.get(), &config_);
    replication_ = std::make_unique<ReplicationManager>(keyspace_.get(), &config_, expirer_.get());
    state_.replication = replication_.get();
    failover_ = std::make_unique<Failover>(replication_.get(), &state_.pause, &config_);
    state_.failover = failover_.get();
    state_.pubsub.set_config(&config_);
    state_.monitors.set_config(&config_);
    state_.config = &config_;
    state_.keyspace = keyspace_.get();
    state_.expirer = expirer_.get();
    state_.start_time_ms = UnixMillis();
    state_.request_shutdown = [] {};
    Must(InstallStatsConfigHooks(config_, state_));
    scripting_ = std::make_unique<Scripting>(&state_);
    Must(scripting_->LoadPersisted());
    state_.scripting = scripting_.get();
    saves_ = std::make_unique<Saves>(&state_);
    state_.saves = saves_.get();
    keyspace_->SetTouchListener(&state_.blocking);
  }

  ~FuzzServer() {
    saves_.reset();
    scripting_.reset();
    failover_.reset();
    replication_.reset();
    expirer_.reset();
    keyspace_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void Run(const uint8_t* data, size_t size) {
    Reset();
    auto session = std::make_shared<Session>();
    session->id = state_.clients.NextId();
    session->addr = "127.0.0.1:1";
    session->authenticated = true;
    bool killed = false;
    session->close_hook = [&killed] { killed = true; };
    session->wake_hook = [] {};
    state_.clients.Add(session);

    RespReader reader;
    reader.Feed(reinterpret_cast<const char*>(data), size);
    RespReader::Limits limits;
    limits.max_bulk_len = config_.proto_max_bulk_len.load();
    std::vector<std::string> argv;
    std::string out;
    WriteGroup group;  // consecutive writes are grouped as a connection's pipeline would be
    for (int n = 0; n < kMaxCommandsPerInput && !killed && !session->close_after_reply; n++) {
      if (reader.Next(&argv, limits) != RespReader::Result::kCommand) break;
      if (Skipped(argv)) continue;
      Dispatch(state_, *session, argv, &out, &group);
      if (session->block.active) {  // what the block timer does when the timeout passes
        state_.blocking.Unblock(*session);
        session->block = BlockState();
      }
      if (out.size() >= kMaxHeldReplies) {  // what a connection's flush does
        group.Commit(state_);
        out.clear();
      }
    }
    group.Commit(state_);
    ResetTransaction(state_, *session);
    state_.clients.Remove(session->id);
  }

 private:
  static void Must(const Status& s) {
    if (!s.ok()) {
      fprintf(stderr, "fuzz_commands: %s\n", s.message().c_str());
      abort();
    }
  }

  static bool Skipped(const std::vector<std::string>& argv) {
    const std::string name = ToLower(argv[0]);
    if (name == "save" || name == "bgsave" || name == "bgrewriteaof" || name == "compact")
      return true;
    if (name == "backup" || name == "import" || name == "migrate") return true;
    if (name == "eval" || name == "evalsha" || name == "eval_ro" || name == "evalsha_ro")
      return true;
    if (name == "replicaof" || name == "slaveof" || name == "replsync" || name == "sync" ||
        name == "psync")
      return true;
    if (name == "config" && argv.size() >= 2) {
      const std::string sub = ToLower(argv[1]);
      return sub == "set" || sub == "rewrite";
    }
    return false;
  }

  // Deletes every key of every database the way DEL does (counts and expiry index included).
  void Reset() {
    std::unique_lock<WriterPreferringMutex> lock(keyspace_->exclusive());
    for (int db = 0; db < keyspace_->databases(); db++) {
      if (keyspace_->KeyCount(db) == 0 && keyspace_->ExpireCount(db) == 0) continue;
      uint8_t pdb = keyspace_->Physical(db);
      std::vector<std::string> keys;
      std::string begin = DatabaseBegin(pdb), end = DatabaseEnd(pdb);
      rocksdb::Slice upper(end);
      rocksdb::ReadOptions options;
      options.iterate_upper_bound = &upper;
      auto it = keyspace_->engine()->NewIterator(ColumnFamily::kMetadata, options);
      for (it->Seek(begin); it->Valid(); it->Next())
        keys.emplace_back(it->key().data() + 1, it->key().size() - 1);
      Context ctx(keyspace_.get());
      for (const auto& key : keys) {
        auto state = ctx.Lookup(db, key);
        if (!state.ok()) abort();
        ctx.Delete(db, key, *state);
      }
      Must(ctx.Commit());
    }
    if (++inputs_ % kCompactEvery != 0) return;
    rocksdb::DB* db = keyspace_->engine()->db();
    for (int cf = 0; cf < kColumnFamilyCount; cf++) {
      db->CompactRange(rocksdb::CompactRangeOptions(),
                       keyspace_->engine()->cf(static_cast<ColumnFamily>(cf)), nullptr, nullptr);
    }
  }

  std::string dir_;
  Config config_;
  std::unique_ptr<Keyspace> keyspace_;
  std::unique_ptr<ActiveExpirer> expirer_;
  std::unique_ptr<ReplicationManager> replication_;
  std::unique_ptr<Failover> failover_;
  ServerState state_;
  std::unique_ptr<Scripting> scripting_;
  std::unique_ptr<Saves> saves_;
  int64_t inputs_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static FuzzServer* server = [] {
    FLAGS_minloglevel = google::GLOG_ERROR;  // "closing client ..." warnings would flood the run
    auto* s = new FuzzServer();
    atexit([] { delete server; });  // closes RocksDB and removes the temp dir
    return s;
  }();
  server->Run(data, size);
  return 0;
}
