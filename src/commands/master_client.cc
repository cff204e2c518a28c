#include "commands/master_client.h"

#include <glog/logging.h>

#include "commands/dispatcher.h"
#include "common/clock.h"

namespace basalt {

MasterClient::MasterClient(ServerState* server) : server_(server) {
  Reset();
}

void MasterClient::Reset() {
  Flush();
  session_ = std::make_shared<Session>();
  session_->from_master = true;
  session_->authenticated = true;
  session_->name = "master";
  session_->addr = "master:0";
  session_->created_ms = UnixMillis();
}

void MasterClient::Execute(std::vector<std::string>& argv, const std::atomic<bool>& stop) {
  session_->abandon_lock_waits = &stop;
  const size_t reply_start = out_.size();
  std::string name = argv.empty() ? std::string() : argv[0];
  Dispatch(*server_, *session_, argv, &out_, &group_);
  session_->abandon_lock_waits = nullptr;
  if (out_.size() <= reply_start || out_[reply_start] != '-' || stop.load()) return;
  // MULTI's queued commands answer +QUEUED; an error here is one the master did not get.
  uint64_t n = errors_.fetch_add(1) + 1;
  std::string_view text = std::string_view(out_).substr(reply_start);
  text = text.substr(1, text.find("\r\n") - 1);
  if (n <= 10 || n % 1000 == 0) {
    LOG(WARNING) << "replication: the Redis master's " << name << " failed here (" << n
                 << " such errors so far): " << text;
  }
}

void MasterClient::Flush() {
  group_.Commit(*server_);
  out_.clear();
}

}  // namespace basalt
