#include "commands/key_specs.h"

#include <glog/logging.h>

#include <charconv>
#include <map>

#include "common/strutil.h"

namespace basalt {

namespace {

std::vector<std::string_view> Split(std::string_view text, std::string_view separator) {
  std::vector<std::string_view> out;
  while (true) {
    size_t at = text.find(separator);
    out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return out;
    text.remove_prefix(at + separator.size());
  }
}

int ToInt(std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  CHECK(error == std::errc() && end == text.data() + text.size())
      << "bad number in a key specification: " << text;
  return value;
}

// Three comma-separated integers.
void ToInts(std::string_view text, int* a, int* b, int* c) {
  std::vector<std::string_view> parts = Split(text, ",");
  CHECK_EQ(parts.size(), 3u) << "bad key specification part: " << text;
  *a = ToInt(parts[0]);
  *b = ToInt(parts[1]);
  *c = ToInt(parts[2]);
}

KeySpec ParseSpec(std::string_view text) {
  std::vector<std::string_view> parts = Split(text, " ");
  CHECK_EQ(parts.size(), 3u) << "bad key specification: " << text;
  KeySpec spec;
  for (std::string_view flag : Split(parts[0], ",")) spec.flags.emplace_back(flag);
  std::string_view begin = parts[1];
  if (begin[0] == 'i') {
    spec.begin = KeySpec::Begin::kIndex;
    spec.index = ToInt(begin.substr(1));
  } else if (begin[0] == 'k') {
    std::vector<std::string_view> keyword = Split(begin.substr(1), ",");
    CHECK_EQ(keyword.size(), 2u) << "bad keyword search: " << begin;
    spec.begin = KeySpec::Begin::kKeyword;
    spec.keyword = std::string(keyword[0]);
    spec.startfrom = ToInt(keyword[1]);
  }
  std::string_view find = parts[2];
  if (find[0] == 'r') {
    spec.find = KeySpec::Find::kRange;
    ToInts(find.substr(1), &spec.lastkey, &spec.keystep, &spec.limit);
  } else if (find[0] == 'n') {
    spec.find = KeySpec::Find::kKeynum;
    ToInts(find.substr(1), &spec.keynumidx, &spec.firstkey, &spec.keystep);
  }
  return spec;
}

const std::map<std::string, std::vector<KeySpec>, std::less<>>& AllSpecs() {
  static const auto* all = [] {
    auto* specs = new std::map<std::string, std::vector<KeySpec>, std::less<>>();
    for (const KeySpecRow& row : kKeySpecRows) {
      std::vector<KeySpec>& list = (*specs)[row.name];
      for (std::string_view text : Split(row.specs, "; ")) list.push_back(ParseSpec(text));
    }
    return specs;
  }();
  return *all;
}

// Where the spec's keys start in argv, or 0 when they are not there.
size_t FirstKeyOf(const KeySpec& spec, const std::vector<std::string>& argv) {
  const int argc = static_cast<int>(argv.size());
  if (spec.begin == KeySpec::Begin::kIndex) return spec.index < argc ? spec.index : 0;
  if (spec.begin != KeySpec::Begin::kKeyword) return 0;
  const bool forward = spec.startfrom > 0;
  const int start = forward ? spec.startfrom : argc + spec.startfrom;
  const int end = forward ? argc - 1 : 1;
  for (int i = start; i != end; i = start <= end ? i + 1 : i - 1) {
    if (i >= argc || i < 1) break;
    if (EqualsIgnoreCase(argv[i], spec.keyword)) return static_cast<size_t>(i) + 1;
  }
  return 0;
}

}  // namespace

bool KeySpec::Has(std::string_view flag) const {
  for (const std::string& f : flags) {
    if (f == flag) return true;
  }
  return false;
}

const std::vector<KeySpec>& KeySpecsOf(std::string_view full_name) {
  static const std::vector<KeySpec> kNone;
  const auto& all = AllSpecs();
  auto it = all.find(full_name);
  return it == all.end() ? kNone : it->second;
}

std::vector<std::pair<size_t, size_t>> LocateKeys(const std::vector<KeySpec>& specs,
                                                  const std::vector<std::string>& argv) {
  std::vector<std::pair<size_t, size_t>> keys;
  const int argc = static_cast<int>(argv.size());
  for (size_t nth = 0; nth < specs.size(); nth++) {
    const KeySpec& spec = specs[nth];
    if (spec.Has("not_key")) continue;
    int first = static_cast<int>(FirstKeyOf(spec, argv));
    if (first == 0) continue;
    int last = 0;
    if (spec.find == KeySpec::Find::kRange) {
      if (spec.lastkey >= 0) {
        last = first + spec.lastkey;
      } else if (spec.limit == 0) {
        last = argc + spec.lastkey;
      } else {
        last = first + (argc - first) / spec.limit + spec.lastkey;
      }
    } else if (spec.find == KeySpec::Find::kKeynum) {
      if (first + spec.keynumidx >= argc) continue;
      std::optional<int64_t> count = ParseInt64(argv[first + spec.keynumidx]);
      if (!count || *count < 0 || *count > argc) continue;
      first += spec.firstkey;
      last = first + static_cast<int>(*count) - 1;
    } else {
      continue;
    }
    if (last >= argc || last < first || first >= argc) continue;
    for (int i = first; i <= last; i += spec.keystep) keys.emplace_back(i, nth);
  }
  return keys;
}

void ReplyKeySpecs(Reply& r, const std::vector<KeySpec>& specs) {
  r.Set(specs.size());
  for (const KeySpec& spec : specs) {
    r.Map(3);
    r.Bulk("flags");
    r.Set(spec.flags.size());
    for (const std::string& flag : spec.flags) r.Simple(flag);

    r.Bulk("begin_search");
    r.Map(2);
    r.Bulk("type");
    switch (spec.begin) {
      case KeySpec::Begin::kIndex:
        r.Bulk("index");
        r.Bulk("spec");
        r.Map(1);
        r.Bulk("index");
        r.Integer(spec.index);
        break;
      case KeySpec::Begin::kKeyword:
        r.Bulk("keyword");
        r.Bulk("spec");
        r.Map(2);
        r.Bulk("keyword");
        r.Bulk(spec.keyword);
        r.Bulk("startfrom");
        r.Integer(spec.startfrom);
        break;
      case KeySpec::Begin::kUnknown:
        r.Bulk("unknown");
        r.Bulk("spec");
        r.Map(0);
        break;
    }

    r.Bulk("find_keys");
    r.Map(2);
    r.Bulk("type");
    switch (spec.find) {
      case KeySpec::Find::kRange:
        r.Bulk("range");
        r.Bulk("spec");
        r.Map(3);
        r.Bulk("lastkey");
        r.Integer(spec.lastkey);
        r.Bulk("keystep");
        r.Integer(spec.keystep);
        r.Bulk("limit");
        r.Integer(spec.limit);
        break;
      case KeySpec::Find::kKeynum:
        r.Bulk("keynum");
        r.Bulk("spec");
        r.Map(3);
        r.Bulk("keynumidx");
        r.Integer(spec.keynumidx);
        r.Bulk("firstkey");
        r.Integer(spec.firstkey);
        r.Bulk("keystep");
        r.Integer(spec.keystep);
        break;
      case KeySpec::Find::kUnknown:
        r.Bulk("unknown");
        r.Bulk("spec");
        r.Map(0);
        break;
    }
  }
}

}  // namespace basalt
