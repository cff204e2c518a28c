// Zset commands: not written yet.
#include "commands/command_util.h"

namespace basalt {

namespace {

const std::vector<CommandSpec> kZsetCommands = {};

}  // namespace

const std::vector<CommandSpec>& ZsetCommands() {
  return kZsetCommands;
}

}  // namespace basalt
