// FailureLog: collects property failures over many seeds so that a randomized
// test reports each broken property once, with how many seeds break it and the
// first few (seed, cycle, message), instead of thousands of lines.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera::testing {

// A message with every word that holds a digit replaced by '#': failures that
// differ only in names and numbers share a shape ("device # of node # holds #").
inline std::string MessageShape(const std::string& message) {
  std::string out, word;
  auto flush = [&] {
    bool digit = false;
    for (char c : word) digit = digit || (c >= '0' && c <= '9');
    out += digit ? "#" : word;
    word.clear();
  };
  for (char c : message) {
    if (c == ' ') {
      flush();
      out += c;
    } else {
      word += c;
    }
  }
  flush();
  return out;
}

class FailureLog {
 public:
  void Add(const std::string& property, uint64_t seed, int cycle, const std::string& message) {
    Entry& e = entries_[property];
    if (e.seeds.empty() || e.seeds.back() != seed) e.seeds.push_back(seed);
    if (e.examples.size() < kExamples) {
      e.examples.push_back(fmt::format("  seed {} cycle {}: {}", seed, cycle, message));
    }
  }
  bool empty() const { return entries_.empty(); }

  // "victim-policy: 3 seeds (12 40 97)\n  seed 12 cycle 0: ...".
  std::string Summary() const {
    std::string out;
    for (const auto& [property, e] : entries_) {
      out += fmt::format("{}: {} seeds (", property, e.seeds.size());
      for (size_t i = 0; i < e.seeds.size() && i < kSeedsListed; ++i) {
        out += fmt::format("{}{}", i ? " " : "", e.seeds[i]);
      }
      out += e.seeds.size() > kSeedsListed ? " ...)\n" : ")\n";
      for (const std::string& ex : e.examples) out += ex + "\n";
    }
    out += "TESSERA_RANDOM_SEED=<seed> with --gtest_filter=<this test> replays one seed and prints every cycle";
    return out;
  }

 private:
  static constexpr size_t kExamples = 5;
  static constexpr size_t kSeedsListed = 40;
  struct Entry {
    std::vector<uint64_t> seeds;
    std::vector<std::string> examples;
  };
  std::map<std::string, Entry> entries_;
};

}  // namespace tessera::testing
