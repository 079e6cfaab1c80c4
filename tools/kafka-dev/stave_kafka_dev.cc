// stave-kafka-dev: a Kafka cluster for development and tests, made of librdkafka's mock cluster
// (a real Kafka protocol server on loopback, in this process). No Kafka broker is installable on
// our build machines, so the Kafka connectors' tests and manual trials run against this tool.
//
// It prints one line `bootstrap=<host:port,...>` on stdout once the brokers listen, then logs to
// stderr only, and runs until SIGTERM or SIGINT (exit 0). With --control it also reads fault
// injection commands from stdin, one a line, and answers each with one line on stdout: `ok` or
// `error: <why>`. See kHelpFooter for the commands.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
// rdkafka_mock.h must come after rdkafka.h.
#include <librdkafka/rdkafka_mock.h>
#include <CLI/CLI.hpp>

namespace {

constexpr const char* kHelpFooter = R"(
Output:
  stdout gets exactly one line, `bootstrap=<host:port,...>`, once the brokers listen (and, with
  --control, one reply line per command); everything else goes to stderr. The process runs until
  SIGTERM or SIGINT (exit 0). It does not stop when stdin is closed or is /dev/null.

Control commands (--control; one a line on stdin, each answered by `ok` or `error: <why>`;
blank lines and lines starting with # are ignored and get no answer):
  topic <name> <partitions> [replication]   create a topic (replication defaults to 1)
  broker-down <broker-id>                   disconnect a broker and refuse new connections;
                                            its partitions keep it as leader (no fail-over)
  broker-up <broker-id>                     accept connections again
  request-errors <api> <error> [count]      fail the next `count` (default 1) requests of an
                                            API, on whichever broker gets them, with an error
                                            (the client sees it and, if it is retriable,
                                            retries); api and error: see below
  clear-request-errors <api>                forget the errors pushed for an API
  coordinator <transaction|group> <key> <broker-id>
                                            make a broker the coordinator of a transactional.id
                                            or a group.id
  leader <topic> <partition> <broker-id>    move a partition's leadership (-1: no leader);
                                            the mock creates a missing topic here
  rtt <broker-id> <ms>                      delay every response of a broker by ms

Broker ids are 1..brokers. Names of APIs and errors are case-insensitive.
APIs the mock serves (name or key): Produce 0, Fetch 1, ListOffsets 2, Metadata 3,
  OffsetCommit 8, OffsetFetch 9, FindCoordinator 10, JoinGroup 11, Heartbeat 12, LeaveGroup 13,
  SyncGroup 14, ApiVersions 18, InitProducerId 22, AddPartitionsToTxn 24, AddOffsetsToTxn 25,
  EndTxn 26, TxnOffsetCommit 28.
Errors: librdkafka's names (NOT_LEADER_FOR_PARTITION, COORDINATOR_NOT_AVAILABLE,
  REQUEST_TIMED_OUT, ...; _TRANSPORT makes the broker drop the connection) or code numbers.

Example:
  stave-kafka-dev --brokers 3 --topic orders:3 --control
  < bootstrap=127.0.0.1:40343,127.0.0.1:40223,127.0.0.1:36537
  > request-errors Produce NOT_LEADER_FOR_PARTITION 2
  < ok)";

/// A Kafka protocol API: its name as in the Kafka protocol guide, its key, and whether the mock
/// cluster serves it.
struct KafkaApi {
  std::string_view name;
  int16_t key;
  bool served_by_mock;
};

