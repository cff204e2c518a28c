// WriteGroup's bookkeeping (commands/dispatcher.h): the key-lock stripes a group holds, and
// the commit of its shared batch, which answers every grouped command at once.
#include <glog/logging.h>

#include "commands/dispatcher.h"
#include "commands/server_state.h"

namespace basalt {

void WriteGroup::Hold(size_t stripe) {
  if (held_bits_.empty()) held_bits_.resize(LockTable::kStripes / 64);
  held_bits_[stripe / 64] |= uint64_t{1} << (stripe % 64);
  stripes_.push_back(stripe);
  table_->SetHolder(stripe, holder_tag_);
}

void WriteGroup::Unlock(size_t stripe) {
  held_bits_[stripe / 64] &= ~(uint64_t{1} << (stripe % 64));
  table_->SetHolder(stripe, 0);
  table_->stripe(stripe).unlock();
}

bool WriteGroup::TouchedWaitedKey(BlockingRegistry& blocking) const {
  if (!ctx_) return false;
  return ctx_->AnyTouchedFrom(
      0, [&](uint8_t pdb, std::string_view key) { return blocking.HasWaiters(pdb, key); });
}

WriteGroup::~WriteGroup() {
  // Every owner commits before its group goes away; reaching here active is a bug, and dropping
  // the writes (their replies were never sent) is the safe way out of it.
  if (!active()) return;
  LOG(DFATAL) << "write group destroyed uncommitted";
  ctx_->Discard();
  ctx_.reset();
  for (size_t stripe : stripes_) Unlock(stripe);
}

bool WriteGroup::HoldsRepliesIn(const std::string* out) const {
  return std::any_of(replies_.begin(), replies_.end(),
                     [out](const HeldReply& r) { return r.out == out; }) ||
         std::find(committed_outs_.begin(), committed_outs_.end(), out) != committed_outs_.end();
}

void WriteGroup::ReplaceRepliesWithError(const Status& error) {
  // Each output string is rebuilt rather than patched in place: replies of commands that did
  // not join the group (errors before they ran) sit between the grouped ones and stay as they
  // are. The held replies of one string appear in replies_ in the order they were written.
  std::vector<std::string*> outs;
  for (const HeldReply& r : replies_) {
    if (std::find(outs.begin(), outs.end(), r.out) == outs.end()) outs.push_back(r.out);
  }
  for (std::string* out : outs) {
    std::string rebuilt;
    size_t copied = 0;
    for (const HeldReply& r : replies_) {
      if (r.out != out) continue;
      // A reply cut for max-reply-size ends before its span did (its client is being closed).
      size_t begin = std::min(r.begin, out->size());
      size_t end = std::min(r.end, out->size());
      rebuilt.append(*out, copied, begin - copied);
      Reply(&rebuilt, r.session->resp).Error(error.ToReplyText());
      copied = end;
    }
    rebuilt.append(*out, copied, std::string::npos);
    out->swap(rebuilt);
  }
}

void WriteGroup::Commit(ServerState& server) {
  if (!active()) return;
  std::vector<uint64_t> sessions = CommitBatch(server);
  for (auto it = stripes_.rbegin(); it != stripes_.rend(); ++it) Unlock(*it);
  for (size_t stripe : stripes_) {
    if (table_->HasWaiter(stripe)) {
      hand_off_ = stripe;
      break;
    }
  }
  stripes_.clear();
  keyspace_lock_ = std::shared_lock<WriterPreferringMutex>();
  for (uint64_t id : committed_sessions_) {
    if (std::find(sessions.begin(), sessions.end(), id) == sessions.end()) sessions.push_back(id);
  }
  committed_sessions_.clear();
  committed_outs_.clear();
  if (after_commit_) after_commit_(sessions);
}

void WriteGroup::CommitKeepingLocks(ServerState& server, const std::vector<size_t>& keep) {
  for (const HeldReply& r : replies_) {
    if (std::find(committed_outs_.begin(), committed_outs_.end(), r.out) == committed_outs_.end()) {
      committed_outs_.push_back(r.out);
    }
  }
  std::vector<uint64_t> sessions = CommitBatch(server);
  size_t kept = 0;
  for (size_t stripe : stripes_) {
    if (std::binary_search(keep.begin(), keep.end(), stripe)) {
      stripes_[kept++] = stripe;
    } else {
      Unlock(stripe);
    }
  }
  stripes_.resize(kept);
  for (uint64_t id : sessions) {
    if (std::find(committed_sessions_.begin(), committed_sessions_.end(), id) ==
        committed_sessions_.end()) {
      committed_sessions_.push_back(id);
    }
  }
  ctx_.emplace(server.keyspace);
}

std::vector<uint64_t> WriteGroup::CommitBatch(ServerState& server) {
  Status s = ctx_->Commit();
  std::vector<uint64_t> sessions;
  if (!s.ok()) ReplaceRepliesWithError(s);
  uint64_t sequence = s.ok() ? server.keyspace->engine()->LatestSequence() : 0;
  for (const HeldReply& r : replies_) {
    if (s.ok()) NoteCommittedWrite(server, *r.session, sequence);
    if (std::find(sessions.begin(), sessions.end(), r.session->id) == sessions.end()) {
      sessions.push_back(r.session->id);
    }
  }
  if (replies_.size() > 1) {
    server.counters.grouped_commits.fetch_add(1, std::memory_order_relaxed);
    server.counters.grouped_commands.fetch_add(static_cast<int64_t>(replies_.size()),
                                               std::memory_order_relaxed);
  }
  ctx_.reset();
  replies_.clear();
  return sessions;
}

}  // namespace basalt
