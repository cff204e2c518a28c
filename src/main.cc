// basalt-server: start-up and shutdown.
//
//   basalt-server [config-file | -] [--key value...] ...
//   basalt-server -c config-file [--key value...] ...
//   basalt-server ... --import dump.rdb
//
// Like redis-server, every config directive may also be given on the command line (with all of
// its arguments) and overrides the file; `-` reads the file from stdin. A bad key or value stops
// start-up with a message naming it. `--import FILE` is no config key: it loads a Redis RDB
// file into the (empty) data directory `dir`, logs the counts, and exits without serving.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>

#include "commands/command_table.h"
#include "commands/info.h"
#include "commands/master_client.h"
#include "commands/notify.h"
#include "commands/saves.h"
#include "commands/server_state.h"
#include "common/clock.h"
#include "common/process.h"
#include "config/config.h"
#include "net/server.h"
#include "repl/replication.h"
#include "scripting/scripting.h"
#include "types/expirer.h"
#include "types/keyspace.h"
#include "types/pubsub_record.h"
#include "types/rdb_loader.h"

namespace {

void Usage() {
  std::cerr << "Usage: basalt-server [config-file | -] [--key value...] ...\n"
               "       basalt-server -c config-file [--key value...] ...\n"
               "       basalt-server --version\n"
               "A config file of '-' is read from stdin.\n"
               "--import dump.rdb loads a Redis RDB file into the empty data directory and "
               "exits.\n";
}

// Applies the config file (or stdin) and then the command line's `--key value...` options, each
// of which is one config directive as in redis-server. Returns false after printing why.
bool LoadConfig(int argc, char** argv, basalt::Config* config, std::string* import_file) {
  std::string file;
  int i = 1;
  if (i < argc && (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0)) {
    if (i + 1 >= argc) {
      Usage();
      return false;
    }
    file = argv[i + 1];
    i += 2;
  } else if (i < argc && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0)) {
    file = argv[i++];
  }
  basalt::Status s;
  if (file == "-") {
    std::stringstream text;
    text << std::cin.rdbuf();
    s = config->LoadText(text.str(), "stdin");
  } else if (!file.empty()) {
    s = config->LoadFile(file);
  }
  if (!s.ok()) {
    std::cerr << "basalt-server: " << s.message() << "\n";
    return false;
  }
  std::vector<std::string> words;
  auto apply = [&]() {
    if (words.empty()) return true;
    basalt::Status applied = config->ApplyDirective(words, "command line: ");
    if (!applied.ok()) std::cerr << "basalt-server: " << applied.message() << "\n";
    return applied.ok();
  };
  for (; i < argc; i++) {
    if (strcmp(argv[i], "--import") == 0) {
      if (!apply()) return false;
      words.clear();
      if (i + 1 >= argc) {
        Usage();
        return false;
      }
      *import_file = argv[++i];
    } else if (strncmp(argv[i], "--", 2) == 0 && argv[i][2] != '\0') {
      if (!apply()) return false;
      words = {argv[i] + 2};
    } else if (words.empty()) {
      std::cerr << "basalt-server: expected '--key value...' at '" << argv[i] << "'\n";
      Usage();
      return false;
    } else {
      words.emplace_back(argv[i]);
    }
  }
  return apply();
}

// glog's lines to syslog(3) as well, for syslog-enabled.
class SyslogSink : public google::LogSink {
 public:
  void send(google::LogSeverity severity, const char*, const char* base_filename, int line,
            const google::LogMessageTime&, const char* message, size_t message_len) override {
    int priority = severity >= google::GLOG_ERROR     ? LOG_ERR
                   : severity == google::GLOG_WARNING ? LOG_WARNING
                                                      : LOG_NOTICE;
    syslog(priority, "%.*s", static_cast<int>(message_len), message);
  }
};

int SyslogFacility(const std::string& name) {
  static const std::pair<const char*, int> kFacilities[] = {
      {"user", LOG_USER},     {"local0", LOG_LOCAL0}, {"local1", LOG_LOCAL1},
      {"local2", LOG_LOCAL2}, {"local3", LOG_LOCAL3}, {"local4", LOG_LOCAL4},
      {"local5", LOG_LOCAL5}, {"local6", LOG_LOCAL6}, {"local7", LOG_LOCAL7}};
  for (const auto& [n, f] : kFacilities) {
    if (name == n) return f;
  }
  return LOG_LOCAL0;
}

