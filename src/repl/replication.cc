#include "repl/replication.h"

#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "common/clock.h"
#include "common/strutil.h"

namespace basalt {

namespace {

// "host port" from the replicaof config key.
bool ParseHostPort(const std::string& text, std::string* host, int* port) {
  size_t space = text.find(' ');
  if (space == std::string::npos) return false;
  *host = text.substr(0, space);
  auto p = ParseInt64(std::string_view(text).substr(space + 1));
  if (host->empty() || !p || *p < 0 || *p > 65535) return false;
  *port = static_cast<int>(*p);
  return true;
}

}  // namespace

ReplicationManager::ReplicationManager(Keyspace* keyspace, Config* config, ActiveExpirer* expirer)
    : keyspace_(keyspace),
      config_(config),
      expirer_(expirer),
      applier_(keyspace),
      checkpoints_(keyspace->engine()) {}

ReplicationManager::~ReplicationManager() {
  Stop();
}

void ReplicationManager::SetEventHandler(ColumnFamily cf, ReplicationEventHandler on_put,
                                         ReplicationDeleteHandler on_delete,
                                         BatchApplier::EventTiming timing) {
  applier_.SetEventHandler(cf, std::move(on_put), std::move(on_delete), timing);
}

Status ReplicationManager::Start(int listening_port) {
  listening_port_ = listening_port;
  read_only_ = config_->GetBool("replica-read-only");
  config_->AddApplyHook("replica-read-only", [this](const std::string&, const std::string& v) {
    read_only_ = v == "yes";
    return Status::OK();
  });
  auto id = LoadOrCreateReplid(keyspace_->engine()->path());
  if (!id.ok()) return id.status();
  {
    std::lock_guard<std::mutex> lock(mu_);
    replid_ = *id;
  }
  checkpoints_.RemoveStale();
  std::error_code ec;
  std::filesystem::remove_all(keyspace_->engine()->SiblingPath(".fullsync"), ec);

  std::string replicaof = config_->GetString("replicaof");
  if (replicaof.empty()) {
    // Started as a master: a position it held as a replica no longer describes its data.
    auto position = LoadReplicaPosition(keyspace_->engine());
    if (!position.ok()) return position.status();
    return position->has_value() ? applier_.WritePosition(std::nullopt) : Status::OK();
  }
  std::string host;
  int port;
  if (!ParseHostPort(replicaof, &host, &port))
    return Status::InvalidArgument("replicaof must be \"host port\", got '" + replicaof + "'");
  std::lock_guard<std::mutex> transition(transition_mu_);
  StartLink(host, port);
  return Status::OK();
}

void ReplicationManager::Stop() {
  std::unique_ptr<MasterLink> link;
  {
    std::lock_guard<std::mutex> lock(mu_);
    link = std::move(link_);
  }
  if (link) link->Stop();
  StopFeeders();
}

std::string ReplicationManager::replid() const {
  std::lock_guard<std::mutex> lock(mu_);
  return replid_;
}

// The caller holds transition_mu_ and has stopped any previous link.
void ReplicationManager::StartLink(const std::string& host, int port) {
  expirer_->SetPaused(true);
  replica_ = true;
  Status s = config_->SetAtStartup("replicaof", host + " " + std::to_string(port));
  if (!s.ok()) LOG(WARNING) << "recording replicaof: " << s.message();
  LinkContext ctx;
  ctx.keyspace = keyspace_;
  ctx.config = config_;
  ctx.applier = &applier_;
  ctx.listening_port = listening_port_;
  ctx.own_replid = [this] { return replid(); };
  ctx.before_swap = [this] { BeforeSwap(); };
  ctx.after_swap = [this] { AfterSwap(); };
  ctx.data_replaced = [this] {
    if (data_replaced_) data_replaced_();
  };
  ctx.redis = redis_hooks_;
  auto link = std::make_unique<MasterLink>(std::move(ctx), host, port);
  link->Start();
  std::lock_guard<std::mutex> lock(mu_);
  link_ = std::move(link);
  LOG(INFO) << "replication: now a replica of " << host << ":" << port;
}

Status ReplicationManager::ReplicaOf(const std::string& host, int port, bool* already) {
  std::lock_guard<std::mutex> transition(transition_mu_);
  std::unique_ptr<MasterLink> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    *already = link_ && link_->host() == host && link_->port() == port;
    if (*already) return Status::OK();
    old = std::move(link_);
  }
  if (old) old->Stop();
  StartLink(host, port);
  return Status::OK();
}

