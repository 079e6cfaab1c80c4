#include "executor/connectors/socket/socket_source.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "common/sql_error.h"
#include "common/thread_name.h"

namespace stave::executor {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kIdlePoll{20};
constexpr std::chrono::milliseconds kFirstBackoff{100};
constexpr std::chrono::milliseconds kMaxBackoff{5000};

// A connected TCP socket to host:port, or -1 (why goes to `error`).
int ConnectTo(const std::string& host, uint16_t port, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  std::string service = std::to_string(port);
  if (int code = getaddrinfo(host.c_str(), service.c_str(), &hints, &addresses); code != 0) {
    *error = gai_strerror(code);
    return -1;
  }
  int fd = -1;
  for (addrinfo* address = addresses; address; address = address->ai_next) {
    fd = socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, address->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, address->ai_addr, address->ai_addrlen) == 0) break;
    *error = std::strerror(errno);
    close(fd);
    fd = -1;
  }
  freeaddrinfo(addresses);
  return fd;
}

}  // namespace

SocketOptions SocketOptions::Parse(const std::map<std::string, std::string>& options,
                                   const std::vector<planner::Column>& columns) {
  SocketOptions result;
  for (const auto& [key, value] : options) {
    if (key == "host") {
      result.host = value;
    } else if (key == "port") {
      unsigned port = 0;
      auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), port);
      if (error != std::errc() || end != value.data() + value.size() || port == 0 || port > 65535) {
        throw SqlError(sqlstate::kInvalidParameterValue,
                       fmt::format("socket option 'port': '{}' is not a port number", value));
      }
      result.port = static_cast<uint16_t>(port);
    } else {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("unknown option '{}' for the socket connector", key))
          .WithHint("The socket connector takes 'host' and 'port'.");
    }
  }
  if (result.host.empty() || result.port == 0) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   "a socket stream needs WITH (connector = 'socket', host = '...', port = '...')");
  }
  if (columns.size() != 1 || columns[0].type.id != TypeId::kVarchar) {
    throw SqlError("42P16", "a socket stream has exactly one column, of type varchar: the line")
        .WithHint("CREATE STREAM lines (line VARCHAR) WITH (connector = 'socket', ...)");
  }
  return result;
}

SocketSource::SocketSource(SocketOptions options) : options_(std::move(options)) {}

SocketSource::~SocketSource() {
  stopping_.store(true);
  space_.notify_all();
  if (thread_.joinable()) thread_.join();
}

SourceReader::PollStatus SocketSource::Poll(size_t max_rows, Chunk* chunk,
                                            Clock::time_point* wake_at) {
  if (!thread_.joinable()) {
    thread_ = std::thread([this] {
      NameCurrentThread("stave:socket");
      Run();
    });
  }
  std::vector<std::string> taken;
  {
    std::lock_guard lock(mutex_);
    while (!lines_.empty() && taken.size() < max_rows) {
      taken.push_back(std::move(lines_.front()));
      lines_.pop_front();
    }
  }
  if (taken.empty()) {
    *wake_at = Clock::now() + kIdlePoll;
    return PollStatus::kIdle;
  }
  space_.notify_all();
  *chunk = Chunk::WithTypes({TypeId::kVarchar});
  for (std::string& line : taken) {
    payload_bytes_ += line.size() + 1;
    chunk->AppendRow({Value::String(std::move(line))}, RowOp::kInsert);
  }
  return PollStatus::kData;
}

void SocketSource::Enqueue(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::unique_lock lock(mutex_);
  space_.wait(lock, [&] { return lines_.size() < kMaxQueuedLines || stopping_.load(); });
  lines_.push_back(std::move(line));
}

bool SocketSource::ReadLines(int fd) {
  std::string pending;
  char buffer[64 * 1024];
  while (!stopping_.load()) {
    pollfd ready{fd, POLLIN, 0};
    int polled = poll(&ready, 1, 100);  // Wakes now and then to notice Stop.
    if (polled < 0 && errno != EINTR) return true;
    if (polled <= 0) continue;
    ssize_t received = recv(fd, buffer, sizeof(buffer), 0);
    if (received < 0 && errno == EINTR) continue;
    if (received <= 0) {
      if (!pending.empty()) Enqueue(std::move(pending));  // The last line, unterminated.
      return true;
    }
    size_t start = 0;
    for (size_t i = 0; i < static_cast<size_t>(received); ++i) {
      if (buffer[i] != '\n') continue;
      pending.append(buffer + start, i - start);
      Enqueue(std::move(pending));
      pending.clear();
      start = i + 1;
    }
    pending.append(buffer + start, static_cast<size_t>(received) - start);
    while (pending.size() >= kMaxLineBytes) {
      Enqueue(pending.substr(0, kMaxLineBytes));
      pending.erase(0, kMaxLineBytes);
    }
  }
  return false;
}

void SocketSource::Run() {
  std::chrono::milliseconds backoff{0};
  std::string last_error;
  while (!stopping_.load()) {
    std::string error;
    int fd = ConnectTo(options_.host, options_.port, &error);
    if (fd >= 0) {
      spdlog::info("socket source connected to {}:{}", options_.host, options_.port);
      last_error.clear();
      backoff = std::chrono::milliseconds(0);
      bool go_on = ReadLines(fd);
      close(fd);
      if (!go_on) return;
      spdlog::info("socket source: {}:{} closed the connection", options_.host, options_.port);
    } else if (error != last_error) {
      spdlog::warn("socket source cannot connect to {}:{}: {} (retrying)", options_.host,
                   options_.port, error);
      last_error = error;
    }
    backoff = std::min(kMaxBackoff, std::max(kFirstBackoff, backoff * 2));
    for (auto waited = std::chrono::milliseconds(0); waited < backoff && !stopping_.load();
         waited += std::chrono::milliseconds(50)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

planner::ConnectorSpec SocketConnectorSpec() {
  planner::ConnectorSpec spec;
  spec.name = "socket";
  spec.replayable_source = false;
  spec.source_reason =
      "a socket cannot rewind, so lines read after the last checkpoint are lost on a crash";
  spec.validate_source = [](const std::map<std::string, std::string>& options,
                            const std::vector<planner::Column>& columns,
                            const std::string& format) {
    planner::RefuseFormat("socket", format);
    SocketOptions::Parse(options, columns);
  };
  return spec;
}

}  // namespace stave::executor
