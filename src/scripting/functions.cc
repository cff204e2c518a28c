#include "scripting/functions.h"

#include <glog/logging.h>

#include <algorithm>

#include "commands/command_util.h"
#include "common/rdb_encoding.h"
#include "common/strutil.h"

namespace basalt {

namespace {

// How long FUNCTION LOAD may run a library's code: it should only register functions.
constexpr int64_t kLoadTimeoutMs = 500;

struct LibraryMetadata {
  std::string engine;
  std::string name;
  std::string body;  // the code after the shebang line, from its newline on
};

// Parses the `#!<engine> name=<lib>` first line as Redis does (sdssplitargs quoting).
StatusOr<LibraryMetadata> ParseMetadata(const std::string& code) {
  if (code.compare(0, 2, "#!") != 0) return Status::RedisError("ERR Missing library metadata");
  size_t eol = code.find('\n');
  if (eol == std::string::npos) return Status::RedisError("ERR Invalid library metadata");
  std::vector<std::string> parts;
  if (!SplitArgs(std::string_view(code).substr(0, eol), &parts) || parts.empty())
    return Status::RedisError("ERR Invalid library metadata");
  LibraryMetadata md;
  md.engine = parts[0].substr(2);
  bool have_name = false;
  for (size_t i = 1; i < parts.size(); i++) {
    if (parts[i].size() >= 5 &&
        EqualsIgnoreCase(std::string_view(parts[i]).substr(0, 5), "name=")) {
      if (have_name) {
        return Status::RedisError(
            "ERR Invalid metadata value, name argument was given multiple times");
      }
      md.name = parts[i].substr(5);
      have_name = true;
      continue;
    }
    return Status::RedisError("ERR Invalid metadata value given: " + parts[i]);
  }
  if (!have_name) return Status::RedisError("ERR Library name was not given");
  md.body = code.substr(eol);
  return md;
}

bool ValidLibraryName(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
  });
}

std::string PersistKey(std::string_view name) {
  return std::string(Functions::kPersistPrefix) + std::string(name);
}

}  // namespace

StatusOr<FunctionLibrary> Functions::Compile(const std::string& code, int64_t timeout_ms) {
  auto md = ParseMetadata(code);
  if (!md.ok()) return md.status();
  if (!ValidLibraryName(md->name)) {
    return Status::RedisError(
        "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
        "least one character long");
  }
  if (!EqualsIgnoreCase(md->engine, "lua"))
    return Status::RedisError("ERR Engine '" + md->engine + "' not found");
  auto registered = engine_.LoadLibrary(md->body, timeout_ms);
  if (!registered.ok()) return registered.status();
  FunctionLibrary library;
  library.name = md->name;
  library.code = code;
  library.functions = std::move(*registered);
  return library;
}

std::string Functions::FunctionCollision(const FunctionLibrary& library,
                                         const std::vector<std::string>& ignore) const {
  for (const RegisteredFunction& fn : library.functions) {
    auto it = function_library_.find(ToLower(fn.name));
    if (it == function_library_.end()) continue;
    if (std::find(ignore.begin(), ignore.end(), it->second) != ignore.end()) continue;
    return "ERR Function " + fn.name + " already exists";
  }
  return "";
}

void Functions::PublishCounts() {
  server_->function_libraries.store(static_cast<int64_t>(libraries_.size()),
                                    std::memory_order_relaxed);
  server_->functions.store(static_cast<int64_t>(function_library_.size()),
                           std::memory_order_relaxed);
}

void Functions::Link(FunctionLibrary library) {
  for (const RegisteredFunction& fn : library.functions)
    function_library_[ToLower(fn.name)] = library.name;
  std::string name = library.name;
  libraries_[name] = std::move(library);
  PublishCounts();
}

void Functions::Unlink(const std::string& name) {
  auto it = libraries_.find(name);
  if (it == libraries_.end()) return;
  for (const RegisteredFunction& fn : it->second.functions) {
    auto owner = function_library_.find(ToLower(fn.name));
    if (owner != function_library_.end() && owner->second == name) function_library_.erase(owner);
  }
  engine_.Release(it->second.functions);
  libraries_.erase(it);
  PublishCounts();
}

