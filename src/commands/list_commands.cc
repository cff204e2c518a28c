// List commands: not written yet.
#include "commands/command_util.h"

namespace basalt {

namespace {

const std::vector<CommandSpec> kListCommands = {};

}  // namespace

const std::vector<CommandSpec>& ListCommands() {
  return kListCommands;
}

}  // namespace basalt
