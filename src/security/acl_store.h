// AclStore: the set of ACL users, authentication, and the ACL file.
//
// Users are immutable snapshots (shared_ptr<const AclUser>): a change builds a new user and
// swaps it in under the store's mutex, then moves `epoch()`. Sessions keep the snapshot of
// their user and re-read it only when the epoch has moved, so the per-command cost of ACLs is
// one atomic load. The `default` user always exists; `requirepass` is its password, as in
// Redis 7 (an empty requirepass makes it `nopass`).
//
// The ACL file holds one `user <name> <rules...>` line per user, in ACL LIST's format. Loading
// it is all or nothing: any error leaves the current users untouched and reports every bad
// line, in Redis's words.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "security/acl_catalog.h"
#include "security/acl_user.h"

namespace basalt {

class AclStore {
 public:
  explicit AclStore(const AclCatalog* catalog);

  const AclCatalog& catalog() const { return *catalog_; }
  // Moves whenever a user is added, changed or removed.
  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

  std::shared_ptr<const AclUser> Find(std::string_view name) const;
  std::shared_ptr<const AclUser> DefaultUser() const { return Find("default"); }
  // All users, ordered by name.
  std::vector<std::shared_ptr<const AclUser>> Users() const;

  // ACL SETUSER: applies `rules` (already merged with MergeSelectorArguments) to a copy of the
  // user, or to a new user, and publishes it only if all of them apply. On failure `*bad_rule`
  // names the rule and the status carries Redis's reason.
  Status SetUser(std::string_view name, const std::vector<std::string>& rules,
                 std::string* bad_rule);
  // Removes the named users that exist (never `default`) and returns their names.
  std::vector<std::string> DelUsers(const std::vector<std::string>& names);
  // The user, if it exists, is enabled and `password` is one of its passwords.
  std::shared_ptr<const AclUser> Authenticate(std::string_view name,
                                              std::string_view password) const;

  // requirepass: the default user's only password, or nopass when empty.
  void SetDefaultPassword(std::string_view password);
  // Whether a connection must AUTH before running commands: the default user has a password
  // or is disabled.
  bool AuthRequired() const { return default_requires_auth_.load(std::memory_order_acquire); }
  // Protected mode's condition: the default user has no password.
  bool DefaultUserIsNoPass() const { return default_nopass_.load(std::memory_order_acquire); }

  // Replaces every user with those of the file (a missing `default` becomes the built-in
  // default user). On error nothing changes and the message lists the problems as Redis does.
  Status LoadFile(const std::string& path);
  // Writes every user in ACL LIST's format through a temporary file renamed into place.
  Status SaveFile(const std::string& path) const;

 private:
  std::shared_ptr<AclUser> NewDefaultUser() const;
  void PublishLocked();  // after a change: flags of the default user, then the epoch

  const AclCatalog* catalog_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const AclUser>, std::less<>> users_;
  std::atomic<uint64_t> epoch_{1};
  std::atomic<bool> default_requires_auth_{false};
  std::atomic<bool> default_nopass_{true};
};

}  // namespace basalt
