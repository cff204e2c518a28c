#include "scripting/scripting.h"

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

Status ParseShebang(std::string_view body, bool* no_writes) {
  *no_writes = false;
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
      } else if (!flag.empty() && flag != "allow-oom" && flag != "allow-stale" &&
                 flag != "no-cluster" && flag != "allow-cross-slot-keys") {
        return Status::RedisError("ERR Unexpected flag in script shebang: " + std::string(flag));
      }
    }
  }
  return Status::OK();
}

Status Scripting::LoadPersisted() {
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
  }
  return LoadPersisted();
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
  Status s = ParseShebang(body, &info.no_writes);
  if (!s.ok()) return s;
  std::string sha = Sha1Hex(body);
  s = engine_.Compile(sha, body);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  if (scripts_.emplace(sha, std::move(info)).second)
    ctx.batch().Put(ColumnFamily::kPropagate, PersistKey(sha), body);
  return sha;
}

void Scripting::Run(CommandContext& c, const std::string& sha, const ScriptInfo& info,
                    bool read_only, size_t numkeys) {
  Status s = engine_.Compile(sha, info.body);
  if (!s.ok()) return c.reply.Error(s.ToReplyText());
  // The script's own client: SELECT inside the script changes its database, not the caller's.
  Session session;
  session.id = c.session.id;
  session.db = c.db();
  session.authenticated = true;
  // Redis's Lua client has no connection: the slowlog shows its commands as "?:0"'s.
  session.addr = "?:0";
  session.script_client = true;
  // Client-side caching: the keys the script's commands read are the calling client's.
  session.tracking_flags = c.session.tracking_flags.load(std::memory_order_relaxed);
  ScriptRun run;
  run.server = server_;
  run.ctx = &c.ctx;
  run.session = &session;
  run.caller = &c.session;
  run.read_only = read_only || info.no_writes;
  run.sha = sha;
  std::vector<std::string> keys(c.argv.begin() + 3, c.argv.begin() + 3 + numkeys);
  std::vector<std::string> args(c.argv.begin() + 3 + numkeys, c.argv.end());
  engine_.Run(run, keys, args, c.reply);
  // Stopped by shutdown: its writes must not land, not even in part.
  if (server_->script_guard.aborted_for_shutdown()) c.ctx.Discard();
}

void Scripting::Flush(Context& ctx) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [sha, info] : scripts_)
      ctx.batch().Delete(ColumnFamily::kPropagate, PersistKey(sha));
    scripts_.clear();
  }
  engine_.Reset();
}

void Scripting::OnReplicatedPut(std::string_view key, std::string_view value) {
  if (key.substr(0, kPersistPrefix.size()) != kPersistPrefix) return;
  ScriptInfo info;
  info.body = std::string(value);
  // A bad shebang cannot have been persisted by Load(); should one appear, running it reports
  // the compile error.
  ParseShebang(info.body, &info.no_writes).ok();
  std::lock_guard<std::mutex> lock(mu_);
  scripts_[std::string(key.substr(kPersistPrefix.size()))] = std::move(info);
}

void Scripting::OnReplicatedDelete(std::string_view key) {
  if (key.substr(0, kPersistPrefix.size()) != kPersistPrefix) return;
  std::lock_guard<std::mutex> lock(mu_);
  scripts_.erase(std::string(key.substr(kPersistPrefix.size())));
}

}  // namespace basalt