int MinLogLevel(const std::string& loglevel) {
  if (loglevel == "nothing") return google::GLOG_FATAL;
  return loglevel == "warning" ? google::GLOG_WARNING : google::GLOG_INFO;
}

void SetUpLogging(const basalt::Config& config, const char* argv0) {
  std::string logfile = config.GetString("logfile");
  if (logfile.empty()) {
    FLAGS_logtostderr = true;
  } else {
    FLAGS_log_dir = std::filesystem::path(logfile).parent_path().string();
    FLAGS_alsologtostderr = false;
    FLAGS_timestamp_in_logfile_name = false;  // the file is `logfile` itself, as in Redis
  }
  FLAGS_minloglevel = MinLogLevel(config.GetString("loglevel"));
  google::InitGoogleLogging(argv0);
  if (!logfile.empty()) {
    google::SetLogDestination(google::GLOG_INFO, logfile.c_str());
    google::SetLogSymlink(google::GLOG_INFO, "");  // no "basalt-server.INFO" link beside it
    // Lines of every severity are in the INFO file; no second file per severity.
    for (auto severity : {google::GLOG_WARNING, google::GLOG_ERROR, google::GLOG_FATAL})
      google::SetLogDestination(severity, "");
  }
  if (config.GetBool("syslog-enabled")) {
    static std::string ident = config.GetString("syslog-ident");  // openlog keeps the pointer
    openlog(ident.c_str(), LOG_PID | LOG_NDELAY | LOG_NOWAIT,
            SyslogFacility(config.GetString("syslog-facility")));
    static SyslogSink sink;
    google::AddLogSink(&sink);
  }
}

// The Redis keys the configuration set that mean nothing to Basalt, named once.
void LogKeysWithoutEffect(const basalt::Config& config) {
  const auto& keys = config.no_effect_keys_set();
  if (keys.empty()) return;
  std::string list;
  for (const auto& k : keys) {
    if (!list.empty()) list.push_back(' ');
    list.append(k);
  }
  LOG(INFO) << "Redis config keys accepted without effect: " << list;
}

// daemonize (before any thread starts), then logging. Returns false after printing why.
bool SetUpProcess(basalt::Config& config, const char* argv0) {
  if (config.GetBool("daemonize")) {
    basalt::Status daemonized = basalt::Daemonize();
    if (!daemonized.ok()) {
      std::cerr << "basalt-server: " << daemonized.message() << "\n";
      return false;
    }
  }
  SetUpLogging(config, argv0);
  config.AddApplyHook("loglevel", [](const std::string&, const std::string& value) {
    FLAGS_minloglevel = MinLogLevel(value);
    return basalt::Status::OK();
  });
  LogKeysWithoutEffect(config);
  return true;
}

// CONFIG SET port / bind move the listening sockets, with Redis's error texts.
void ListenAsConfigured(basalt::Config& config, basalt::NetworkServer& server) {
  config.AddApplyHook("port", [&server](const std::string& name, const std::string& value) {
    if (name != "port") return basalt::Status::OK();
    basalt::Status s = server.Relisten(std::nullopt, std::stoi(value));
    if (!s.ok()) LOG(WARNING) << "CONFIG SET port " << value << ": " << s.message();
    return s.ok() ? s
                  : basalt::Status::InvalidArgument(
                        "Unable to listen on this port. Check server logs.");
  });
  config.AddApplyHook("bind", [&server](const std::string& name, const std::string& value) {
    if (name != "bind") return basalt::Status::OK();  // not bind-source-addr
    basalt::Status s = server.Relisten(value, std::nullopt);
    if (!s.ok()) LOG(WARNING) << "CONFIG SET bind " << value << ": " << s.message();
    return s.ok() ? s : basalt::Status::InvalidArgument("Failed to bind to specified addresses.");
  });
}

