// basalt-bench: a key-value workload driver in the style of the embedded-KV benchmark
// literature, for Basalt or any Redis-protocol server.
//
// Phases run in the order given: `fill` writes keys 0..N-1 once (pipelined, in key order
// handed out in blocks, so it doubles as a bulk load and, run twice, as an overwrite pass),
// `read` does uniformly random GETs, `mixRR` does RR% random GETs and the rest random SETs,
// `xrange` reads `XRANGE <stream> <ms> + COUNT <n>` from uniformly random milliseconds of the
// middle half of an existing stream (its first and last IDs are looked up first). The
// C connections are spread over T client threads (one by default), each of which multiplexes
// its non-blocking hiredis contexts with poll() and keeps one request (in a fill, one pipelined
// batch) in flight per connection, as redis-benchmark does; every request's latency (for a
// pipelined fill: its batch's round trip) goes into the connection's HDR-style histogram. A sampler
// thread writes one CSV row per interval (throughput, keys loaded, interval latency percentiles);
// at the end of each phase a summary row (throughput and latency min, RMS, p50, p99, p99.9, p99.99,
// max) goes to the summary CSV and to stdout.
//
// This program measures; it asserts nothing and never fails on speed. It exits non-zero only
// when it cannot connect or a request gets an error reply.
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "histogram.h"

namespace basalt_bench {
namespace {

struct Options {
  std::string host = "127.0.0.1";
  int port = 6379;
  uint64_t keys = 100000;
  int connections = 8;
  int threads = 1;  // client threads; each multiplexes its share of the connections
  size_t value_size = 1024;
  std::vector<std::string> phases = {"fill", "read", "mix70", "mix50", "mix30"};
  double seconds = 10;     // per read/mix phase
  uint64_t ops = 0;        // per read/mix phase; 0 = bounded by time only
  int fill_pipeline = 16;  // requests per round trip while filling
  std::string key_prefix = "key:";
  std::string label = "run";
  std::string summary_csv;  // appended to; header written if the file is new
  std::string series_csv;   // appended to; header written if the file is new
  int interval_ms = 1000;
  uint64_t value_seed = 0;   // a different seed writes different values (an overwrite pass)
  std::string stream = "s";  // the xrange phase's stream
  int xrange_count = 100;
};

using Clock = std::chrono::steady_clock;

uint64_t NanosSince(Clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count());
}

// One connection's counters and histograms; the interval histogram is swapped out by the
// sampler under `mu`, which the client thread otherwise holds only for a moment per request.
struct ThreadStats {
  std::mutex mu;
  LatencyHistogram phase;
  LatencyHistogram interval;
  uint64_t ops = 0;
  uint64_t misses = 0;
  uint64_t errors = 0;
  std::string first_error;

  void Record(uint64_t ns, uint64_t n) {
    std::lock_guard<std::mutex> lock(mu);
    for (uint64_t i = 0; i < n; i++) {
      phase.Record(ns);
      interval.Record(ns);
    }
    ops += n;
  }
};

struct Phase {
  std::string name;
  bool fill = false;
  bool xrange = false;
  int read_percent = 100;
};

bool ParsePhase(const std::string& s, Phase* p) {
  p->name = s;
  if (s == "fill") {
    p->fill = true;
    return true;
  }
  if (s == "read") {
    p->read_percent = 100;
    return true;
  }
  if (s == "xrange") {
    p->xrange = true;
    return true;
  }
  if (s.rfind("mix", 0) == 0 && s.size() > 3) {
    int r = atoi(s.c_str() + 3);
    if (r < 0 || r > 100) return false;
    p->read_percent = r;
    return true;
  }
  return false;
}

class Runner {
 public:
  explicit Runner(const Options& o) : o_(o), fill_round_(o.value_seed) {
    std::mt19937_64 rng(42);
    values_.resize(o.value_size + 4096);
    for (auto& c : values_) c = static_cast<char>(rng());  // incompressible, like real data
  }

