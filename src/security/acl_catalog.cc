#include "security/acl_catalog.h"

#include "common/strutil.h"

namespace basalt {

const std::vector<std::string>& AclCategoryNames() {
  static const std::vector<std::string> kNames = {
      "keyspace", "read",   "write",       "set",       "sortedset",  "list",        "hash",
      "string",   "bitmap", "hyperloglog", "geo",       "stream",     "pubsub",      "admin",
      "fast",     "slow",   "blocking",    "dangerous", "connection", "transaction", "scripting"};
  return kNames;
}

uint64_t AclCategoryByName(std::string_view name) {
  const auto& names = AclCategoryNames();
  for (size_t i = 0; i < names.size(); i++) {
    if (EqualsIgnoreCase(names[i], name)) return 1ull << i;
  }
  return 0;
}

bool ParseAclCategories(std::string_view text, uint64_t* bits) {
  // Categories are "@name" words, separated by spaces or written back to back ("@a@b").
  *bits = 0;
  std::string joined;
  for (char ch : text) {
    if (ch != ' ') joined.push_back(ch);
  }
  if (joined.empty()) return true;
  if (joined[0] != '@') return false;
  std::string_view rest = std::string_view(joined).substr(1);
  while (true) {
    size_t at = rest.find('@');
    uint64_t bit = AclCategoryByName(rest.substr(0, at));
    if (bit == 0) return false;
    *bits |= bit;
    if (at == std::string_view::npos) return true;
    rest = rest.substr(at + 1);
  }
}

int AclCatalog::Add(std::string_view name, uint64_t categories, int parent) {
  if (entries_.size() >= kFutureCommandsBit) return -1;
  int id = static_cast<int>(entries_.size());
  AclCommandEntry entry;
  entry.name = ToLower(name);
  entry.categories = categories;
  entry.parent = parent;
  by_name_[entry.name] = id;
  entries_.push_back(std::move(entry));
  if (parent >= 0) entries_[static_cast<size_t>(parent)].subcommands.push_back(id);
  return id;
}

int AclCatalog::Find(std::string_view name) const {
  auto it = by_name_.find(ToLower(name));
  return it == by_name_.end() ? -1 : it->second;
}

}  // namespace basalt
