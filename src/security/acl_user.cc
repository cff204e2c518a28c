#include "security/acl_user.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "common/sha256.h"
#include "common/strutil.h"

namespace basalt {

namespace {

constexpr const char* kUnknownName = "Unknown command or category name in ACL";
constexpr const char* kSyntaxError = "Syntax error";
constexpr const char* kKeyAfterAll =
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not "
    "have any effect. Try 'resetkeys' to start with an empty list of patterns";
constexpr const char* kChannelAfterAll =
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does "
    "not have any effect. Try 'resetchannels' to start with an empty list of channels";
constexpr const char* kNoSuchPassword =
    "The password you are trying to remove from the user does not exist";
constexpr const char* kBadHash =
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal "
    "characters";
constexpr const char* kSubcommandFirstArg = "Allowing first-arg of a subcommand is not supported";

Status Reason(const char* text) {
  return Status::InvalidArgument(text);
}

using Bitmap = AclSelector::Bitmap;

// A command's bit and those of all its subcommands: "+config" allows every CONFIG subcommand.
void SetCommandBits(const AclCatalog& catalog, Bitmap* bits, int id, bool allow) {
  bits->set(static_cast<size_t>(id), allow);
  for (int sub : catalog.entry(id).subcommands) bits->set(static_cast<size_t>(sub), allow);
}

void SetCategoryBits(const AclCatalog& catalog, Bitmap* bits, uint64_t category, bool allow) {
  const auto& entries = catalog.entries();
  for (size_t id = 0; id < entries.size(); id++) {
    if (entries[id].categories & category)
      SetCommandBits(catalog, bits, static_cast<int>(id), allow);
  }
}

bool IsLowerHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'); });
}

// Compares two equal-length strings without stopping at the first difference.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); i++) {
    diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  }
  return diff == 0;
}

std::vector<std::string> SplitOnSpaces(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && isspace(static_cast<unsigned char>(text[i]))) i++;
    size_t start = i;
    while (i < text.size() && !isspace(static_cast<unsigned char>(text[i]))) i++;
    if (i > start) out.emplace_back(text.substr(start, i - start));
  }
  return out;
}

}  // namespace

bool AclNameIsValid(std::string_view name) {
  return std::none_of(name.begin(), name.end(), [](char ch) {
    return ch == '\0' || isspace(static_cast<unsigned char>(ch));
  });
}

// ---------------------------------------------------------------------------------------------
// AclSelector

void AclSelector::ResetCommands(bool allow) {
  if (allow) {
    commands_.set();
  } else {
    commands_.reset();
  }
  first_args_.clear();
  command_rules_.clear();
}

void AclSelector::RetainCommandRule(std::string name, bool allow) {
  name = ToLower(name);
  std::erase_if(command_rules_, [&](const std::string& rule) {
    std::string_view earlier = std::string_view(rule).substr(1);
    return earlier == name || (earlier.size() > name.size() && earlier.starts_with(name) &&
                               earlier[name.size()] == '|');
  });
  command_rules_.push_back((allow ? "+" : "-") + name);
}

Status AclSelector::Apply(const AclCatalog& catalog, std::string_view rule) {
  if (EqualsIgnoreCase(rule, "allkeys") || rule == "~*") {
    all_keys_ = true;
    keys_.clear();
  } else if (EqualsIgnoreCase(rule, "resetkeys")) {
    all_keys_ = false;
    keys_.clear();
  } else if (EqualsIgnoreCase(rule, "allchannels") || rule == "&*") {
    all_channels_ = true;
    channels_.clear();
  } else if (EqualsIgnoreCase(rule, "resetchannels")) {
    all_channels_ = false;
    channels_.clear();
  } else if (EqualsIgnoreCase(rule, "allcommands") || EqualsIgnoreCase(rule, "+@all")) {
    ResetCommands(true);
  } else if (EqualsIgnoreCase(rule, "nocommands") || EqualsIgnoreCase(rule, "-@all")) {
    ResetCommands(false);
  } else if (!rule.empty() && (rule[0] == '~' || rule[0] == '%')) {
    return ApplyKeyPattern(rule);
  } else if (!rule.empty() && rule[0] == '&') {
    return ApplyChannelPattern(rule);
  } else if (!rule.empty() && (rule[0] == '+' || rule[0] == '-')) {
    return ApplyCommandRule(catalog, rule);
  } else {
    return Reason(kSyntaxError);
  }
  return Status::OK();
}