StatusOr<std::string> Functions::Load(Context& ctx, const std::string& code, bool replace) {
  // The cheap refusals come before the library's code runs, as in Redis.
  auto md = ParseMetadata(code);
  if (md.ok() && ValidLibraryName(md->name) && EqualsIgnoreCase(md->engine, "lua") && !replace) {
    std::lock_guard<std::mutex> lock(mu_);
    if (libraries_.count(md->name))
      return Status::RedisError("ERR Library '" + md->name + "' already exists");
  }
  auto library = Compile(code, kLoadTimeoutMs);
  if (!library.ok()) return library.status();
  std::lock_guard<std::mutex> lock(mu_);
  std::string collision = FunctionCollision(*library, {library->name});
  if (!collision.empty()) {
    engine_.Release(library->functions);
    return Status::RedisError(collision);
  }
  std::string name = library->name;
  Unlink(name);
  ctx.batch().Put(ColumnFamily::kPropagate, PersistKey(name), code);
  Link(std::move(*library));
  return name;
}

Status Functions::Delete(Context& ctx, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!libraries_.count(name)) return Status::RedisError("ERR Library not found");
  ctx.batch().Delete(ColumnFamily::kPropagate, PersistKey(name));
  Unlink(name);
  return Status::OK();
}

void Functions::Flush(Context& ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, library] : libraries_)
    ctx.batch().Delete(ColumnFamily::kPropagate, PersistKey(name));
  libraries_.clear();
  function_library_.clear();
  PublishCounts();
  // A fresh interpreter frees everything the libraries held, callbacks and their upvalues.
  engine_.Reset();
}

std::string Functions::Dump() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string payload;
  for (const auto& [name, library] : libraries_) {
    payload.push_back(static_cast<char>(rdb::kOpcodeFunction2));
    rdb::AppendString(&payload, library.code);
  }
  rdb::AppendDumpFooter(&payload);
  return payload;
}

namespace {

// The message of a clash between `library` and the libraries read before it from the same
// payload; empty if none.
std::string ClashWithinPayload(const std::vector<FunctionLibrary>& earlier,
                               const FunctionLibrary& library) {
  for (const FunctionLibrary& other : earlier) {
    if (other.name == library.name) return "ERR Library '" + other.name + "' already exists";
    for (const RegisteredFunction& fn : library.functions) {
      for (const RegisteredFunction& seen : other.functions) {
        if (EqualsIgnoreCase(fn.name, seen.name))
          return "ERR Function " + fn.name + " already exists";
      }
    }
  }
  return "";
}

}  // namespace

StatusOr<std::vector<FunctionLibrary>> Functions::CompilePayload(std::string_view body) {
  std::vector<FunctionLibrary> incoming;
  std::string error;
  rdb::Reader reader(body);
  while (reader.remaining() > 0 && error.empty()) {
    uint8_t type;
    std::string code;
    if (!reader.ReadByte(&type)) {
      error = "ERR can not read data type";
    } else if (type == rdb::kOpcodeFunctionPreGa) {
      error = "ERR Pre-GA function format not supported";
    } else if (type != rdb::kOpcodeFunction2) {
      error = "ERR given type is not a function";
    } else if (!reader.ReadString(&code)) {
      error = "ERR Failed loading library payload";
    } else {
      auto library = Compile(code, 0);
      if (!library.ok()) {
        error = library.status().ToReplyText();
        break;
      }
      error = ClashWithinPayload(incoming, *library);
      incoming.push_back(std::move(*library));
    }
  }
  if (error.empty()) return incoming;
  for (const FunctionLibrary& library : incoming) engine_.Release(library.functions);
  return Status::RedisError(error);
}

std::string Functions::RestoreConflict(const std::vector<FunctionLibrary>& incoming,
                                       RestorePolicy policy, std::vector<std::string>* leaving) {
  if (policy == RestorePolicy::kFlush) {
    for (const auto& [name, library] : libraries_) leaving->push_back(name);
  } else {
    for (const FunctionLibrary& library : incoming) {
      if (!libraries_.count(library.name)) continue;
      if (policy == RestorePolicy::kAppend)
        return "ERR Library " + library.name + " already exists";
      leaving->push_back(library.name);
    }
  }
  for (const FunctionLibrary& library : incoming) {
    std::string collision = FunctionCollision(library, *leaving);
    if (!collision.empty()) return collision;
  }
  return "";
}