  bool Run() {
    series_ = OpenCsv(o_.series_csv,
                      "label,phase,elapsed_s,ops,ops_per_sec,keys_loaded,p50_us,p99_us,"
                      "p999_us,max_us\n");
    summary_ = OpenCsv(o_.summary_csv,
                       "label,phase,connections,value_size,keys,ops,seconds,ops_per_sec,"
                       "min_us,rms_us,p50_us,p99_us,p999_us,p9999_us,max_us,misses,errors\n");
    printf("%-18s %-6s %10s %8s %10s %9s %9s %9s %9s %9s %9s %9s\n", "label", "phase", "ops",
           "secs", "ops/s", "min_us", "rms_us", "p50_us", "p99_us", "p999_us", "p9999_us",
           "max_us");
    bool ok = true;
    for (const auto& name : o_.phases) {
      Phase phase;
      if (!ParsePhase(name, &phase)) {
        fprintf(stderr, "basalt-bench: unknown phase '%s'\n", name.c_str());
        return false;
      }
      if (!RunPhase(phase)) ok = false;
    }
    if (series_) fclose(series_);
    if (summary_) fclose(summary_);
    return ok;
  }

 private:
  static FILE* OpenCsv(const std::string& path, const char* header) {
    if (path.empty()) return nullptr;
    bool fresh = true;
    if (FILE* probe = fopen(path.c_str(), "r")) {
      fresh = fgetc(probe) == EOF;
      fclose(probe);
    }
    FILE* f = fopen(path.c_str(), "a");
    if (f == nullptr) {
      perror(path.c_str());
      exit(2);
    }
    if (fresh) fputs(header, f);
    return f;
  }

  std::string Key(uint64_t i) const {
    char buf[32];
    snprintf(buf, sizeof(buf), "%012llu", static_cast<unsigned long long>(i));
    return o_.key_prefix + buf;
  }

  // The millisecond part of the first (or, `last`, the last) entry ID of the stream.
  bool StreamEdge(bool last, uint64_t* ms) {
    redisContext* c = redisConnect(o_.host.c_str(), o_.port);
    if (c == nullptr || c->err) {
      fprintf(stderr, "basalt-bench: can't connect: %s\n", c ? c->errstr : "no memory");
      if (c) redisFree(c);
      return false;
    }
    auto* r = static_cast<redisReply*>(redisCommand(
        c, last ? "XREVRANGE %s + - COUNT 1" : "XRANGE %s - + COUNT 1", o_.stream.c_str()));
    bool ok = r != nullptr && r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
              r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements == 2 &&
              r->element[0]->element[0]->type == REDIS_REPLY_STRING;
    if (ok) *ms = strtoull(r->element[0]->element[0]->str, nullptr, 10);
    if (!ok) fprintf(stderr, "basalt-bench: stream '%s' has no entries\n", o_.stream.c_str());
    if (r) freeReplyObject(r);
    redisFree(c);
    return ok;
  }

  bool RunPhase(const Phase& phase) {
    if (phase.xrange) {
      uint64_t first = 0, last = 0;
      if (!StreamEdge(false, &first) || !StreamEdge(true, &last)) return false;
      xrange_low_ = first + (last - first) / 4;
      xrange_high_ = first + 3 * (last - first) / 4;
    }
    stats_.clear();
    for (int i = 0; i < o_.connections; i++) stats_.push_back(std::make_unique<ThreadStats>());
    next_key_ = 0;
    stop_ = false;
    if (phase.fill) fill_round_++;
    start_ = Clock::now();
    std::vector<std::thread> threads;
    const int client_threads = std::min(o_.threads, o_.connections);
    for (int i = 0; i < client_threads; i++) {
      threads.emplace_back(
          [this, &phase, i, client_threads] { ClientLoop(phase, i, client_threads); });
    }
    std::thread sampler([this, &phase] { Sample(phase); });
    for (auto& t : threads) t.join();
    double secs = static_cast<double>(NanosSince(start_)) / 1e9;
    {
      std::lock_guard<std::mutex> lock(sample_mu_);
      stop_ = true;
    }
    sample_cv_.notify_all();
    sampler.join();

    LatencyHistogram total;
    uint64_t ops = 0, misses = 0, errors = 0;
    std::string first_error;
    for (auto& s : stats_) {
      total.Merge(s->phase);
      ops += s->ops;
      misses += s->misses;
      errors += s->errors;
      if (first_error.empty()) first_error = s->first_error;
    }
    double rate = secs > 0 ? static_cast<double>(ops) / secs : 0;
    printf("%-18s %-6s %10llu %8.2f %10.0f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n",
           o_.label.c_str(), phase.name.c_str(), static_cast<unsigned long long>(ops), secs, rate,
           total.MinMicros(), total.RmsMicros(), total.PercentileMicros(0.5),
           total.PercentileMicros(0.99), total.PercentileMicros(0.999),
           total.PercentileMicros(0.9999), total.MaxMicros());
    fflush(stdout);
    if (summary_) {
      fprintf(summary_,
              "%s,%s,%d,%zu,%llu,%llu,%.3f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%llu,"
              "%llu\n",
              o_.label.c_str(), phase.name.c_str(), o_.connections, o_.value_size,
              static_cast<unsigned long long>(o_.keys), static_cast<unsigned long long>(ops), secs,
              rate, total.MinMicros(), total.RmsMicros(), total.PercentileMicros(0.5),
              total.PercentileMicros(0.99), total.PercentileMicros(0.999),
              total.PercentileMicros(0.9999), total.MaxMicros(),
              static_cast<unsigned long long>(misses), static_cast<unsigned long long>(errors));
      fflush(summary_);
    }
    if (errors > 0) {
      fprintf(stderr, "basalt-bench: %llu errors in phase %s, first: %s\n",
              static_cast<unsigned long long>(errors), phase.name.c_str(), first_error.c_str());
      return false;
    }
    return true;
  }

