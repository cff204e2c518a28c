// The ACL user store (security/acl_store.h): atomic SETUSER, authentication, the default
// user's link to requirepass, the ACL file in both directions, and the ACL LOG's grouping.
#include "security/acl_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "commands/server_state.h"
#include "common/sha256.h"
#include "security/acl_log.h"

namespace basalt {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/basalt-acl-XXXXXX";
    if (mkdtemp(tmpl) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string File(const std::string& name, const std::string& content = "") const {
    std::string file = path_ + "/" + name;
    if (!content.empty()) std::ofstream(file) << content;
    return file;
  }

 private:
  std::string path_;
};

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(AclStoreTest, StartsWithTheOpenDefaultUser) {
  AclStore store(&CommandAclCatalog());
  auto def = store.DefaultUser();
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->Describe(store.catalog()), "on nopass ~* &* +@all");
  EXPECT_FALSE(store.AuthRequired());
  EXPECT_TRUE(store.DefaultUserIsNoPass());
  EXPECT_EQ(store.Users().size(), 1u);
}

TEST(AclStoreTest, RequirepassIsTheDefaultUsersPassword) {
  AclStore store(&CommandAclCatalog());
  uint64_t epoch = store.epoch();
  store.SetDefaultPassword("s3cret");
  EXPECT_GT(store.epoch(), epoch);
  EXPECT_TRUE(store.AuthRequired());
  EXPECT_FALSE(store.DefaultUserIsNoPass());
  EXPECT_NE(store.Authenticate("default", "s3cret"), nullptr);
  EXPECT_EQ(store.Authenticate("default", "wrong"), nullptr);
  store.SetDefaultPassword("");
  EXPECT_FALSE(store.AuthRequired());
  EXPECT_NE(store.Authenticate("default", "anything"), nullptr);
}

TEST(AclStoreTest, DisabledDefaultUserRequiresAuth) {
  AclStore store(&CommandAclCatalog());
  std::string bad;
  ASSERT_TRUE(store.SetUser("default", {"off"}, &bad).ok());
  EXPECT_TRUE(store.AuthRequired());
  EXPECT_TRUE(store.DefaultUserIsNoPass());
  EXPECT_EQ(store.Authenticate("default", ""), nullptr);
}

TEST(AclStoreTest, SetUserIsAllOrNothing) {
  AclStore store(&CommandAclCatalog());
  std::string bad;
  ASSERT_TRUE(store.SetUser("alice", {"on", ">pw", "+get"}, &bad).ok());
  uint64_t epoch = store.epoch();
  Status s = store.SetUser("alice", {"+set", ">other", "+nosuch", "+del"}, &bad);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(bad, "+nosuch");
  EXPECT_EQ(s.message(), "Unknown command or category name in ACL");
  EXPECT_EQ(store.epoch(), epoch);
  auto alice = store.Find("alice");
  EXPECT_EQ(alice->root().DescribeCommands(store.catalog()), "-@all +get");
  EXPECT_FALSE(alice->PasswordMatches("other"));
  // A failed SETUSER of a new user creates nothing.
  EXPECT_FALSE(store.SetUser("bob", {"on", "bogus"}, &bad).ok());
  EXPECT_EQ(store.Find("bob"), nullptr);
}

TEST(AclStoreTest, AuthenticateNeedsAnEnabledUserAndItsPassword) {
  AclStore store(&CommandAclCatalog());
  std::string bad;
  ASSERT_TRUE(store.SetUser("alice", {">pw"}, &bad).ok());
  EXPECT_EQ(store.Authenticate("alice", "pw"), nullptr);  // still off
  ASSERT_TRUE(store.SetUser("alice", {"on"}, &bad).ok());
  EXPECT_NE(store.Authenticate("alice", "pw"), nullptr);
  EXPECT_EQ(store.Authenticate("alice", "PW"), nullptr);
  EXPECT_EQ(store.Authenticate("nobody", "pw"), nullptr);
}

TEST(AclStoreTest, DelUsersSparesDefault) {
  AclStore store(&CommandAclCatalog());
  std::string bad;
  ASSERT_TRUE(store.SetUser("a", {}, &bad).ok());
  ASSERT_TRUE(store.SetUser("b", {}, &bad).ok());
  auto deleted = store.DelUsers({"a", "nosuch", "default", "b"});
  EXPECT_EQ(deleted, (std::vector<std::string>{"a", "b"}));
  EXPECT_NE(store.DefaultUser(), nullptr);
  EXPECT_EQ(store.Users().size(), 1u);
}

