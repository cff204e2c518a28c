// Process-level duties of a Redis-style server: the pid file, running in the background, and
// telling a supervisor (systemd, upstart) when the server is ready.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace basalt {

// Writes the calling process's pid and a newline to `path`.
Status WritePidFile(const std::string& path);
// Removes the pid file if it still holds this process's pid.
void RemovePidFile(const std::string& path);

// Forks: the parent exits 0, the child starts a new session with stdin, stdout and stderr on
// /dev/null. Call it before any thread starts.
Status Daemonize();

// Sends `state` (e.g. "READY=1\n") to $NOTIFY_SOCKET as one datagram, the sd_notify protocol
// without libsystemd; a name starting with '@' is an abstract socket. OK when the variable is
// unset (not run by systemd).
Status NotifySystemd(std::string_view state);
// Whether $NOTIFY_SOCKET is set: `supervised auto` then means systemd.
bool UnderSystemd();
// upstart's expect-stop protocol: stop with SIGSTOP once ready, if $UPSTART_JOB is set.
void NotifyUpstartReady();

}  // namespace basalt
