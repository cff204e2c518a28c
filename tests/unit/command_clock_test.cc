// The per-command bookkeeping's parts (common/clock.h, commands/command_table.h,
// commands/dispatcher.h): the clock commands are timed by, a spec's counter index, and a
// connection's repeated command names.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "commands/command_table.h"
#include "commands/dispatcher.h"
#include "common/clock.h"

namespace basalt {
namespace {

// Over a sleep, the command clock measures what the monotonic clock does, to within a
// millisecond: a tick rate measured wrong (or ticks taken for nanoseconds) is off by far more.
TEST(CommandClockTest, MeasuresWhatTheMonotonicClockMeasures) {
  CommandClock::Now();  // the rate is measured at the first use
  for (int sleep_ms : {20, 60}) {
    auto begin = std::chrono::steady_clock::now();
    uint64_t start = CommandClock::Now();
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    uint64_t end = CommandClock::Now();
    int64_t monotonic = std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::steady_clock::now() - begin)
                            .count();
    int64_t measured = CommandClock::MicrosBetween(start, end);
    EXPECT_GE(measured, sleep_ms * 1000) << "ticks per us " << CommandClock::TicksPerMicro();
    EXPECT_LE(measured, monotonic + 100) << "ticks per us " << CommandClock::TicksPerMicro();
    EXPECT_GE(measured, monotonic - 1000) << "ticks per us " << CommandClock::TicksPerMicro();
  }
}

TEST(CommandClockTest, AnEndBeforeItsStartIsNoTime) {
  uint64_t now = CommandClock::Now();
  EXPECT_EQ(CommandClock::MicrosBetween(now, now), 0);
  EXPECT_EQ(CommandClock::MicrosBetween(now + 1000000, now), 0);
}

TEST(CommandTableIndexTest, EverySpecIsAtItsIndexAndNothingElseIsInTheTable) {
  const CommandTable& table = CommandTable::Get();
  const std::vector<const CommandSpec*>& all = table.all();
  ASSERT_GT(all.size(), 200u);
  for (size_t i = 0; i < all.size(); i++) EXPECT_EQ(table.IndexOf(all[i]), i) << all[i]->name;
  CommandSpec outside = *all.front();
  EXPECT_EQ(table.IndexOf(&outside), all.size());
  EXPECT_EQ(table.IndexOf(nullptr), all.size());
}

// A session remembers the name it sent last, as spelled: the same bytes find the same command,
// other bytes are looked up, and an unknown name is not remembered.
TEST(ResolveCommandTest, RemembersTheNameAClientSentLast) {
  Session session;
  std::string error;
  std::vector<std::string> lpush = {"LPUSH", "k", "v"};
  const CommandSpec* spec = ResolveCommand(lpush, &error, &session);
  ASSERT_NE(spec, nullptr) << error;
  EXPECT_STREQ(spec->name, "lpush");
  EXPECT_EQ(session.last_spec_found, spec);
  EXPECT_EQ(ResolveCommand(lpush, &error, &session), spec);

  std::vector<std::string> get = {"get", "k"};
  const CommandSpec* get_spec = ResolveCommand(get, &error, &session);
  ASSERT_NE(get_spec, nullptr) << error;
  EXPECT_STREQ(get_spec->name, "get");

  std::vector<std::string> unknown = {"nosuchcommand"};
  EXPECT_EQ(ResolveCommand(unknown, &error, &session), nullptr);
  EXPECT_EQ(error.rfind("ERR unknown command 'nosuchcommand'", 0), 0u) << error;
  EXPECT_EQ(session.last_spec_found, get_spec);

  // A remembered command still has its arity checked.
  std::vector<std::string> short_get = {"get"};
  EXPECT_EQ(ResolveCommand(short_get, &error, &session), nullptr);
  EXPECT_EQ(error, "ERR wrong number of arguments for 'get' command");
}

}  // namespace
}  // namespace basalt
