// The hand-off of a contended stripe (lock_table.h): a thread that has to wait for a stripe
// announces it, the holder sees the announcement once it released the stripe, and waiting for
// the hand-off returns once the waiter holds it, so the holder cannot take it back first.
#include "types/lock_table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace basalt {
namespace {

constexpr int64_t kLongWaitUs = 10'000'000;  // far longer than a wake-up, even under a sanitizer

// Spins until `done` holds or ten seconds passed; returns `done()`.
template <typename Predicate>
bool Eventually(Predicate done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  return done();
}

// A second thread that takes `stripe` through LockWaitingInTurn() and holds it until released.
class Waiter {
 public:
  Waiter(LockTable& table, size_t stripe) : table_(table), stripe_(stripe) {
    thread_ = std::thread([this] {
      table_.LockWaitingInTurn(stripe_);
      holds_ = true;
      while (!release_) std::this_thread::yield();
      table_.stripe(stripe_).unlock();
    });
  }
  ~Waiter() {
    release_ = true;
    thread_.join();
  }
  bool holds() const { return holds_; }

 private:
  LockTable& table_;
  size_t stripe_;
  std::atomic<bool> holds_{false};
  std::atomic<bool> release_{false};
  std::thread thread_;
};

TEST(LockTableTest, AFreeStripeIsTakenWithoutAnnouncingAWait) {
  auto table = std::make_unique<LockTable>();
  table->LockWaitingInTurn(5);
  EXPECT_FALSE(table->HasWaiter(5));
  EXPECT_FALSE(table->stripe(5).try_lock());
  table->stripe(5).unlock();
}

TEST(LockTableTest, TheReleasedStripeGoesToTheWaiterBeforeTheHolderTakesItAgain) {
  auto table = std::make_unique<LockTable>();
  table->stripe(7).lock();
  Waiter waiter(*table, 7);
  ASSERT_TRUE(Eventually([&] { return table->HasWaiter(7); }));
  EXPECT_FALSE(table->HasWaiter(8));
  EXPECT_FALSE(waiter.holds());

  table->stripe(7).unlock();
  table->AwaitTakenByWaiter(7, kLongWaitUs);
  EXPECT_FALSE(table->HasWaiter(7));
  bool taken_back = table->stripe(7).try_lock();
  if (taken_back) table->stripe(7).unlock();
  EXPECT_FALSE(taken_back);  // the waiter has it, not the former holder
  EXPECT_TRUE(Eventually([&] { return waiter.holds(); }));
}

TEST(LockTableTest, AwaitingAHandOffGivesUpWhenTheWaiterCannotTakeTheStripe) {
  auto table = std::make_unique<LockTable>();
  table->stripe(3).lock();  // a third holder that keeps the stripe
  Waiter waiter(*table, 3);
  ASSERT_TRUE(Eventually([&] { return table->HasWaiter(3); }));
  auto start = std::chrono::steady_clock::now();
  table->AwaitTakenByWaiter(3, 1000);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(table->HasWaiter(3));
  EXPECT_FALSE(waiter.holds());
  table->stripe(3).unlock();
  EXPECT_TRUE(Eventually([&] { return waiter.holds(); }));
}

TEST(LockTableTest, WaitersOfOneStripeAreAnnouncedUntilEachHasHadIt) {
  auto table = std::make_unique<LockTable>();
  table->stripe(11).lock();
  auto first = std::make_unique<Waiter>(*table, 11);
  auto second = std::make_unique<Waiter>(*table, 11);
  ASSERT_TRUE(Eventually([&] { return table->HasWaiter(11); }));
  table->stripe(11).unlock();
  // One of them takes it; the other waits, announced, until the first lets go.
  ASSERT_TRUE(Eventually([&] { return first->holds() || second->holds(); }));
  EXPECT_TRUE(Eventually([&] { return table->HasWaiter(11); }));
  EXPECT_FALSE(first->holds() && second->holds());
  if (first->holds()) {
    first.reset();
  } else {
    second.reset();
  }
  ASSERT_TRUE(Eventually([&] { return (first && first->holds()) || (second && second->holds()); }));
  EXPECT_FALSE(table->HasWaiter(11));
}

}  // namespace
}  // namespace basalt