Status Functions::RestoreLibraries(Context& ctx, const std::vector<std::string>& codes,
                                   RestorePolicy policy) {
  std::string payload;
  for (const std::string& code : codes) {
    payload.push_back(static_cast<char>(rdb::kOpcodeFunction2));
    rdb::AppendString(&payload, code);
  }
  rdb::AppendDumpFooter(&payload);
  return Restore(ctx, payload, policy);
}

Status Functions::Restore(Context& ctx, std::string_view payload, RestorePolicy policy) {
  uint16_t version;
  std::string_view body;
  if (!rdb::VerifyDumpPayload(payload, &version, &body))
    return Status::RedisError("ERR DUMP payload version or checksum are wrong");
  // Every library of the payload is compiled and every clash checked before anything changes;
  // on any error the new libraries are released and the registry is as it was.
  auto incoming = CompilePayload(body);
  if (!incoming.ok()) return incoming.status();
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> leaving;  // all libraries for FLUSH, the namesakes for REPLACE
  std::string error = RestoreConflict(*incoming, policy, &leaving);
  if (!error.empty()) {
    for (const FunctionLibrary& library : *incoming) engine_.Release(library.functions);
    return Status::RedisError(error);
  }
  for (const std::string& name : leaving) {
    bool kept = std::any_of(incoming->begin(), incoming->end(),
                            [&name](const FunctionLibrary& l) { return l.name == name; });
    if (!kept) ctx.batch().Delete(ColumnFamily::kPropagate, PersistKey(name));
    Unlink(name);
  }
  for (FunctionLibrary& library : *incoming) {
    ctx.batch().Put(ColumnFamily::kPropagate, PersistKey(library.name), library.code);
    Link(std::move(library));
  }
  return Status::OK();
}

bool Functions::MayWrite(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto owner = function_library_.find(ToLower(name));
  if (owner == function_library_.end()) return true;
  for (const RegisteredFunction& fn : libraries_.at(owner->second).functions) {
    if (EqualsIgnoreCase(fn.name, name)) return !(fn.flags & kScriptNoWrites);
  }
  return true;
}

void Functions::Call(CommandContext& c, bool read_only) {
  RegisteredFunction fn;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto owner = function_library_.find(ToLower(c.arg(1)));
    if (owner == function_library_.end()) return c.reply.Error("ERR Function not found");
    for (const RegisteredFunction& candidate : libraries_.at(owner->second).functions) {
      if (EqualsIgnoreCase(candidate.name, c.arg(1))) fn = candidate;
    }
  }
  auto numkeys = ParseInt64(c.arg(2));
  if (!numkeys) return c.reply.Error("ERR Bad number of keys provided");
  if (*numkeys > static_cast<int64_t>(c.argc()) - 3)
    return c.reply.Error("ERR Number of keys can't be greater than number of args");
  if (*numkeys < 0) return c.reply.Error("ERR Number of keys can't be negative");
  if (!(fn.flags & kScriptNoWrites)) {
    // A function that may write is a write command (Redis derives FCALL's flags from the
    // function's), so a read-only replica refuses it with its usual reply; without allow-oom
    // it may grow the data set.
    if (!(fn.flags & kScriptAllowOom) && c.server.memory_limit.Exceeded(*c.server.config))
      return c.reply.Error(kOomError);
    if (c.server.replication != nullptr && c.server.replication->rejects_writes())
      return c.reply.Error("READONLY You can't write against a read only replica.");
    if (read_only)
      return c.reply.Error("ERR Can not execute a script with write flag using *_ro command.");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_name_ = fn.name;
    running_command_ = &c.argv;
  }
  engine_.RunCommand(c, fn.name, fn.ref, read_only || (fn.flags & kScriptNoWrites),
                     (fn.flags & kScriptAllowOom) != 0, static_cast<size_t>(*numkeys));
  std::lock_guard<std::mutex> lock(mu_);
  running_command_ = nullptr;
}

