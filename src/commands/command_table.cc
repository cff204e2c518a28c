#include "commands/command_table.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include <glog/logging.h>

#include "common/strutil.h"

namespace basalt {

namespace {

uint32_t ShownFlagsMask() {
  uint32_t mask = 0;
  for (const CommandFlagName& f : CommandFlagNames()) mask |= f.bit;
  return mask;
}

// "admin,noscript,stale" as flag bits. The rows are the project's own, so an unknown name is a
// programming error: the table is built at the first lookup, which every test makes.
uint32_t ParseFlagNames(std::string_view text) {
  uint32_t flags = 0;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view name = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    bool known = false;
    for (const CommandFlagName& f : CommandFlagNames()) {
      if (name == f.name) {
        flags |= f.bit;
        known = true;
      }
    }
    CHECK(known) << "unknown command flag '" << name << "' in a subcommand row";
  }
  return flags;
}

uint32_t DerivedSubcommandFlags(const CommandSpec& spec, std::string_view name,
                                std::string_view categories) {
  if (name == "help") return kCmdLoading | kCmdStale;
  uint32_t flags = spec.flags & ShownFlagsMask() & ~kCmdAdmin;
  if (categories.find("@admin") != std::string_view::npos) flags |= kCmdAdmin;
  if (categories.find("@write") != std::string_view::npos) flags |= kCmdWrite;
  return flags;
}

// Parses a row's "name:arity[:categories[:flags]] ..." subcommand list.
std::vector<SubcommandSpec> ParseSubcommands(const CommandSpec& spec) {
  std::vector<SubcommandSpec> out;
  std::string_view subs = spec.subcommands;
  while (!subs.empty()) {
    size_t space = subs.find(' ');
    std::string_view item = subs.substr(0, space);
    subs = space == std::string_view::npos ? std::string_view() : subs.substr(space + 1);
    size_t colon = item.find(':');
    std::string_view rest = item.substr(colon + 1);
    size_t second = rest.find(':');
    SubcommandSpec sub;
    sub.name = std::string(item.substr(0, colon));
    sub.arity = std::stoi(std::string(rest.substr(0, second)));
    std::string_view categories = spec.acl_categories;
    std::optional<std::string_view> flags;  // listed, possibly as none at all
    if (second != std::string_view::npos) {
      categories = rest.substr(second + 1);
      size_t third = categories.find(':');
      if (third != std::string_view::npos) {
        flags = categories.substr(third + 1);
        categories = categories.substr(0, third);
      }
    }
    sub.acl_categories = categories.data();
    sub.acl_categories_len = categories.size();
    sub.flags = flags ? ParseFlagNames(*flags) : DerivedSubcommandFlags(spec, sub.name, categories);
    out.push_back(std::move(sub));
  }
  return out;
}

// Command names are at most this long; a longer name is no command.
constexpr size_t kMaxNameLength = 64;

// The command `name` names in `names`, whatever its case, building no string.
template <typename NameMap>
const CommandSpec* FindIn(const NameMap& names, std::string_view name) {
  if (name.size() > kMaxNameLength) return nullptr;
  char lower[kMaxNameLength] = {};
  for (size_t i = 0; i < name.size(); i++) lower[i] = AsciiLower(name[i]);
  auto it = names.find(std::string_view(lower, name.size()));
  return it == names.end() ? nullptr : it->second;
}

}  // namespace

const std::vector<CommandFlagName>& CommandFlagNames() {
  static const std::vector<CommandFlagName> kNames = {{kCmdWrite, "write"},
                                                      {kCmdReadOnly, "readonly"},
                                                      {kCmdDenyOom, "denyoom"},
                                                      {kCmdAdmin, "admin"},
                                                      {kCmdPubSub, "pubsub"},
                                                      {kCmdNoScript, "noscript"},
                                                      {kCmdBlocking, "blocking"},
                                                      {kCmdLoading, "loading"},
                                                      {kCmdStale, "stale"},
                                                      {kCmdMonitorFirst, "skip_monitor"},
                                                      {kCmdSkipSlowlog, "skip_slowlog"},
                                                      {kCmdFast, "fast"},
                                                      {kCmdNoAuth, "no_auth"},
                                                      {kCmdNoMandatoryKeys, "no_mandatory_keys"},
                                                      {kCmdNoAsyncLoading, "no_async_loading"},
                                                      {kCmdNoMulti, "no_multi"},
                                                      {kCmdMovableKeys, "movablekeys"},
                                                      {kCmdAllowBusy, "allow_busy"}};
  return kNames;
}