// librdkafka does not export its table of API names, so here is Kafka's (keys 0..51, Kafka 3.x).
// served_by_mock: what librdkafka 2.0.2's mock brokers list in their ApiVersions response
// (checked with `kcat -L -X debug=feature`). Errors pushed for another API would never fire, so
// `request-errors` refuses those names; a key number is taken as is, for newer mocks.
constexpr KafkaApi kKafkaApis[] = {
    {"Produce", 0, true},
    {"Fetch", 1, true},
    {"ListOffsets", 2, true},
    {"Metadata", 3, true},
    {"LeaderAndIsr", 4, false},
    {"StopReplica", 5, false},
    {"UpdateMetadata", 6, false},
    {"ControlledShutdown", 7, false},
    {"OffsetCommit", 8, true},
    {"OffsetFetch", 9, true},
    {"FindCoordinator", 10, true},
    {"JoinGroup", 11, true},
    {"Heartbeat", 12, true},
    {"LeaveGroup", 13, true},
    {"SyncGroup", 14, true},
    {"DescribeGroups", 15, false},
    {"ListGroups", 16, false},
    {"SaslHandshake", 17, false},
    {"ApiVersions", 18, true},
    {"CreateTopics", 19, false},
    {"DeleteTopics", 20, false},
    {"DeleteRecords", 21, false},
    {"InitProducerId", 22, true},
    {"OffsetForLeaderEpoch", 23, false},
    {"AddPartitionsToTxn", 24, true},
    {"AddOffsetsToTxn", 25, true},
    {"EndTxn", 26, true},
    {"WriteTxnMarkers", 27, false},
    {"TxnOffsetCommit", 28, true},
    {"DescribeAcls", 29, false},
    {"CreateAcls", 30, false},
    {"DeleteAcls", 31, false},
    {"DescribeConfigs", 32, false},
    {"AlterConfigs", 33, false},
    {"AlterReplicaLogDirs", 34, false},
    {"DescribeLogDirs", 35, false},
    {"SaslAuthenticate", 36, false},
    {"CreatePartitions", 37, false},
    {"CreateDelegationToken", 38, false},
    {"RenewDelegationToken", 39, false},
    {"ExpireDelegationToken", 40, false},
    {"DescribeDelegationToken", 41, false},
    {"DeleteGroups", 42, false},
    {"ElectLeaders", 43, false},
    {"IncrementalAlterConfigs", 44, false},
    {"AlterPartitionReassignments", 45, false},
    {"ListPartitionReassignments", 46, false},
    {"OffsetDelete", 47, false},
    {"DescribeClientQuotas", 48, false},
    {"AlterClientQuotas", 49, false},
    {"DescribeUserScramCredentials", 50, false},
    {"AlterUserScramCredentials", 51, false},
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

/// The whole of `text` as an integer, or nothing if anything else is in it.
template <typename Integer>
std::optional<Integer> ParseInteger(std::string_view text) {
  Integer value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

/// An API key by name or number; an error message if it is neither, or names an API the mock
/// does not serve.
std::string ParseApiKey(std::string_view text, int16_t* key) {
  if (std::optional<int16_t> number = ParseInteger<int16_t>(text)) {
    if (*number < 0) return fmt::format("bad API key {}", *number);
    *key = *number;
    return "";
  }
  for (const KafkaApi& api : kKafkaApis) {
    if (!EqualsIgnoreCase(api.name, text)) continue;
    if (!api.served_by_mock) {
      return fmt::format(
          "the mock cluster does not serve {} (key {}), so its errors would never "
          "fire; give the key number to push them anyway",
          api.name, api.key);
    }
    *key = api.key;
    return "";
  }
  return fmt::format("unknown API '{}' (a name like Produce, or a key number)", text);
}

std::string_view ApiName(int16_t key) {
  for (const KafkaApi& api : kKafkaApis) {
    if (api.key == key) return api.name;
  }
  return "?";
}

/// An error code by librdkafka's name for it (rd_kafka_err2name: NOT_LEADER_FOR_PARTITION,
/// _TRANSPORT, ...), or by number. Kafka renamed some errors; their new names are accepted too.
std::optional<rd_kafka_resp_err_t> ParseErrorCode(std::string_view text) {
  if (std::optional<int> code = ParseInteger<int>(text)) {
    return static_cast<rd_kafka_resp_err_t>(*code);
  }
  if (EqualsIgnoreCase(text, "NOT_LEADER_OR_FOLLOWER")) {
    return RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION;
  }
  const rd_kafka_err_desc* descriptions = nullptr;
  size_t count = 0;
  rd_kafka_get_err_descs(&descriptions, &count);
  for (size_t i = 0; i < count; ++i) {
    if (descriptions[i].name != nullptr && EqualsIgnoreCase(descriptions[i].name, text)) {
      return descriptions[i].code;
    }
  }
  return std::nullopt;
}

/// Kafka's rule for topic names; the mock itself accepts anything, which later confuses clients.
bool ValidTopicName(std::string_view name) {
  if (name.empty() || name.size() > 249 || name == "." || name == "..") return false;
  for (char c : name) {
    bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '.' || c == '_' || c == '-';
    if (!allowed) return false;
  }
  return true;
}

/// A topic to create: from `--topic name[:partitions[:replication]]` or the `topic` command.
struct TopicSpec {
  std::string name;
  int partitions = 1;
  int replication = 1;
};

/// Owns the mock cluster and the librdkafka handle it needs, and runs the control commands.
class DevCluster {
 public:
  DevCluster() = default;
  DevCluster(const DevCluster&) = delete;
  DevCluster& operator=(const DevCluster&) = delete;

  ~DevCluster() {
    // The cluster belongs to the handle's bookkeeping: destroy it first.
    if (cluster_ != nullptr) rd_kafka_mock_cluster_destroy(cluster_);
    if (handle_ != nullptr) rd_kafka_destroy(handle_);
  }

  /// Starts `brokers` brokers on loopback. Returns an error message, empty on success.
  std::string Start(int brokers, const std::string& debug) {
    brokers_ = brokers;
    char message[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set_log_cb(conf, &DevCluster::Log);
    if (!debug.empty() && rd_kafka_conf_set(conf, "debug", debug.c_str(), message,
                                            sizeof message) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return fmt::format("--debug: {}", message);
    }
    handle_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, message, sizeof message);
    if (handle_ == nullptr) return fmt::format("rd_kafka_new: {}", message);  // Owned conf.
    cluster_ = rd_kafka_mock_cluster_new(handle_, brokers);
    if (cluster_ == nullptr) return "rd_kafka_mock_cluster_new failed (see the log above)";
    return "";
  }

  std::string Bootstraps() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }

  std::string CreateTopic(const TopicSpec& topic) {
    if (!ValidTopicName(topic.name)) {
      return fmt::format("bad topic name '{}' (use 1..249 of a-z A-Z 0-9 . _ -)", topic.name);
    }
    // The mock itself accepts 0 partitions, or more replicas than brokers.
    if (topic.partitions < 1) return "partitions must be at least 1";
    if (topic.replication < 1 || topic.replication > brokers_) {
      return fmt::format("replication must be 1..{} (the number of brokers)", brokers_);
    }
    return Check(rd_kafka_mock_topic_create(cluster_, topic.name.c_str(), topic.partitions,
                                            topic.replication));
  }

  /// Runs one control command line; returns an error message, empty on success.
  std::string Run(const std::vector<std::string>& words) {
    const std::string& command = words[0];
    size_t arguments = words.size() - 1;
    auto usage = [&](std::string_view expected) {
      return fmt::format("usage: {} {}", command, expected);
    };
    if (command == "topic") {
      if (arguments < 2 || arguments > 3) return usage("<name> <partitions> [replication]");
      TopicSpec topic{words[1], 0, 1};
      std::optional<int> partitions = ParseInteger<int>(words[2]);
      if (!partitions) return fmt::format("partitions '{}' is not a number", words[2]);
      topic.partitions = *partitions;
      if (arguments == 3) {
        std::optional<int> replication = ParseInteger<int>(words[3]);
        if (!replication) return fmt::format("replication '{}' is not a number", words[3]);
        topic.replication = *replication;
      }
      return CreateTopic(topic);
    }
    if (command == "broker-down" || command == "broker-up") {
      if (arguments != 1) return usage("<broker-id>");
      std::optional<int32_t> broker;
      if (std::string error = ParseBroker(words[1], &broker); !error.empty()) return error;
      return Check(command == "broker-down" ? rd_kafka_mock_broker_set_down(cluster_, *broker)
                                            : rd_kafka_mock_broker_set_up(cluster_, *broker));
    }
    if (command == "request-errors") {
      if (arguments < 2 || arguments > 3) return usage("<api> <error> [count]");
      int16_t api = 0;
      if (std::string error = ParseApiKey(words[1], &api); !error.empty()) return error;
      std::optional<rd_kafka_resp_err_t> error = ParseErrorCode(words[2]);
      if (!error) {
        return fmt::format("unknown error '{}' (a name like NOT_LEADER_FOR_PARTITION, or a code)",
                           words[2]);
      }
      std::optional<int> count = arguments == 3 ? ParseInteger<int>(words[3]) : 1;
      if (!count || *count < 1) return "count must be a number >= 1";
      // The array form, not the va-arg one: the count is only known at run time.
      std::vector<rd_kafka_resp_err_t> errors(static_cast<size_t>(*count), *error);
      rd_kafka_mock_push_request_errors_array(cluster_, api, errors.size(), errors.data());
      fprintf(stderr, "stave-kafka-dev: the next %d %s (key %d) requests fail with %s\n", *count,
              std::string(ApiName(api)).c_str(), api, rd_kafka_err2name(*error));
      return "";
    }
    if (command == "clear-request-errors") {
      if (arguments != 1) return usage("<api>");
      int16_t api = 0;
      if (std::string error = ParseApiKey(words[1], &api); !error.empty()) return error;
      rd_kafka_mock_clear_request_errors(cluster_, api);
      return "";
    }
    if (command == "coordinator") {
      if (arguments != 3) return usage("<transaction|group> <key> <broker-id>");
      if (words[1] != "transaction" && words[1] != "group") {
        return "the key type must be 'transaction' or 'group'";
      }
      std::optional<int32_t> broker;
      if (std::string error = ParseBroker(words[3], &broker); !error.empty()) return error;
      return Check(
          rd_kafka_mock_coordinator_set(cluster_, words[1].c_str(), words[2].c_str(), *broker));
    }
    if (command == "leader") {
      if (arguments != 3) return usage("<topic> <partition> <broker-id>");
      std::optional<int32_t> partition = ParseInteger<int32_t>(words[2]);
      if (!partition || *partition < 0) return fmt::format("bad partition '{}'", words[2]);
      std::optional<int32_t> broker;
      if (words[3] == "-1") {
        broker = -1;  // Leader-less.
      } else if (std::string error = ParseBroker(words[3], &broker); !error.empty()) {
        return error;
      }
      return Check(
          rd_kafka_mock_partition_set_leader(cluster_, words[1].c_str(), *partition, *broker));
    }
    if (command == "rtt") {
      if (arguments != 2) return usage("<broker-id> <ms>");
      std::optional<int32_t> broker;
      if (std::string error = ParseBroker(words[1], &broker); !error.empty()) return error;
      std::optional<int> rtt_ms = ParseInteger<int>(words[2]);
      if (!rtt_ms || *rtt_ms < 0)
        return fmt::format("bad delay '{}' (milliseconds >= 0)", words[2]);
      return Check(rd_kafka_mock_broker_set_rtt(cluster_, *broker, *rtt_ms));
    }
    return fmt::format("unknown command '{}' (see --help)", command);
  }

 private:
  static std::string Check(rd_kafka_resp_err_t error) {
    if (error == RD_KAFKA_RESP_ERR_NO_ERROR) return "";
    return fmt::format("{}: {}", rd_kafka_err2name(error), rd_kafka_err2str(error));
  }

  /// Broker ids are checked here because the mock takes some unknown ones silently (as a
  /// coordinator, for instance).
  std::string ParseBroker(const std::string& text, std::optional<int32_t>* broker) const {
    *broker = ParseInteger<int32_t>(text);
    if (!*broker || **broker < 1 || **broker > brokers_) {
      return fmt::format("bad broker id '{}' (brokers are 1..{})", text, brokers_);
    }
    return "";
  }

  /// librdkafka's log lines, to stderr, without the notice that the hosting handle has no
  /// `bootstrap.servers`: it only hosts the mock (as in librdkafka's own tests) and never
  /// connects anywhere, so the notice would only mislead.
  static void Log(const rd_kafka_t*, int level, const char* facility, const char* line) {
    if (strcmp(facility, "CONFWARN") == 0 && strstr(line, "bootstrap.servers") != nullptr) return;
    fprintf(stderr, "stave-kafka-dev: rdkafka %d %s: %s\n", level, facility, line);
  }

  rd_kafka_t* handle_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  int brokers_ = 0;
};

std::optional<TopicSpec> ParseTopicSpec(const std::string& text) {
  TopicSpec topic;
  size_t first = text.find(':');
  topic.name = text.substr(0, first);
  if (first == std::string::npos) return topic;
  size_t second = text.find(':', first + 1);
  std::optional<int> partitions = ParseInteger<int>(std::string_view(text).substr(
      first + 1, second == std::string::npos ? std::string::npos : second - first - 1));
  if (!partitions) return std::nullopt;
  topic.partitions = *partitions;
  if (second == std::string::npos) return topic;
  std::optional<int> replication = ParseInteger<int>(std::string_view(text).substr(second + 1));
  if (!replication) return std::nullopt;
  topic.replication = *replication;
  return topic;
}

/// Writes one line on stdout and flushes it: the reader waits for whole lines.
void PrintLine(const std::string& line) {
  fputs(line.c_str(), stdout);
  fputc('\n', stdout);
  fflush(stdout);
}

std::vector<std::string> SplitWords(std::string_view line) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) words.emplace_back(line.substr(start, i - start));
  }
  return words;
}