Status ReplicationManager::PromoteToMaster() {
  std::lock_guard<std::mutex> transition(transition_mu_);
  std::unique_ptr<MasterLink> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    old = std::move(link_);
  }
  if (!old) return Status::OK();
  old->Stop();
  // From here on this server's history diverges from its old master's.
  Status s = applier_.WritePosition(std::nullopt);
  replica_ = false;
  Status recorded = config_->SetAtStartup("replicaof", "");
  if (!recorded.ok()) LOG(WARNING) << "recording replicaof: " << recorded.message();
  expirer_->SetPaused(false);
  LOG(INFO) << "replication: promoted to master";
  return s;
}

void ReplicationManager::ServeReplica(int fd, SyncRequest request, std::string peer_ip) {
  FeederContext ctx;
  ctx.engine = keyspace_->engine();
  ctx.config = config_;
  ctx.checkpoints = &checkpoints_;
  ctx.replid = replid();
  ctx.on_ack = [this] {
    if (ack_listener_) ack_listener_();
  };
  ReapFeeders();
  std::lock_guard<std::mutex> lock(feeders_mu_);
  if (swapping_) {
    ::close(fd);  // the replica retries once this server's own full sync is done
    return;
  }
  feeders_.push_back(
      std::make_unique<ReplicaFeeder>(std::move(ctx), fd, std::move(request), std::move(peer_ip)));
  feeders_.back()->Start();
}

bool ReplicationManager::HasReplicas() const {
  std::lock_guard<std::mutex> lock(feeders_mu_);
  return std::any_of(feeders_.begin(), feeders_.end(),
                     [](const auto& f) { return !f->finished(); });
}

void ReplicationManager::ReapFeeders() {
  std::vector<std::unique_ptr<ReplicaFeeder>> done;
  {
    std::lock_guard<std::mutex> lock(feeders_mu_);
    for (auto& f : feeders_) {
      if (f->finished()) done.push_back(std::move(f));
    }
    std::erase(feeders_, nullptr);
  }
  // Destroying joins their (finished) threads.
}

void ReplicationManager::StopFeeders() {
  std::vector<std::unique_ptr<ReplicaFeeder>> all;
  {
    std::lock_guard<std::mutex> lock(feeders_mu_);
    all.swap(feeders_);
  }
  for (auto& f : all) f->Stop();
}

void ReplicationManager::BeforeSwap() {
  {
    std::lock_guard<std::mutex> lock(feeders_mu_);
    swapping_ = true;
  }
  StopFeeders();  // their history ends with this data
}

Status ReplicationManager::ChangeReplid() {
  auto id = ResetReplid(keyspace_->engine()->path());
  if (!id.ok()) return id.status();
  std::lock_guard<std::mutex> lock(mu_);
  replid_ = *id;
  return Status::OK();
}

void ReplicationManager::AfterSwap() {
  auto id = ResetReplid(keyspace_->engine()->path());
  if (!id.ok()) LOG(ERROR) << "replication: " << id.status().message();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (id.ok()) replid_ = *id;
  }
  std::lock_guard<std::mutex> lock(feeders_mu_);
  swapping_ = false;
}

int ReplicationManager::CountReplicasAcked(uint64_t seq) const {
  std::lock_guard<std::mutex> lock(feeders_mu_);
  int n = 0;
  for (const auto& f : feeders_) {
    if (f->online() && f->acked_seq() >= seq) n++;
  }
  return n;
}

int ReplicationManager::CountGoodReplicas(int64_t max_lag_ms) const {
  const int64_t now = UnixMillis();
  std::lock_guard<std::mutex> lock(feeders_mu_);
  int n = 0;
  for (const auto& f : feeders_) {
    if (f->online() && now - f->last_ack_unix_ms() <= max_lag_ms) n++;
  }
  return n;
}

bool ReplicationManager::is_stale_replica() const {
  if (!replica_.load()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  return link_ == nullptr || link_->info().state != MasterLink::State::kConnected;
}

ReplicationSnapshot ReplicationManager::Snapshot() const {
  ReplicationSnapshot snap;
  snap.replica = replica_.load();
  snap.read_only = read_only_.load();
  snap.latest_seq = latest_sequence();
  snap.checkpoints_created = checkpoints_.created();
  {
    std::lock_guard<std::mutex> lock(mu_);
    snap.replid = replid_;
    if (link_) snap.link = link_->info();
  }
  std::lock_guard<std::mutex> lock(feeders_mu_);
  for (const auto& f : feeders_) {
    if (!f->finished()) snap.replicas.push_back(f->info());
  }
  return snap;
}

}  // namespace basalt
