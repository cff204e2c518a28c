#include "scripting/scripting.h"

#include "commands/dispatcher.h"
#include "common/strutil.h"
#include "scripting/sha1.h"

namespace basalt {

namespace {

constexpr std::string_view kPersistPrefix = "script:";

std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t at = s.find(sep);
    parts.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return parts;
    s.remove_prefix(at + 1);
  }
}

}  // namespace

void ReplyToKill(CommandContext& c, bool function) {
  switch (c.server.script_guard.RequestKill(function)) {
    case ScriptGuard::KillResult::kNotBusy:
      return c.reply.Error("NOTBUSY No scripts in execution right now.");
    case ScriptGuard::KillResult::kUnkillable:
      return c.reply.Error(
          "UNKILLABLE Sorry the script already executed write commands against the dataset. You "
          "can either wait the script termination or kill the server in a hard way using the "
          "SHUTDOWN NOSAVE command.");
    case ScriptGuard::KillResult::kOtherKind:
      // The script that runs is of the other kind: the reply names the command that kills it.
      return c.reply.Error(BusyScriptError(c.server.script_guard));
    case ScriptGuard::KillResult::kKilled:
      return c.reply.Ok();
  }
}

Status ParseShebang(std::string_view body, bool* no_writes, bool* allow_oom) {
  *no_writes = false;
  if (allow_oom != nullptr) *allow_oom = false;
  if (body.substr(0, 2) != "#!") return Status::OK();
  size_t eol = body.find('\n');
  if (eol == std::string_view::npos) return Status::RedisError("ERR Invalid script shebang");
  std::string_view line = body.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string_view> words;
  for (std::string_view w : SplitOn(line, ' ')) {
    if (!w.empty()) words.push_back(w);
  }
  if (words[0] != "#!lua")
    return Status::RedisError("ERR Unexpected engine in script shebang: " + std::string(words[0]));
  for (size_t i = 1; i < words.size(); i++) {
    if (words[i].substr(0, 6) != "flags=")
      return Status::RedisError("ERR Unknown lua shebang option: " + std::string(words[i]));
    for (std::string_view flag : SplitOn(words[i].substr(6), ',')) {
      if (flag == "no-writes") {
        *no_writes = true;
      } else if (flag == "allow-oom") {
        if (allow_oom != nullptr) *allow_oom = true;
      } else if (!flag.empty() && flag != "allow-oom" && flag != "allow-stale" &&
                 flag != "no-cluster" && flag != "allow-cross-slot-keys") {
        return Status::RedisError("ERR Unexpected flag in script shebang: " + std::string(flag));
      }
    }
  }
  return Status::OK();
}

Status Scripting::LoadPersisted() {
  Status s = LoadPersistedScripts();
  if (!s.ok()) return s;
  return functions_.LoadPersisted();
}

Status Scripting::LoadPersistedScripts() {
  Engine* engine = server_->keyspace->engine();
  rocksdb::ReadOptions options;
  std::string lower(kPersistPrefix);
  std::string upper = lower;
  upper.back()++;
  rocksdb::Slice upper_slice(upper);
  options.iterate_upper_bound = &upper_slice;
  auto it = engine->NewIterator(ColumnFamily::kPropagate, options);
  for (it->Seek(lower); it->Valid(); it->Next())
    OnReplicatedPut(it->key().ToStringView(), it->value().ToStringView());
  if (!it->status().ok())
    return Status::IOError("reading persisted scripts: " + it->status().ToString());
  return Status::OK();
}

Status Scripting::ReloadPersisted() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    scripts_.clear();
    PublishCount();
  }
  Status s = functions_.ReloadPersisted();
  if (!s.ok()) return s;
  return LoadPersistedScripts();
}

bool Scripting::Lookup(const std::string& sha, ScriptInfo* info) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = scripts_.find(sha);
  if (it == scripts_.end()) return false;
  *info = it->second;
  return true;
}

bool Scripting::Exists(const std::string& sha) {
  std::lock_guard<std::mutex> lock(mu_);
  return scripts_.count(sha) != 0;
}