Status AclSelector::ApplyKeyPattern(std::string_view rule) {
  if (all_keys_) return Reason(kKeyAfterAll);
  uint8_t access = kAclKeyReadWrite;
  size_t offset = 1;
  if (rule[0] == '%') {
    // %R~, %W~, %RW~: each letter at most once, then '~' (which Redis lets the rule omit).
    access = kAclKeyNone;
    for (; offset < rule.size(); offset++) {
      char ch = static_cast<char>(toupper(static_cast<unsigned char>(rule[offset])));
      if (ch == 'R' && !(access & kAclKeyRead)) {
        access |= kAclKeyRead;
      } else if (ch == 'W' && !(access & kAclKeyWrite)) {
        access |= kAclKeyWrite;
      } else if (rule[offset] == '~') {
        offset++;
        break;
      } else {
        return Reason(kSyntaxError);
      }
    }
    if (access == kAclKeyNone) return Reason(kSyntaxError);
  }
  std::string_view pattern = rule.substr(offset);
  if (!AclNameIsValid(pattern)) return Reason(kSyntaxError);
  for (auto& existing : keys_) {
    if (existing.pattern == pattern) {
      existing.access |= access;  // "%R~k" then "%W~k" is "~k"
      return Status::OK();
    }
  }
  keys_.push_back(AclKeyPattern{std::string(pattern), access});
  return Status::OK();
}

Status AclSelector::ApplyChannelPattern(std::string_view rule) {
  if (all_channels_) return Reason(kChannelAfterAll);
  std::string_view pattern = rule.substr(1);
  if (!AclNameIsValid(pattern)) return Reason(kSyntaxError);
  if (std::find(channels_.begin(), channels_.end(), pattern) == channels_.end()) {
    channels_.emplace_back(pattern);
  }
  return Status::OK();
}

Status AclSelector::ApplyCommandRule(const AclCatalog& catalog, std::string_view rule) {
  bool allow = rule[0] == '+';
  std::string_view name = rule.substr(1);
  if (!name.empty() && name[0] == '@') {
    uint64_t category = AclCategoryByName(name.substr(1));
    if (category == 0) return Reason(kUnknownName);
    SetCategoryBits(catalog, &commands_, category, allow);
    for (size_t id = 0; id < catalog.entries().size(); id++) {
      if (catalog.entries()[id].categories & category) first_args_.erase(static_cast<int>(id));
    }
    RetainCommandRule(std::string(name), allow);
    return Status::OK();
  }
  int id = catalog.Find(name);
  if (id >= 0) {
    SetCommandBits(catalog, &commands_, id, allow);
    first_args_.erase(id);
    RetainCommandRule(catalog.entry(id).name, allow);
    return Status::OK();
  }
  // "+cmd|arg" for a command without subcommands allows it with that first argument only.
  size_t bar = name.rfind('|');
  if (!allow || bar == std::string_view::npos) return Reason(kUnknownName);
  int parent = catalog.Find(name.substr(0, bar));
  if (parent < 0) return Reason(kUnknownName);
  if (catalog.entry(parent).parent >= 0) return Reason(kSubcommandFirstArg);
  std::string_view arg = name.substr(bar + 1);
  if (arg.empty()) return Reason(kSyntaxError);
  if (!catalog.entry(parent).subcommands.empty()) return Reason(kUnknownName);
  auto& args = first_args_[parent];
  bool known = std::any_of(args.begin(), args.end(),
                           [&](const std::string& a) { return EqualsIgnoreCase(a, arg); });
  if (!known) args.push_back(ToLower(arg));
  RetainCommandRule(catalog.entry(parent).name + "|" + std::string(arg), true);
  return Status::OK();
}

bool AclSelector::AllowsCommand(int id, const std::string* first_arg) const {
  if (commands_.test(static_cast<size_t>(id))) return true;
  if (first_arg == nullptr) return false;
  auto it = first_args_.find(id);
  if (it == first_args_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [&](const std::string& a) { return EqualsIgnoreCase(a, *first_arg); });
}

bool AclSelector::AllowsKey(std::string_view key, uint8_t needed) const {
  if (all_keys_) return true;
  for (const auto& p : keys_) {
    if ((p.access & needed) == needed && GlobMatch(p.pattern, key)) return true;
  }
  return false;
}

bool AclSelector::AllowsChannel(std::string_view channel, bool literal) const {
  if (all_channels_) return true;
  for (const auto& p : channels_) {
    if (literal ? p == channel : GlobMatch(p, channel)) return true;
  }
  return false;
}

std::string AclSelector::DescribeCommands(const AclCatalog& catalog) const {
  // +@all also grants the commands added later; -@all and additions grant only those named.
  std::string rules = commands_.test(AclCatalog::kFutureCommandsBit) ? "+@all" : "-@all";
  for (const auto& rule : command_rules_) rules += " " + rule;
  return rules;
}

std::string AclSelector::DescribeKeys() const {
  if (all_keys_) return "~*";
  std::string out;
  for (const auto& p : keys_) {
    if (!out.empty()) out += " ";
    out += p.access == kAclKeyReadWrite ? "~" : (p.access == kAclKeyRead ? "%R~" : "%W~");
    out += p.pattern;
  }
  return out;
}

