// Reply: builds RESP2 or RESP3 replies into a connection's output buffer.
//
// Commands describe replies by meaning (a map, a null, a double) and this class picks the
// encoding for the client's protocol version, so no command needs to know about RESP3.
//
// A reply may be given a size limit (max-reply-size): once what it added passes the limit, the
// reply is cut back to nothing, further output is dropped and overflowed() turns true, so a
// reply over a huge collection never holds more than the limit in memory. Loops over large
// data check overflowed() to stop early; the dispatcher then closes the client.
//
// A reply may hold back what its command adds to the statistics (HoldStatsIn): a run with reads
// limited to memory (commands/dispatcher.h) may be thrown away, and is counted only if it stands.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace basalt {

// What a run that may be thrown away adds to the statistics, until it is known to stand.
struct TentativeStats {
  int64_t keyspace_hits = 0;
  int64_t keyspace_misses = 0;
  std::vector<std::string> error_replies;
};

class Reply {
 public:
  Reply(std::string* out, int resp) : out_(out), resp_(resp) {}

  int resp() const { return resp_; }
  void set_resp(int resp) { resp_ = resp; }
  std::string* buffer() { return out_; }

  void Simple(std::string_view s);
  // An array of simple strings: the reply of every `<COMMAND> HELP`.
  void SimpleLines(std::span<const std::string> lines);
  void Ok() { out_->append("+OK\r\n"); }
  // `msg` is the full error line without '-' ("ERR ...", "WRONGTYPE ...").
  void Error(std::string_view msg);
  // An error already counted in the error statistics where it was first made (a script passing
  // on the error of a command it called): it still makes the current command a failed call.
  void ErrorNotCounted(std::string_view msg);
  void Integer(int64_t v);
  void Bulk(std::string_view s);
  void Null();       // absent value: RESP2 "$-1", RESP3 "_"
  void NullArray();  // absent aggregate: RESP2 "*-1", RESP3 "_"
  void Array(size_t n);
  void Map(size_t n);  // n pairs: RESP2 flat array of 2n
  void Set(size_t n);
  void Push(size_t n);
  void Double(double v);              // RESP3 ",", RESP2 bulk string
  void Bool(bool v);                  // RESP3 "#", RESP2 integer 0/1
  void Verbatim(std::string_view s);  // RESP3 "=" txt, RESP2 bulk
  void BulkArray(const std::string* items, size_t n);
  void Raw(std::string_view s);

  // Limits what this reply may add to the buffer from now on.
  void SetLimit(size_t limit);
  bool overflowed() const { return overflowed_; }
  // Gives the reply up as too large (a command that gathers data before replying found it so).
  void Overflow();

  // From now on, error replies and keyspace hits (CountHit) go to `stats` instead of the
  // server's statistics; nullptr restores those.
  void HoldStatsIn(TentativeStats* stats) { tentative_ = stats; }
  TentativeStats* tentative() const { return tentative_; }

 private:
  void Header(char type, int64_t n);
  // After each append: past the limit, drop this reply's output and stop accepting more.
  void CheckLimit() {
    if (out_->size() - start_ > limit_) DropOverLimit();
  }
  void DropOverLimit();
  std::string* out_;
  int resp_;
  size_t start_ = 0;
  size_t limit_ = SIZE_MAX;
  bool overflowed_ = false;
  TentativeStats* tentative_ = nullptr;
};

}  // namespace basalt
