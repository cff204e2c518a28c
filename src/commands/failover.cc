#include "commands/failover.h"

#include <glog/logging.h>

#include <chrono>

#include "common/clock.h"
#include "common/strutil.h"
#include "repl/link.h"

namespace basalt {

namespace {

// How often the wait looks at the replicas' acknowledgements (Redis checks in its cron, 10 Hz
// by default); an acknowledgement arrives at least once a second from an idle replica.
constexpr auto kPollInterval = std::chrono::milliseconds(10);
constexpr int64_t kHandOverTimeoutMs = 5000;

bool IsTarget(const ReplicaFeeder::Info& replica, const std::string& host, int port) {
  return replica.port == port && EqualsIgnoreCase(replica.ip, host);
}

}  // namespace

Status Failover::Start(Request request) {
  std::lock_guard<std::mutex> lock(mu_);
  if (running()) return Status::RedisError("ERR FAILOVER already in progress.");
  if (replication_->is_replica()) {
    return Status::RedisError("ERR FAILOVER is not valid when server is a replica.");
  }
  ReplicationSnapshot snap = replication_->Snapshot();
  if (snap.replicas.empty()) return Status::RedisError("ERR FAILOVER requires connected replicas.");
  if (request.force && (request.timeout_ms == 0 || request.host.empty())) {
    return Status::RedisError(
        "ERR FAILOVER with force option requires both a timeout and target HOST and IP.");
  }
  if (!request.host.empty()) {
    const ReplicaFeeder::Info* target = nullptr;
    for (const auto& replica : snap.replicas) {
      if (IsTarget(replica, request.host, request.port)) target = &replica;
    }
    if (target == nullptr) {
      return Status::RedisError("ERR FAILOVER target HOST and PORT is not a replica.");
    }
    if (target->state != ReplicaFeeder::State::kOnline) {
      return Status::RedisError("ERR FAILOVER target replica is not online.");
    }
    LOG(INFO) << "FAILOVER requested to " << request.host << ":" << request.port << ".";
  } else {
    LOG(INFO) << "FAILOVER requested to any replica.";
  }
  if (thread_.joinable()) thread_.join();  // the previous failover's thread, finished
  abort_ = false;
  state_.store(kWaitingForSync);
  pause_->HoldWritesForFailover();
  thread_ = std::thread([this, request = std::move(request)] { Run(request); });
  return Status::OK();
}

Status Failover::Abort() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!running()) return Status::RedisError("ERR No failover in progress.");
  abort_ = true;
  cv_.notify_all();
  std::thread thread = std::move(thread_);
  lock.unlock();
  if (thread.joinable()) thread.join();
  return Status::OK();
}

void Failover::Stop() {
  std::unique_lock<std::mutex> lock(mu_);
  abort_ = true;
  cv_.notify_all();
  std::thread thread = std::move(thread_);
  lock.unlock();
  if (thread.joinable()) thread.join();
}

const char* Failover::state_name() const {
  switch (state_.load()) {
    case kWaitingForSync:
      return "waiting-for-sync";
    case kInProgress:
      return "failover-in-progress";
    default:
      return "no-failover";
  }
}

bool Failover::FindCaughtUpReplica(const Request& request, std::string* host, int* port) const {
  ReplicationSnapshot snap = replication_->Snapshot();
  for (const auto& replica : snap.replicas) {
    if (!request.host.empty() && !IsTarget(replica, request.host, request.port)) continue;
    if (replica.state == ReplicaFeeder::State::kOnline && replica.acked_seq >= snap.latest_seq) {
      *host = replica.ip;
      *port = replica.port;
      return true;
    }
  }
  return false;
}

void Failover::Run(Request request) {
  const int64_t deadline = request.timeout_ms > 0 ? UnixMillis() + request.timeout_ms : 0;
  std::string host;
  int port = 0;
  while (!FindCaughtUpReplica(request, &host, &port)) {
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, kPollInterval, [this] { return abort_; })) {
      LOG(INFO) << "FAILOVER aborted: Failover manually aborted";
      return Finish();
    }
    if (deadline != 0 && UnixMillis() >= deadline) {
      if (!request.force) {
        LOG(INFO) << "FAILOVER aborted: Replica never caught up before timeout";
        return Finish();
      }
      LOG(INFO) << "FAILOVER: the target did not catch up before the timeout; forcing it.";
      host = request.host;
      port = request.port;
      break;
    }
  }
  HandOver(host, port);
  Finish();
}

void Failover::HandOver(const std::string& host, int port) {
  state_.store(kInProgress);
  Status s = PromoteReplicaAt(host, port, *config_, kHandOverTimeoutMs);
  if (!s.ok()) {
    LOG(WARNING) << "FAILOVER to " << host << ":" << port << " aborted: " << s.message();
    return;
  }
  bool already = false;
  s = replication_->ReplicaOf(host, port, &already);
  if (!s.ok()) {
    LOG(WARNING) << "FAILOVER: " << host << ":" << port
                 << " is the master now, but following it failed: " << s.message();
    return;
  }
  LOG(INFO) << "FAILOVER: " << host << ":" << port << " is the master now; this is its replica.";
}

void Failover::Finish() {
  state_.store(kNoFailover);
  pause_->ReleaseFailoverHold();
}

}  // namespace basalt
