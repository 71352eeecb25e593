// RFC 3339 timestamps as the API writes them (metadata.creationTimestamp,
// status.admission.admittedAt): "2026-11-29T16:15:31Z".
//
// Parsing accepts what Kubernetes and Go write: a date, 'T' (or 't'), a time
// with optional fractional seconds (any number of digits; kept to the
// millisecond, finer digits truncated), and 'Z' or a numeric offset
// ("+02:00"), which is converted to UTC. Formatting always writes UTC with 'Z',
// whole seconds when the millisecond part is zero and ".mmm" otherwise, so that
// FormatRfc3339 -> ParseRfc3339 gives back the same Timestamp.
//
// Thread-safety: pure functions, and SystemNow reads the wall clock (never the
// scheduler core: it is given `now`).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "common/time.h"

namespace tessera {

// InvalidArgument naming the text and what is wrong with it.
Result<Timestamp> ParseRfc3339(std::string_view text);

// A date ("2017-10-01", midnight UTC) or an RFC 3339 time: what --since and
// --until flags take besides durations.
Result<Timestamp> ParseDateOrRfc3339(std::string_view text);

// REQUIRES: !t.never() and a year between 0 and 9999.
std::string FormatRfc3339(Timestamp t);

// A duration as Go and kubectl write one: a sequence of numbers with units
// ("90s", "30m", "1h30m", "1.5h", "2d"; units ms, s, m, h, d), or a plain number
// of seconds. InvalidArgument naming the text otherwise; negative durations too.
Result<Duration> ParseDuration(std::string_view text);

// The wall clock, to the millisecond.
Timestamp SystemNow();

}  // namespace tessera