// `supervised`: the supervisor hears that the server is ready (or stopping).
bool SupervisedBySystemd(const basalt::Config& config) {
  std::string mode = config.GetString("supervised");
  return mode == "systemd" || (mode == "auto" && basalt::UnderSystemd());
}

void NotifySupervisor(const basalt::Config& config, const char* state) {
  if (SupervisedBySystemd(config)) {
    basalt::Status s = basalt::NotifySystemd(state);
    if (!s.ok()) LOG(WARNING) << "supervised systemd: " << s.message();
  } else if (config.GetString("supervised") == "upstart" && strstr(state, "READY=1")) {
    basalt::NotifyUpstartReady();
  }
}

// rename-command directives, applied before any client can connect.
bool ApplyCommandRenames(const basalt::Config& config) {
  for (const auto& rename : config.command_renames()) {
    basalt::Status s = basalt::CommandTable::Rename(rename.name, rename.new_name);
    if (!s.ok()) {
      LOG(ERROR) << "rename-command " << rename.name << " '" << rename.new_name
                 << "': " << s.message();
      return false;
    }
  }
  return true;
}

// The default user's password comes from requirepass, now and on CONFIG SET; `user` lines of
// the config file, or else the ACL file, then define users, as in Redis (the two together are
// refused, as Redis refuses them).
bool SetUpAcl(basalt::Config& config, basalt::ServerState& state) {
  std::string password = config.GetString("requirepass");
  if (!password.empty()) state.acl.SetDefaultPassword(password);
  config.AddApplyHook("requirepass", [&state](const std::string&, const std::string& value) {
    state.acl.SetDefaultPassword(value);
    return basalt::Status::OK();
  });
  std::string aclfile = config.GetString("aclfile");
  if (!config.user_directives().empty() && !aclfile.empty()) {
    LOG(ERROR) << "Configuring users in the config file and setting an ACL file path at the "
                  "same time is invalid";
    return false;
  }
  for (const auto& user : config.user_directives()) {
    std::vector<std::string> rules(user.words.begin() + 1, user.words.end());
    std::string bad_rule;
    basalt::Status s = state.acl.SetUser(user.words[0], rules, &bad_rule);
    if (!s.ok()) {
      LOG(ERROR) << user.where << "Error in user declaration '" << bad_rule << "': " << s.message();
      return false;
    }
  }
  if (aclfile.empty()) return true;
  basalt::Status s = state.acl.LoadFile(aclfile);
  if (!s.ok()) {
    LOG(ERROR) << "Aborting start-up because of ACL errors: " << s.message();
    return false;
  }
  LOG(INFO) << "ACL users loaded from " << aclfile;
  return true;
}

std::string RandomRunId() {
  std::random_device rd;
  std::mt19937_64 rng(rd());
  static const char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 40; i++) id.push_back(kHex[rng() % 16]);
  return id;
}

std::string ExecutablePath(const char* argv0) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return argv0;
  return std::string(buf, n);
}

// Routes events between the parts that main() creates: key writes wake blocked clients,
// replica acknowledgements wake WAIT, and what arrives from a master beyond plain data
// (published messages, script loads, a full sync's new data) reaches pub/sub and scripting.
void ConnectEventHandlers(basalt::ServerState& state, basalt::ReplicationManager& replication,
                          basalt::Scripting& scripting) {
  state.keyspace->SetTouchListener(&state.blocking);
  state.keyspace->SetInvalidationListener(&state.tracking);
  state.replica_stream.set_config(state.config);
  state.keyspace->SetEffectsListener(&state.replica_stream);
  replication.SetAckListener([&state] { state.blocking.OnReplicaAck(); });
  // Published messages arrive with the master's batches; the replica's subscribers get them.
  replication.SetEventHandler(
      basalt::ColumnFamily::kPubsub, [&state](std::string_view, std::string_view value) {
        basalt::PubsubRecord record;
        if (!basalt::DecodePubsubRecord(value, &record)) return;
        state.pubsub.Deliver(record.channel, record.message, record.sharded);
      });
  // Scripts and functions are in place before the writes that follow them on the master become
  // visible, so a client that reads those writes can also call them.
  replication.SetEventHandler(
      basalt::ColumnFamily::kPropagate,
      [&scripting](std::string_view key, std::string_view value) {
        scripting.OnReplicatedPut(key, value);
      },
      [&scripting](std::string_view key) { scripting.OnReplicatedDelete(key); },
      basalt::BatchApplier::EventTiming::kBeforeWrite);
  replication.SetDataReplacedHandler([&scripting] {
    basalt::Status reloaded = scripting.ReloadPersisted();
    if (!reloaded.ok()) LOG(ERROR) << "reloading scripts after a full sync: " << reloaded.message();
  });
}

