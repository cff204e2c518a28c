// Monitors: the clients that ran MONITOR, and the feed of executed commands to them.
//
// A command is fed after its handler ran (MULTI, then each of EXEC's commands, then EXEC; a
// script's own calls after the EVAL, which is fed before it runs), while its locks are still
// held, so two commands that touch one key reach every monitor in the order they ran, on
// whatever workers they ran. Administrative commands are not shown, AUTH's and HELLO AUTH's
// secrets are redacted (commands/redaction.h), as Redis 7.2 does. A line reaches a monitor like a
// Pub/Sub message: through the monitor's ClientOutput queue and its own worker (pubsub_client.h),
// so no thread but the owner writes a connection, and a monitor that stops reading is disconnected
// at the normal class's client-output-buffer-limit.
//
// With no monitor attached the request path pays one relaxed atomic load (active()).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "commands/session.h"
#include "config/config.h"

namespace basalt {

struct CommandSpec;

class Monitors {
 public:
  void set_config(const Config* config) { config_ = config; }

  // Any thread; the only cost of MONITOR on the request path while nobody monitors.
  bool active() const { return count_.load(std::memory_order_relaxed) > 0; }

  // The session's own worker. The session must be owned by a shared_ptr.
  void Add(Session& session);
  // The session's own worker (RESET, connection close); nothing if it does not monitor.
  void Remove(Session& session);

  // Queues the line for `argv`, run by `client` in database `db`, for every monitor.
  void Feed(const Session& client, int db, const std::vector<std::string>& argv);

 private:
  // Serialises the feeds, so every monitor sees the lines in one order.
  std::mutex mu_;
  std::vector<std::shared_ptr<Session>> sessions_;
  std::atomic<int> count_{0};
  const Config* config_ = nullptr;
};

// Redis's sdscatrepr: `s` in double quotes, with \\ \" \n \r \t \a \b and \xHH escapes.
void AppendQuoted(std::string* out, std::string_view s);

// The monitor line without its leading '+' and line end: `<sec>.<usec> [<db> <source>] "arg" ...`
// where the source is the client's address or "lua" for a script's own calls.
std::string MonitorLine(int64_t unix_us, int db, std::string_view source,
                        const std::vector<std::string>& argv);

// Whether a monitor sees this call: not for administrative commands (nor administrative
// subcommands of containers such as CLIENT LIST), as in Redis.
bool ShownToMonitors(const CommandSpec& spec, const std::vector<std::string>& argv);

}  // namespace basalt
