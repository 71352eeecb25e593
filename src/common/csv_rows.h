// CsvRows: a CSV file with a header line, read through libcsv (quoting, CRLF),
// row by row with its line number: the one place Tessera drives libcsv (the
// simulator's traces, the token-auth file).
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <span>
#include <string_view>

#include "common/status.h"

namespace tessera {

using CsvFields = std::span<const std::string_view>;

// `s` without leading and trailing blanks (spaces, tabs, CR).
std::string_view TrimCsvField(std::string_view s);

// The column's position in `header`, or nullopt when it lacks it.
std::optional<size_t> FindCsvColumn(CsvFields header, std::string_view name);

// Calls `header` for the first row, then `row` for every other, until one returns
// a non-OK status, which is returned. Fields are trimmed of blanks and valid only
// during the call. A row's line (1-based) is the line its first field ends on.
// Blank lines are skipped; an empty input calls neither and returns OK. A CSV
// syntax error is InvalidArgument("line N: CSV parser: ...").
Status ForEachCsvRow(std::string_view text, const std::function<Status(CsvFields header)>& header,
                     const std::function<Status(int64_t line, CsvFields fields)>& row);
Status ForEachCsvRow(std::istream& in, const std::function<Status(CsvFields header)>& header,
                     const std::function<Status(int64_t line, CsvFields fields)>& row);

}  // namespace tessera
