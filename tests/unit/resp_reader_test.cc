// RespReader: RESP multibulk and inline framing, pipelining, limits and exact error texts.
#include "net/resp_reader.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/strutil.h"

namespace basalt {
namespace {

using Argv = std::vector<std::string>;
using Result = RespReader::Result;

struct Parsed {
  std::vector<Argv> commands;
  Result last = Result::kNeedMore;
  std::string error;
};

// Takes every complete command out of the reader; stops at kNeedMore or kError.
void Drain(RespReader* reader, const RespReader::Limits& limits, Parsed* out) {
  while (true) {
    Argv argv;
    Result r = reader->Next(&argv, limits);
    out->last = r;
    if (r == Result::kCommand) {
      out->commands.push_back(std::move(argv));
      continue;
    }
    if (r == Result::kError) out->error = reader->error();
    return;
  }
}

Parsed ParseAll(const std::string& input, RespReader::Limits limits = {}) {
  RespReader reader;
  Parsed out;
  reader.Feed(input.data(), input.size());
  Drain(&reader, limits, &out);
  return out;
}

Parsed ParseByteByByte(const std::string& input, RespReader::Limits limits = {}) {
  RespReader reader;
  Parsed out;
  for (char c : input) {
    reader.Feed(&c, 1);
    Drain(&reader, limits, &out);
    if (out.last == Result::kError) break;
  }
  return out;
}

std::string ErrorOf(const std::string& input, RespReader::Limits limits = {}) {
  Parsed p = ParseAll(input, limits);
  EXPECT_EQ(p.last, Result::kError) << "input: " << input;
  return p.error;
}

std::string Multibulk(const Argv& argv) {
  std::string out = "*";
  out.append(std::to_string(argv.size())).append("\r\n");
  for (const auto& a : argv) {
    out.append("$").append(std::to_string(a.size())).append("\r\n");
    out.append(a).append("\r\n");
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Framing

std::vector<std::string> Peek(const RespReader& reader, size_t max) {
  std::vector<std::string_view> views;
  reader.PeekSecondArguments(max, &views);
  return std::vector<std::string>(views.begin(), views.end());
}

// The peek reads each whole command's second argument without parsing anything away, and stops
// at the first command it cannot read whole, where Next() takes over.
TEST(RespReaderTest, PeekSecondArgumentsReadsWholeCommandsAheadWithoutTakingThem) {
  RespReader reader;
  std::string input = Multibulk({"SET", "k1", "v"}) + Multibulk({"GET", std::string("k\r\n2", 4)}) +
                      Multibulk({"INCR", ""}) + Multibulk({"LPUSH", "k3", "a", "b"});
  reader.Feed(input.data(), input.size());
  EXPECT_EQ(Peek(reader, 16), (std::vector<std::string>{"k1", std::string("k\r\n2", 4), "", "k3"}));
  EXPECT_EQ(Peek(reader, 2), (std::vector<std::string>{"k1", std::string("k\r\n2", 4)}));
  Argv argv;
  ASSERT_EQ(reader.Next(&argv, {}), Result::kCommand);
  EXPECT_EQ(argv, (Argv{"SET", "k1", "v"}));
  EXPECT_EQ(Peek(reader, 16), (std::vector<std::string>{std::string("k\r\n2", 4), "", "k3"}));

  // A command of one argument, an inline one, one that is not whole, a malformed one, and one
  // with more arguments than a peek reads each end it.
  const std::vector<std::string> enders = {Multibulk({"PING"}),
                                           "PING k\r\n",
                                           Multibulk({"GET", "k"}).substr(0, 12),
                                           "*2\r\n$3\r\nGET\r\n$x\r\nk\r\n",
                                           "*2\r\n$3\r\nGET\r\n$999\r\nk\r\n",
                                           "*2\r\n$-1\r\n",
                                           Multibulk(Argv(RespReader::kPeekMaxArguments + 1, "a"))};
  for (const std::string& ender : enders) {
    RespReader r;
    std::string bytes = Multibulk({"GET", "before"}) + ender + Multibulk({"GET", "after"});
    r.Feed(bytes.data(), bytes.size());
    EXPECT_EQ(Peek(r, 16), (std::vector<std::string>{"before"})) << ender;
  }
  // Nothing while a command is half parsed.
  RespReader partial;
  std::string half = Multibulk({"SET", "k", "v"});
  partial.Feed(half.data(), half.size() - 3);
  ASSERT_EQ(partial.Next(&argv, {}), Result::kNeedMore);
  partial.Feed(half.data() + half.size() - 3, 3);
  std::string next = Multibulk({"GET", "k2"});
  partial.Feed(next.data(), next.size());
  EXPECT_TRUE(Peek(partial, 16).empty());
}

TEST(RespReaderTest, ParsesMultibulk) {
  Parsed p = ParseAll("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n");
  ASSERT_EQ(p.last, Result::kNeedMore);
  ASSERT_EQ(p.commands.size(), 1u);
  EXPECT_EQ(p.commands[0], (Argv{"SET", "k", "value"}));
}

TEST(RespReaderTest, EmptyBulkArgument) {
  Parsed p = ParseAll("*2\r\n$4\r\nECHO\r\n$0\r\n\r\n");
  ASSERT_EQ(p.commands.size(), 1u);
  EXPECT_EQ(p.commands[0], (Argv{"ECHO", ""}));
}

TEST(RespReaderTest, BinarySafeBulkWithCrLfInside) {
  const std::string value("a\r\nb\0c\r\n*1\r\n", 12);
  Parsed p = ParseAll(Multibulk({"SET", "key", value}));
  ASSERT_EQ(p.last, Result::kNeedMore);
  ASSERT_EQ(p.commands.size(), 1u);
  ASSERT_EQ(p.commands[0].size(), 3u);
  EXPECT_EQ(p.commands[0][2], value);
}

TEST(RespReaderTest, PipelinedCommandsInOneFeed) {
  const std::string stream = Multibulk({"SET", "a", "1"}) + Multibulk({"GET", "a"}) + "PING\r\n" +
                             Multibulk({"DEL", "a", "b"});
  RespReader reader;
  reader.Feed(stream.data(), stream.size());
  Parsed p;
  Drain(&reader, {}, &p);
  ASSERT_EQ(p.last, Result::kNeedMore);
  ASSERT_EQ(p.commands.size(), 4u);
  EXPECT_EQ(p.commands[0], (Argv{"SET", "a", "1"}));
  EXPECT_EQ(p.commands[1], (Argv{"GET", "a"}));
  EXPECT_EQ(p.commands[2], (Argv{"PING"}));
  EXPECT_EQ(p.commands[3], (Argv{"DEL", "a", "b"}));
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(RespReaderTest, ByteByByteFeedingGivesSameCommands) {
  const std::string stream = Multibulk({"SET", "key", std::string("v\r\nv", 4)}) +
                             "GET \"quoted key\"\r\n" + "\r\n" + "*0\r\n" +
                             Multibulk({"MSET", "a", "1", "b", std::string(100, 'x')}) + "PING\n";
  Parsed whole = ParseAll(stream);
  Parsed bytes = ParseByteByByte(stream);
  ASSERT_EQ(whole.last, Result::kNeedMore);
  ASSERT_EQ(bytes.last, Result::kNeedMore);
  ASSERT_EQ(whole.commands.size(), 4u);
  EXPECT_EQ(bytes.commands, whole.commands);
}

TEST(RespReaderTest, PartialCommandStaysBuffered) {
  const std::string full = Multibulk({"SET", "k", "v"});
  RespReader reader;
  reader.Feed(full.data(), full.size() - 3);
  Argv argv;
  EXPECT_EQ(reader.Next(&argv, {}), Result::kNeedMore);
  reader.Feed(full.data() + full.size() - 3, 3);
  ASSERT_EQ(reader.Next(&argv, {}), Result::kCommand);
  EXPECT_EQ(argv, (Argv{"SET", "k", "v"}));
  EXPECT_EQ(reader.Next(&argv, {}), Result::kNeedMore);
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(RespReaderTest, EmptyLinesAreSkipped) {
  Parsed p = ParseAll("\r\n\r\n\nPING\r\n   \r\nECHO x\r\n");
  ASSERT_EQ(p.last, Result::kNeedMore);
  ASSERT_EQ(p.commands.size(), 2u);
  EXPECT_EQ(p.commands[0], (Argv{"PING"}));
  EXPECT_EQ(p.commands[1], (Argv{"ECHO", "x"}));
}

TEST(RespReaderTest, ZeroAndNegativeMultibulkAreSkipped) {
  std::string stream = "*0\r\n*-1\r\n";
  stream.append(Multibulk({"PING"})).append("*0\r\n");
  Parsed p = ParseAll(stream);
  ASSERT_EQ(p.last, Result::kNeedMore);
  ASSERT_EQ(p.commands.size(), 1u);
  EXPECT_EQ(p.commands[0], (Argv{"PING"}));
}

// ---------------------------------------------------------------------------------------------
// Inline commands

TEST(RespReaderTest, InlineWhitespaceSeparated) {
  Parsed p = ParseAll("  SET   key\tvalue  \r\n");
  ASSERT_EQ(p.commands.size(), 1u);
  EXPECT_EQ(p.commands[0], (Argv{"SET", "key", "value"}));
}

TEST(RespReaderTest, InlineLfOnlyTerminator) {
  Parsed p = ParseAll("PING\nECHO hi\n");
  ASSERT_EQ(p.commands.size(), 2u);
  EXPECT_EQ(p.commands[1], (Argv{"ECHO", "hi"}));
}

TEST(RespReaderTest, InlineDoubleQuotesWithEscapes) {
  Parsed p = ParseAll("SET \"hello world\" \"a\\\"b\\n\\t\\\\\"\r\n");
  ASSERT_EQ(p.commands.size(), 1u);
  EXPECT_EQ(p.commands[0], (Argv{"SET", "hello world", "a\"b\n\t\\"}));
}

TEST(RespReaderTest, InlineHexEscapes) {
  Parsed p = ParseAll("SET k \"\\x41\\x42\\x00\\xff\\x7e\"\r\n");
  ASSERT_EQ(p.commands.size(), 1u);
  ASSERT_EQ(p.commands[0].size(), 3u);
  EXPECT_EQ(p.commands[0][2], std::string("AB\0\xff~", 5));
}

TEST(RespReaderTest, InlineInvalidHexEscapeIsLiteral) {
  // "\xZZ" is not a hex escape: the backslash escapes 'x' as itself.
  Parsed p = ParseAll("ECHO \"\\xZZ\"\r\n");
  ASSERT_EQ(p.commands.size(), 1u);
  EXPECT_EQ(p.commands[0][1], "xZZ");
}

TEST(RespReaderTest, InlineSingleQuotes) {
  Parsed p = ParseAll("SET 'it\\'s here' 'no \\n escape'\r\n");
  ASSERT_EQ(p.commands.size(), 1u);
  EXPECT_EQ(p.commands[0], (Argv{"SET", "it's here", "no \\n escape"}));
}

TEST(RespReaderTest, InlineEmptyQuotedArgument) {
  Parsed p = ParseAll("SET k \"\"\r\n");
  ASSERT_EQ(p.commands.size(), 1u);
  EXPECT_EQ(p.commands[0], (Argv{"SET", "k", ""}));
}

TEST(RespReaderTest, SplitInlineArgsDirect) {
  Argv args;
  ASSERT_TRUE(SplitArgs("a \"b c\" 'd'", &args));
  EXPECT_EQ(args, (Argv{"a", "b c", "d"}));
  args.clear();
  ASSERT_TRUE(SplitArgs("   ", &args));
  EXPECT_TRUE(args.empty());
  args.clear();
  EXPECT_FALSE(SplitArgs("\"open", &args));
  args.clear();
  EXPECT_FALSE(SplitArgs("'open", &args));
  args.clear();
  EXPECT_FALSE(SplitArgs("\"closed\"x", &args));
}

// ---------------------------------------------------------------------------------------------
// Errors (texts are what the client sees after "-ERR ")

TEST(RespReaderTest, InvalidMultibulkLengthNotANumber) {
  EXPECT_EQ(ErrorOf("*abc\r\n"), "Protocol error: invalid multibulk length");
}

TEST(RespReaderTest, InvalidMultibulkLengthTooLarge) {
  EXPECT_EQ(ErrorOf("*99999999999\r\n"), "Protocol error: invalid multibulk length");
  RespReader::Limits limits;
  limits.max_multibulk_len = 5;
  EXPECT_EQ(ErrorOf("*6\r\n", limits), "Protocol error: invalid multibulk length");
}

TEST(RespReaderTest, ExpectedDollar) {
  EXPECT_EQ(ErrorOf("*1\r\nx\r\n"), "Protocol error: expected '$', got 'x'");
  EXPECT_EQ(ErrorOf("*2\r\n$1\r\na\r\n:5\r\n"), "Protocol error: expected '$', got ':'");
}

TEST(RespReaderTest, InvalidBulkLengthNegative) {
  EXPECT_EQ(ErrorOf("*1\r\n$-5\r\n"), "Protocol error: invalid bulk length");
  EXPECT_EQ(ErrorOf("*1\r\n$-1\r\n"), "Protocol error: invalid bulk length");
  EXPECT_EQ(ErrorOf("*1\r\n$abc\r\n"), "Protocol error: invalid bulk length");
}

// Lengths are canonical decimal, as Redis's string2ll reads them: no sign, no leading zero, no
// trailing garbage, however the number starts.
TEST(RespReaderTest, LengthsAreCanonicalDecimal) {
  for (const char* count : {"*01", "*+1", "*1x", "*12345678901234567x", "*99999999999999999999"}) {
    EXPECT_EQ(ErrorOf(std::string(count) + "\r\n"), "Protocol error: invalid multibulk length")
        << count;
  }
  for (const char* len : {"$05", "$+5", "$5a", "$1 ", "$123456789012345678", "$-0"}) {
    EXPECT_EQ(ErrorOf("*1\r\n" + std::string(len) + "\r\n"), "Protocol error: invalid bulk length")
        << len;
  }
  Parsed ok = ParseAll("*2\r\n$10\r\n0123456789\r\n$1\r\nx\r\n");
  ASSERT_EQ(ok.commands.size(), 1u);
  EXPECT_EQ(ok.commands[0][0], "0123456789");
  EXPECT_EQ(ok.commands[0][1], "x");
}

TEST(RespReaderTest, InvalidBulkLengthAboveLimit) {
  RespReader::Limits limits;
  limits.max_bulk_len = 100;
  EXPECT_EQ(ErrorOf("*1\r\n$101\r\n", limits), "Protocol error: invalid bulk length");
  Parsed ok = ParseAll(Multibulk({std::string(100, 'z')}), limits);
  ASSERT_EQ(ok.last, Result::kNeedMore);
  ASSERT_EQ(ok.commands.size(), 1u);
  EXPECT_EQ(ok.commands[0][0].size(), 100u);
}

TEST(RespReaderTest, UnbalancedQuotes) {
  EXPECT_EQ(ErrorOf("SET \"abc\r\n"), "Protocol error: unbalanced quotes in request");
  EXPECT_EQ(ErrorOf("SET 'abc\r\n"), "Protocol error: unbalanced quotes in request");
  EXPECT_EQ(ErrorOf("SET \"abc\"def\r\n"), "Protocol error: unbalanced quotes in request");
}

TEST(RespReaderTest, UnauthenticatedMultibulkLength) {
  RespReader::Limits limits;
  limits.authenticated = false;
  EXPECT_EQ(ErrorOf("*11\r\n", limits), "Protocol error: unauthenticated multibulk length");
  // Ten arguments are still fine before AUTH.
  Argv ten(10, "x");
  Parsed p = ParseAll(Multibulk(ten), limits);
  ASSERT_EQ(p.last, Result::kNeedMore);
  ASSERT_EQ(p.commands.size(), 1u);
  // And eleven are fine once authenticated.
  Parsed auth = ParseAll(Multibulk(Argv(11, "x")));
  ASSERT_EQ(auth.commands.size(), 1u);
}

TEST(RespReaderTest, UnauthenticatedBulkLength) {
  RespReader::Limits limits;
  limits.authenticated = false;
  EXPECT_EQ(ErrorOf("*1\r\n$16385\r\n", limits), "Protocol error: unauthenticated bulk length");
}

TEST(RespReaderTest, TooBigInlineRequest) {
  const std::string exactly(64 * 1024, 'a');
  Parsed fits = ParseAll(exactly);
  EXPECT_EQ(fits.last, Result::kNeedMore);
  EXPECT_EQ(ErrorOf(exactly + "a"), "Protocol error: too big inline request");
}

TEST(RespReaderTest, TooBigInlineRequestFedInChunks) {
  RespReader reader;
  Parsed p;
  const std::string chunk(4096, 'a');
  for (int i = 0; i < 17 && p.last != Result::kError; i++) {
    reader.Feed(chunk.data(), chunk.size());
    Drain(&reader, {}, &p);
  }
  ASSERT_EQ(p.last, Result::kError);
  EXPECT_EQ(p.error, "Protocol error: too big inline request");
}

// ---------------------------------------------------------------------------------------------
// Memory

// Bytes the allocator has handed out (heap arena plus mmapped chunks).
size_t AllocatedBytes() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

TEST(RespReaderTest, HugeDeclaredBulkKeepsBufferedSmall) {
  RespReader reader;
  const std::string header = "*2\r\n$3\r\nSET\r\n$400000000\r\n";
  reader.Feed(header.data(), header.size());
  Argv argv;
  EXPECT_EQ(reader.Next(&argv, {}), Result::kNeedMore);
  EXPECT_LT(reader.buffered(), 64u);
  const std::string some(1000, 'v');
  reader.Feed(some.data(), some.size());
  EXPECT_EQ(reader.Next(&argv, {}), Result::kNeedMore);
  EXPECT_LT(reader.buffered(), 2048u);
}

// A declared length costs nothing until the bytes arrive: otherwise a few clients declaring
// 512 MB each and sending nothing could exhaust the server's memory.
TEST(RespReaderTest, HugeDeclaredBulkDoesNotAllocateUpFront) {
  RespReader reader;
  const size_t before = AllocatedBytes();
  const std::string header = "*2\r\n$3\r\nSET\r\n$400000000\r\n";
  reader.Feed(header.data(), header.size());
  Argv argv;
  EXPECT_EQ(reader.Next(&argv, {}), Result::kNeedMore);
  const size_t after = AllocatedBytes();
  EXPECT_LT(after - before, 16u * 1024 * 1024)
      << "a 400 MB bulk header reserved " << (after - before) << " bytes before any data";
}

// After one large command an idle connection gives the buffer's memory back.
TEST(RespReaderTest, BufferMemoryIsReleasedAfterLargeCommand) {
  const std::string stream = Multibulk({"SET", "k", std::string(8 * 1024 * 1024, 'v')});
  const size_t before = AllocatedBytes();
  {
    RespReader reader;
    for (size_t off = 0; off < stream.size(); off += 65536) {
      reader.Feed(stream.data() + off, std::min<size_t>(65536, stream.size() - off));
    }
    {
      Argv argv;
      ASSERT_EQ(reader.Next(&argv, {}), Result::kCommand);
      ASSERT_EQ(reader.Next(&argv, {}), Result::kNeedMore);
    }
    EXPECT_EQ(reader.buffered(), 0u);
    const size_t idle = AllocatedBytes() - before;
    EXPECT_LT(idle, 1024u * 1024) << "an idle reader still holds " << idle << " bytes";
  }
}

TEST(RespReaderTest, LargeBulkCompletesAcrossManyFeeds) {
  const std::string value(200 * 1024, 'q');
  const std::string stream = Multibulk({"SET", "k", value}) + Multibulk({"PING"});
  RespReader reader;
  Parsed p;
  for (size_t off = 0; off < stream.size(); off += 1500) {
    size_t n = std::min<size_t>(1500, stream.size() - off);
    reader.Feed(stream.data() + off, n);
    Drain(&reader, {}, &p);
  }
  ASSERT_EQ(p.last, Result::kNeedMore);
  ASSERT_EQ(p.commands.size(), 2u);
  EXPECT_EQ(p.commands[0][2], value);
  EXPECT_EQ(p.commands[1], (Argv{"PING"}));
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(RespReaderTest, AWholeCommandPutBackIsReadAgain) {
  const std::string stream = Multibulk({"INCR", "a"}) + "PING\r\n" + Multibulk({"GET", "b"});
  RespReader reader;
  reader.Feed(stream.data(), stream.size());
  Argv argv;
  ASSERT_EQ(reader.Next(&argv, {}), Result::kCommand);
  EXPECT_EQ(argv, (Argv{"INCR", "a"}));
  // Each command, multibulk or inline, parsed from where the last ended, goes back whole.
  for (const Argv& expected : {Argv{"PING"}, Argv{"GET", "b"}}) {
    ASSERT_EQ(reader.Next(&argv, {}), Result::kCommand);
    const size_t buffered = reader.buffered();
    ASSERT_TRUE(reader.Unread());
    EXPECT_FALSE(reader.Unread());  // once only
    EXPECT_GT(reader.buffered(), buffered);
    Argv again;
    ASSERT_EQ(reader.Next(&again, {}), Result::kCommand);
    EXPECT_EQ(again, expected);
    EXPECT_EQ(reader.buffered(), buffered);
  }
  EXPECT_EQ(reader.Next(&argv, {}), Result::kNeedMore);
  EXPECT_FALSE(reader.Unread());  // nothing was returned
}

TEST(RespReaderTest, ACommandReceivedInPiecesCannotBePutBack) {
  const std::string command = Multibulk({"SET", "k", "value"});
  RespReader reader;
  Argv argv;
  reader.Feed(command.data(), command.size() - 3);
  ASSERT_EQ(reader.Next(&argv, {}), Result::kNeedMore);
  reader.Feed(command.data() + command.size() - 3, 3);
  ASSERT_EQ(reader.Next(&argv, {}), Result::kCommand);
  EXPECT_FALSE(reader.Unread());
  EXPECT_EQ(reader.Next(&argv, {}), Result::kNeedMore);
}

// A connection parses every command into the same vector. Whole requests of short arguments
// take a one-pass path that writes into the vector's own strings; whatever they held before
// (more arguments, longer ones, a command of the general path) must not show through, and a
// long argument's memory must not stay with the vector for the commands after it.
TEST(RespReaderTest, CommandsParsedIntoOneVectorAreEachExactlyThemselves) {
  const std::string large(100 * 1024, 'v');
  const std::vector<Argv> commands = {{"SET", "key:1", "value"},
                                      {"GET", "k"},
                                      {"RPUSH", "list", "a", "bb", "ccc"},
                                      {"SET", "k", large},
                                      {"SET", "k2", "v2"},
                                      {"SET", "k", ""},
                                      {"INCR", "counter:0123"},
                                      {"PING"},
                                      {"MSET", "a", "1", "b", "2"}};
  std::string stream;
  for (const Argv& c : commands) stream += Multibulk(c);
  RespReader reader;
  reader.Feed(stream.data(), stream.size());
  Argv argv;
  for (const Argv& expected : commands) {
    ASSERT_EQ(reader.Next(&argv, {}), Result::kCommand);
    EXPECT_EQ(argv, expected);
    for (const std::string& arg : argv) {
      if (arg.size() <= 1024) {
        EXPECT_LE(arg.capacity(), 4096u) << arg.substr(0, 16);
      }
    }
  }
  EXPECT_EQ(reader.Next(&argv, {}), Result::kNeedMore);
}

}  // namespace
}  // namespace basalt
