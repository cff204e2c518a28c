// Keyspace notifications below the commands: what a Context and the active expirer hand to the sink
// (after the commit, in order, only for enabled classes), over a real RocksDB.
#include "types/keyspace_events.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "keyspace_fixture.h"
#include "types/expirer.h"

namespace basalt {
namespace {

class RecordingSink : public KeyspaceEvents::Sink {
 public:
  bool Replicating() const override { return false; }
  void Deliver(std::string_view channel, std::string_view message) override {
    got.emplace_back(channel, message);
  }
  std::vector<std::pair<std::string, std::string>> got;
};

class KeyspaceEventsTest : public KeyspaceFixture {
 protected:
  void Enable(const char* letters) {
    ks_->events().set_sink(&sink_);
    ks_->events().Configure(static_cast<uint32_t>(ParseNotifyFlags(letters)));
  }
  RecordingSink sink_;
};

TEST_F(KeyspaceEventsTest, MessagesArriveAfterTheCommitInOrder) {
  Enable("KEA");
  Context ctx(ks_.get());
  ctx.Notify(notify::kString, "set", 3, "k");
  ctx.Notify(notify::kGeneric, "del", 3, "k");
  EXPECT_TRUE(sink_.got.empty());  // nothing before the write lands
  ASSERT_TRUE(ctx.Commit().ok());
  std::vector<std::pair<std::string, std::string>> want = {
      {"__keyspace@3__:k", "set"},
      {"__keyevent@3__:set", "k"},
      {"__keyspace@3__:k", "del"},
      {"__keyevent@3__:del", "k"},
  };
  EXPECT_EQ(sink_.got, want);
}

TEST_F(KeyspaceEventsTest, DisabledClassesAndChannelsSendNothing) {
  Enable("Kl");
  Context ctx(ks_.get());
  ctx.Notify(notify::kString, "set", 0, "k");
  ctx.Notify(notify::kList, "lpush", 0, "l");
  ASSERT_TRUE(ctx.Commit().ok());
  std::vector<std::pair<std::string, std::string>> want = {{"__keyspace@0__:l", "lpush"}};
  EXPECT_EQ(sink_.got, want);
  // Classes without K or E: nothing is enabled at all.
  ks_->events().Configure(notify::kAll);
  EXPECT_EQ(ks_->events().classes(), 0u);
}

TEST_F(KeyspaceEventsTest, DiscardedWorkSendsNothing) {
  Enable("KEA");
  Context ctx(ks_.get());
  ctx.Notify(notify::kString, "set", 0, "k");
  ctx.Discard();
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_TRUE(sink_.got.empty());
}

TEST_F(KeyspaceEventsTest, WritingANewKeyIsANewEvent) {
  Enable("En");
  Context ctx(ks_.get());
  auto old = ctx.Lookup(0, "fresh");
  ASSERT_TRUE(old.ok());
  Metadata meta;
  meta.type = RedisType::kString;
  ctx.Write(0, "fresh", meta, *old);
  ASSERT_TRUE(ctx.Commit().ok());
  std::vector<std::pair<std::string, std::string>> want = {{"__keyevent@0__:new", "fresh"}};
  EXPECT_EQ(sink_.got, want);
}

TEST_F(KeyspaceEventsTest, TheActiveExpirerSendsExpired) {
  Set(2, "short", "v", UnixMillis() + 30);
  Set(2, "long", "v", UnixMillis() + 3600 * 1000);
  Enable("KEx");
  SleepMs(60);
  ActiveExpirer expirer(ks_.get(), config_.get());
  EXPECT_EQ(expirer.RunOnce(), 1);
  std::vector<std::pair<std::string, std::string>> want = {
      {"__keyspace@2__:short", "expired"},
      {"__keyevent@2__:expired", "short"},
  };
  EXPECT_EQ(sink_.got, want);
}

}  // namespace
}  // namespace basalt
