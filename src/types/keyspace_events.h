// KeyspaceEvents: Redis's keyspace notifications (notify-keyspace-events) below the commands.
//
// A write names its event through Context::Notify() with the event's class; when the class is
// enabled the Context turns it into Redis's two messages, `__keyspace@<db>__:<key>` carrying the
// event and `__keyevent@<db>__:<event>` carrying the key (in that order), and hands them to the
// Sink once its batch has committed, so a subscriber never hears of a write that did not land.
// The Sink (commands/notify.h) also decides whether the messages travel to replicas in the
// batch, as PUBLISH's do (types/pubsub_record.h). When notifications are off, Notify() costs one
// relaxed atomic load.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"

namespace basalt {

// The event classes: notify-keyspace-events' flags (config/config.h), which have Redis's bit
// values, under the short names the commands use.
namespace notify {
constexpr uint32_t kKeyspace = kNotifyKeyspace;  // K
constexpr uint32_t kKeyevent = kNotifyKeyevent;  // E
constexpr uint32_t kGeneric = kNotifyGeneric;    // g
constexpr uint32_t kString = kNotifyString;      // $
constexpr uint32_t kList = kNotifyList;          // l
constexpr uint32_t kSet = kNotifySet;            // s
constexpr uint32_t kHash = kNotifyHash;          // h
constexpr uint32_t kZset = kNotifyZset;          // z
constexpr uint32_t kExpired = kNotifyExpired;    // x
constexpr uint32_t kEvicted = kNotifyEvicted;    // e
constexpr uint32_t kStream = kNotifyStream;      // t
constexpr uint32_t kKeyMiss = kNotifyKeyMiss;    // m (not part of A)
constexpr uint32_t kModule = kNotifyModule;      // d
constexpr uint32_t kNew = kNotifyNew;            // n (not part of A)
constexpr uint32_t kAll = kNotifyAll;
}  // namespace notify

class KeyspaceEvents {
 public:
  // Where enabled events go; set once at start-up, before any command runs.
  class Sink {
   public:
    virtual ~Sink() = default;
    // Whether a committed event's messages must also travel to replicas in its batch.
    virtual bool Replicating() const = 0;
    // Delivers one message to this server's subscribers (after the commit).
    virtual void Deliver(std::string_view channel, std::string_view message) = 0;
  };
  void set_sink(Sink* sink) {
    sink_ = sink;
    Publish();
  }
  Sink* sink() const { return sink_; }

  // Applies a parsed notify-keyspace-events value (start-up and CONFIG SET).
  void Configure(uint32_t classes) {
    configured_.store(classes, std::memory_order_relaxed);
    Publish();
  }
  // The enabled classes: none without a sink, or without K and E (nothing would be sent).
  uint32_t classes() const { return classes_.load(std::memory_order_relaxed); }
  bool Enabled(uint32_t event_class) const { return (classes() & event_class) != 0; }

 private:
  void Publish() {
    uint32_t configured = configured_.load(std::memory_order_relaxed);
    bool any_channel = (configured & (notify::kKeyspace | notify::kKeyevent)) != 0;
    classes_.store(sink_ != nullptr && any_channel ? configured : 0, std::memory_order_relaxed);
  }

  std::atomic<uint32_t> classes_{0};
  std::atomic<uint32_t> configured_{0};
  Sink* sink_ = nullptr;
};

}  // namespace basalt