  void Sample(const Phase& phase) {
    std::unique_lock<std::mutex> lock(sample_mu_);
    uint64_t last_ops = 0;
    auto last = Clock::now();
    bool last_round = false;
    while (!last_round) {
      sample_cv_.wait_for(lock, std::chrono::milliseconds(o_.interval_ms));
      last_round = stop_;  // one more row for the phase's final, partial interval
      LatencyHistogram interval;
      uint64_t ops = 0;
      for (auto& s : stats_) {
        std::lock_guard<std::mutex> g(s->mu);
        interval.Merge(s->interval);
        s->interval.Reset();
        ops += s->ops;
      }
      auto now = Clock::now();
      double dt = std::chrono::duration<double>(now - last).count();
      double elapsed = std::chrono::duration<double>(now - start_).count();
      if (series_ && dt > 0.05) {
        uint64_t loaded = phase.fill ? std::min<uint64_t>(ops, o_.keys) : 0;
        fprintf(series_, "%s,%s,%.3f,%llu,%.1f,%llu,%.1f,%.1f,%.1f,%.1f\n", o_.label.c_str(),
                phase.name.c_str(), elapsed, static_cast<unsigned long long>(ops),
                static_cast<double>(ops - last_ops) / dt, static_cast<unsigned long long>(loaded),
                interval.PercentileMicros(0.5), interval.PercentileMicros(0.99),
                interval.PercentileMicros(0.999), interval.MaxMicros());
        fflush(series_);
      }
      last_ops = ops;
      last = now;
    }
  }

  // One connection inside a client loop: the batch of requests it has in flight (one request
  // in a mix, `fill_pipeline` SETs in a fill) and when that batch went out.
  struct Conn {
    redisContext* c = nullptr;
    ThreadStats* stats = nullptr;
    std::mt19937_64 rng;
    uint64_t done = 0;       // requests answered in this phase
    uint64_t batch = 0;      // requests in the batch in flight
    uint64_t in_flight = 0;  // of those, replies not yet read
    bool is_get = false;
    bool want_write = false;  // the socket took only part of the batch
    bool finished = false;
    Clock::time_point sent;
    std::vector<std::string> keys;
  };

  bool Connect(Conn* conn) {
    redisContext* c = redisConnect(o_.host.c_str(), o_.port);
    if (c == nullptr || c->err) {
      conn->stats->errors++;
      conn->stats->first_error = c ? c->errstr : "can't allocate a hiredis context";
      if (c) redisFree(c);
      return false;
    }
    // From here on hiredis only buffers: the loop reads and writes when poll() says so.
    int flags = fcntl(c->fd, F_GETFL);
    fcntl(c->fd, F_SETFL, flags | O_NONBLOCK);
    c->flags &= ~REDIS_BLOCK;
    conn->c = c;
    return true;
  }

  // Returns false after recording an error reply or a connection failure.
  static bool Fail(Conn* conn, const char* why) {
    conn->stats->errors++;
    if (conn->stats->first_error.empty()) conn->stats->first_error = why;
    conn->finished = true;
    return false;
  }

  static bool Check(redisReply* r, Conn* conn) {
    bool ok = true;
    if (r->type == REDIS_REPLY_ERROR) {
      std::string error(r->str, r->len);
      ok = Fail(conn, error.c_str());
    } else if (conn->is_get && r->type == REDIS_REPLY_NIL) {
      conn->stats->misses++;
    }
    freeReplyObject(r);
    return ok;
  }

