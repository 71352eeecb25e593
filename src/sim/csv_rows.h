// CsvRows: a CSV file with a header line, read through libcsv (quoting, CRLF),
// row by row with its line number, fields looked up by column name.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera {

class CsvHeader {
 public:
  CsvHeader() = default;
  explicit CsvHeader(std::vector<std::string> names) : names_(std::move(names)) {}
  // The column's position, or nullopt when the header lacks it.
  std::optional<size_t> Find(std::string_view name) const;
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
};

// Calls `row` for every data row (line is 1-based; the header is line 1) until it
// returns a non-OK status, which is returned. `header` is called once first.
// Blank lines are skipped. An empty input calls neither and returns OK.
Status ForEachCsvRow(std::istream& in, const std::function<Status(const CsvHeader&)>& header,
                     const std::function<Status(int64_t line, const std::vector<std::string>& fields)>& row);

}  // namespace tessera
