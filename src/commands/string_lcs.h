// LCS: the longest common subsequence of two string values, as Redis 7 computes it.
//
// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN] replies with the subsequence, its
// length (LEN) or the matching ranges (IDX), last match first. A missing key is an empty
// string; a key of another type is an error. The table of prefix lengths takes
// (len1 + 1) * (len2 + 1) * 4 bytes and is refused above proto-max-bulk-len, as Redis does; its
// quadratic time runs on the calling worker.
#ifndef BASALT_COMMANDS_STRING_LCS_H_
#define BASALT_COMMANDS_STRING_LCS_H_

#include "commands/command_table.h"

namespace basalt {

void LcsCommand(CommandContext& c);

}  // namespace basalt

#endif  // BASALT_COMMANDS_STRING_LCS_H_
