// Set commands: not written yet.
#include "commands/command_util.h"

namespace basalt {

namespace {

const std::vector<CommandSpec> kSetCommands = {};

}  // namespace

const std::vector<CommandSpec>& SetCommands() {
  return kSetCommands;
}

}  // namespace basalt
