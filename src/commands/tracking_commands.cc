// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO: the client-side caching subcommands of
// CLIENT (commands/tracking.h), with Redis 7.2's replies and errors.
#include "commands/command_util.h"
#include "commands/tracking.h"

namespace basalt {

// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p]... [BCAST] [OPTIN] [OPTOUT] [NOLOOP]. As in
// Redis, every option is parsed (and a bad one refused) before ON or OFF is looked at.
void ClientTrackingCommand(CommandContext& c) {
  Tracking::Options options;
  bool redirect_given = false;
  for (size_t j = 3; j < c.argc(); j++) {
    const bool more = j + 1 < c.argc();
    const std::string& opt = c.arg(j);
    if (EqualsIgnoreCase(opt, "redirect") && more) {
      j++;
      if (redirect_given) {
        return c.reply.Error("ERR A client can only redirect to a single other client");
      }
      auto id = IntArg(c, j);
      if (!id) return;
      // The client must exist now, though it may leave later (then the redirect is broken).
      if (c.server.clients.Find(static_cast<uint64_t>(*id)) == nullptr) {
        return c.reply.Error("ERR The client ID you want redirect to does not exist");
      }
      options.redirect = static_cast<uint64_t>(*id);
      redirect_given = *id != 0;
    } else if (EqualsIgnoreCase(opt, "bcast")) {
      options.flags |= tracking_flag::kBcast;
    } else if (EqualsIgnoreCase(opt, "optin")) {
      options.flags |= tracking_flag::kOptIn;
    } else if (EqualsIgnoreCase(opt, "optout")) {
      options.flags |= tracking_flag::kOptOut;
    } else if (EqualsIgnoreCase(opt, "noloop")) {
      options.flags |= tracking_flag::kNoLoop;
    } else if (EqualsIgnoreCase(opt, "prefix") && more) {
      options.prefixes.push_back(c.arg(++j));
    } else {
      return c.reply.Error(kSyntaxError);
    }
  }
  if (EqualsIgnoreCase(c.arg(2), "on")) {
    Status s = c.server.tracking.Enable(c.session, options);
    if (!s.ok()) return c.reply.Error(s.ToReplyText());
  } else if (EqualsIgnoreCase(c.arg(2), "off")) {
    c.server.tracking.Disable(c.session);
  } else {
    return c.reply.Error(kSyntaxError);
  }
  c.reply.Ok();
}

// CLIENT CACHING YES|NO: whether the next command's reads are tracked, in OPTIN or OPTOUT mode.
void ClientCachingCommand(CommandContext& c) {
  const uint32_t flags = c.session.tracking_flags.load(std::memory_order_relaxed);
  if (!(flags & tracking_flag::kOn)) {
    return c.reply.Error(
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
        "OPTOUT mode enabled");
  }
  const std::string& opt = c.arg(2);
  if (EqualsIgnoreCase(opt, "yes")) {
    if (!(flags & tracking_flag::kOptIn)) {
      return c.reply.Error(
          "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
    }
  } else if (EqualsIgnoreCase(opt, "no")) {
    if (!(flags & tracking_flag::kOptOut)) {
      return c.reply.Error(
          "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
    }
  } else {
    return c.reply.Error(kSyntaxError);
  }
  c.server.tracking.SetCaching(c.session);
  c.reply.Ok();
}

// CLIENT GETREDIR: the redirect id, 0 without one, -1 when tracking is off.
void ClientGetRedirCommand(CommandContext& c) {
  if (!(c.session.tracking_flags.load(std::memory_order_relaxed) & tracking_flag::kOn)) {
    return c.reply.Integer(-1);
  }
  c.reply.Integer(static_cast<int64_t>(c.session.tracking_redirect.load()));
}

// CLIENT TRACKINGINFO: a map of the flags (a set), the redirect and the BCAST prefixes.
void ClientTrackingInfoCommand(CommandContext& c) {
  const uint32_t flags = c.session.tracking_flags.load(std::memory_order_relaxed);
  const bool on = flags & tracking_flag::kOn;
  std::vector<std::string> names;
  names.emplace_back(on ? "on" : "off");
  if (flags & tracking_flag::kBcast) names.emplace_back("bcast");
  if (flags & tracking_flag::kOptIn) {
    names.emplace_back("optin");
    if (flags & tracking_flag::kCaching) names.emplace_back("caching-yes");
  }
  if (flags & tracking_flag::kOptOut) {
    names.emplace_back("optout");
    if (flags & tracking_flag::kCaching) names.emplace_back("caching-no");
  }
  if (flags & tracking_flag::kNoLoop) names.emplace_back("noloop");
  if (flags & tracking_flag::kBrokenRedirect) names.emplace_back("broken_redirect");
  c.reply.Map(3);
  c.reply.Bulk("flags");
  c.reply.Set(names.size());
  for (const std::string& name : names) c.reply.Bulk(name);
  c.reply.Bulk("redirect");
  c.reply.Integer(on ? static_cast<int64_t>(c.session.tracking_redirect.load()) : -1);
  c.reply.Bulk("prefixes");
  std::vector<std::string> prefixes = c.server.tracking.PrefixesOf(c.session.id);
  c.reply.Array(prefixes.size());
  for (const std::string& prefix : prefixes) c.reply.Bulk(prefix);
}

}  // namespace basalt
