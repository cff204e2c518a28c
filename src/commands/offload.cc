#include "commands/offload.h"

#include <algorithm>

#include "commands/dispatcher.h"

namespace basalt {

void CommandOffloader::Start() {
  for (size_t i = 0; i < threads_; i++) running_.emplace_back([this] { Loop(); });
}

void CommandOffloader::Submit(Session& session, std::vector<std::string> argv) {
  Job job;
  job.id = session.id;
  job.db = session.db.load();
  job.resp = session.resp.load();
  job.addr = session.addr;
  job.tracking_flags = session.tracking_flags.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(session.info_mu);
    job.name = session.name;
    job.user_name = session.user_name;
  }
  job.argv = std::move(argv);
  job.deliver = session.deliver_hook;
  job.origin = session.weak_from_this();
  job.close = session.close_hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void CommandOffloader::Stop() {
  if (running_.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& thread : running_) thread.join();
  running_.clear();
}

void CommandOffloader::Loop() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Run(job);
  }
}

void CommandOffloader::Run(Job& job) {
  Session session;
  session.id = job.id;
  session.db = job.db;
  session.resp = job.resp;
  session.authenticated = true;  // checked by the worker before it offloaded the command
  session.addr = job.addr;
  session.name = job.name;
  session.user_name = job.user_name;
  session.offloaded = true;
  session.tracking_flags = job.tracking_flags;
  std::string out;
  Dispatch(*server_, session, job.argv, &out);
  if (session.last_write_seq != 0) {
    if (std::shared_ptr<Session> origin = job.origin.lock()) {
      origin->last_write_seq =
          std::max(origin->last_write_seq.load(), session.last_write_seq.load());
      origin->last_write_stream_position = std::max(origin->last_write_stream_position.load(),
                                                    session.last_write_stream_position.load());
    }
  }
  if (session.close_after_reply && job.close) return job.close();
  if (job.deliver) job.deliver(std::move(out));
}

}  // namespace basalt