  const char* ValueFor(uint64_t seed) const {
    return values_.data() + (seed * 2654435761u) % (values_.size() - o_.value_size);
  }

  // Queues the connection's next batch and starts sending it; false when the phase is over
  // for this connection (keys handed out, its share of --ops done, or time up).
  bool Issue(const Phase& phase, Conn* conn) {
    uint64_t n = 1;
    if (phase.fill) {
      const uint64_t depth = static_cast<uint64_t>(std::max(o_.fill_pipeline, 1));
      uint64_t first = next_key_.fetch_add(depth);
      if (first >= o_.keys) return false;
      n = std::min(depth, o_.keys - first);
      conn->keys.resize(n);
      for (uint64_t i = 0; i < n; i++) {
        conn->keys[i] = Key(first + i);
        const char* argv[3] = {"SET", conn->keys[i].data(), ValueFor(first + i + fill_round_ * 7)};
        size_t lens[3] = {3, conn->keys[i].size(), o_.value_size};
        redisAppendCommandArgv(conn->c, 3, argv, lens);
      }
      conn->is_get = false;
    } else {
      const uint64_t budget = o_.ops / static_cast<uint64_t>(o_.connections);
      if (budget != 0 && conn->done >= budget) return false;
      if ((conn->done & 63) == 0 && NanosSince(start_) >= static_cast<uint64_t>(o_.seconds * 1e9))
        return false;
      std::uniform_int_distribution<uint64_t> pick(0, o_.keys - 1);
      std::uniform_int_distribution<int> percent(0, 99);
      conn->keys.resize(1);
      conn->keys[0] = Key(pick(conn->rng));
      conn->is_get = percent(conn->rng) < phase.read_percent;
      if (phase.xrange) {
        std::uniform_int_distribution<uint64_t> ms(xrange_low_, xrange_high_);
        const std::string start = std::to_string(ms(conn->rng));
        const std::string count = std::to_string(o_.xrange_count);
        const char* argv[6] = {"XRANGE", o_.stream.data(), start.data(),
                               "+",      "COUNT",          count.data()};
        size_t lens[6] = {6, o_.stream.size(), start.size(), 1, 5, count.size()};
        redisAppendCommandArgv(conn->c, 6, argv, lens);
        conn->is_get = false;
      } else if (conn->is_get) {
        const char* argv[2] = {"GET", conn->keys[0].data()};
        size_t lens[2] = {3, conn->keys[0].size()};
        redisAppendCommandArgv(conn->c, 2, argv, lens);
      } else {
        const char* argv[3] = {"SET", conn->keys[0].data(), ValueFor(conn->rng())};
        size_t lens[3] = {3, conn->keys[0].size(), o_.value_size};
        redisAppendCommandArgv(conn->c, 3, argv, lens);
      }
    }
    conn->batch = conn->in_flight = n;
    conn->sent = Clock::now();
    return Write(conn);
  }

  static bool Write(Conn* conn) {
    int done = 0;
    if (redisBufferWrite(conn->c, &done) != REDIS_OK) return Fail(conn, conn->c->errstr);
    conn->want_write = !done;
    return true;
  }

  // Reads what arrived; each completed batch is recorded and the next one issued.
  void Read(const Phase& phase, Conn* conn) {
    if (redisBufferRead(conn->c) != REDIS_OK) {
      Fail(conn, conn->c->errstr);
      return;
    }
    while (!conn->finished) {
      void* reply = nullptr;
      if (redisGetReplyFromReader(conn->c, &reply) != REDIS_OK) {
        Fail(conn, conn->c->errstr);
        return;
      }
      if (reply == nullptr) return;
      if (conn->in_flight == 0) {
        freeReplyObject(reply);
        Fail(conn, "a reply nobody asked for");
        return;
      }
      if (!Check(static_cast<redisReply*>(reply), conn)) return;
      if (--conn->in_flight > 0) continue;
      conn->stats->Record(NanosSince(conn->sent), conn->batch);
      conn->done += conn->batch;
      if (!Issue(phase, conn)) conn->finished = true;
    }
  }

