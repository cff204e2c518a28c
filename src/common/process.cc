#include "common/process.h"

#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace basalt {

Status WritePidFile(const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Status::IOError("can't write pid file '" + path + "': " + strerror(errno));
  out << getpid() << "\n";
  out.flush();
  if (!out) return Status::IOError("can't write pid file '" + path + "'");
  return Status::OK();
}

void RemovePidFile(const std::string& path) {
  std::ifstream in(path);
  long pid = 0;
  if (in >> pid && pid == static_cast<long>(getpid())) unlink(path.c_str());
}

Status Daemonize() {
  pid_t pid = fork();
  if (pid < 0) return Status::IOError(std::string("fork failed: ") + strerror(errno));
  if (pid > 0) _exit(0);
  if (setsid() < 0) return Status::IOError(std::string("setsid failed: ") + strerror(errno));
  int fd = open("/dev/null", O_RDWR);
  if (fd < 0) return Status::IOError(std::string("can't open /dev/null: ") + strerror(errno));
  dup2(fd, STDIN_FILENO);
  dup2(fd, STDOUT_FILENO);
  dup2(fd, STDERR_FILENO);
  if (fd > STDERR_FILENO) close(fd);
  return Status::OK();
}

bool UnderSystemd() {
  const char* path = getenv("NOTIFY_SOCKET");
  return path != nullptr && path[0] != '\0';
}

Status NotifySystemd(std::string_view state) {
  const char* path = getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') return Status::OK();
  size_t len = strlen(path);
  sockaddr_un addr{};
  if (len >= sizeof(addr.sun_path) || (path[0] != '/' && path[0] != '@'))
    return Status::InvalidArgument(std::string("bad NOTIFY_SOCKET '") + path + "'");
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, path, len);
  if (path[0] == '@') addr.sun_path[0] = '\0';  // abstract namespace
  socklen_t addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IOError(std::string("sd_notify socket: ") + strerror(errno));
  ssize_t sent = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                        reinterpret_cast<const sockaddr*>(&addr), addr_len);
  int err = errno;
  close(fd);
  if (sent < 0) return Status::IOError(std::string("sd_notify to ") + path + ": " + strerror(err));
  return Status::OK();
}

void NotifyUpstartReady() {
  if (getenv("UPSTART_JOB") == nullptr) return;
  raise(SIGSTOP);
  unsetenv("UPSTART_JOB");
}

}  // namespace basalt