CommandTable::CommandTable() {
  for (auto* family :
       {&StringCommands,      &KeyCommands,           &ServerCommands,       &ConnectionCommands,
        &TransactionCommands, &IntrospectionCommands, &HashCommands,         &SetCommands,
        &ListCommands,        &ZsetCommands,          &BlockingListCommands, &BitmapCommands,
        &HllCommands,         &GeoCommands,           &SortCommands,         &ScriptingCommands,
        &PubSubCommands,      &AclCommands,           &ReplicationCommands,  &MemoryCommands,
        &LatencyCommands,     &DebugCommands,         &ClusterCommands,      &StreamCommands,
        &FunctionCommands,    &DumpCommands,          &MigrateCommands,      &ImportCommands}) {
    for (const CommandSpec& spec : (*family)()) {
      all_.push_back(&spec);
      by_name_[spec.name] = &spec;
      by_original_[spec.name] = &spec;
      std::vector<SubcommandSpec> subs = ParseSubcommands(spec);
      for (const auto& sub : subs) {
        subcommand_arity_[std::string(spec.name) + "|" + sub.name] = sub.arity;
      }
      if (!subs.empty()) subcommands_[&spec] = std::move(subs);
    }
  }
  callable_ = all_;
  for (const CommandSpec* spec : all_) stat_names_.push_back(spec->name);
  for (const CommandSpec* spec : all_) {
    auto it = subcommands_.find(spec);
    if (it == subcommands_.end()) continue;
    for (SubcommandSpec& sub : it->second) {
      sub.stat_slot = stat_names_.size();
      stat_names_.push_back(std::string(spec->name) + "|" + sub.name);
    }
  }
  index_slots_.resize(std::bit_ceil(all_.size() * 4));
  const size_t mask = index_slots_.size() - 1;
  for (size_t i = 0; i < all_.size(); i++) {
    size_t slot = SlotOf(all_[i], mask);
    while (index_slots_[slot].spec != nullptr) slot = (slot + 1) & mask;
    index_slots_[slot] = {all_[i], i};
  }
}

CommandTable& CommandTable::Mutable() {
  static CommandTable table;
  return table;
}

const CommandTable& CommandTable::Get() {
  return Mutable();
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  return FindIn(by_name_, name);
}

const CommandSpec* CommandTable::FindOriginal(std::string_view name) const {
  return FindIn(by_original_, name);
}

Status CommandTable::Rename(std::string_view name, std::string_view new_name) {
  CommandTable& table = Mutable();
  auto it = table.by_name_.find(ToLower(name));
  if (it == table.by_name_.end())
    return Status::InvalidArgument("No such command in rename-command");
  const CommandSpec* spec = it->second;
  std::string target = ToLower(new_name);
  if (!target.empty() && table.by_name_.count(target))
    return Status::InvalidArgument("Target command name already exists");
  table.by_name_.erase(it);
  if (target.empty()) {
    table.callable_.erase(std::find(table.callable_.begin(), table.callable_.end(), spec));
  } else {
    table.by_name_[target] = spec;
  }
  return Status::OK();
}

// Every command looks its counters up here: a std::unordered_map, whose buckets are found by a
// division, takes 1.4% of a pipelined LPUSH's samples, this table 0.2% (docs/benchmarks.md,
// "Per-command bookkeeping").
size_t CommandTable::IndexOf(const CommandSpec* spec) const {
  const size_t mask = index_slots_.size() - 1;
  for (size_t slot = SlotOf(spec, mask);; slot = (slot + 1) & mask) {
    const IndexSlot& entry = index_slots_[slot];
    if (entry.spec == nullptr) return all_.size();
    if (entry.spec == spec) return entry.index;
  }
}

std::optional<int> CommandTable::SubcommandArity(const CommandSpec& spec,
                                                 std::string_view sub) const {
  if (sub.size() > 64) return std::nullopt;
  auto it = subcommand_arity_.find(std::string(spec.name) + "|" + ToLower(sub));
  if (it == subcommand_arity_.end()) return std::nullopt;
  return it->second;
}

const std::vector<SubcommandSpec>& CommandTable::Subcommands(const CommandSpec& spec) const {
  static const std::vector<SubcommandSpec> kNone;
  auto it = subcommands_.find(&spec);
  return it == subcommands_.end() ? kNone : it->second;
}

const SubcommandSpec* CommandTable::FindSubcommand(const CommandSpec& spec,
                                                   const std::vector<std::string>& argv) const {
  if (argv.size() < 2 || !HasSubcommands(spec)) return nullptr;  // no map lookup for most
  for (const SubcommandSpec& sub : Subcommands(spec)) {
    if (EqualsIgnoreCase(sub.name, argv[1])) return &sub;
  }
  return nullptr;
}

uint32_t CommandTable::FlagsOf(const CommandSpec& spec,
                               const std::vector<std::string>& argv) const {
  const SubcommandSpec* sub = FindSubcommand(spec, argv);
  if (sub == nullptr) return spec.flags;
  return (spec.flags & ~ShownFlagsMask()) | sub->flags;
}

size_t CommandTable::StatSlotOf(const CommandSpec& spec,
                                const std::vector<std::string>& argv) const {
  const SubcommandSpec* sub = FindSubcommand(spec, argv);
  return sub != nullptr ? sub->stat_slot : IndexOf(&spec);
}

std::vector<size_t> CommandTable::KeyIndexes(const CommandSpec& spec,
                                             const std::vector<std::string>& argv) {
  if (spec.key_finder != nullptr) return spec.key_finder(argv);
  std::vector<size_t> out;
  ForEachKeyIndex(spec, argv, [&out](size_t i) { out.push_back(i); });
  return out;
}

}  // namespace basalt
