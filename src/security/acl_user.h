// ACL users and their rules, with Redis 7.0's rule language and descriptions.
//
// An AclUser is a value: ACL SETUSER applies rules to a copy and publishes the copy only if
// every rule was valid, so a half-applied SETUSER never exists. A user has flags (on/off,
// nopass), password hashes (hex SHA-256, never clear text) and selectors: the root selector
// plus the optional "(...)" selectors of Redis 7; a command is allowed when one selector allows
// the command, all its keys and all its channels.
//
// Describe() produces the text of ACL LIST and the ACL file. For commands it follows Redis
// 7.2: +@all or -@all (whichever the user started from), then the command and category rules in
// the order they were given, each rule replacing an earlier one for the same command or category
// (and a command's rule replacing those for its subcommands). Applying the description to a new
// user rebuilds exactly the same permissions, because it is the rules that built them.
#pragma once

#include <bitset>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "security/acl_catalog.h"

namespace basalt {

enum AclKeyAccess : uint8_t {
  kAclKeyNone = 0,   // the command only looks at the key's existence or metadata
  kAclKeyRead = 1,   // %R~: the command reads the value
  kAclKeyWrite = 2,  // %W~: the command modifies the key
  kAclKeyReadWrite = kAclKeyRead | kAclKeyWrite,
};

struct AclKeyPattern {
  std::string pattern;
  uint8_t access = kAclKeyReadWrite;
};

class AclSelector {
 public:
  using Bitmap = std::bitset<AclCatalog::kBitmapSize>;

  // Applies one selector rule: +cmd, -cmd, +cmd|sub, +@cat, -@cat, allcommands, nocommands,
  // ~pattern, %R~pattern, %W~pattern, allkeys, resetkeys, &pattern, allchannels,
  // resetchannels. A failure's message is Redis's reason text ("Syntax error", ...).
  Status Apply(const AclCatalog& catalog, std::string_view rule);

  // The command with this id may run; `first_arg` is the argument a "+cmd|arg" rule matches
  // (the command's first argument), if any.
  bool AllowsCommand(int id, const std::string* first_arg) const;
  bool AllowsKey(std::string_view key, uint8_t needed) const;
  // `literal`: the channel is a PSUBSCRIBE pattern, compared as text rather than matched.
  bool AllowsChannel(std::string_view channel, bool literal) const;
  bool all_keys() const { return all_keys_; }
  bool all_channels() const { return all_channels_; }
  const std::vector<std::string>& channels() const { return channels_; }
  bool all_commands() const { return commands_.all(); }

  std::string DescribeCommands(const AclCatalog& catalog) const;  // "-@all +@read -get"
  std::string DescribeKeys() const;                               // "~a* %R~b*", "~*" for all keys
  std::string DescribeChannels() const;                           // "&a &b", "&*" for all channels
  // Keys, channels and commands in ACL LIST's form ("~* resetchannels -@all +get").
  std::string Describe(const AclCatalog& catalog) const;

 private:
  Status ApplyCommandRule(const AclCatalog& catalog, std::string_view rule);
  Status ApplyKeyPattern(std::string_view rule);
  Status ApplyChannelPattern(std::string_view rule);
  void ResetCommands(bool allow);
  // Appends "+name"/"-name" (a command's full name, "@category" or "cmd|firstarg", lower case)
  // to the retained rules, after removing the earlier rules it replaces.
  void RetainCommandRule(std::string name, bool allow);

  Bitmap commands_;
  std::map<int, std::vector<std::string>> first_args_;  // command id -> allowed argv[1] values
  std::vector<std::string> command_rules_;              // "+@set", "-hset", "+select|0", ...
  bool all_keys_ = false;
  std::vector<AclKeyPattern> keys_;
  bool all_channels_ = false;
  std::vector<std::string> channels_;
};

struct AclUser {
  enum class Sanitize { kUnset, kSanitize, kSkip };

  std::string name;
  bool enabled = false;
  bool nopass = false;
  Sanitize sanitize_payload = Sanitize::kUnset;  // accepted and shown; Basalt has no RESTORE
  std::vector<std::string> password_hashes;      // lowercase hex SHA-256, in insertion order
  std::vector<AclSelector> selectors = std::vector<AclSelector>(1);  // [0]: the root selector

  // Applies one rule of ACL SETUSER or the ACL file: the user-level rules (on, off, nopass,
  // resetpass, >pass, <pass, #hash, !hash, reset, clearselectors, "(selector rules)") or a
  // rule of the root selector.
  Status Apply(const AclCatalog& catalog, std::string_view rule);
  // ACL LIST's text after "user <name> ".
  std::string Describe(const AclCatalog& catalog) const;
  // True if `password` is one of the user's passwords (or the user is nopass). The hashes are
  // compared in constant time, so timing does not tell how close a guess was.
  bool PasswordMatches(std::string_view password) const;
  const AclSelector& root() const { return selectors[0]; }
};

// Rules as ACL SETUSER and the ACL file take them: a selector may span several arguments
// ("(+get", "~x)"), which are joined back into one rule. Returns false with the index of the
// argument that opened an unterminated selector.
bool MergeSelectorArguments(const std::vector<std::string>& args, std::vector<std::string>* out,
                            size_t* unmatched_index);

// Usernames and patterns may not contain spaces or NUL characters: the ACL file and ACL LIST
// separate rules with spaces.
bool AclNameIsValid(std::string_view name);

}  // namespace basalt
