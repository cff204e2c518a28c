// CLUSTER, ASKING, READONLY and READWRITE: Basalt runs no cluster, so these answer as a Redis 7.2
// server started with `cluster-enabled no` answers them. They exist so that ACL rules naming
// them (`+cluster`), COMMAND's listings and clients that probe for a cluster see what they see
// on such a Redis.
#include "commands/command_util.h"

namespace basalt {

namespace {

void ClusterDisabled(CommandContext& c) {
  c.reply.Error("ERR This instance has cluster support disabled");
}

const std::vector<CommandSpec> kClusterCommands = {
    {"cluster", -2, kCmdStale, 0, 0, 0, ClusterDisabled, "cluster",
     "A container for Redis Cluster commands.", "@slow", nullptr,
     "addslots:-3:@admin@slow@dangerous addslotsrange:-4:@admin@slow@dangerous "
     "bumpepoch:2:@admin@slow@dangerous count-failure-reports:3:@admin@slow@dangerous "
     "countkeysinslot:3:@slow delslots:-3:@admin@slow@dangerous "
     "delslotsrange:-4:@admin@slow@dangerous failover:-2:@admin@slow@dangerous "
     "flushslots:2:@admin@slow@dangerous forget:3:@admin@slow@dangerous getkeysinslot:4:@slow "
     "help:2:@slow info:2:@slow keyslot:3:@slow links:2:@slow meet:-4:@admin@slow@dangerous "
     "myid:2:@slow myshardid:2:@slow nodes:2:@slow replicas:3:@admin@slow@dangerous "
     "replicate:3:@admin@slow@dangerous reset:-2:@admin@slow@dangerous "
     "saveconfig:2:@admin@slow@dangerous set-config-epoch:3:@admin@slow@dangerous "
     "setslot:-4:@admin@slow@dangerous shards:2:@slow slaves:3:@admin@slow@dangerous "
     "slots:2:@slow"},
    {"asking", 1, kCmdFast, 0, 0, 0, ClusterDisabled, "cluster",
     "Signals that a cluster client is following an -ASK redirect.", "@fast @connection"},
    {"readonly", 1, kCmdFast | kCmdLoading | kCmdStale, 0, 0, 0, ClusterDisabled, "cluster",
     "Enables read-only queries for a connection to a Redis Cluster replica node.",
     "@fast @connection"},
    {"readwrite", 1, kCmdFast | kCmdLoading | kCmdStale, 0, 0, 0, ClusterDisabled, "cluster",
     "Enables read-write queries for a connection to a Redis Cluster replica node.",
     "@fast @connection"},
};

}  // namespace

const std::vector<CommandSpec>& ClusterCommands() {
  return kClusterCommands;
}

}  // namespace basalt
