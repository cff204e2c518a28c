#include "common/hash.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace basalt {

HashKey RandomHashKey() {
  uint64_t words[2];
  auto* bytes = reinterpret_cast<char*>(words);
  size_t got = 0;
  while (got < sizeof(words)) {
    ssize_t n = getrandom(bytes + got, sizeof(words) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    // Linux has had getrandom since 3.17; without it the hash would be open to chosen keys.
    // It runs before main, so before logging starts.
    if (n < 0) {
      std::perror("getrandom (the in-memory hash key)");
      std::abort();
    }
    got += static_cast<size_t>(n);
  }
  return HashKey{words[0], words[1]};
}

}  // namespace basalt
