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
// A whole number as people write it: 10000 -> "10,000" (rounded to an integer). Unit "count" prints so.
std::string with_thousands(double value);
// A measured amount to `significant` digits, written out with thousands separators rather than in
// exponent form: 3634.3 -> "3,630", 3640 -> "3,640", 770 -> "770", 0.957 -> "0.957". Unit "PF-days"
// prints so everywhere (chart, panels, timeline), so one compute figure reads the same on every screen.
std::string format_count(double value, int significant = 3);
// Memory in GiB as every screen writes it, panels and narrations alike: 1.326e10 bytes -> "12.3 GiB",
// 3.436e10 -> "32 GiB", 1.3e12 -> "1,210 GiB" (format_count's three digits).
std::string format_gib(double bytes);
// A duration in seconds as the panels and narrations both write it, four significant digits: 89.03 -> "89.03 s",
// 0.28712 -> "0.2871 s", 217.64 -> "217.6 s", 12345 -> "12,345 s".
std::string format_seconds(double seconds);
// A collective's time, in the unit it is measured in: under a millisecond in microseconds, under a second in
// milliseconds, three digits (3.83e-6 -> "3.83 us", 0.0125 -> "12.5 ms"); a second or more as format_seconds.
std::string format_short_time(double seconds);
// A duration a student reads without converting: seconds under two minutes, then minutes, hours, days
// (18300 -> "5.1 h", not "18.3 ks"); "-" when it is not finite (no failure drawn, no interval).
std::string format_duration(double seconds);
// A fraction as a percentage with one decimal, as panels and narrations write utilisation: 0.2971 -> "29.7%".
std::string format_percent(double fraction);
// Money as panels and narrations both write an amount: 4.68e6 -> "$4.68M", 2.6e4 -> "$26k", 672 -> "$672",
// 1.5 -> "$1.50" (a price).
std::string format_usd(double dollars);
// A count in words, as prose reads it: 1.5e9 -> "1.5 billion", 117e6 -> "117 million", 770 -> "770".
std::string format_in_words(double value);

}  // namespace mc
