// Pub/Sub building blocks: client-output-buffer-limit parsing, the `pubsub` column family record
// (through a real RocksDB WAL), Context::AfterCommit, a client's Subscriptions and ClientOutput
// (queue, hooks, limits), and the PubSub registry with real sessions, also across threads.
#include <gtest/gtest.h>
#include <rocksdb/metadata.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <thread>

#include "commands/pubsub.h"
#include "keyspace_fixture.h"
#include "types/pubsub_record.h"

namespace basalt {
namespace {

// ---------------------------------------------------------------------------------------------
// client-output-buffer-limit

OutputBufferLimits Defaults() {
  OutputBufferLimits limits{};
  EXPECT_TRUE(
      ParseOutputBufferLimits("normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60", &limits).ok());
  return limits;
}

TEST(OutputBufferLimitsTest, DefaultsFormatLikeRedis) {
  EXPECT_EQ(FormatOutputBufferLimits(Defaults()),
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
}

TEST(OutputBufferLimitsTest, NamedClassesChangeOthersStay) {
  OutputBufferLimits limits = Defaults();
  ASSERT_TRUE(ParseOutputBufferLimits("PUBSUB 1k 2kb 0  replica 01 1 1", &limits).ok());
  EXPECT_EQ(FormatOutputBufferLimits(limits), "normal 0 0 0 slave 1 1 1 pubsub 1000 2048 0");
  ASSERT_TRUE(ParseOutputBufferLimits("", &limits).ok());  // nothing named, nothing changes
  EXPECT_EQ(FormatOutputBufferLimits(limits), "normal 0 0 0 slave 1 1 1 pubsub 1000 2048 0");
}

TEST(OutputBufferLimitsTest, ErrorsUseRedisTextsAndChangeNothing) {
  const std::string wrong = "Wrong number of arguments in buffer limit configuration.";
  const std::string cls = "Invalid client class specified in buffer limit configuration.";
  const std::string value =
      "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
  const std::pair<const char*, std::string> cases[] = {
      {"pubsub 1mb", wrong},    {"normal 1 1 1 x", wrong}, {"foo 1 1 1", cls},
      {"master 1 1 1", cls},    {"pubsub x 1 1", value},   {"pubsub 1 1 -1", value},
      {"pubsub -1 1 1", value}, {"normal 1 1 1.5", value}, {"normal 1 1mb 1 foo 1 1 1", cls},
  };
  for (const auto& [input, message] : cases) {
    OutputBufferLimits limits = Defaults();
    Status s = ParseOutputBufferLimits(input, &limits);
    EXPECT_EQ(s.message(), message) << input;
    EXPECT_EQ(FormatOutputBufferLimits(limits), FormatOutputBufferLimits(Defaults())) << input;
  }
}

// ---------------------------------------------------------------------------------------------
// The `pubsub` column family

TEST(PubsubRecordTest, RoundTripsBinaryChannelAndMessage) {
  std::string channel("ch\0an", 5), message("m\r\n\0", 4);
  PubsubRecord out;
  ASSERT_TRUE(DecodePubsubRecord(EncodePubsubRecord(true, channel, message), &out));
  EXPECT_TRUE(out.sharded);
  EXPECT_EQ(out.channel, channel);
  EXPECT_EQ(out.message, message);
  ASSERT_TRUE(DecodePubsubRecord(EncodePubsubRecord(false, "", ""), &out));
  EXPECT_FALSE(out.sharded);
  EXPECT_EQ(out.channel, "");
  EXPECT_EQ(out.message, "");
}

TEST(PubsubRecordTest, RejectsUnknownOrTruncatedValues) {
  PubsubRecord out;
  std::string value = EncodePubsubRecord(false, "channel", "message");
  EXPECT_FALSE(DecodePubsubRecord("", &out));
  EXPECT_FALSE(DecodePubsubRecord(value.substr(0, 8), &out));  // channel cut short
  value[0] = 7;
  EXPECT_FALSE(DecodePubsubRecord(value, &out));
}

TEST(PubsubRecordTest, KeysAreDistinctAndIncreasing) {
  std::string a = NextPubsubRecordKey(), b = NextPubsubRecordKey();
  EXPECT_EQ(a.size(), 8u);
  EXPECT_LT(a, b);
}

// Collects what a replica following the WAL would see.
class WalCollector : public rocksdb::WriteBatch::Handler {
 public:
  explicit WalCollector(uint32_t pubsub_cf) : pubsub_cf_(pubsub_cf) {}
  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    ops.push_back(cf == pubsub_cf_ ? "put pubsub" : "put");
    if (cf == pubsub_cf_) {
      PubsubRecord r;
      EXPECT_TRUE(DecodePubsubRecord(value.ToStringView(), &r));
      records.push_back(r);
    }
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice&) override {
    ops.push_back(cf == pubsub_cf_ ? "delete pubsub" : "delete");
    return rocksdb::Status::OK();
  }
  rocksdb::Status MergeCF(uint32_t, const rocksdb::Slice&, const rocksdb::Slice&) override {
    ops.push_back("merge");
    return rocksdb::Status::OK();
  }
  std::vector<std::string> ops;
  std::vector<PubsubRecord> records;

 private:
  uint32_t pubsub_cf_;
};

class PubsubWalTest : public KeyspaceFixture {};

TEST_F(PubsubWalTest, RecordTravelsInTheWalInOrderAndLeavesNothingBehind) {
  Engine* engine = ks_->engine();
  rocksdb::SequenceNumber start = engine->db()->GetLatestSequenceNumber() + 1;
  {
    Context ctx(ks_.get());
    auto old = ctx.Lookup(0, "k");
    ASSERT_TRUE(old.ok());
    Metadata m;
    m.type = RedisType::kString;
    m.value = "v";
    ctx.Write(0, "k", m, *old);
    AddPubsubRecord(ctx.batch(), false, "news", "k changed");
    AddPubsubRecord(ctx.batch(), true, "shard", "second");
    ASSERT_TRUE(ctx.Commit().ok());
  }
  std::unique_ptr<rocksdb::TransactionLogIterator> it;
  ASSERT_TRUE(engine->db()->GetUpdatesSince(start, &it).ok());
  WalCollector collector(engine->cf(ColumnFamily::kPubsub)->GetID());
  for (; it->Valid(); it->Next()) {
    ASSERT_TRUE(it->GetBatch().writeBatchPtr->Iterate(&collector).ok());
  }
  // The data write travels in the same batch (the batch places metadata writes last), and each
  // message is a Put immediately shadowed by its Delete.
  std::vector<std::string> pubsub_ops;
  std::copy_if(collector.ops.begin(), collector.ops.end(), std::back_inserter(pubsub_ops),
               [](const std::string& op) { return op.ends_with(" pubsub"); });
  EXPECT_EQ(std::count(collector.ops.begin(), collector.ops.end(), "put"), 1);
  EXPECT_EQ(pubsub_ops, (std::vector<std::string>{"put pubsub", "delete pubsub", "put pubsub",
                                                  "delete pubsub"}));
  ASSERT_EQ(collector.records.size(), 2u);
  EXPECT_EQ(collector.records[0].channel, "news");
  EXPECT_EQ(collector.records[0].message, "k changed");
  EXPECT_FALSE(collector.records[0].sharded);
  EXPECT_TRUE(collector.records[1].sharded);

  // Nothing readable, and nothing left in SST files once flushed and compacted.
  rocksdb::ReadOptions ro;
  auto iter = engine->NewIterator(ColumnFamily::kPubsub, ro);
  iter->SeekToFirst();
  EXPECT_FALSE(iter->Valid());
  auto* cf = engine->cf(ColumnFamily::kPubsub);
  ASSERT_TRUE(engine->db()->Flush(rocksdb::FlushOptions(), cf).ok());
  rocksdb::ColumnFamilyMetaData flushed;
  engine->db()->GetColumnFamilyMetaData(cf, &flushed);
  for (const auto& level : flushed.levels) {
    for (const auto& file : level.files) EXPECT_EQ(file.num_entries, file.num_deletions);
  }
  rocksdb::CompactRangeOptions options;
  options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  // The first pass moves the flushed file (tombstones only: each Put met its Delete in the
  // memtable) to the last level, the second compacts it there, where tombstones are dropped.
  for (int pass = 0; pass < 2; pass++) {
    ASSERT_TRUE(engine->db()->CompactRange(options, cf, nullptr, nullptr).ok());
  }
  rocksdb::ColumnFamilyMetaData meta;
  engine->db()->GetColumnFamilyMetaData(cf, &meta);
  EXPECT_EQ(meta.file_count, 0u);
}

// ---------------------------------------------------------------------------------------------
// Context::AfterCommit

class AfterCommitTest : public KeyspaceFixture {};

TEST_F(AfterCommitTest, RunsInOrderOnceTheWriteIsVisible) {
  std::vector<std::string> seen;
  Context ctx(ks_.get());
  auto old = ctx.Lookup(0, "k");
  ASSERT_TRUE(old.ok());
  Metadata m;
  m.type = RedisType::kString;
  m.value = "v";
  ctx.Write(0, "k", m, *old);
  ctx.AfterCommit([&] { seen.push_back(Get(0, "k").live() ? "first saw k" : "first early"); });
  ctx.AfterCommit([&] { seen.push_back("second"); });
  EXPECT_TRUE(seen.empty());
  ASSERT_TRUE(ctx.Commit().ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"first saw k", "second"}));
  ASSERT_TRUE(ctx.Commit().ok());  // callbacks run once
  EXPECT_EQ(seen.size(), 2u);
}

