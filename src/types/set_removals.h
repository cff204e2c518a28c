// Counts that tell a set's members picked ahead (types/set_random.cc, PopFromPool) whether they
// may have been removed since: removals of set members, per stripe of sets (by the hash of the
// set's subkey prefix), which CollectionWriter::Remove counts for every set member it removes,
// and the writes of set members that go around CollectionWriter (NoteUntrackedSetWrites in
// types/set.h). Only a removal can take a member away, and whoever removes one holds the set's
// lock: a holder of the lock that finds neither count moved since it last looked knows that
// nobody removed members of its set meanwhile.
#pragma once

#include <cstdint>
#include <string_view>

namespace basalt {

uint64_t SetRemovals(std::string_view set_prefix);
uint64_t UntrackedSetWrites();

}  // namespace basalt
