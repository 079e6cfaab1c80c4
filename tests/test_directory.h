#pragma once

#include <filesystem>
#include <random>
#include <string>

namespace stave::testing {

/// A fresh directory under the system's temporary directory, removed with the object.
class TestDirectory {
 public:
  TestDirectory() {
    path_ = std::filesystem::temp_directory_path() /
            ("stave-test-" + std::to_string(std::random_device()()));
    std::filesystem::create_directories(path_);
  }
  ~TestDirectory() { std::filesystem::remove_all(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace stave::testing