// ---------------------------------------------------------------------------------------------
// Subscriptions and ClientOutput

TEST(SubscriptionsTest, CountsAndOrder) {
  Subscriptions subs;
  EXPECT_TRUE(subs.Add(PubSubKind::kChannel, "b"));
  EXPECT_TRUE(subs.Add(PubSubKind::kChannel, "a"));
  EXPECT_FALSE(subs.Add(PubSubKind::kChannel, "b"));
  EXPECT_TRUE(subs.Add(PubSubKind::kPattern, "b"));  // kinds are separate name spaces
  EXPECT_EQ(subs.List(PubSubKind::kChannel), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(subs.count(PubSubKind::kChannel), 2);
  EXPECT_EQ(subs.total(), 3);
  EXPECT_TRUE(subs.Remove(PubSubKind::kChannel, "b"));
  EXPECT_FALSE(subs.Remove(PubSubKind::kChannel, "b"));
  EXPECT_FALSE(subs.Contains(PubSubKind::kChannel, "b"));
  EXPECT_TRUE(subs.Contains(PubSubKind::kPattern, "b"));
  EXPECT_EQ(subs.total(), 2);
}

PendingMessage Message(const std::string& payload) {
  return PendingMessage{PubSubKind::kChannel, "",
                        std::make_shared<const PublishedMessage>(PublishedMessage{"ch", payload})};
}

struct HookCounts {
  int notified = 0;
  int closed = 0;
};

void Hook(ClientOutput& out, HookCounts& counts) {
  out.SetHooks([&counts] { counts.notified++; }, [&counts] { counts.closed++; });
}

TEST(ClientOutputTest, NotifiesOncePerBatchAndKeepsOrder) {
  ClientOutput out;
  HookCounts counts;
  Hook(out, counts);
  OutputBufferLimit none;
  for (const char* p : {"1", "2", "3"}) {
    EXPECT_EQ(out.Push(Message(p), 0, none, 0), ClientOutput::PushResult::kQueued);
  }
  EXPECT_EQ(counts.notified, 1);  // the owner has not taken the first batch yet
  EXPECT_EQ(out.queued_bytes(), 3 * Message("1").bytes());
  std::vector<PendingMessage> taken = out.Take();
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken[0].message->payload, "1");
  EXPECT_EQ(taken[2].message->payload, "3");
  EXPECT_EQ(out.queued_bytes(), 0u);
  out.Push(Message("4"), 0, none, 0);
  EXPECT_EQ(counts.notified, 2);
}

