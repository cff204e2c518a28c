// Reply: builds RESP2 or RESP3 replies into a connection's output buffer.
//
// Commands describe replies by meaning (a map, a null, a double) and this class picks the
// encoding for the client's protocol version, so no command needs to know about RESP3.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace basalt {

class Reply {
 public:
  Reply(std::string* out, int resp) : out_(out), resp_(resp) {}

  int resp() const { return resp_; }
  void set_resp(int resp) { resp_ = resp; }
  std::string* buffer() { return out_; }

  void Simple(std::string_view s);
  void Ok() { out_->append("+OK\r\n"); }
  // `msg` is the full error line without '-' ("ERR ...", "WRONGTYPE ...").
  void Error(std::string_view msg);
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
  void Raw(std::string_view s) { out_->append(s); }

 private:
  void Header(char type, int64_t n);
  std::string* out_;
  int resp_;
};

}  // namespace basalt