std::string AclSelector::DescribeChannels() const {
  if (all_channels_) return "&*";
  std::string out;
  for (const auto& p : channels_) {
    if (!out.empty()) out += " ";
    out += "&" + p;
  }
  return out;
}

std::string AclSelector::Describe(const AclCatalog& catalog) const {
  std::string out;
  std::string keys = DescribeKeys();
  if (!keys.empty()) out += keys + " ";
  if (all_channels_) {
    out += "&* ";
  } else {
    out += "resetchannels ";
    for (const auto& p : channels_) out += "&" + p + " ";
  }
  return out + DescribeCommands(catalog);
}

// ---------------------------------------------------------------------------------------------
// AclUser

Status AclUser::Apply(const AclCatalog& catalog, std::string_view rule) {
  if (rule.empty()) return Status::OK();
  if (EqualsIgnoreCase(rule, "on")) {
    enabled = true;
  } else if (EqualsIgnoreCase(rule, "off")) {
    enabled = false;
  } else if (EqualsIgnoreCase(rule, "skip-sanitize-payload")) {
    sanitize_payload = Sanitize::kSkip;
  } else if (EqualsIgnoreCase(rule, "sanitize-payload")) {
    sanitize_payload = Sanitize::kSanitize;
  } else if (EqualsIgnoreCase(rule, "nopass")) {
    nopass = true;
    password_hashes.clear();
  } else if (EqualsIgnoreCase(rule, "resetpass")) {
    nopass = false;
    password_hashes.clear();
  } else if (rule[0] == '>' || rule[0] == '#') {
    std::string hash;
    if (rule[0] == '>') {
      hash = Sha256::HexHash(rule.substr(1));
    } else {
      hash = std::string(rule.substr(1));
      if (hash.size() != 64 || !IsLowerHex(hash)) return Reason(kBadHash);
    }
    if (std::find(password_hashes.begin(), password_hashes.end(), hash) == password_hashes.end())
      password_hashes.push_back(std::move(hash));
    nopass = false;
  } else if (rule[0] == '<' || rule[0] == '!') {
    std::string hash;
    if (rule[0] == '<') {
      hash = Sha256::HexHash(rule.substr(1));
    } else {
      hash = std::string(rule.substr(1));
      if (hash.size() != 64 || !IsLowerHex(hash)) return Reason(kBadHash);
    }
    auto it = std::find(password_hashes.begin(), password_hashes.end(), hash);
    if (it == password_hashes.end()) return Reason(kNoSuchPassword);
    password_hashes.erase(it);
  } else if (rule.size() >= 2 && rule.front() == '(' && rule.back() == ')') {
    AclSelector selector;
    for (const auto& inner : SplitOnSpaces(rule.substr(1, rule.size() - 2))) {
      Status s = selector.Apply(catalog, inner);
      if (!s.ok()) return s;
    }
    selectors.push_back(std::move(selector));
  } else if (EqualsIgnoreCase(rule, "clearselectors")) {
    selectors.resize(1);
  } else if (EqualsIgnoreCase(rule, "reset")) {
    nopass = false;
    password_hashes.clear();
    enabled = false;
    sanitize_payload = Sanitize::kSanitize;
    selectors.assign(1, AclSelector());
  } else {
    return selectors[0].Apply(catalog, rule);
  }
  return Status::OK();
}

std::string AclUser::Describe(const AclCatalog& catalog) const {
  std::string out = enabled ? "on " : "off ";
  if (nopass) out += "nopass ";
  if (sanitize_payload == Sanitize::kSkip) out += "skip-sanitize-payload ";
  if (sanitize_payload == Sanitize::kSanitize) out += "sanitize-payload ";
  for (const auto& hash : password_hashes) out += "#" + hash + " ";
  out += selectors[0].Describe(catalog);
  for (size_t i = 1; i < selectors.size(); i++) out += " (" + selectors[i].Describe(catalog) + ")";
  return out;
}

bool AclUser::PasswordMatches(std::string_view password) const {
  if (nopass) return true;
  std::string hash = Sha256::HexHash(password);
  bool match = false;
  for (const auto& stored : password_hashes) match |= ConstantTimeEquals(hash, stored);
  return match;
}

bool MergeSelectorArguments(const std::vector<std::string>& args, std::vector<std::string>* out,
                            size_t* unmatched_index) {
  out->clear();
  std::string open;
  size_t open_index = 0;
  bool in_selector = false;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& arg = args[i];
    if (!in_selector && !arg.empty() && arg.front() == '(' && arg.back() != ')') {
      in_selector = true;
      open = arg;
      open_index = i;
      continue;
    }
    if (in_selector) {
      open += " " + arg;
      if (!arg.empty() && arg.back() == ')') {
        out->push_back(std::move(open));
        in_selector = false;
      }
      continue;
    }
    out->push_back(arg);
  }
  if (in_selector) {
    *unmatched_index = open_index;
    return false;
  }
  return true;
}

}  // namespace basalt
