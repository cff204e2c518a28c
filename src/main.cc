// basalt-server: start-up and shutdown.
//
//   basalt-server [config-file] [--key value ...]
//   basalt-server -c config-file [--key value ...]
//
// Like redis-server, every config key may also be given on the command line and overrides the
// file. A bad key or value stops start-up with a message naming it.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>

#include "commands/command_table.h"
#include "commands/server_state.h"
#include "common/clock.h"
#include "config/config.h"
#include "net/server.h"
#include "repl/replication.h"
#include "scripting/scripting.h"
#include "types/expirer.h"
#include "types/keyspace.h"
#include "types/pubsub_record.h"

namespace {

void Usage() {
  std::cerr << "Usage: basalt-server [config-file] [--key value ...]\n"
               "       basalt-server -c config-file [--key value ...]\n"
               "       basalt-server --version\n";
}

// Applies the config file and command-line overrides. Returns false after printing why.
bool LoadConfig(int argc, char** argv, basalt::Config* config) {
  std::string file;
  int i = 1;
  if (i < argc && (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0)) {
    if (i + 1 >= argc) {
      Usage();
      return false;
    }
    file = argv[i + 1];
    i += 2;
  } else if (i < argc && strncmp(argv[i], "--", 2) != 0) {
    file = argv[i++];
  }
  if (!file.empty()) {
    basalt::Status s = config->LoadFile(file);
    if (!s.ok()) {
      std::cerr << "basalt-server: " << s.message() << "\n";
      return false;
    }
  }
  for (; i < argc; i++) {
    if (strncmp(argv[i], "--", 2) != 0 || i + 1 >= argc) {
      std::cerr << "basalt-server: expected '--key value' at '" << argv[i] << "'\n";
      Usage();
      return false;
    }
    std::string name = argv[i] + 2;
    if (name == "rename-command") {  // the one directive that takes two values
      if (i + 2 >= argc) {
        std::cerr << "basalt-server: expected '--rename-command NAME NEW-NAME'\n";
        return false;
      }
      config->AddCommandRename(argv[i + 1], argv[i + 2]);
      i += 2;
      continue;
    }
    basalt::Status s = config->SetAtStartup(name, argv[++i]);
    if (s.IsNotFound()) {
      std::cerr << "basalt-server: unknown config key '" << name << "' on the command line\n";
      return false;
    }
    if (!s.ok()) {
      std::cerr << "basalt-server: bad value for '" << name << "': " << s.message() << "\n";
      return false;
    }
  }
  return true;
}

void SetUpLogging(const basalt::Config& config, const char* argv0) {
  std::string logfile = config.GetString("logfile");
  if (logfile.empty()) {
    FLAGS_logtostderr = true;
  } else {
    FLAGS_log_dir = std::filesystem::path(logfile).parent_path().string();
    FLAGS_alsologtostderr = false;
  }
  FLAGS_minloglevel =
      config.GetString("loglevel") == "warning" ? google::GLOG_WARNING : google::GLOG_INFO;
  google::InitGoogleLogging(argv0);
  if (!logfile.empty()) google::SetLogDestination(google::GLOG_INFO, logfile.c_str());
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

// The default user's password comes from requirepass, now and on CONFIG SET; the ACL file, if
// any, then defines the users (its `default` line included), as in Redis.
bool SetUpAcl(basalt::Config& config, basalt::ServerState& state) {
  std::string password = config.GetString("requirepass");
  if (!password.empty()) state.acl.SetDefaultPassword(password);
  config.AddApplyHook("requirepass", [&state](const std::string&, const std::string& value) {
    state.acl.SetDefaultPassword(value);
    return basalt::Status::OK();
  });
  std::string aclfile = config.GetString("aclfile");
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
  replication.SetAckListener([&state] { state.blocking.OnReplicaAck(); });
  // Published messages arrive with the master's batches; the replica's subscribers get them.
  replication.SetEventHandler(
      basalt::ColumnFamily::kPubsub, [&state](std::string_view, std::string_view value) {
        basalt::PubsubRecord record;
        if (!basalt::DecodePubsubRecord(value, &record)) return;
        state.pubsub.Deliver(record.channel, record.message, record.sharded);
      });
  replication.SetEventHandler(
      basalt::ColumnFamily::kPropagate,
      [&scripting](std::string_view key, std::string_view value) {
        scripting.OnReplicatedPut(key, value);
      },
      [&scripting](std::string_view key) { scripting.OnReplicatedDelete(key); });
  replication.SetDataReplacedHandler([&scripting] {
    basalt::Status reloaded = scripting.ReloadPersisted();
    if (!reloaded.ok()) LOG(ERROR) << "reloading scripts after a full sync: " << reloaded.message();
  });
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
  if (!LoadConfig(argc, argv, &config)) return 1;
  SetUpLogging(config, argv[0]);
  config.AddApplyHook("loglevel", [](const std::string&, const std::string& value) {
    FLAGS_minloglevel = value == "warning" ? google::GLOG_WARNING : google::GLOG_INFO;
    return basalt::Status::OK();
  });

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
  state.command_counters =
      std::vector<basalt::CommandCounters>(basalt::CommandTable::Get().all().size());
  state.start_time_ms = basalt::UnixMillis();
  // Measures the command clock's rate now rather than during the first command.
  LOG(INFO) << (basalt::CommandClock::CountsCpuTicks() ? "commands timed by the TSC"
                                                       : "commands timed by the monotonic clock");
  state.last_save_unix = state.start_time_ms / 1000;
  state.executable = ExecutablePath(argv[0]);
  state.run_id = RandomRunId();
  state.tcp_port = static_cast<int>(config.GetInt("port"));
  state.pubsub.set_config(&config);
  state.monitors.set_config(&config);
  if (!SetUpAcl(config, state)) return 1;

  basalt::Scripting scripting(&state);
  basalt::Status loaded = scripting.LoadPersisted();
  if (!loaded.ok()) {
    LOG(ERROR) << loaded.message();
    return 1;
  }
  state.scripting = &scripting;
  basalt::CommandOffloader offloader(&state);
  offloader.Start();
  state.offloader = &offloader;

  ConnectEventHandlers(state, replication, scripting);

  basalt::Status s = replication.Start(state.tcp_port);
  if (!s.ok()) {
    LOG(ERROR) << s.message();
    return 1;
  }
  basalt::NetworkServer server(&state);
  s = server.Start();
  if (!s.ok()) {
    LOG(ERROR) << s.message();
    replication.Stop();
    return 1;
  }
  expirer.Start();
  LOG(INFO) << "Basalt ready: data in " << dir << ", durability " << config.GetString("durability");
  server.Run();

  LOG(INFO) << "stopping: closing connections and syncing data";
  replication.Stop();
  offloader.Stop();  // a running script was told to stop by NetworkServer::Run
  expirer.Stop();
  (*keyspace)->Close();
  LOG(INFO) << "Basalt stopped cleanly";
  return 0;
}