TEST(AclStoreTest, SaveThenLoadRestoresTheUsers) {
  TempDir dir;
  std::string path = dir.File("users.acl");
  AclStore store(&CommandAclCatalog());
  std::string bad;
  ASSERT_TRUE(store.SetUser("zed", {"on", ">z", "%R~r:*", "&ch", "+@read", "-get"}, &bad).ok());
  ASSERT_TRUE(store.SetUser("amy", {"on", "nopass", "allkeys", "+@all", "-@dangerous"}, &bad).ok());
  store.SetDefaultPassword("dpw");
  ASSERT_TRUE(store.SaveFile(path).ok());
  std::string saved = Read(path);
  EXPECT_EQ(saved,
            "user amy on nopass ~* resetchannels +@all -@dangerous\n"
            "user default on #" +
                store.DefaultUser()->password_hashes[0] +
                " ~* &* +@all\n"
                "user zed on #" +
                Sha256::HexHash("z") + " %R~r:* resetchannels &ch -@all +@read -get\n");

  AclStore loaded(&CommandAclCatalog());
  ASSERT_TRUE(loaded.LoadFile(path).ok());
  ASSERT_EQ(loaded.Users().size(), 3u);
  for (const char* name : {"amy", "default", "zed"}) {
    EXPECT_EQ(loaded.Find(name)->Describe(loaded.catalog()),
              store.Find(name)->Describe(store.catalog()))
        << name;
  }
  EXPECT_TRUE(loaded.AuthRequired());
  EXPECT_NE(loaded.Authenticate("zed", "z"), nullptr);
}

TEST(AclStoreTest, FileWithoutDefaultGetsTheOpenDefault) {
  TempDir dir;
  std::string path = dir.File("users.acl", "user bob on >pw ~* +@all\n");
  AclStore store(&CommandAclCatalog());
  store.SetDefaultPassword("before");
  ASSERT_TRUE(store.LoadFile(path).ok());
  EXPECT_EQ(store.DefaultUser()->Describe(store.catalog()), "on nopass ~* &* +@all");
  EXPECT_FALSE(store.AuthRequired());
}

TEST(AclStoreTest, BadFileChangesNothingAndNamesEveryProblem) {
  TempDir dir;
  std::string path = dir.File("users.acl",
                              "user default on nopass ~* &* +@all\n"
                              "\n"
                              "bad line\n"
                              "user zed on +nosuch >secret #123\n"
                              "user bob on\n"
                              "user bob off\n"
                              "user sel on (+get ~x\n");
  AclStore store(&CommandAclCatalog());
  std::string bad;
  ASSERT_TRUE(store.SetUser("keep", {"on"}, &bad).ok());
  Status s = store.LoadFile(path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            path + ":3 should start with user keyword followed by the username. " + path +
                ":4: Error in applying operation '+nosuch': Unknown command or category name in "
                "ACL. " +
                path +
                ":4: The password hash must be exactly 64 characters and contain only lowercase "
                "hexadecimal characters. WARNING: Duplicate user 'bob' found on line 6. " +
                path +
                ":7: Unmatched parenthesis in selector definition.WARNING: ACL errors detected, "
                "no change to the previously active ACL rules was performed");
  EXPECT_NE(store.Find("keep"), nullptr);
  EXPECT_EQ(store.Find("bob"), nullptr);
}

TEST(AclStoreTest, MissingFileIsAnError) {
  AclStore store(&CommandAclCatalog());
  Status s = store.LoadFile("/nonexistent/users.acl");
  EXPECT_EQ(s.message(),
            "Error loading ACLs, opening file '/nonexistent/users.acl': No such file or directory");
}

AclLogEntry Entry(const char* reason, const char* object, const char* user, int64_t ms) {
  AclLogEntry e;
  e.reason = reason;
  e.context = "toplevel";
  e.object = object;
  e.username = user;
  e.created_ms = ms;
  e.client_info = std::string("at ") + std::to_string(ms);
  return e;
}

TEST(AclLogTest, GroupsRepeatsWithinAMinute) {
  AclLog log;
  log.Add(Entry("command", "get", "alice", 1000), 128);
  log.Add(Entry("key", "k", "alice", 2000), 128);
  log.Add(Entry("command", "get", "alice", 3000), 128);  // same event: grouped, moved first
  auto entries = log.Recent(10);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].object, "get");
  EXPECT_EQ(entries[0].count, 2u);
  EXPECT_EQ(entries[0].created_ms, 3000);
  EXPECT_EQ(entries[0].client_info, "at 3000");
  EXPECT_EQ(entries[1].object, "k");
  log.Add(Entry("command", "get", "alice", 3000 + 60001), 128);  // too late to group
  EXPECT_EQ(log.Recent(10).size(), 3u);
  log.Add(Entry("command", "get", "bob", 70000), 128);  // another user
  EXPECT_EQ(log.Recent(10).size(), 4u);
  EXPECT_EQ(log.Recent(1).size(), 1u);
  log.Reset();
  EXPECT_TRUE(log.Recent(10).empty());
}

TEST(AclLogTest, KeepsAtMostMaxLen) {
  AclLog log;
  for (int i = 0; i < 5; i++) log.Add(Entry("key", std::to_string(i).c_str(), "u", i), 3);
  auto entries = log.Recent(10);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].object, "4");
  EXPECT_EQ(entries[2].object, "2");
}

}  // namespace
}  // namespace basalt
