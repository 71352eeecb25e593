// Assignment: the parameter values of one trial, in the order of the sweep's
// parameters (Katib's Trial spec.parameterAssignments).
//
// Invariants
// - At most one value per parameter name; values keep the order they were
//   added in (the spec's order when the suggester builds them).
// - `text` is what a trial's template receives and what is stored; it parses
//   back exactly to `number` (number_text.h), so a stored assignment read again
//   compares equal to the one suggested.
// - Two assignments are equal when they hold the same names with the same
//   texts in the same order (`number` follows from `text`).
//
// Thread-safety: value types.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::sweep {

struct ParameterValue {
  std::string name;
  std::string text;              // "0.001", "4", "adam"
  std::optional<double> number;  // set for double, int and discrete parameters

  friend bool operator==(const ParameterValue& a, const ParameterValue& b) {
    return a.name == b.name && a.text == b.text;
  }
};

class Assignment {
 public:
  Assignment() = default;

  // Appends a value. REQUIRES: no value named `value.name` yet.
  void Add(ParameterValue value);

  // The value of the parameter `name`, or nullptr.
  const ParameterValue* Find(std::string_view name) const;

  const std::vector<ParameterValue>& values() const { return values_; }
  bool empty() const { return values_.empty(); }
  size_t size() const { return values_.size(); }

  // One string per distinct assignment, for sets of seen assignments.
  std::string Key() const;

  // "lr=0.001, layers=4", for messages and test output.
  std::string ToString() const;

  friend bool operator==(const Assignment&, const Assignment&) = default;

 private:
  std::vector<ParameterValue> values_;
};

// Katib's form: [{"name": "lr", "value": "0.001"}, ...]. The inverse, which
// checks each value against the sweep's parameters, is ParseAssignment in
// sweep/sweep_spec.h.
nlohmann::json AssignmentToJson(const Assignment& assignment);

}  // namespace tessera::sweep
