// Redis 7.2's config keys that Basalt accepts for compatibility, and the validators of Redis's
// multi-argument keys. Internal to src/config: the table itself is Config::Keys().
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"

namespace basalt {

// Redis keys with no meaning for a disk store (encoding thresholds, RDB/AOF files, defrag,
// cluster, TLS, ...): each is marked no_effect.
const std::vector<ConfigKey>& RedisKeysWithoutEffect();

// Old names Redis still accepts, each with the key it stands for.
const std::vector<std::pair<std::string_view, std::string_view>>& RedisAliases();

// Validators (ConfigCheck) with Redis's rules and error texts.
Status CheckSave(std::string_view input, std::string* canonical);        // "<sec> <changes>..."
Status CheckDbFilename(std::string_view input, std::string* canonical);  // no '/'
Status CheckBind(std::string_view input, std::string* canonical);        // addresses, '-' prefix
Status CheckReplicaOf(std::string_view input, std::string* canonical);   // "host port", "no one"
Status CheckAnnouncedHostname(std::string_view input, std::string* canonical);
Status CheckNotifyKeyspaceEvents(std::string_view input, std::string* canonical);
Status CheckShutdownOnSignal(std::string_view input, std::string* canonical);
Status CheckOomScoreAdjValues(std::string_view input, std::string* canonical);
Status CheckLatencyPercentiles(std::string_view input, std::string* canonical);

}  // namespace basalt