TEST(ClientOutputTest, HardLimitCountsQueueAndUnsentBytesThenRefusesEverything) {
  ClientOutput out;
  HookCounts counts;
  Hook(out, counts);
  size_t one = Message(std::string(100, 'x')).bytes();
  OutputBufferLimit limit{static_cast<int64_t>(3 * one), 0, 0};
  EXPECT_EQ(out.Push(Message(std::string(100, 'x')), one, limit, 0),
            ClientOutput::PushResult::kQueued);
  // Queue (2 messages) + unsent (1 message) reaches the hard limit.
  EXPECT_EQ(out.Push(Message(std::string(100, 'x')), one, limit, 0),
            ClientOutput::PushResult::kOverLimit);
  EXPECT_EQ(counts.closed, 1);
  EXPECT_EQ(out.queued_bytes(), 0u);  // dropped at once
  EXPECT_EQ(out.Push(Message("late"), 0, limit, 0), ClientOutput::PushResult::kDropped);
  EXPECT_EQ(counts.closed, 1);
}

TEST(ClientOutputTest, SoftLimitNeedsToLastLongerThanItsSeconds) {
  ClientOutput out;
  HookCounts counts;
  Hook(out, counts);
  OutputBufferLimit limit{0, 1000, 2};
  EXPECT_FALSE(out.OverLimit(1500, limit, 10'000));  // first time over: the clock starts
  EXPECT_FALSE(out.OverLimit(1500, limit, 12'000));  // exactly soft_seconds: not yet
  EXPECT_FALSE(out.OverLimit(500, limit, 12'500));   // back under: the clock resets
  EXPECT_FALSE(out.OverLimit(1500, limit, 13'000));
  EXPECT_FALSE(out.OverLimit(1500, limit, 15'000));
  EXPECT_TRUE(out.OverLimit(1500, limit, 15'001));
  EXPECT_EQ(out.Push(Message("x"), 0, limit, 15'002), ClientOutput::PushResult::kDropped);
  EXPECT_EQ(counts.closed, 0);  // OverLimit leaves closing to its caller
}

TEST(ClientOutputTest, CloseDropsTheQueueAndTheHooks) {
  ClientOutput out;
  HookCounts counts;
  Hook(out, counts);
  out.Push(Message("1"), 0, OutputBufferLimit{}, 0);
  out.Close();
  EXPECT_EQ(out.queued_bytes(), 0u);
  EXPECT_TRUE(out.Take().empty());
  EXPECT_EQ(out.Push(Message("2"), 0, OutputBufferLimit{}, 0), ClientOutput::PushResult::kDropped);
  EXPECT_EQ(counts.notified, 1);
}

// ---------------------------------------------------------------------------------------------
// The registry

std::shared_ptr<Session> NewSession(uint64_t id) {
  auto s = std::make_shared<Session>();
  s->id = id;
  return s;
}

std::vector<std::string> Pushes(Session& s, int resp = 3) {
  std::string out;
  Reply reply(&out, resp);
  WriteQueuedMessages(s, reply);
  std::vector<std::string> pushes;
  size_t pos = 0;
  while ((pos = out.find(resp == 3 ? '>' : '*', pos)) != std::string::npos) {
    size_t next = out.find(resp == 3 ? '>' : '*', pos + 1);
    pushes.push_back(out.substr(pos, next == std::string::npos ? next : next - pos));
    pos = next;
  }
  return pushes;
}

TEST(PubSubTest, DeliverCountsChannelAndPatternReceivers) {
  PubSub ps;
  auto a = NewSession(1), b = NewSession(2);
  EXPECT_TRUE(ps.Subscribe(*a, PubSubKind::kChannel, "news"));
  EXPECT_FALSE(ps.Subscribe(*a, PubSubKind::kChannel, "news"));
  EXPECT_TRUE(ps.Subscribe(*a, PubSubKind::kPattern, "n*"));
  EXPECT_TRUE(ps.Subscribe(*b, PubSubKind::kPattern, "n?ws"));
  EXPECT_TRUE(ps.Subscribe(*b, PubSubKind::kShard, "news"));
  EXPECT_EQ(ps.Deliver("news", "hi", false), 3);  // a twice (channel + pattern), b once
  EXPECT_EQ(ps.Deliver("news", "shard", true), 1);
  EXPECT_EQ(ps.Deliver("other", "x", false), 0);
  EXPECT_EQ(Pushes(*a), (std::vector<std::string>{
                            ">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n",
                            ">4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n"}));
  EXPECT_EQ(Pushes(*b).back(), ">3\r\n$8\r\nsmessage\r\n$4\r\nnews\r\n$5\r\nshard\r\n");
  EXPECT_EQ(ps.Size(PubSubKind::kPattern), 2);
  EXPECT_EQ(ps.SubscriberCount(PubSubKind::kChannel, "news"), 1);
  EXPECT_EQ(ps.SubscriberCount(PubSubKind::kShard, "news"), 1);
  std::string pattern = "n*";
  EXPECT_EQ(ps.Names(PubSubKind::kChannel, &pattern), std::vector<std::string>{"news"});
  ps.UnsubscribeAll(*a);
  ps.UnsubscribeAll(*b);
  EXPECT_EQ(
      ps.Size(PubSubKind::kChannel) + ps.Size(PubSubKind::kPattern) + ps.Size(PubSubKind::kShard),
      0);
  EXPECT_EQ(a->subscriptions.total(), 0);
}

TEST(PubSubTest, MessagesQueuedBeforeAnUnsubscribeAreNotWritten) {
  PubSub ps;
  auto a = NewSession(1);
  ps.Subscribe(*a, PubSubKind::kChannel, "c");
  ps.Subscribe(*a, PubSubKind::kChannel, "d");
  ps.Deliver("c", "1", false);
  ps.Deliver("d", "2", false);
  ps.Unsubscribe(*a, PubSubKind::kChannel, "c");
  EXPECT_EQ(Pushes(*a, 2),
            std::vector<std::string>{"*3\r\n$7\r\nmessage\r\n$1\r\nd\r\n$1\r\n2\r\n"});
}

TEST(PubSubTest, OverLimitSubscriberIsClosedAndOthersStillReceive) {
  Config config;
  ASSERT_TRUE(config.SetLive("client-output-buffer-limit", "pubsub 1kb 0 0").ok());
  PubSub ps;
  ps.set_config(&config);
  auto slow = NewSession(1), fast = NewSession(2);
  int closed = 0;
  slow->output.SetHooks(nullptr, [&closed] { closed++; });
  ps.Subscribe(*slow, PubSubKind::kChannel, "c");
  ps.Subscribe(*fast, PubSubKind::kChannel, "c");
  std::string big(600, 'x');
  for (int i = 0; i < 3; i++) {
    EXPECT_EQ(ps.Deliver("c", big, false), 2);  // counted as receivers, as Redis does
    Pushes(*fast);                              // the fast one keeps up
  }
  EXPECT_EQ(closed, 1);
  EXPECT_EQ(slow->output.queued_bytes(), 0u);
  ps.Deliver("c", "small", false);
  EXPECT_EQ(Pushes(*fast).size(), 1u);
}

// Publishers on several threads while subscribers come and go: every message a live subscriber
// gets arrives in each publisher's order, and departed sessions are released.
TEST(PubSubTest, ConcurrentPublishersAndChurningSubscribers) {
  PubSub ps;
  auto steady = NewSession(1);
  ps.Subscribe(*steady, PubSubKind::kPattern, "ch*");
  std::weak_ptr<Session> departed;
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    for (uint64_t id = 100; !stop.load(); id++) {
      auto s = NewSession(id);
      ps.Subscribe(*s, PubSubKind::kChannel, "ch1");
      ps.Deliver("ch1", "from churn", false);
      s->output.Close();
      ps.UnsubscribeAll(*s);
      departed = s;
    }
  });
  constexpr int kPublishers = 3, kMessages = 2000;
  std::atomic<int> finished{0};
  std::vector<std::thread> publishers;
  for (int p = 0; p < kPublishers; p++) {
    publishers.emplace_back([&ps, &finished, p] {
      for (int i = 0; i < kMessages; i++) {
        ps.Deliver("ch" + std::to_string(p), std::to_string(i), false);
      }
      finished++;
    });
  }
  std::vector<int> next(kPublishers, 0);
  auto check = [&] {
    for (const PendingMessage& m : steady->output.Take()) {
      if (m.message->payload == "from churn") continue;
      int p = m.message->channel.back() - '0';
      EXPECT_EQ(std::stoi(m.message->payload), next[p]) << "publisher " << p;
      next[p]++;
    }
  };
  while (finished.load() < kPublishers) check();  // this thread is the subscriber's worker
  for (auto& t : publishers) t.join();
  stop = true;
  churn.join();
  check();
  EXPECT_EQ(next, std::vector<int>(kPublishers, kMessages));
  EXPECT_TRUE(departed.expired());
  EXPECT_EQ(ps.SubscriberCount(PubSubKind::kChannel, "ch1"), 0);
}

}  // namespace
}  // namespace basalt
