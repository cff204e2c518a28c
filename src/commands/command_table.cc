#include "commands/command_table.h"

#include <algorithm>
#include <unordered_map>

#include "common/strutil.h"

namespace basalt {

namespace {

std::unordered_map<std::string, const CommandSpec*>& Index() {
  static std::unordered_map<std::string, const CommandSpec*> index;
  return index;
}

}  // namespace

CommandTable::CommandTable() {
  for (auto* family : {&StringCommands, &KeyCommands, &ServerCommands, &ConnectionCommands,
                       &TransactionCommands, &IntrospectionCommands, &HashCommands, &SetCommands,
                       &ListCommands, &ZsetCommands, &BlockingListCommands}) {
    for (const CommandSpec& spec : (*family)()) {
      all_.push_back(&spec);
      Index()[spec.name] = &spec;
      std::string_view subs = spec.subcommands;
      while (!subs.empty()) {
        size_t space = subs.find(' ');
        std::string_view item = subs.substr(0, space);
        size_t colon = item.find(':');
        subcommand_arity_[std::string(spec.name) + "|" + std::string(item.substr(0, colon))] =
            std::stoi(std::string(item.substr(colon + 1)));
        subs = space == std::string_view::npos ? std::string_view() : subs.substr(space + 1);
      }
    }
  }
}

const CommandTable& CommandTable::Get() {
  static const CommandTable table;
  return table;
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  if (name.size() > 64) return nullptr;
  auto it = Index().find(ToLower(name));
  return it == Index().end() ? nullptr : it->second;
}

size_t CommandTable::IndexOf(const CommandSpec* spec) const {
  return std::find(all_.begin(), all_.end(), spec) - all_.begin();
}

std::optional<int> CommandTable::SubcommandArity(const CommandSpec& spec,
                                                 std::string_view sub) const {
  if (sub.size() > 64) return std::nullopt;
  auto it = subcommand_arity_.find(std::string(spec.name) + "|" + ToLower(sub));
  if (it == subcommand_arity_.end()) return std::nullopt;
  return it->second;
}

std::vector<size_t> CommandTable::KeyIndexes(const CommandSpec& spec,
                                             const std::vector<std::string>& argv) {
  if (spec.key_finder != nullptr) return spec.key_finder(argv);
  std::vector<size_t> out;
  if (spec.first_key <= 0) return out;
  int argc = static_cast<int>(argv.size());
  int last = spec.last_key < 0 ? argc + spec.last_key : spec.last_key;
  int step = spec.key_step > 0 ? spec.key_step : 1;
  for (int i = spec.first_key; i <= last && i < argc; i += step) out.push_back(i);
  return out;
}

}  // namespace basalt
