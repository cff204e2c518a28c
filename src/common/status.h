// Status and StatusOr<T>: how errors travel between modules.
//
// A Status is either OK or carries a code and a message. For errors that reach a client, the
// message is the exact Redis error line without the leading '-' (for example
// "WRONGTYPE Operation against a key holding the wrong kind of value"), so the command layer
// can reply with it verbatim. Nothing throws across module boundaries.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace basalt {

class Status {
 public:
  enum Code { kOk = 0, kNotFound, kInvalidArgument, kIOError, kBusy, kRedisError };

  Status() = default;
  static Status OK() { return Status(); }
  static Status NotFound(std::string msg = "not found") {
    return Status(kNotFound, std::move(msg));
  }
  static Status InvalidArgument(std::string msg) {
    return Status(kInvalidArgument, std::move(msg));
  }
  static Status IOError(std::string msg) { return Status(kIOError, std::move(msg)); }
  static Status Busy(std::string msg) { return Status(kBusy, std::move(msg)); }
  // A reply-ready Redis error: `msg` starts with the error code word ("ERR", "WRONGTYPE", ...).
  static Status RedisError(std::string msg) { return Status(kRedisError, std::move(msg)); }

  bool ok() const { return code_ == kOk; }
  bool IsNotFound() const { return code_ == kNotFound; }
  Code code() const { return code_; }
  const std::string& message() const { return msg_; }

  // The text to send to a client: Redis errors as they are, others prefixed with "ERR ".
  std::string ToReplyText() const {
    if (code_ == kRedisError) return msg_;
    return "ERR " + msg_;
  }

 private:
  Status(Code code, std::string msg) : code_(code), msg_(std::move(msg)) {}
  Code code_ = kOk;
  std::string msg_;
};

template <typename T>
class StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design
  // Two overloads rather than one by value: a value is moved into place once, not twice.
  StatusOr(const T& value) : value_(value) {}        // NOLINT: implicit by design
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace basalt
