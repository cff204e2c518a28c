#include "security/acl_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "common/strutil.h"

namespace basalt {

namespace {

// Splits a line on single spaces, as Redis does for the ACL file (runs of spaces give empty
// words, which are no-op rules).
std::vector<std::string> SplitOnSingleSpaces(std::string_view line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t space = line.find(' ', start);
    out.emplace_back(line.substr(start, space - start));
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  const char* kBlank = " \t\r\n";
  size_t first = s.find_first_not_of(kBlank);
  if (first == std::string_view::npos) return {};
  size_t last = s.find_last_not_of(kBlank);
  return s.substr(first, last - first + 1);
}

}  // namespace

AclStore::AclStore(const AclCatalog* catalog) : catalog_(catalog) {
  std::lock_guard<std::mutex> lock(mu_);
  users_["default"] = NewDefaultUser();
  PublishLocked();
}

std::shared_ptr<AclUser> AclStore::NewDefaultUser() const {
  auto user = std::make_shared<AclUser>();
  user->name = "default";
  for (const char* rule : {"+@all", "~*", "&*", "on", "nopass"}) {
    Status s = user->Apply(*catalog_, rule);
    if (!s.ok()) abort();  // the built-in rules are valid by construction
  }
  return user;
}

void AclStore::PublishLocked() {
  const AclUser& def = *users_.at("default");
  default_nopass_.store(def.nopass, std::memory_order_release);
  default_requires_auth_.store(!def.nopass || !def.enabled, std::memory_order_release);
  epoch_.fetch_add(1, std::memory_order_acq_rel);
}

std::shared_ptr<const AclUser> AclStore::Find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const AclUser>> AclStore::Users() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<const AclUser>> out;
  out.reserve(users_.size());
  for (const auto& [name, user] : users_) out.push_back(user);
  return out;
}

Status AclStore::SetUser(std::string_view name, const std::vector<std::string>& rules,
                         std::string* bad_rule) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = users_.find(name);
  auto user =
      it == users_.end() ? std::make_shared<AclUser>() : std::make_shared<AclUser>(*it->second);
  user->name = std::string(name);
  for (const auto& rule : rules) {
    Status s = user->Apply(*catalog_, rule);
    if (!s.ok()) {
      *bad_rule = rule;
      return s;
    }
  }
  users_[std::string(name)] = std::move(user);
  PublishLocked();
  return Status::OK();
}

std::vector<std::string> AclStore::DelUsers(const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> deleted;
  for (const auto& name : names) {
    if (name == "default") continue;
    auto it = users_.find(name);
    if (it == users_.end()) continue;
    users_.erase(it);
    deleted.push_back(name);
  }
  if (!deleted.empty()) PublishLocked();
  return deleted;
}

std::shared_ptr<const AclUser> AclStore::Authenticate(std::string_view name,
                                                      std::string_view password) const {
  std::shared_ptr<const AclUser> user = Find(name);
  if (user == nullptr || !user->enabled || !user->PasswordMatches(password)) return nullptr;
  return user;
}

void AclStore::SetDefaultPassword(std::string_view password) {
  std::lock_guard<std::mutex> lock(mu_);
  auto user = std::make_shared<AclUser>(*users_.at("default"));
  std::string rule = "nopass";
  if (!password.empty()) {
    rule.assign(">");  // built with append: GCC 12 warns falsely on ">" + std::string
    rule.append(password);
  }
  Status s = user->Apply(*catalog_, "resetpass");
  if (s.ok()) s = user->Apply(*catalog_, rule);
  if (!s.ok()) abort();  // resetpass, nopass and >password cannot fail
  users_["default"] = std::move(user);
  PublishLocked();
}

Status AclStore::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Status::InvalidArgument("Error loading ACLs, opening file '" + path +
                                   "': " + strerror(errno));
  }
  std::map<std::string, std::shared_ptr<const AclUser>, std::less<>> loaded;
  std::set<std::string> seen;  // users defined so far, valid or not
  std::string errors;
  std::string line;
  for (int lineno = 1; std::getline(in, line); lineno++) {
    std::string_view text = Trim(line);
    if (text.empty()) continue;
    std::string where = path + ":" + std::to_string(lineno);
    std::vector<std::string> words = SplitOnSingleSpaces(text);
    if (words.size() < 2 || words[0] != "user") {
      errors += where + " should start with user keyword followed by the username. ";
      continue;
    }
    const std::string& name = words[1];
    if (!AclNameIsValid(name)) {
      errors += "'" + where + ": username '" + name + "' contains invalid characters. ";
      continue;
    }
    if (!seen.insert(name).second) {
      errors +=
          "WARNING: Duplicate user '" + name + "' found on line " + std::to_string(lineno) + ". ";
      continue;
    }
    std::vector<std::string> rules;
    size_t unmatched = 0;
    if (!MergeSelectorArguments({words.begin() + 2, words.end()}, &rules, &unmatched)) {
      errors += where + ": Unmatched parenthesis in selector definition.";
      continue;
    }
    auto user = std::make_shared<AclUser>();
    user->name = name;
    size_t errors_before = errors.size();
    for (const auto& rule : rules) {
      Status s = user->Apply(*catalog_, rule);
      if (s.ok()) continue;
      // Only unknown names are quoted: other rules may hold a password.
      if (s.message() == "Unknown command or category name in ACL") {
        errors += where + ": Error in applying operation '" + rule + "': " + s.message() + ". ";
      } else {
        errors += where + ": " + s.message() + ". ";
      }
    }
    if (errors.size() == errors_before) loaded[name] = std::move(user);
  }
  if (!errors.empty()) {
    return Status::InvalidArgument(
        errors +
        "WARNING: ACL errors detected, no change to the previously active ACL rules was "
        "performed");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!loaded.count("default")) loaded["default"] = NewDefaultUser();
  users_ = std::move(loaded);
  PublishLocked();
  return Status::OK();
}

Status AclStore::SaveFile(const std::string& path) const {
  std::string content;
  for (const auto& user : Users()) {
    content += "user " + user->name + " " + user->Describe(*catalog_) + "\n";
  }
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return Status::IOError("opening " + tmp + ": " + strerror(errno));
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string reason = strerror(errno);
      close(fd);
      unlink(tmp.c_str());
      return Status::IOError("writing " + tmp + ": " + reason);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // The new file must be complete on disk before it replaces the old one.
  int synced = fsync(fd);
  int closed = close(fd);
  if (synced != 0 || closed != 0) {
    std::string reason = strerror(errno);
    unlink(tmp.c_str());
    return Status::IOError("syncing " + tmp + ": " + reason);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    std::string reason = strerror(errno);
    unlink(tmp.c_str());
    return Status::IOError("renaming " + tmp + " to " + path + ": " + reason);
  }
  return Status::OK();
}

}  // namespace basalt
