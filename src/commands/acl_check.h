// ACL enforcement over the command table: the one place that decides whether a user may run a
// command with given arguments.
//
// The dispatcher calls AclPermitsOrReply() for every command after authentication and before
// queueing or locking; EXEC re-checks each queued command with AclRecheckForExec(), since the
// rules may change between MULTI and EXEC. Other executors (scripts calling redis.call) use
// AclCheck() with the calling user from SessionUser() and report with NoPermissionError() and
// LogAclDenial(context "lua").
//
// What a command needs comes from its CommandSpec row: the command (or its subcommand, for a
// container such as CONFIG) must be allowed, every key argument (the row's key positions or
// key finder) must match a key pattern with the right access (%R~ for reads of a value, %W~
// for writes, both for read-modify-write, per Redis's key specs), and the channels of the
// Pub/Sub commands must match a channel pattern. The catalog of ids, names and categories that
// the ACL rules speak about is built from the same table (CommandAclCatalog()).
#pragma once

#include <string>
#include <vector>

#include "commands/command_table.h"
#include "commands/server_state.h"
#include "security/acl_catalog.h"
#include "security/acl_user.h"

namespace basalt {

enum class AclVerdict { kAllowed, kDeniedCommand, kDeniedKey, kDeniedChannel };

struct AclCheckResult {
  AclVerdict verdict = AclVerdict::kAllowed;
  size_t arg = 0;  // argv index of the denied key or channel
  bool ok() const { return verdict == AclVerdict::kAllowed; }
};

// "get", or "config|get" for a container command's subcommand (ACL rules' and NOPERM's name).
std::string AclCommandName(const CommandSpec& spec, const std::vector<std::string>& argv);

AclCheckResult AclCheck(const AclUser& user, const CommandSpec& spec,
                        const std::vector<std::string>& argv);

// How the command uses its `nth` key (AclKeyAccess: none, read, write or both), as the ACL's
// %R~/%W~ patterns judge it; COMMAND GETKEYSANDFLAGS reports it too.
uint8_t AclKeyAccessOf(const CommandSpec& spec, const std::vector<std::string>& argv, size_t nth);
// Redis's NOPERM reply for a denial.
std::string NoPermissionError(const AclCheckResult& result, const CommandSpec& spec,
                              const std::vector<std::string>& argv);
// ACL DRYRUN's explanation of a denial ("This user has no permissions to ...").
std::string DryRunExplanation(const AclCheckResult& result, const CommandSpec& spec,
                              const std::vector<std::string>& argv);

// The session's user, re-read from the store when the ACL rules changed since last time. A
// user deleted under a connection resolves to a user without any permission until the
// connection closes.
const AclUser& SessionUser(ServerState& server, Session& session);
// Makes `user` the session's authenticated user (AUTH, HELLO AUTH, RESET).
void SetSessionUser(ServerState& server, Session& session, std::shared_ptr<const AclUser> user);
// True if the session must authenticate before running commands other than AUTH/HELLO/QUIT.
bool AuthRequired(ServerState& server, const Session& session);

// The dispatcher's check: replies NOPERM, logs the denial and marks an open MULTI as failed
// when the session's user may not run the command. Returns true if it may.
bool AclPermitsOrReply(ServerState& server, Session& session, const CommandSpec& spec,
                       const std::vector<std::string>& argv, Reply& reply);
// EXEC's check of a queued command: empty if allowed, else the error to put in its place.
std::string AclRecheckForExec(ServerState& server, Session& session, const CommandSpec& spec,
                              const std::vector<std::string>& argv);

// redis.call's check for a script run by `caller`: empty if its user may run the command, else
// the script error Redis gives ("ERR The user executing the script can't ..."); denials are
// logged with context "lua".
std::string AclCheckForScript(ServerState& server, Session& caller, const CommandSpec& spec,
                              const std::vector<std::string>& argv);

// ACL LOG entries. `context` is "toplevel", "multi" or "lua".
void LogAclDenial(ServerState& server, Session& session, const AclCheckResult& result,
                  const CommandSpec& spec, const std::vector<std::string>& argv,
                  const char* context);
void LogAuthFailure(ServerState& server, Session& session, const std::string& username,
                    const char* command);

// Closes the connections authenticated as one of `users` (the caller's own after its reply).
void DisconnectUsers(ServerState& server, Session& caller, const std::vector<std::string>& users);
// After ACL SETUSER changed a user from `before` to `after`: closes that user's subscribed
// connections that hold a subscription the new channel rules no longer allow, as Redis does.
void DisconnectRevokedSubscribers(ServerState& server, Session& caller, const AclUser& before,
                                  const AclUser& after);

}  // namespace basalt
