// Key specifications: Redis 7's description of where a command's keys sit in its arguments and
// what the command does with each (COMMAND INFO's key specifications, COMMAND GETKEYSANDFLAGS'
// flags). Cluster-aware clients route by them and tools read the flags, so Basalt reports the
// specifications of Redis 7.2 for each command it serves.
//
// The dispatcher does not use them to find keys: the command table's key positions and key
// finders (command_table.h) do that, and agree with these specifications. A specification whose
// start or extent Redis marks "unknown" (SORT's BY/GET and STORE keys) describes keys that only
// the command's own parsing finds.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands/reply.h"

namespace basalt {

struct KeySpec {
  // Redis's names, in Redis's order: RO|RW|OW|RM, then access, update, insert, delete,
  // not_key, incomplete, variable_flags.
  std::vector<std::string> flags;

  enum class Begin { kUnknown, kIndex, kKeyword };
  Begin begin = Begin::kUnknown;
  int index = 0;        // kIndex: the first key's argument position
  std::string keyword;  // kKeyword: the keys follow this argument (upper case)...
  int startfrom = 0;    // ...searched for from here; negative counts from the end, backwards

  enum class Find { kUnknown, kRange, kKeynum };
  Find find = Find::kUnknown;
  int lastkey = 0;    // kRange: last key relative to the first; negative counts from the end
  int keystep = 1;    // both: distance between keys
  int limit = 0;      // kRange with lastkey -1: only the first 1/limit of the remaining args
  int keynumidx = 0;  // kKeynum: where the key count is, relative to the start
  int firstkey = 0;   // kKeynum: where the first key is, relative to the start

  bool Has(std::string_view flag) const;
};

// The specifications of a command or subcommand by its full lower-case name ("lmove",
// "object|encoding"); empty for a command that takes no keys.
const std::vector<KeySpec>& KeySpecsOf(std::string_view full_name);

// The keys that the fully known specifications locate in argv (argv[0] is the command name), as
// (argument index, specification index) pairs in specification order, as Redis's
// getKeysUsingKeySpecs finds them. A specification that does not fit argv (a count that is not a
// number, a range past the end) locates nothing.
std::vector<std::pair<size_t, size_t>> LocateKeys(const std::vector<KeySpec>& specs,
                                                  const std::vector<std::string>& argv);

// COMMAND INFO's key specifications element.
void ReplyKeySpecs(Reply& r, const std::vector<KeySpec>& specs);

// Redis 7.2's specifications, one row a command: "name", then each specification as
// "FLAGS BEGIN FIND" separated by "; ". FLAGS is a comma list; BEGIN is iN (index N),
// kWORD,N (keyword WORD from N) or ?; FIND is rL,S,M (range lastkey L, step S, limit M),
// nI,F,S (keynum at I, first key F, step S) or ?.
struct KeySpecRow {
  const char* name;
  const char* specs;
};
extern const std::vector<KeySpecRow> kKeySpecRows;

}  // namespace basalt