// A Redis master's stream runs through `client`; its RDB's function libraries replace this
// server's namesakes, as a full sync replaces the rest of the data.
void ConnectRedisMaster(basalt::ReplicationManager& replication, basalt::MasterClient& client,
                        basalt::Scripting& scripting) {
  basalt::RedisMasterHooks hooks;
  hooks.sink = &client;
  hooks.install_functions = [&scripting](basalt::Context& ctx,
                                         const std::vector<std::string>& codes) {
    return scripting.functions().RestoreLibraries(ctx, codes, basalt::RestorePolicy::kFlush);
  };
  replication.SetRedisMasterHooks(std::move(hooks));
}

// --import: the RDB file into the fresh keyspace as ingested SST files (nothing serves yet,
// no replica reads the write-ahead log), then the counts. Returns the process's exit code.
int ImportAndExit(const std::string& file, basalt::Keyspace* keyspace,
                  basalt::Scripting& scripting) {
  basalt::RdbImportOptions options;
  options.ingest_sst_files = true;
  options.install_functions = [&scripting](basalt::Context& ctx,
                                           const std::vector<std::string>& codes) {
    return scripting.functions().RestoreLibraries(ctx, codes);
  };
  auto stats = basalt::ImportRdbFile(keyspace, file, options);
  if (!stats.ok()) {
    LOG(ERROR) << "import of " << file << " failed: " << stats.status().message();
    keyspace->Close();
    return 1;
  }
  std::ostringstream per_db;
  for (int db = 0; db < keyspace->databases(); db++) {
    if (stats->keys[db] != 0) per_db << " db" << db << "=" << stats->keys[db];
  }
  double mb = static_cast<double>(stats->bytes) / (1 << 20);
  LOG(INFO) << "imported " << file << " (RDB version " << stats->version << ", " << stats->bytes
            << " bytes in " << stats->seconds << " s, "
            << (stats->seconds > 0 ? mb / stats->seconds : 0) << " MB/s): " << stats->total_keys
            << " keys" << per_db.str() << "; " << stats->expired_skipped
            << " already expired, skipped; " << stats->module_keys_skipped
            << " module values skipped; " << stats->functions << " function libraries";
  keyspace->Close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-v") == 0)) {
    std::cout << "basalt-server 0.1.0 (Redis 7.0 protocol compatible)\n";
    return 0;
  }
  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    Usage();
    return 0;
  }
  basalt::Config config;
  std::string import_file;
  if (!LoadConfig(argc, argv, &config, &import_file)) return 1;
  if (!import_file.empty()) {
    // An import runs in the foreground and leaves the pid file of a server using the same
    // configuration alone.
    for (const char* key : {"daemonize", "pidfile"}) {
      basalt::Status s = config.ApplyDirective({key, key[0] == 'd' ? "no" : ""}, "--import: ");
      if (!s.ok()) {
        std::cerr << "basalt-server: " << s.message() << "\n";
        return 1;
      }
    }
  }
  if (!SetUpProcess(config, argv[0])) return 1;
  // The pid file lives while main does, whichever way it returns.
  struct PidFile {
    std::string path;
    ~PidFile() {
      if (!path.empty()) basalt::RemovePidFile(path);
    }
  } pidfile{config.GetString("pidfile")};
  if (!pidfile.path.empty()) {
    basalt::Status written = basalt::WritePidFile(pidfile.path);
    if (!written.ok()) LOG(WARNING) << written.message();  // Redis, too, only warns
  }

  if (!ApplyCommandRenames(config)) return 1;

  std::string dir = config.GetString("dir");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    LOG(ERROR) << "can't create data directory '" << dir << "': " << ec.message();
    return 1;
  }
  auto keyspace = basalt::Keyspace::Open(&config);
  if (!keyspace.ok()) {
    LOG(ERROR) << keyspace.status().message();
    return 1;
  }
  basalt::ActiveExpirer expirer(keyspace->get(), &config);
  basalt::ReplicationManager replication(keyspace->get(), &config, &expirer);

  basalt::ServerState state;
  state.config = &config;
  state.keyspace = keyspace->get();
  state.expirer = &expirer;
  state.replication = &replication;
  basalt::Failover failover(&replication, &state.pause, &config);
  state.failover = &failover;
  state.start_time_ms = basalt::UnixMillis();
  // Measures the command clock's rate now rather than during the first command.
  LOG(INFO) << (basalt::CommandClock::CountsCpuTicks() ? "commands timed by the TSC"
                                                       : "commands timed by the monotonic clock");
  state.last_save_unix = state.start_time_ms / 1000;
  state.executable = ExecutablePath(argv[0]);
  state.run_id = RandomRunId();
  state.tcp_port = static_cast<int>(config.GetInt("port"));
  state.pubsub.set_config(&config);
  state.tracking.set_config(&config);
  basalt::Status stats_config = basalt::InstallStatsConfigHooks(config, state);
  if (!stats_config.ok()) {
    LOG(ERROR) << stats_config.message();
    return 1;
  }
  state.monitors.set_config(&config);
  if (!SetUpAcl(config, state)) return 1;

  basalt::Scripting scripting(&state);
  basalt::Status loaded = scripting.LoadPersisted();
  if (!loaded.ok()) {
    LOG(ERROR) << loaded.message();
    return 1;
  }
  state.scripting = &scripting;
  state.pause.SetScriptWriteCheck(
      [&scripting](const std::vector<std::string>& argv) { return scripting.MayWrite(argv); });
  state.script_declares_writes = [&scripting](const std::vector<std::string>& argv) {
    return scripting.DeclaresWrites(argv);
  };
  if (!import_file.empty()) return ImportAndExit(import_file, keyspace->get(), scripting);
  basalt::Saves saves(&state);
  state.saves = &saves;
  basalt::CommandOffloader offloader(&state, 1);
  offloader.Start();
  state.offloader = &offloader;
  basalt::CommandOffloader read_offloader(&state,
                                          static_cast<size_t>(config.GetInt("read-threads")));
  read_offloader.Start();
  if (config.GetInt("read-threads") > 0) state.read_offloader = &read_offloader;

  ConnectEventHandlers(state, replication, scripting);
  basalt::MasterClient master_client(&state);
  ConnectRedisMaster(replication, master_client, scripting);
  // Keyspace notifications go to this server's subscribers, and with the batch to replicas.
  basalt::NotificationSink notifications(&state.pubsub, &replication);
  state.keyspace->events().set_sink(&notifications);

  basalt::Status s = replication.Start(state.tcp_port.load());
  if (!s.ok()) {
    LOG(ERROR) << s.message();
    return 1;
  }
  basalt::NetworkServer server(&state);
  ListenAsConfigured(config, server);
  s = server.Start();
  if (!s.ok()) {
    LOG(ERROR) << s.message();
    replication.Stop();
    return 1;
  }
  expirer.Start();
  LOG(INFO) << "Basalt ready: data in " << dir << ", durability " << config.GetString("durability");
  NotifySupervisor(config, "STATUS=Ready to accept connections\nREADY=1\n");
  server.Run();
  NotifySupervisor(config, "STOPPING=1\n");

  LOG(INFO) << "stopping: closing connections and syncing data";
  failover.Stop();
  saves.Stop();  // a background save finishes; SYNC transfers are cut
  replication.Stop();
  offloader.Stop();  // a running script was told to stop by NetworkServer::Run
  read_offloader.Stop();
  expirer.Stop();
  (*keyspace)->Close();
  LOG(INFO) << "Basalt stopped cleanly";
  return 0;
}
