// libFuzzer target: RESTORE's payload parser on arbitrary bytes.
//
// Besides crashes, leaks, hangs and huge allocations from claimed lengths (caught by libFuzzer
// and the sanitizers), it checks what a parsed value promises the writers: a known type, at
// least one element, no duplicate members or fields, no NaN score, and for streams ascending
// entry IDs and pending entries owned by consumers of their group. The input is the object
// body itself (no footer), so the fuzzer does not have to find checksums; the same bytes with
// a footer appended must verify and parse to the same outcome.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "common/rdb_encoding.h"
#include "types/rdb_value.h"

namespace {

using basalt::RdbValue;
using basalt::RedisType;

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckValue(const RdbValue& v) {
  std::set<std::string_view> seen;
  switch (v.type) {
    case RedisType::kString:
      break;
    case RedisType::kList:
      Check(!v.items.empty());
      break;
    case RedisType::kSet:
      Check(!v.items.empty());
      for (const auto& m : v.items) Check(seen.insert(m).second);
      break;
    case RedisType::kHash:
      Check(!v.fields.empty());
      for (const auto& f : v.fields) Check(seen.insert(f.first).second);
      break;
    case RedisType::kZset:
      Check(!v.scored.empty());
      for (const auto& m : v.scored) Check(seen.insert(m.member).second && !std::isnan(m.score));
      break;
    case RedisType::kStream: {
      const auto& s = v.stream;
      Check(s.counters.groups == s.groups.size());
      for (size_t i = 0; i < s.entries.size(); i++) {
        Check(!s.entries[i].fields.empty());
        Check(i == 0 || s.entries[i - 1].id < s.entries[i].id);
      }
      if (!s.entries.empty()) Check(!(s.counters.last_id < s.entries.back().id));
      for (const auto& g : s.groups) {
        Check(seen.insert(g.name).second);
        Check(g.group.pending == g.pending.size() && g.group.consumers == g.consumers.size());
        std::set<std::string_view> consumers;
        for (const auto& c : g.consumers) Check(consumers.insert(c.first).second);
        for (const auto& p : g.pending) Check(consumers.count(p.consumer) == 1);
      }
      break;
    }
    default:
      Check(false);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  RdbValue value;
  bool parsed = basalt::ParseRdbObject(body, &value);
  if (parsed) CheckValue(value);

  std::string payload(body);
  basalt::rdb::AppendDumpFooter(&payload);
  uint16_t version;
  std::string_view verified;
  Check(basalt::rdb::VerifyDumpPayload(payload, &version, &verified));
  Check(verified == body);
  RdbValue again;
  Check(basalt::ParseRdbObject(verified, &again) == parsed);
  return 0;
}