void Functions::ReplyList(CommandContext& c, const std::optional<std::string>& pattern,
                          bool with_code) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const FunctionLibrary*> shown;
  for (const auto& [name, library] : libraries_) {
    if (!pattern || GlobMatch(*pattern, name, true)) shown.push_back(&library);
  }
  Reply& r = c.reply;
  r.Array(shown.size());
  for (const FunctionLibrary* library : shown) {
    r.Map(with_code ? 4 : 3);
    r.Bulk("library_name");
    r.Bulk(library->name);
    r.Bulk("engine");
    r.Bulk("LUA");
    r.Bulk("functions");
    r.Array(library->functions.size());
    for (const RegisteredFunction& fn : library->functions) {
      r.Map(3);
      r.Bulk("name");
      r.Bulk(fn.name);
      r.Bulk("description");
      if (fn.description) {
        r.Bulk(*fn.description);
      } else {
        r.Null();
      }
      r.Bulk("flags");
      size_t count = 0;
      for (const ScriptFlagName& flag : kScriptFlagNames) count += (fn.flags & flag.flag) ? 1 : 0;
      r.Set(count);
      for (const ScriptFlagName& flag : kScriptFlagNames) {
        if (fn.flags & flag.flag) r.Simple(flag.name);
      }
    }
    if (with_code) {
      r.Bulk("library_code");
      r.Bulk(library->code);
    }
  }
}

void Functions::ReplyStats(CommandContext& c) {
  const ScriptGuard& guard = c.server.script_guard;
  // An EVAL script is busy: Redis answers with the BUSY error that names SCRIPT KILL.
  if (guard.running() && !guard.running_function())
    return c.reply.Error(
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
  std::lock_guard<std::mutex> lock(mu_);
  Reply& r = c.reply;
  r.Map(2);
  r.Bulk("running_script");
  if (guard.running() && running_command_ != nullptr) {
    r.Map(3);
    r.Bulk("name");
    r.Bulk(running_name_);
    r.Bulk("command");
    r.BulkArray(running_command_->data(), running_command_->size());
    r.Bulk("duration_ms");
    r.Integer(guard.RunningForMs());
  } else {
    r.Null();
  }
  r.Bulk("engines");
  r.Map(1);
  r.Bulk("LUA");
  r.Map(2);
  r.Bulk("libraries_count");
  r.Integer(static_cast<int64_t>(libraries_.size()));
  r.Bulk("functions_count");
  r.Integer(static_cast<int64_t>(function_library_.size()));
}

void Functions::Install(std::string_view name, std::string_view code) {
  auto library = Compile(std::string(code), 0);
  if (!library.ok()) {
    LOG(ERROR) << "function library '" << name << "' does not load: " << library.status().message();
    return;
  }
  if (library->name != name) {
    LOG(ERROR) << "function library stored as '" << name << "' is named '" << library->name << "'";
    engine_.Release(library->functions);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  Unlink(library->name);
  // A batch that swaps functions between libraries puts one library while the other still
  // holds the function; the other comes in the same batch, so the older holder gives way.
  for (const RegisteredFunction& fn : library->functions) {
    auto owner = function_library_.find(ToLower(fn.name));
    if (owner != function_library_.end()) Unlink(std::string(owner->second));
  }
  Link(std::move(*library));
}

Status Functions::LoadPersisted() {
  Engine* engine = server_->keyspace->engine();
  rocksdb::ReadOptions options;
  std::string lower(kPersistPrefix);
  std::string upper = lower;
  upper.back()++;
  rocksdb::Slice upper_slice(upper);
  options.iterate_upper_bound = &upper_slice;
  auto it = engine->NewIterator(ColumnFamily::kPropagate, options);
  for (it->Seek(lower); it->Valid(); it->Next()) {
    std::string_view key = it->key().ToStringView();
    Install(key.substr(kPersistPrefix.size()), it->value().ToStringView());
  }
  if (!it->status().ok())
    return Status::IOError("reading persisted function libraries: " + it->status().ToString());
  return Status::OK();
}

Status Functions::ReloadPersisted() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    libraries_.clear();
    function_library_.clear();
    PublishCounts();
    engine_.Reset();
  }
  return LoadPersisted();
}

void Functions::OnReplicatedPut(std::string_view name, std::string_view code) {
  Install(name, code);
}

void Functions::OnReplicatedDelete(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  Unlink(std::string(name));
}

}  // namespace basalt
