#include "commands/tracking.h"

#include <glog/logging.h>

#include <algorithm>

#include "commands/reply.h"
#include "common/clock.h"
#include "common/strutil.h"

namespace basalt {

namespace {

// The kinds of queued tracking messages (PublishedMessage::channel).
constexpr const char* kInvalidate = "invalidate";
// An invalidation sent to a REDIRECT client: in RESP2 it goes out as a Pub/Sub message.
constexpr const char* kRedirectedInvalidate = "__redis__:invalidate";
constexpr const char* kRedirectBroken = "tracking-redir-broken";

// Invalidations for the client whose command is running on this thread: they follow its reply.
struct SelfInvalidation {
  uint64_t target;
  std::string key;
  bool all;  // a flush: the null invalidation
};
thread_local std::vector<SelfInvalidation> t_self_pending;
// The client whose command runs on this thread while some client tracks (0: none): a flush
// inside it reaches it after its reply, as its own invalidations do.
thread_local uint64_t t_running_client = 0;

// The keys as a RESP array of bulk strings (the same in RESP2 and RESP3); empty: null, all keys.
std::string EncodeKeys(const std::vector<std::string>& keys, bool all) {
  std::string out;
  if (all) return out;
  Reply reply(&out, 2);
  reply.Array(keys.size());
  for (const std::string& key : keys) reply.Bulk(key);
  return out;
}

bool PrefixesOverlap(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size());
  return a.substr(0, n) == b.substr(0, n);
}

}  // namespace

void WriteTrackingMessage(const Session& session, Reply& reply, const std::string& kind,
                          const std::string& payload) {
  const bool resp3 = session.resp.load(std::memory_order_relaxed) >= 3;
  if (kind == kRedirectBroken) {
    if (!resp3) return;
    reply.Push(2);
    reply.Bulk(kRedirectBroken);
    reply.Integer(ParseInt64(payload).value_or(0));
    return;
  }
  if (resp3) {
    reply.Push(2);
    reply.Bulk(kInvalidate);
  } else if (kind == kRedirectedInvalidate && session.subscriptions.total() > 0) {
    reply.Push(3);
    reply.Bulk("message");
    reply.Bulk(kRedirectedInvalidate);
  } else {
    return;  // RESP2 without a redirect to a subscriber: nowhere to put it
  }
  if (payload.empty()) {
    reply.Null();
  } else {
    reply.Raw(payload);
  }
}

void Tracking::SetFlagsLocked(ClientState& state, uint32_t flags) {
  state.flags = flags;
  if (std::shared_ptr<Session> session = state.session.lock()) {
    session->tracking_flags.store(flags, std::memory_order_relaxed);
  }
}

void Tracking::set_config(Config* config) {
  config_ = config;
  config->AddApplyHook("tracking-table-max-keys", [this](const std::string&, const std::string& v) {
    std::unique_lock<std::mutex> lock(mu_);
    EnforceLimit(lock, ParseInt64(v).value_or(0));
    return Status::OK();
  });
}

