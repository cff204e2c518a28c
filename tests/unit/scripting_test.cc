// SHA-1 against the FIPS 180 test vectors (script ids must equal Redis's) and the shebang
// parser's accepted and refused forms.
#include <gtest/gtest.h>

#include <string>

#include "scripting/scripting.h"
#include "scripting/sha1.h"

namespace basalt {
namespace {

TEST(Sha1Test, KnownVectors) {
  EXPECT_EQ(Sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(Sha1Hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(Sha1Test, LengthsAroundTheBlockBoundary) {
  // 55, 56 and 64 bytes: the padding needs one block, two blocks, one extra block.
  EXPECT_EQ(Sha1Hex(std::string(55, 'a')), "c1c8bbdc22796e28c0e15163d20899b65621d65a");
  EXPECT_EQ(Sha1Hex(std::string(56, 'a')), "c2db330f6083854c99d4b5bfb6e8f29f201be699");
  EXPECT_EQ(Sha1Hex(std::string(64, 'a')), "0098ba824b5c16427bd7a1122a5a442a25ec644d");
}

TEST(ShebangTest, AcceptedForms) {
  bool no_writes = true;
  EXPECT_TRUE(ParseShebang("return 1", &no_writes).ok());
  EXPECT_FALSE(no_writes);
  EXPECT_TRUE(ParseShebang("#!lua\nreturn 1", &no_writes).ok());
  EXPECT_FALSE(no_writes);
  EXPECT_TRUE(ParseShebang("#!lua flags=allow-oom,no-writes\r\nreturn 1", &no_writes).ok());
  EXPECT_TRUE(no_writes);
  EXPECT_TRUE(ParseShebang("#!lua  flags=\nreturn 1", &no_writes).ok());
  EXPECT_FALSE(no_writes);
}

TEST(ShebangTest, RefusedForms) {
  bool no_writes;
  EXPECT_EQ(ParseShebang("#!lua", &no_writes).message(), "ERR Invalid script shebang");
  EXPECT_EQ(ParseShebang("#!js\nx", &no_writes).message(),
            "ERR Unexpected engine in script shebang: #!js");
  EXPECT_EQ(ParseShebang("#!lua name=f\nx", &no_writes).message(),
            "ERR Unknown lua shebang option: name=f");
  EXPECT_EQ(ParseShebang("#!lua flags=no-writes,nope\nx", &no_writes).message(),
            "ERR Unexpected flag in script shebang: nope");
}

}  // namespace
}  // namespace basalt
