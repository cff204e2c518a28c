// IMPORT RDB <path>: loads a Redis RDB file (types/rdb_loader.h) into the running server, whose
// keyspace must be empty. It lives beside the function commands because a file's function
// libraries are installed through the registry here.
//
// The import holds the keyspace's exclusive lock from start to end and announces the load
// (Keyspace::BeginLoading): other clients are answered as a loading Redis answers them (LOADING,
// or INFO and the like at once), and see either nothing or the whole file. The writes go
// through the write-ahead log, so replicas receive them. A malformed file is an error naming
// what and where, and the keyspace is left empty.
#include <filesystem>

#include "commands/command_util.h"
#include "scripting/scripting.h"
#include "types/rdb_loader.h"

namespace basalt {

namespace {

void ImportCommand(CommandContext& c) {
  if (!EqualsIgnoreCase(c.arg(1), "rdb")) return c.reply.Error(kSyntaxError);
  RdbImportOptions options;
  Functions& functions = c.server.scripting->functions();
  options.install_functions = [&functions](Context& ctx, const std::vector<std::string>& codes) {
    return functions.RestoreLibraries(ctx, codes);
  };
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(c.arg(2), ec);
  c.server.keyspace->BeginLoading(ec ? 0 : static_cast<uint64_t>(size));
  auto stats = ImportRdbFile(c.server.keyspace, c.arg(2), options);
  c.server.keyspace->EndLoading();
  if (ReplyIfError(c, stats.status())) return;
  c.reply.Map(5);
  c.reply.Bulk("keys");
  c.reply.Integer(static_cast<int64_t>(stats->total_keys));
  c.reply.Bulk("expired-skipped");
  c.reply.Integer(static_cast<int64_t>(stats->expired_skipped));
  c.reply.Bulk("module-keys-skipped");
  c.reply.Integer(static_cast<int64_t>(stats->module_keys_skipped));
  c.reply.Bulk("functions");
  c.reply.Integer(static_cast<int64_t>(stats->functions));
  c.reply.Bulk("bytes");
  c.reply.Integer(static_cast<int64_t>(stats->bytes));
}

const std::vector<CommandSpec> kImportCommands = {
    {"import", 3,
     kCmdWrite | kCmdAdmin | kCmdNoScript | kCmdNoMulti | kCmdExclusive | kCmdSelfCommit |
         kCmdDenyOom,
     0, 0, 0, ImportCommand, "server",
     "Loads a Redis RDB file into the empty keyspace (Basalt only).",
     "@admin @write @slow @dangerous"},
};

}  // namespace

const std::vector<CommandSpec>& ImportCommands() {
  return kImportCommands;
}

}  // namespace basalt
