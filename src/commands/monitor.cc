#include "commands/monitor.h"

#include <glog/logging.h>
#include <sys/time.h>

#include <algorithm>
#include <cstdio>

#include "commands/command_table.h"
#include "commands/redaction.h"
#include "common/clock.h"
#include "common/strutil.h"

namespace basalt {

void AppendQuoted(std::string* out, std::string_view s) {
  out->push_back('"');
  for (unsigned char ch : s) {
    switch (ch) {
      case '\\':
        out->append("\\\\");
        break;
      case '"':
        out->append("\\\"");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\a':
        out->append("\\a");
        break;
      case '\b':
        out->append("\\b");
        break;
      default:
        if (ch >= 0x20 && ch < 0x7f) {
          out->push_back(static_cast<char>(ch));
        } else {
          char hex[8];
          snprintf(hex, sizeof(hex), "\\x%02x", ch);
          out->append(hex);
        }
    }
  }
  out->push_back('"');
}

std::string MonitorLine(int64_t unix_us, int db, std::string_view source,
                        const std::vector<std::string>& argv) {
  char head[64];
  snprintf(head, sizeof(head), "%lld.%06lld [%d ", static_cast<long long>(unix_us / 1000000),
           static_cast<long long>(unix_us % 1000000), db);
  std::string line(head);
  line.append(source);
  line.append("] ");
  for (size_t i = 0; i < argv.size(); i++) {
    if (i > 0) line.push_back(' ');
    AppendQuoted(&line, argv[i]);
  }
  return line;
}

bool ShownToMonitors(const CommandSpec& spec, const std::vector<std::string>& argv) {
  return !(CommandTable::Get().FlagsOf(spec, argv) & kCmdAdmin);
}

void Monitors::Add(Session& session) {
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.push_back(session.shared_from_this());
  session.monitor.store(true, std::memory_order_relaxed);
  count_.store(static_cast<int>(sessions_.size()), std::memory_order_relaxed);
}

void Monitors::Remove(Session& session) {
  if (!session.monitor.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.erase(
      std::remove_if(sessions_.begin(), sessions_.end(),
                     [&](const std::shared_ptr<Session>& s) { return s.get() == &session; }),
      sessions_.end());
  session.monitor.store(false, std::memory_order_relaxed);
  count_.store(static_cast<int>(sessions_.size()), std::memory_order_relaxed);
}

void Monitors::Feed(const Session& client, int db, const std::vector<std::string>& argv) {
  if (argv.empty()) return;
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  const int64_t now_us = static_cast<int64_t>(tv.tv_sec) * 1000000 + tv.tv_usec;
  const std::string_view source = client.script_client ? std::string_view("lua") : client.addr;
  auto message = std::make_shared<PublishedMessage>();
  message->payload = NeedsRedaction(argv) ? MonitorLine(now_us, db, source, Redacted(argv))
                                          : MonitorLine(now_us, db, source, argv);
  std::shared_ptr<const PublishedMessage> shared = std::move(message);
  OutputBufferLimit limit;
  if (config_ != nullptr) limit = config_->output_buffer_limit(ClientClass::kNormal);
  const int64_t now_ms = now_us / 1000;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& s : sessions_) {
    auto result =
        s->output.Push(PendingMessage{PubSubKind::kMonitor, std::string(), shared},
                       s->output_buffer_bytes.load(std::memory_order_relaxed), limit, now_ms);
    if (result == ClientOutput::PushResult::kOverLimit) {
      LOG(WARNING) << "Client id=" << s->id << " addr=" << s->addr
                   << " closed for overcoming of output buffer limits.";
    }
  }
}

}  // namespace basalt