Status Tracking::Enable(Session& session, const Options& options) {
  const uint32_t wanted = options.flags;
  const bool bcast = wanted & tracking_flag::kBcast;
  if (!bcast && !options.prefixes.empty()) {
    return Status::RedisError("ERR PREFIX option requires BCAST mode to be enabled");
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(session.id);
  const uint32_t current = it == states_.end() ? 0 : it->second.flags;
  if ((current & tracking_flag::kOn) && bool(current & tracking_flag::kBcast) != bcast) {
    return Status::RedisError(
        "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and "
        "then re-enabling it with a different mode.");
  }
  if (bcast && (wanted & (tracking_flag::kOptIn | tracking_flag::kOptOut))) {
    return Status::RedisError("ERR OPTIN and OPTOUT are not compatible with BCAST");
  }
  if ((wanted & tracking_flag::kOptIn) && (wanted & tracking_flag::kOptOut)) {
    return Status::RedisError("ERR You can't specify both OPTIN mode and OPTOUT mode");
  }
  if (((wanted & tracking_flag::kOptIn) && (current & tracking_flag::kOptOut)) ||
      ((wanted & tracking_flag::kOptOut) && (current & tracking_flag::kOptIn))) {
    return Status::RedisError(
        "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
        "then re-enabling it with a different mode.");
  }
  if (bcast) {
    for (size_t i = 0; i < options.prefixes.size(); i++) {
      const std::string& prefix = options.prefixes[i];
      if (it != states_.end()) {
        for (const std::string& existing : it->second.prefixes) {
          if (PrefixesOverlap(existing, prefix)) {
            return Status::RedisError("ERR Prefix '" + prefix +
                                      "' overlaps with an existing prefix '" + existing +
                                      "'. Prefixes for a single client must not overlap.");
          }
        }
      }
      for (size_t j = i + 1; j < options.prefixes.size(); j++) {
        if (PrefixesOverlap(prefix, options.prefixes[j])) {
          return Status::RedisError(
              "ERR Prefix '" + prefix + "' overlaps with another provided prefix '" +
              options.prefixes[j] + "'. Prefixes for a single client must not overlap.");
        }
      }
    }
  }
  ClientState& state = states_[session.id];
  if (!(state.flags & tracking_flag::kOn)) {
    state.session = session.weak_from_this();
    tracking_clients_.fetch_add(1, std::memory_order_relaxed);
  }
  // As Redis: CLIENT CACHING given before survives a re-enable; the other options are replaced.
  SetFlagsLocked(state, tracking_flag::kOn | (state.flags & tracking_flag::kCaching) | wanted);
  state.redirect = options.redirect;
  session.tracking_redirect.store(options.redirect, std::memory_order_relaxed);
  if (bcast) {
    std::vector<std::string> prefixes = options.prefixes;
    if (prefixes.empty()) prefixes.emplace_back();
    for (std::string& prefix : prefixes) {
      prefixes_[prefix].clients.insert(session.id);
      state.prefixes.insert(std::move(prefix));
    }
  }
  return Status::OK();
}

void Tracking::Disable(Session& session) {
  if ((session.tracking_flags.load(std::memory_order_relaxed) & tracking_flag::kOn) == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(session.id);
  if (it == states_.end()) return;
  for (const std::string& prefix : it->second.prefixes) {
    auto p = prefixes_.find(prefix);
    if (p == prefixes_.end()) continue;
    p->second.clients.erase(session.id);
    if (p->second.clients.empty()) prefixes_.erase(p);
  }
  states_.erase(it);
  tracking_clients_.fetch_sub(1, std::memory_order_relaxed);
  session.tracking_flags.store(0, std::memory_order_relaxed);
  session.tracking_redirect.store(0, std::memory_order_relaxed);
}

void Tracking::SetCaching(Session& session) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(session.id);
  if (it != states_.end()) SetFlagsLocked(it->second, it->second.flags | tracking_flag::kCaching);
}

void Tracking::Remember(uint64_t reader, const std::vector<std::string>& keys) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = states_.find(reader);
  if (it == states_.end()) return;
  const uint32_t flags = it->second.flags;
  if (!(flags & tracking_flag::kOn) || (flags & tracking_flag::kBcast)) return;
  const bool caching = flags & tracking_flag::kCaching;
  if (((flags & tracking_flag::kOptIn) && !caching) ||
      ((flags & tracking_flag::kOptOut) && caching)) {
    return;
  }
  for (const std::string& key : keys) {
    if (keys_[key].insert(reader).second) items_++;
  }
  EnforceLimit(lock, config_ != nullptr ? config_->tracking_table_max_keys.load() : 0);
}

// Beyond the limit, keys are forgotten with an invalidation to the clients that read them, as
// Redis evicts them from its table: the clients must not go on trusting copies the server no
// longer watches. Which keys go is arbitrary (Redis picks them at random).
void Tracking::EnforceLimit(std::unique_lock<std::mutex>& lock, int64_t max_keys) {
  std::vector<Delivery> evicted;
  while (max_keys > 0 && keys_.size() > static_cast<size_t>(max_keys)) {
    ForgetLocked(0, keys_.begin(), &evicted);
  }
  lock.unlock();
  Send(evicted, nullptr);
}

void Tracking::InvalidateLocked(uint64_t writer, std::string_view key, std::vector<Delivery>* out) {
  for (auto& [prefix, state] : prefixes_) {
    if (key.substr(0, prefix.size()) != prefix) continue;
    state.changed[std::string(key)] = writer;
    broadcasts_pending_.store(true, std::memory_order_relaxed);
  }
  auto found = keys_.find(std::string(key));
  if (found != keys_.end()) ForgetLocked(writer, found, out);
}

void Tracking::ForgetLocked(uint64_t writer, KeyTable::iterator found, std::vector<Delivery>* out) {
  const std::string& key = found->first;
  for (uint64_t id : found->second) {
    auto it = states_.find(id);
    // A client that left or turned tracking off (or on again in BCAST mode) since reading.
    if (it == states_.end() || (it->second.flags & tracking_flag::kBcast)) continue;
    if (id == writer) {
      if (!(it->second.flags & tracking_flag::kNoLoop)) {
        t_self_pending.push_back({id, key, false});
      }
      continue;
    }
    out->push_back({id, {key}, false});
  }
  items_ -= static_cast<int64_t>(found->second.size());
  keys_.erase(found);
}

void Tracking::CollectBroadcastsLocked(std::vector<Delivery>* out) {
  broadcasts_pending_.store(false, std::memory_order_relaxed);
  for (auto& [prefix, state] : prefixes_) {
    if (state.changed.empty()) continue;
    for (uint64_t id : state.clients) {
      auto it = states_.find(id);
      if (it == states_.end()) continue;
      const bool noloop = it->second.flags & tracking_flag::kNoLoop;
      Delivery d{id, {}, false};
      for (const auto& [key, writer] : state.changed) {
        if (!(noloop && writer == id)) d.keys.push_back(key);
      }
      if (!d.keys.empty()) out->push_back(std::move(d));
    }
    state.changed.clear();
  }
}

