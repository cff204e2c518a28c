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
     "addslots:-3:@admin@slow@dangerous:admin,no_async_loading,stale "
     "addslotsrange:-4:@admin@slow@dangerous:admin,no_async_loading,stale "
     "bumpepoch:2:@admin@slow@dangerous:admin,no_async_loading,stale "
     "count-failure-reports:3:@admin@slow@dangerous "
     "countkeysinslot:3:@slow delslots:-3:@admin@slow@dangerous:admin,no_async_loading,stale "
     "delslotsrange:-4:@admin@slow@dangerous:admin,no_async_loading,stale "
     "failover:-2:@admin@slow@dangerous:admin,no_async_loading,stale "
     "flushslots:2:@admin@slow@dangerous:admin,no_async_loading,stale "
     "forget:3:@admin@slow@dangerous:admin,no_async_loading,stale getkeysinslot:4:@slow "
     "help:2:@slow info:2:@slow keyslot:3:@slow links:2:@slow "
     "meet:-4:@admin@slow@dangerous:admin,no_async_loading,stale "
     "myid:2:@slow myshardid:2:@slow nodes:2:@slow replicas:3:@admin@slow@dangerous "
     "replicate:3:@admin@slow@dangerous:admin,no_async_loading,stale "
     "reset:-2:@admin@slow@dangerous:admin,noscript,stale "
     "saveconfig:2:@admin@slow@dangerous:admin,no_async_loading,stale "
     "set-config-epoch:3:@admin@slow@dangerous:admin,no_async_loading,stale "
     "setslot:-4:@admin@slow@dangerous:admin,no_async_loading,stale shards:2:@slow:loading,stale "
     "slaves:3:@admin@slow@dangerous "
     "slots:2:@slow:loading,stale"},
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
