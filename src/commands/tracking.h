// Tracking: client-side caching (CLIENT TRACKING), Redis 7.2's server-assisted invalidation.
//
// A client that turns tracking on is told when a key it may hold in its cache changes:
// - default mode: the keys of every read-only command it runs (the keys its key specs name,
//   also inside MULTI and scripts) are remembered as key -> client ids; the first write to a
//   key sends each remembered client one `invalidate [key]` and forgets them for that key.
//   OPTIN remembers only the command after `CLIENT CACHING yes`, OPTOUT all but the one after
//   `CLIENT CACHING no`.
// - BCAST: nothing is remembered; every change to a key under one of the client's prefixes
//   (the empty prefix: all keys) is announced, the keys of one command in one message.
// - NOLOOP: no message for the client's own writes.
// Keys are tracked by name across databases, as in Redis. A flush (FLUSHDB, FLUSHALL, a
// replica's full sync) sends every tracking client a null invalidation and forgets all keys.
//
// Where messages go: a RESP3 client gets `>2 invalidate <keys>` pushes; with REDIRECT they go
// to that client instead, as such a push when it speaks RESP3, or, in RESP2, as a Pub/Sub
// `message` on `__redis__:invalidate` while it is subscribed to anything (as Redis checks). If
// the redirect client is gone the tracking client is marked broken_redirect and, in RESP3, gets
// a `tracking-redir-broken` push. Messages travel through the receiver's ClientOutput queue
// (commands/pubsub_client.h) as PubSubKind::kTracking, like Pub/Sub messages, so any thread may
// send them; those for the client whose own command changed the key wait for that command's
// reply (after the whole EXEC or script, as in Redis 7.2): the dispatcher collects them per
// thread and FinishCommand() appends them to the session's pushes_after_reply.
//
// Who calls: the dispatcher after each command (RunHandler, RunInContext: ChangedKeys() for the
// keys the Context saw change, Remember() for a tracking client's reads) and at its end
// (FinishCommand); the active expirer, the replica's applier and flushes through the keyspace's
// InvalidationListener. When no client tracks, each of those costs one relaxed load (active()).
// Clients that leave are dropped from the per-client state at once; their ids in the key table
// go lazily, as in Redis, when the key next changes or a flush empties the table.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "commands/session.h"
#include "common/status.h"
#include "config/config.h"
#include "types/keyspace.h"

namespace basalt {

class Reply;
struct CommandContext;

// The Session::tracking_flags bits.
namespace tracking_flag {
constexpr uint32_t kOn = 1 << 0;
constexpr uint32_t kBcast = 1 << 1;
constexpr uint32_t kOptIn = 1 << 2;
constexpr uint32_t kOptOut = 1 << 3;
constexpr uint32_t kCaching = 1 << 4;  // CLIENT CACHING yes (OPTIN) / no (OPTOUT) was given
constexpr uint32_t kNoLoop = 1 << 5;
constexpr uint32_t kBrokenRedirect = 1 << 6;
}  // namespace tracking_flag

class Tracking : public Keyspace::InvalidationListener {
 public:
  explicit Tracking(ClientRegistry* clients) : clients_(clients) {}
  // Read for the receivers' output buffer limits and the table's size limit; set before workers
  // start. CONFIG SET tracking-table-max-keys trims the table at once.
  void set_config(Config* config);

  // Whether any client has tracking on: one relaxed load.
  bool active() const { return tracking_clients_.load(std::memory_order_relaxed) != 0; }

  struct Options {
    uint32_t flags = 0;     // kBcast, kOptIn, kOptOut, kNoLoop
    uint64_t redirect = 0;  // 0: none
    std::vector<std::string> prefixes;
  };
  // CLIENT TRACKING ON, the session's own thread. The options are checked against each other
  // and the client's current mode with Redis's errors; nothing changes on an error.
  Status Enable(Session& session, const Options& options);
  // CLIENT TRACKING OFF, RESET, a closing connection.
  void Disable(Session& session);
  // CLIENT CACHING YES|NO, once the caller has checked it fits the client's mode: the next
  // command's reads follow the other rule of OPTIN or OPTOUT.
  void SetCaching(Session& session);