void RunControlLine(DevCluster& cluster, std::string_view line) {
  std::vector<std::string> words = SplitWords(line);
  if (words.empty() || words[0][0] == '#') return;
  std::string error = cluster.Run(words);
  fprintf(stderr, "stave-kafka-dev: %.*s -> %s\n", static_cast<int>(line.size()), line.data(),
          error.empty() ? "ok" : error.c_str());
  PrintLine(error.empty() ? "ok" : "error: " + error);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "stave-kafka-dev — a Kafka cluster for development and tests (librdkafka's mock cluster "
      "on loopback)"};
  int brokers = 3;
  std::vector<std::string> topic_texts;
  bool control = false;
  std::string debug;
  app.add_option("--brokers", brokers, "Number of brokers (ids 1..N)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--topic", topic_texts,
                 "Create a topic: name[:partitions[:replication]] (default 1 partition, "
                 "replication 1); repeatable")
      ->allow_extra_args(false);
  app.add_flag("--control", control, "Read fault injection commands from stdin (see below)");
  app.add_option("--debug", debug,
                 "librdkafka debug contexts for the log, e.g. mock,protocol (mock logs every "
                 "request the brokers serve)");
  app.footer(kHelpFooter);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help exits 0; every other parse error exits 2, as command-line tools conventionally do.
    return app.exit(e) == 0 ? 0 : 2;
  }

  std::vector<TopicSpec> topics;
  for (const std::string& text : topic_texts) {
    std::optional<TopicSpec> topic = ParseTopicSpec(text);
    if (!topic) {
      fprintf(stderr,
              "stave-kafka-dev: --topic '%s': use name[:partitions[:replication]], e.g. "
              "orders:3 or orders:3:2\n",
              text.c_str());
      return 2;
    }
    topics.push_back(*topic);
  }

  // A shell may start us with stdin (or another standard stream) closed. Then the next file
  // opened (the signalfd, a broker's socket) would take its number and be read as stdin.
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (fcntl(fd, F_GETFD) < 0) open("/dev/null", O_RDWR);  // Takes the lowest free number: fd.
  }

  // SIGTERM and SIGINT are blocked before librdkafka starts its threads, which inherit the mask,
  // so that they reach only the signalfd polled below and shutdown runs on this thread. SIGPIPE
  // is ignored: a reader that closed our stdout must not take the cluster down.
  // A shell starts background jobs with SIGINT ignored, which would discard it before it
  // reaches the signalfd; it is meant to stop us, so its default action is restored.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  int signal_fd = signalfd(-1, &stop_signals, SFD_CLOEXEC);
  if (signal_fd < 0) {
    fprintf(stderr, "stave-kafka-dev: signalfd: %s\n", strerror(errno));
    return 1;
  }

  DevCluster cluster;
  if (std::string error = cluster.Start(brokers, debug); !error.empty()) {
    fprintf(stderr, "stave-kafka-dev: %s\n", error.c_str());
    return 2;  // Only a bad --debug value gets here in practice.
  }
  for (const TopicSpec& topic : topics) {
    if (std::string error = cluster.CreateTopic(topic); !error.empty()) {
      fprintf(stderr, "stave-kafka-dev: --topic '%s': %s\n", topic.name.c_str(), error.c_str());
      return 2;
    }
  }
  std::string bootstraps = cluster.Bootstraps();
  fprintf(stderr, "stave-kafka-dev: %d brokers at %s, topics created: %zu%s\n", brokers,
          bootstraps.c_str(), topics.size(), control ? ", reading commands from stdin" : "");
  PrintLine("bootstrap=" + bootstraps);

  // One thread polls the signals and, with --control, stdin; at stdin's end only the signals.
  bool reading_stdin = control;
  std::string pending;  // Bytes of stdin after the last newline.
  while (true) {
    pollfd fds[2] = {{signal_fd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    if (poll(fds, reading_stdin ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      fprintf(stderr, "stave-kafka-dev: poll: %s\n", strerror(errno));
      return 1;
    }
    if (fds[0].revents != 0) {
      signalfd_siginfo info{};
      if (read(signal_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        fprintf(stderr, "stave-kafka-dev: %s, stopping\n",
                strsignal(static_cast<int>(info.ssi_signo)));
        break;
      }
    }
    if (reading_stdin && fds[1].revents != 0) {
      char buffer[4096];
      ssize_t got = read(STDIN_FILENO, buffer, sizeof buffer);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        // End of stdin (or an unreadable one): the cluster stays up, as the brief of a
        // background service expects; only signals stop it.
        if (!pending.empty()) RunControlLine(cluster, pending);
        pending.clear();
        reading_stdin = false;
        fprintf(stderr, "stave-kafka-dev: end of stdin; still running until SIGTERM/SIGINT\n");
        continue;
      }
      pending.append(buffer, static_cast<size_t>(got));
      size_t newline;
      while ((newline = pending.find('\n')) != std::string::npos) {
        RunControlLine(cluster, std::string_view(pending).substr(0, newline));
        pending.erase(0, newline + 1);
      }
    }
  }
  close(signal_fd);
  return 0;  // ~DevCluster stops the brokers.
}