  // One client thread: its connections (every `threads`-th, from `index`), multiplexed with
  // poll() so that a reply is timed when it arrives rather than when a thread of its own gets a
  // core; with a thread per connection, 32 connections on 2 cores measured the scheduler.
  void ClientLoop(const Phase& phase, int index, int threads) {
    std::vector<Conn> conns;
    for (int i = index; i < o_.connections; i += threads) {
      Conn conn;
      conn.stats = stats_[i].get();
      conn.rng.seed(1234567 + static_cast<uint64_t>(i) * 7919);
      if (Connect(&conn) && !Issue(phase, &conn)) conn.finished = true;
      if (conn.c == nullptr) conn.finished = true;
      conns.push_back(std::move(conn));
    }
    std::vector<pollfd> fds(conns.size());
    while (true) {
      size_t active = 0;
      for (size_t i = 0; i < conns.size(); i++) {
        const Conn& conn = conns[i];
        fds[i].fd = conn.finished ? -1 : conn.c->fd;
        fds[i].events = static_cast<short>(POLLIN | (conn.want_write ? POLLOUT : 0));
        fds[i].revents = 0;
        if (!conn.finished) active++;
      }
      if (active == 0) break;
      if (poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) {
        perror("poll");
        break;
      }
      for (size_t i = 0; i < conns.size(); i++) {
        Conn& conn = conns[i];
        if (conn.finished || fds[i].revents == 0) continue;
        if ((fds[i].revents & POLLOUT) && !Write(&conn)) continue;
        if (fds[i].revents & (POLLIN | POLLERR | POLLHUP)) Read(phase, &conn);
      }
    }
    for (Conn& conn : conns) {
      if (conn.c) redisFree(conn.c);
    }
  }

  const Options& o_;
  std::string values_;
  std::vector<std::unique_ptr<ThreadStats>> stats_;
  std::atomic<uint64_t> next_key_{0};
  uint64_t fill_round_;                        // each fill pass writes different values
  uint64_t xrange_low_ = 0, xrange_high_ = 0;  // the xrange phase's milliseconds
  Clock::time_point start_;
  std::mutex sample_mu_;
  std::condition_variable sample_cv_;
  bool stop_ = false;
  FILE* series_ = nullptr;
  FILE* summary_ = nullptr;
};

void Usage() {
  fprintf(stderr,
          "Usage: basalt-bench [--host H] [--port P] [--keys N] [--connections C] [--threads T]\n"
          "                    [--value-size BYTES] [--phases fill,read,mixRR,xrange]\n"
          "                    [--seconds S] [--ops N] [--fill-pipeline D] [--key-prefix P]\n"
          "                    [--label L] [--summary-csv F] [--series-csv F] [--interval-ms M]\n"
          "                    [--value-seed N] [--stream KEY] [--xrange-count N]\n");
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; i++) {
    std::string flag = argv[i];
    if (flag == "-h" || flag == "--help" || i + 1 >= argc) return false;
    std::string v = argv[++i];
    if (flag == "--host")
      o->host = v;
    else if (flag == "--port")
      o->port = atoi(v.c_str());
    else if (flag == "--keys")
      o->keys = strtoull(v.c_str(), nullptr, 10);
    else if (flag == "--connections")
      o->connections = atoi(v.c_str());
    else if (flag == "--threads")
      o->threads = atoi(v.c_str());
    else if (flag == "--value-size")
      o->value_size = strtoull(v.c_str(), nullptr, 10);
    else if (flag == "--phases")
      o->phases = Split(v);
    else if (flag == "--seconds")
      o->seconds = atof(v.c_str());
    else if (flag == "--ops")
      o->ops = strtoull(v.c_str(), nullptr, 10);
    else if (flag == "--fill-pipeline")
      o->fill_pipeline = atoi(v.c_str());
    else if (flag == "--key-prefix")
      o->key_prefix = v;
    else if (flag == "--label")
      o->label = v;
    else if (flag == "--summary-csv")
      o->summary_csv = v;
    else if (flag == "--series-csv")
      o->series_csv = v;
    else if (flag == "--interval-ms")
      o->interval_ms = atoi(v.c_str());
    else if (flag == "--value-seed")
      o->value_seed = strtoull(v.c_str(), nullptr, 10);
    else if (flag == "--stream")
      o->stream = v;
    else if (flag == "--xrange-count")
      o->xrange_count = atoi(v.c_str());
    else
      return false;
  }
  return o->keys > 0 && o->connections > 0 && o->threads > 0 && o->value_size > 0 &&
         o->interval_ms > 0;
}

}  // namespace
}  // namespace basalt_bench

int main(int argc, char** argv) {
  basalt_bench::Options options;
  if (!basalt_bench::ParseArgs(argc, argv, &options)) {
    basalt_bench::Usage();
    return 2;
  }
  basalt_bench::Runner runner(options);
  return runner.Run() ? 0 : 1;
}