  // Keys changed by the command of client `writer` (0: no client). Messages to `writer` itself
  // wait for FinishCommand on this thread.
  void ChangedKeys(uint64_t writer, const std::vector<std::string_view>& keys);
  // The keys a read-only command of tracking client `reader` read. Beyond
  // tracking-table-max-keys keys in the table, others are forgotten with an invalidation.
  void Remember(uint64_t reader, const std::vector<std::string>& keys);
  // Before a client's command on this thread, while some client tracks: a flush it makes
  // reaches it after its reply.
  void StartCommand(const Session& session);
  // At the end of a client's command on this thread: its own invalidations go to
  // session.pushes_after_reply (or its redirect), BCAST announcements go out, and CLIENT CACHING
  // ends unless the command was CLIENT or the client is in MULTI.
  void FinishCommand(Session& session, bool keeps_caching);

  // Keyspace::InvalidationListener: changes made outside any client's command.
  bool Listening() const override { return active(); }
  void OnKeysChanged(const std::vector<std::string_view>& keys) override;
  void OnAllKeysChanged() override;

  // INFO.
  int64_t clients() const { return tracking_clients_.load(std::memory_order_relaxed); }
  int64_t total_keys() const;
  int64_t total_items() const;
  int64_t total_prefixes() const;
  // CLIENT TRACKINGINFO's prefixes, in order.
  std::vector<std::string> PrefixesOf(uint64_t id) const;

 private:
  struct ClientState {
    std::weak_ptr<Session> session;
    uint32_t flags = 0;
    uint64_t redirect = 0;
    std::set<std::string> prefixes;  // BCAST
  };
  struct PrefixState {
    std::set<uint64_t> clients;
    // Keys changed since the last announcement, with the client that changed each last (0:
    // none), for NOLOOP.
    std::map<std::string, uint64_t> changed;
  };
  // One message on its way: `keys` empty with `all` for a flush.
  struct Delivery {
    uint64_t target;
    std::vector<std::string> keys;
    bool all = false;
  };

  using KeyTable = std::unordered_map<std::string, std::unordered_set<uint64_t>>;

  void SetFlagsLocked(ClientState& state, uint32_t flags);
  // A change of `key` by client `writer` (0: none): BCAST announcements and ForgetLocked.
  void InvalidateLocked(uint64_t writer, std::string_view key, std::vector<Delivery>* out);
  // Removes the key from the table, with an invalidation for each client that read it.
  void ForgetLocked(uint64_t writer, KeyTable::iterator found, std::vector<Delivery>* out);
  // Forgets keys while the table holds more than `max_keys` (0: no limit); releases `lock`.
  void EnforceLimit(std::unique_lock<std::mutex>& lock, int64_t max_keys);
  void CollectBroadcastsLocked(std::vector<Delivery>* out);
  // Sends each delivery to its target (or the target's redirect); takes mu_ for each.
  void Send(std::vector<Delivery>& deliveries, Session* self);
  // Queues one message of `kind` for the receiver's worker.
  void Push(Session& receiver, const char* kind, std::string payload);

  ClientRegistry* clients_;
  const Config* config_ = nullptr;
  mutable std::mutex mu_;
  std::atomic<int64_t> tracking_clients_{0};
  std::unordered_map<uint64_t, ClientState> states_;
  KeyTable keys_;
  int64_t items_ = 0;
  std::map<std::string, PrefixState> prefixes_;
  std::atomic<bool> broadcasts_pending_{false};
};

// The session's own worker: writes one queued tracking message (PubSubKind::kTracking) in the
// session's protocol, or nothing when it cannot receive it (RESP2 and not subscribed).
void WriteTrackingMessage(const Session& session, Reply& reply, const std::string& kind,
                          const std::string& payload);

// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO (tracking_commands.cc).
void ClientTrackingCommand(CommandContext& c);
void ClientCachingCommand(CommandContext& c);
void ClientGetRedirCommand(CommandContext& c);
void ClientTrackingInfoCommand(CommandContext& c);

}  // namespace basalt
