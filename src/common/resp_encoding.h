// RESP encoding of a command as a client sends it: a multibulk of bulk strings. Shared by the
// senders of commands to other servers (MIGRATE, a replica's handshake, the command stream to
// Redis replicas).
#pragma once

#include <string>
#include <string_view>

namespace basalt {

// Appends `args` (any range of things a std::string_view can be made from) as one multibulk.
template <typename Range>
void AppendRespArray(std::string* out, const Range& args) {
  out->push_back('*');
  out->append(std::to_string(std::size(args)));
  out->append("\r\n");
  for (std::string_view arg : args) {
    out->push_back('$');
    out->append(std::to_string(arg.size()));
    out->append("\r\n");
    out->append(arg);
    out->append("\r\n");
  }
}

}  // namespace basalt
