// libFuzzer target: the RESP reader on arbitrary client input.
//
// Besides crashes, leaks and hangs (caught by libFuzzer and the sanitizers), it checks one
// property: framing does not depend on how the bytes arrive. The input is parsed once in a
// single Feed() and once fed in pieces whose sizes come from the input itself; both must give
// the same commands and the same error. (Only for inputs under the 64 KiB inline limit: past
// it, whether a long line without '\n' is an error legitimately depends on the chunking, as in
// Redis.) The first byte selects the limits: authenticated or not, and a small bulk limit.
// The same bytes also go through SplitArgs, the inline-command and config-line splitter, and a
// peek at the commands' second arguments must agree with the commands parsed, and every command
// put back (Unread, when a connection hands its writes to another worker) must parse again to
// itself, leaving the rest of the stream as it was.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/strutil.h"
#include "net/resp_reader.h"

namespace {

using basalt::RespReader;

struct Outcome {
  std::vector<std::vector<std::string>> commands;
  bool failed = false;
  std::string error;
};

// Takes every complete command out of the reader. With `put_back`, each one is put back once
// and parsed again, which must give it again.
void Drain(RespReader* reader, const RespReader::Limits& limits, Outcome* out,
           bool put_back = false) {
  std::vector<std::string> argv, again;
  while (!out->failed) {
    RespReader::Result r = reader->Next(&argv, limits);
    if (r == RespReader::Result::kNeedMore) return;
    if (r == RespReader::Result::kError) {
      out->failed = true;
      out->error = reader->error();
      return;
    }
    if (put_back && reader->Unread()) {
      if (reader->Next(&again, limits) != RespReader::Result::kCommand || again != argv) {
        __builtin_trap();
      }
    }
    out->commands.push_back(argv);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  RespReader::Limits limits;
  limits.authenticated = (data[0] & 1) == 0;
  if (data[0] & 2) limits.max_bulk_len = 64;
  const char* stream = reinterpret_cast<const char*>(data + 1);
  size_t len = size - 1;

  Outcome whole;
  RespReader one_shot;
  one_shot.Feed(stream, len);
  // What a peek ahead reads (the prefetch of pipelined keys) is what parsing then gives.
  std::vector<std::string> peeked;
  {
    std::vector<std::string_view> views;
    one_shot.PeekSecondArguments(16, &views);
    peeked.assign(views.begin(), views.end());
  }
  Drain(&one_shot, limits, &whole);
  for (size_t i = 0; i < peeked.size() && i < whole.commands.size(); i++) {
    if (whole.commands[i].size() < 2 || whole.commands[i][1] != peeked[i]) __builtin_trap();
  }

  Outcome unreading;
  RespReader put_back;
  put_back.Feed(stream, len);
  Drain(&put_back, limits, &unreading, /*put_back=*/true);
  if (unreading.failed != whole.failed || unreading.error != whole.error ||
      unreading.commands != whole.commands) {
    __builtin_trap();
  }

  Outcome pieces;
  RespReader chunked;
  size_t pos = 0, step = 0;
  while (pos < len && !pieces.failed) {
    size_t n = 1 + (static_cast<unsigned char>(stream[step++ % len]) % 17);
    if (n > len - pos) n = len - pos;
    chunked.Feed(stream + pos, n);
    pos += n;
    Drain(&chunked, limits, &pieces);
  }

  if (len < 64 * 1024) {
    if (whole.failed != pieces.failed || whole.error != pieces.error) __builtin_trap();
    if (whole.commands != pieces.commands) __builtin_trap();
  }
  std::vector<std::string> args;
  basalt::SplitArgs(std::string_view(stream, len), &args);
  return 0;
}
