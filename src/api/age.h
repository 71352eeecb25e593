// Times as kubectl prints them.
//
// HumanDuration is kubectl's (k8s.io/apimachinery/pkg/util/duration): exact below
// two minutes, then coarser as the duration grows, two units at most:
//   59s  119s  2m  2m30s (below 10m)  45m  (below 3h)  3h  3h20m (below 8h)  20h (below 48h)
//   2d  3d4h (below 8d)  30d (below 2y)  2y  3y120d (below 8y)  9y
// A time up to a second in the future reads "0s" (clock skew); further is "<invalid>".
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tessera {

// Seconds since the Unix epoch of an RFC 3339 time ("2024-05-01T10:00:00Z",
// fractions and "+02:00" offsets accepted, as api/time_format.h reads them);
// nullopt when malformed.
std::optional<int64_t> ParseTimeSeconds(std::string_view text);

std::string HumanDuration(int64_t seconds);

// The AGE column: HumanDuration(now - timestamp), or "<unknown>" when the field
// is missing or malformed.
std::string AgeSince(const nlohmann::json& timestamp, int64_t now);

}  // namespace tessera
