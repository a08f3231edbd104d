// format.h - human formatting of quantities by unit (one place, used by the CLI and the UI).
#pragma once

#include <string>

namespace mc {

// Formats `value` given in `unit` (as declared by a catalog field: "FLOP/s", "bytes", "GB/s", "Gb/s",
// "W", "USD", "USD/h", "count", "year", "ratio", ...) with an SI prefix where that reads better:
// 1.25e14 FLOP/s -> "125 TFLOP/s", 3.43597e10 bytes -> "32 GiB" (a whole number of MiB prints in IEC binary units),
// 1.5e12 bytes -> "1.5 TB" (any other byte count in decimal units).
std::string format_quantity(double value, const std::string& unit);
std::string format_si(double value, int significant = 3);  // 1.25e14 -> "125 T"

}  // namespace mc