void Tracking::Push(Session& receiver, const char* kind, std::string payload) {
  OutputBufferLimit limit;
  if (config_ != nullptr) limit = config_->output_buffer_limit(receiver.client_class());
  auto message =
      std::make_shared<const PublishedMessage>(PublishedMessage{kind, std::move(payload)});
  auto result = receiver.output.Push(PendingMessage{PubSubKind::kTracking, std::string(), message},
                                     receiver.output_buffer_bytes.load(std::memory_order_relaxed),
                                     limit, UnixMillis());
  if (result == ClientOutput::PushResult::kOverLimit) {
    LOG(WARNING) << "Client id=" << receiver.id << " addr=" << receiver.addr
                 << " closed for overcoming of output buffer limits.";
  }
}

void Tracking::Send(std::vector<Delivery>& deliveries, Session* self) {
  for (Delivery& d : deliveries) {
    std::shared_ptr<Session> target;
    std::shared_ptr<Session> redirect;
    uint64_t redirect_id = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = states_.find(d.target);
      if (it == states_.end()) continue;
      ClientState& state = it->second;
      redirect_id = state.redirect;
      if (redirect_id != 0) {
        redirect = clients_->Find(redirect_id);
        if (redirect == nullptr)
          SetFlagsLocked(state, state.flags | tracking_flag::kBrokenRedirect);
      }
      if (redirect == nullptr) target = state.session.lock();
    }
    const bool to_self = self != nullptr && self->id == d.target;
    if (redirect != nullptr) {
      Push(*redirect, kRedirectedInvalidate, EncodeKeys(d.keys, d.all));
      continue;
    }
    const char* kind = redirect_id != 0 ? kRedirectBroken : kInvalidate;
    std::string payload =
        redirect_id != 0 ? std::to_string(redirect_id) : EncodeKeys(d.keys, d.all);
    if (to_self) {
      Reply after(&self->pushes_after_reply, self->resp);
      WriteTrackingMessage(*self, after, kind, payload);
    } else if (target != nullptr) {
      Push(*target, kind, std::move(payload));
    }
  }
}

void Tracking::ChangedKeys(uint64_t writer, const std::vector<std::string_view>& keys) {
  std::vector<Delivery> deliveries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::string_view key : keys) InvalidateLocked(writer, key, &deliveries);
  }
  Send(deliveries, nullptr);
}

void Tracking::StartCommand(const Session& session) {
  t_running_client = session.id;
}

void Tracking::FinishCommand(Session& session, bool keeps_caching) {
  std::vector<Delivery> deliveries;
  t_running_client = 0;
  for (SelfInvalidation& pending : t_self_pending) {
    if (pending.all) {
      deliveries.push_back({pending.target, {}, true});
    } else {
      deliveries.push_back({pending.target, {std::move(pending.key)}, false});
    }
  }
  t_self_pending.clear();
  const bool ends_caching =
      !keeps_caching &&
      (session.tracking_flags.load(std::memory_order_relaxed) & tracking_flag::kCaching) != 0;
  if (ends_caching || broadcasts_pending_.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(mu_);
    if (broadcasts_pending_.load(std::memory_order_relaxed)) CollectBroadcastsLocked(&deliveries);
    auto it = states_.find(session.id);
    if (ends_caching && it != states_.end()) {
      SetFlagsLocked(it->second, it->second.flags & ~tracking_flag::kCaching);
    }
  }
  Send(deliveries, &session);
}

void Tracking::OnKeysChanged(const std::vector<std::string_view>& keys) {
  std::vector<Delivery> deliveries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::string_view key : keys) InvalidateLocked(0, key, &deliveries);
    CollectBroadcastsLocked(&deliveries);
  }
  Send(deliveries, nullptr);
}

void Tracking::OnAllKeysChanged() {
  std::vector<Delivery> deliveries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, state] : states_) {
      if (id == t_running_client) {
        t_self_pending.push_back({id, std::string(), true});
      } else {
        deliveries.push_back({id, {}, true});
      }
    }
    keys_.clear();
    items_ = 0;
  }
  Send(deliveries, nullptr);
}

int64_t Tracking::total_keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(keys_.size());
}

int64_t Tracking::total_items() const {
  std::lock_guard<std::mutex> lock(mu_);
  return items_;
}

int64_t Tracking::total_prefixes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(prefixes_.size());
}

std::vector<std::string> Tracking::PrefixesOf(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(id);
  if (it == states_.end()) return {};
  return {it->second.prefixes.begin(), it->second.prefixes.end()};
}

}  // namespace basalt