StatusOr<std::string> Scripting::Load(Context& ctx, const std::string& body) {
  ScriptInfo info;
  info.body = body;
  info.declares_flags = body.compare(0, 2, "#!") == 0;
  Status s = ParseShebang(body, &info.no_writes, &info.allow_oom);
  if (!s.ok()) return s;
  std::string sha = Sha1Hex(body);
  s = engine_.Compile(sha, body);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  if (scripts_.emplace(sha, std::move(info)).second) {
    ctx.batch().Put(ColumnFamily::kPropagate, PersistKey(sha), body);
    PublishCount();
  }
  return sha;
}

void Scripting::Run(CommandContext& c, const std::string& sha, const ScriptInfo& info,
                    bool read_only, size_t numkeys) {
  Status s = engine_.Compile(sha, info.body);
  if (!s.ok()) return c.reply.Error(s.ToReplyText());
  if (info.declares_flags && !info.no_writes) {
    // A script that declares it may write is a write command, and without allow-oom one that
    // may grow the data set.
    if (!info.allow_oom && server_->memory_limit.Exceeded(*server_->config))
      return c.reply.Error(kOomError);
    if (server_->replication != nullptr && server_->replication->rejects_writes())
      return c.reply.Error("READONLY You can't write against a read only replica.");
    if (read_only)
      return c.reply.Error("ERR Can not execute a script with write flag using *_ro command.");
  }
  engine_.RunCommand(c, sha, LUA_NOREF, read_only || info.no_writes, info.allow_oom, numkeys);
}

bool Scripting::MayWrite(const std::vector<std::string>& argv) {
  if (EqualsIgnoreCase(argv[0], "fcall")) return functions_.MayWrite(argv[1]);
  return ScriptMayWrite(argv[1], EqualsIgnoreCase(argv[0], "evalsha"));
}

bool Scripting::DeclaresWrites(const std::vector<std::string>& argv) {
  const std::string command = ToLower(argv[0]);
  if (command == "fcall") return functions_.MayWrite(argv[1]);
  if (command != "eval" && command != "evalsha") return false;  // the _RO forms never write
  const bool by_sha = command == "evalsha";
  bool declares = !by_sha && std::string_view(argv[1]).substr(0, 2) == "#!";
  if (by_sha) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = scripts_.find(ToLower(argv[1]));
    declares = it != scripts_.end() && it->second.declares_flags;
  }
  return declares && ScriptMayWrite(argv[1], by_sha);
}

bool Scripting::ScriptMayWrite(std::string_view script, bool by_sha) {
  if (by_sha && script.size() != 40) return true;
  const std::string sha = by_sha ? ToLower(script) : Sha1Hex(script);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = scripts_.find(sha);
    if (it != scripts_.end()) return !(it->second.declares_flags && it->second.no_writes);
  }
  if (by_sha || script.substr(0, 2) != "#!") return true;
  bool no_writes = false;
  return !ParseShebang(script, &no_writes).ok() || !no_writes;
}

void Scripting::Flush(Context& ctx) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [sha, info] : scripts_)
      ctx.batch().Delete(ColumnFamily::kPropagate, PersistKey(sha));
    scripts_.clear();
    PublishCount();
  }
  engine_.Reset();
}

void Scripting::OnReplicatedPut(std::string_view key, std::string_view value) {
  if (key.substr(0, Functions::kPersistPrefix.size()) == Functions::kPersistPrefix)
    return functions_.OnReplicatedPut(key.substr(Functions::kPersistPrefix.size()), value);
  if (key.substr(0, kPersistPrefix.size()) != kPersistPrefix) return;
  ScriptInfo info;
  info.body = std::string(value);
  // A bad shebang cannot have been persisted by Load(); should one appear, running it reports
  // the compile error.
  ParseShebang(info.body, &info.no_writes, &info.allow_oom).ok();
  info.declares_flags = info.body.compare(0, 2, "#!") == 0;
  std::lock_guard<std::mutex> lock(mu_);
  scripts_[std::string(key.substr(kPersistPrefix.size()))] = std::move(info);
  PublishCount();
}

void Scripting::OnReplicatedDelete(std::string_view key) {
  if (key.substr(0, Functions::kPersistPrefix.size()) == Functions::kPersistPrefix)
    return functions_.OnReplicatedDelete(key.substr(Functions::kPersistPrefix.size()));
  if (key.substr(0, kPersistPrefix.size()) != kPersistPrefix) return;
  std::lock_guard<std::mutex> lock(mu_);
  scripts_.erase(std::string(key.substr(kPersistPrefix.size())));
  PublishCount();
}

}  // namespace basalt
