// The ACL's view of the commands: names, categories and subcommands, by numeric id.
//
// Redis's ACL rules name commands (`+get`), subcommands (`+config|get`) and categories
// (`+@read`); a user's permissions are a bitmap indexed by command id. This module keeps the
// security code independent of the command table: the command layer fills an AclCatalog once
// at start-up (see commands/acl_check.h), and the rule parser and checks only see ids, names
// and category bits. Subcommands are entries of their own whose `parent` is the container
// command, as in Redis, so `+config|get` and `-@dangerous` can reach them individually.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace basalt {

// One bit per category, in Redis's order (ACL CAT lists them in this order).
enum AclCategoryBit : uint64_t {
  kAclKeyspace = 1ull << 0,
  kAclRead = 1ull << 1,
  kAclWrite = 1ull << 2,
  kAclSet = 1ull << 3,
  kAclSortedSet = 1ull << 4,
  kAclList = 1ull << 5,
  kAclHash = 1ull << 6,
  kAclString = 1ull << 7,
  kAclBitmap = 1ull << 8,
  kAclHyperLogLog = 1ull << 9,
  kAclGeo = 1ull << 10,
  kAclStream = 1ull << 11,
  kAclPubSub = 1ull << 12,
  kAclAdmin = 1ull << 13,
  kAclFast = 1ull << 14,
  kAclSlow = 1ull << 15,
  kAclBlocking = 1ull << 16,
  kAclDangerous = 1ull << 17,
  kAclConnection = 1ull << 18,
  kAclTransaction = 1ull << 19,
  kAclScripting = 1ull << 20,
};

// The category names without '@', in bit order.
const std::vector<std::string>& AclCategoryNames();
// The bit of a category name (case-insensitive, without '@'); 0 if there is no such category.
uint64_t AclCategoryByName(std::string_view name);
// "@read @string @fast" (or "@read@string@fast") -> bits. Returns false unless every word is
// a known "@category".
bool ParseAclCategories(std::string_view text, uint64_t* bits);

struct AclCommandEntry {
  std::string name;  // lower case; "parent|sub" for a subcommand
  uint64_t categories = 0;
  int parent = -1;               // the container command's id, for a subcommand
  std::vector<int> subcommands;  // ids, for a container command
};

class AclCatalog {
 public:
  // Ids 0..kMaxCommands-1 name commands; the last bit of a user's bitmap is reserved for
  // "commands added later" (set only by +@all), which decides how rules are described.
  static constexpr size_t kBitmapSize = 1024;
  static constexpr size_t kFutureCommandsBit = kBitmapSize - 1;

  // Adds a command (parent < 0) or a subcommand of `parent`; returns its id, or -1 if the
  // bitmap is full.
  int Add(std::string_view name, uint64_t categories, int parent = -1);
  // Id of a command or "parent|sub" (case-insensitive); -1 if unknown.
  int Find(std::string_view name) const;
  const AclCommandEntry& entry(int id) const { return entries_[static_cast<size_t>(id)]; }
  const std::vector<AclCommandEntry>& entries() const { return entries_; }

 private:
  std::vector<AclCommandEntry> entries_;
  std::unordered_map<std::string, int> by_name_;
};

}  // namespace basalt
