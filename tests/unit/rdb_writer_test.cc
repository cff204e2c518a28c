// RDB files: the frame (magic, aux fields, SELECTDB/RESIZEDB, EOF, checksum) and the snapshot
// the writer reads: writes made while the file is being written do not show in it, and a
// replica's data swap waits for the writer to let go of its snapshot. That redis-server loads
// the files is tested in tests/integration/test_rdb_export.py.
#include "types/rdb_writer.h"

#include <string>
#include <thread>

#include "common/crc64.h"
#include "common/rdb_encoding.h"
#include "keyspace_fixture.h"
#include "types/hash.h"
#include "types/rdb_value.h"

namespace basalt {
namespace {

class RdbWriterTest : public KeyspaceFixture {
 protected:
  void WriteList(int db, const std::string& key, std::vector<std::string> items) {
    Context ctx(ks_.get());
    auto old = ctx.Lookup(db, key);
    ASSERT_TRUE(old.ok());
    RdbValue value;
    value.type = RedisType::kList;
    value.items = std::move(items);
    ASSERT_TRUE(WriteRdbValue(ctx, db, key, value, 0, *old).ok());
    ASSERT_TRUE(ctx.Commit().ok());
  }

  // HSET key field value, over the hash's current incarnation (the field's entry is rewritten
  // in place, which a reader that does not read its snapshot would see).
  void SetField(int db, const std::string& key, const std::string& field,
                const std::string& value) {
    Context ctx(ks_.get());
    auto old = ctx.Lookup(db, key);
    ASSERT_TRUE(old.ok());
    HashWriter w(ctx, db, key, *old);
    std::string stored;
    Status found = w.Find(field, &stored);
    w.Put(field, value, found.ok() ? &stored : nullptr);
    w.Finish();
    ASSERT_TRUE(ctx.Commit().ok());
  }

  // The whole file; `during` runs once, at the first chunk handed out.
  std::string Write(const std::function<void()>& during = nullptr) {
    std::string file;
    bool ran = false;
    Status s = WriteRdb(
        ks_.get(), true,
        [&](std::string_view chunk) {
          if (!ran && during) during();
          ran = true;
          file.append(chunk);
          return Status::OK();
        },
        nullptr);
    EXPECT_TRUE(s.ok()) << s.message();
    return file;
  }
};

uint64_t TrailingChecksum(const std::string& file) {
  uint64_t crc = 0;
  for (int i = 0; i < 8; i++)
    crc |= static_cast<uint64_t>(static_cast<uint8_t>(file[file.size() - 8 + i])) << (8 * i);
  return crc;
}

TEST_F(RdbWriterTest, EmptyKeyspaceIsHeaderEofAndChecksum) {
  std::string file = Write();
  ASSERT_GT(file.size(), 9u + 9u);
  EXPECT_EQ(file.substr(0, 9), "REDIS0010");
  EXPECT_NE(file.find("redis-ver"), std::string::npos);
  EXPECT_EQ(static_cast<uint8_t>(file[file.size() - 9]), 255);  // EOF
  EXPECT_EQ(TrailingChecksum(file), Crc64(0, std::string_view(file).substr(0, file.size() - 8)));
  // Aux fields and then EOF: no SELECTDB. Walked opcode by opcode, as the aux values (ctime,
  // used-mem) and the checksum may hold any byte.
  rdb::Reader r(std::string_view(file).substr(9));
  uint8_t opcode = 0;
  int aux = 0;
  while (r.ReadByte(&opcode) && opcode == rdb::kOpcodeAux) {
    std::string name, value;
    ASSERT_TRUE(r.ReadString(&name) && r.ReadString(&value));
    aux++;
  }
  EXPECT_GT(aux, 0);
  EXPECT_EQ(opcode, rdb::kOpcodeEof);
  EXPECT_EQ(r.remaining(), 8u);  // the checksum
}

TEST_F(RdbWriterTest, DatabasesWithKeysGetSelectAndResize) {
  Set(3, "k", "value-in-three");
  Set(3, "t", "with-ttl", UnixMillis() + 3600000);
  std::string file = Write();
  // SELECTDB 3, RESIZEDB 2 keys 1 expire.
  EXPECT_NE(file.find(std::string("\xfe\x03\xfb\x02\x01", 5)), std::string::npos);
  EXPECT_NE(file.find("value-in-three"), std::string::npos);
  EXPECT_NE(file.find('\xfc'), std::string::npos);  // EXPIRETIME_MS
  EXPECT_EQ(TrailingChecksum(file), Crc64(0, std::string_view(file).substr(0, file.size() - 8)));
}

TEST_F(RdbWriterTest, WritesDuringTheFileDoNotShowInIt) {
  // The first key is large enough that its chunk goes out before the later keys are read.
  Set(0, "a-first", std::string(100 * 1024, 'x'));
  Set(0, "z-string", "old-value");
  WriteList(0, "z-list", {"one", "two", "three"});
  SetField(0, "z-hash", "field", "old-field-value");
  std::string file = Write([&] {
    SetField(0, "z-hash", "field", "new-field-value");
    Set(0, "z-string", "new-value");
    Set(0, "z-added", "added-value");
    WriteList(0, "z-list", {"one", "two", "three", "element-four"});
  });
  EXPECT_NE(file.find("old-value"), std::string::npos);
  EXPECT_EQ(file.find("new-value"), std::string::npos);
  EXPECT_EQ(file.find("added-value"), std::string::npos);
  EXPECT_EQ(file.find("element-four"), std::string::npos);
  EXPECT_NE(file.find("three"), std::string::npos);
  EXPECT_NE(file.find("old-field-value"), std::string::npos);
  EXPECT_EQ(file.find("new-field-value"), std::string::npos);
  // And the next file has them.
  std::string next = Write();
  EXPECT_NE(next.find("new-value"), std::string::npos);
  EXPECT_NE(next.find("element-four"), std::string::npos);
  EXPECT_NE(next.find("new-field-value"), std::string::npos);
}

TEST_F(RdbWriterTest, DataSwapAbandonsTheWriterAndWaitsForIt) {
  Set(0, "a-first", std::string(100 * 1024, 'x'));
  for (int i = 0; i < 100; i++) Set(0, "key-" + std::to_string(i), "v");
  std::thread swap;
  Status s = WriteRdb(
      ks_.get(), true,
      [&](std::string_view) {
        if (!swap.joinable()) {
          // The swap fails (no database there), after waiting for this writer to let go.
          swap = std::thread([&] { (void)ks_->engine()->ReplaceData(dir_ + "-missing"); });
          while (ks_->engine()->AcquireLongSnapshot().status().code() != Status::kBusy)
            std::this_thread::yield();
        }
        return Status::OK();
      },
      nullptr);
  swap.join();
  EXPECT_EQ(s.code(), Status::kBusy) << s.message();
  // Once the swap is over, snapshots are handed out again.
  EXPECT_TRUE(ks_->engine()->AcquireLongSnapshot().ok());
}

}  // namespace
}  // namespace basalt
