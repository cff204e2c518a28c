// Hash commands: not written yet.
#include "commands/command_util.h"

namespace basalt {

namespace {

const std::vector<CommandSpec> kHashCommands = {};

}  // namespace

const std::vector<CommandSpec>& HashCommands() {
  return kHashCommands;
}

}  // namespace basalt
