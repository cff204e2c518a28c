// WriterPreferringMutex: a shared mutex under which a waiting exclusive locker blocks new shared
// lockers, so EXEC and FLUSHALL cannot be starved by a steady stream of ordinary commands
// (glibc's default reader-writer lock, behind std::shared_mutex, prefers readers). Usable with
// std::shared_lock and std::unique_lock.
#pragma once

#include <pthread.h>
#include <time.h>

#include <cstdint>

namespace basalt {

class WriterPreferringMutex {
 public:
  WriterPreferringMutex() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  ~WriterPreferringMutex() { pthread_rwlock_destroy(&lock_); }
  WriterPreferringMutex(const WriterPreferringMutex&) = delete;
  WriterPreferringMutex& operator=(const WriterPreferringMutex&) = delete;

  void lock() { pthread_rwlock_wrlock(&lock_); }
  void unlock() { pthread_rwlock_unlock(&lock_); }
  void lock_shared() { pthread_rwlock_rdlock(&lock_); }
  void unlock_shared() { pthread_rwlock_unlock(&lock_); }

  // Bounded waits, so that a waiter can give up and reply BUSY when a script runs too long.
  bool try_lock_for_ms(int64_t ms) {
    timespec deadline = Deadline(ms);
    return pthread_rwlock_clockwrlock(&lock_, CLOCK_MONOTONIC, &deadline) == 0;
  }
  bool try_lock_shared_for_ms(int64_t ms) {
    timespec deadline = Deadline(ms);
    return pthread_rwlock_clockrdlock(&lock_, CLOCK_MONOTONIC, &deadline) == 0;
  }

 private:
  static timespec Deadline(int64_t ms) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000;
    }
    return ts;
  }
  pthread_rwlock_t lock_;
};

}  // namespace basalt
