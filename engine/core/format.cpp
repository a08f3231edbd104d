// format.cpp - quantities as people read them (format.h): SI prefixes, byte counts in binary or decimal
// units by how they were sized, dollars, version codes and flags.
#include "core/format.h"

#include <cmath>
#include <cstdio>

namespace mc {

std::string format_si(double v, int sig) {
  if (!std::isfinite(v)) return v != v ? "NaN" : (v > 0 ? "inf" : "-inf");
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E", "Z"};
  double a = std::fabs(v);
  if (a != 0 && a < 0.01) {  // small rates (failures per GPU-hour): keep significant digits
    char small[32];
    std::snprintf(small, sizeof small, "%.3g ", v);
    return small;
  }
  int k = 0;
  while (a >= 1000.0 && k < 7) {
    a /= 1000.0;
    ++k;
  }
  char buf[64];
  double shown = v < 0 ? -a : a;
  int decimals = a >= 100 ? 0 : a >= 10 ? 1 : 2;
  if (sig > 3) decimals += sig - 3;
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, shown, prefixes[k]);
  std::string s = buf;
  // trim trailing zeros of the fraction ("2.00 T" -> "2 T")
  auto dot = s.find('.');
  if (dot != std::string::npos) {
    auto sp = s.find(' ');
    size_t end = sp;
    while (end > dot + 1 && s[end - 1] == '0') --end;
    if (end == dot + 1) end = dot;
    s = s.substr(0, end) + s.substr(sp);
  }
  return s;
}

std::string with_thousands(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.0f", std::fabs(v));
  const std::string digits = b;
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  if (v < 0 && out != "0") out.insert(out.begin(), '-');
  return out;
}

std::string format_count(double v, int significant) {
  if (!std::isfinite(v)) return v != v ? "NaN" : (v > 0 ? "inf" : "-inf");
  if (v == 0) return "0";
  // Round to `significant` digits first (3634.3 -> 3630), then write it out.
  const int magnitude = int(std::floor(std::log10(std::fabs(v))));
  const double step = std::pow(10.0, magnitude + 1 - significant);
  const double r = std::round(v / step) * step;
  if (std::fabs(r) >= 1000) return with_thousands(r);
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", significant, r);
  return b;
}

std::string format_in_words(double x) {
  const char* names[] = {"", " thousand", " million", " billion", " trillion"};
  int k = 0;
  double v = x;
  while (std::fabs(v) >= 1000 && k < 4) v /= 1000, ++k;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g%s", v, names[k]);
  return buf;
}

std::string format_seconds(double x) {
  char buf[64];
  if (std::fabs(x) >= 10000) return with_thousands(x) + " s";
  std::snprintf(buf, sizeof buf, "%.4g s", x);
  return buf;
}

std::string format_short_time(double s) {
  char b[32];
  if (std::fabs(s) >= 1) return format_seconds(s);
  std::snprintf(b, sizeof b, std::fabs(s) < 1e-3 ? "%.3g us" : "%.3g ms", std::fabs(s) < 1e-3 ? s * 1e6 : s * 1e3);
  return b;
}

std::string format_duration(double s) {
  if (!std::isfinite(s)) return "-";
  char buf[64];
  if (std::fabs(s) < 120) return format_seconds(s);
  if (std::fabs(s) < 2 * 3600)
    std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
  else if (std::fabs(s) < 2 * 86400)
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  else
    std::snprintf(buf, sizeof buf, "%.1f days", s / 86400);
  return buf;
}

std::string format_percent(double f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * f);
  return buf;
}

std::string format_usd(double x) {
  char buf[64];
  if (std::fabs(x) >= 1e9)
    std::snprintf(buf, sizeof buf, "$%.3gB", x / 1e9);
  else if (std::fabs(x) >= 1e6)
    std::snprintf(buf, sizeof buf, "$%.3gM", x / 1e6);
  else if (std::fabs(x) >= 1e3)
    std::snprintf(buf, sizeof buf, "$%.3gk", x / 1e3);
  else
    std::snprintf(buf, sizeof buf, std::fabs(x) >= 100 ? "$%.0f" : "$%.2f", x);
  return buf;
}

std::string format_gib(double bytes) { return format_count(bytes / 1073741824.0) + " GiB"; }

std::string format_quantity(double v, const std::string& unit) {
  char buf[64];
  if (unit == "count") return with_thousands(v);
  if (unit == "PF-days") return format_count(v) + " PF-days";
  if (unit == "bytes") {
    // Memory is sized in powers of two (a "32 GB" V100 holds 2^35 bytes = 32 GiB), disks and host RAM
    // datasheets in powers of ten (1.5 TB = 1.5e12 bytes). A count that is a whole number of MiB prints
    // in binary units with their IEC names, any other in decimal units, so neither is mislabelled by 7%.
    const double mib = 1024.0 * 1024.0;
    const bool binary = v != 0 && std::fabs(v) >= mib && std::fmod(std::fabs(v), mib) == 0;
    if (binary) {
      const double gib = v / (mib * 1024.0);
      if (std::fabs(gib) >= 1024)
        std::snprintf(buf, sizeof buf, "%.4g TiB", gib / 1024.0);
      else if (std::fabs(gib) >= 1)
        std::snprintf(buf, sizeof buf, "%.4g GiB", gib);
      else
        std::snprintf(buf, sizeof buf, "%.4g MiB", v / mib);
    } else {
      const double a = std::fabs(v);
      if (a >= 1e12)
        std::snprintf(buf, sizeof buf, "%.4g TB", v / 1e12);
      else if (a >= 1e9)
        std::snprintf(buf, sizeof buf, "%.4g GB", v / 1e9);
      else if (a >= 1e6)
        std::snprintf(buf, sizeof buf, "%.4g MB", v / 1e6);
      else if (a >= 1e3)
        std::snprintf(buf, sizeof buf, "%.4g kB", v / 1e3);
      else
        std::snprintf(buf, sizeof buf, "%.4g bytes", v);
    }
    return buf;
  }
  if (unit == "version code") {  // major*10000 + minor*100 + patch (NCCL_VERSION_CODE): 20708 -> "2.7.8"
    const long long c = std::llround(v);
    std::snprintf(buf, sizeof buf, "%lld.%lld.%lld", c / 10000, c / 100 % 100, c % 100);
    return buf;
  }
  if (unit == "flag") return v != 0 ? "yes" : "no";
  // A rate per GPU- or node-hour ("1/(GPU h)"): failures are rare, so per million hours, as reliability
  // tables give them: "12.6 per 1M GPU-h", not "1.26e-05 1/(GPU h)", which ran past a table's edge.
  if (unit.size() > 6 && unit.rfind("1/(", 0) == 0 && unit.compare(unit.size() - 3, 3, " h)") == 0) {
    std::snprintf(buf, sizeof buf, "%.3g per 1M %s-h", v * 1e6, unit.substr(3, unit.size() - 6).c_str());
    return buf;
  }
  if (unit == "parameters") {
    std::string s = format_si(v);
    if (!s.empty() && s.back() == ' ') s.pop_back();
    return s + " parameters";
  }
  if (unit == "year") {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  if (unit == "USD") {
    // As the panels and narrations write money: "$4.6M", "$1B".
    if (std::fabs(v) >= 1e9)
      std::snprintf(buf, sizeof buf, "$%.3gB", v / 1e9);
    else if (std::fabs(v) >= 1e6)
      std::snprintf(buf, sizeof buf, "$%.3gM", v / 1e6);
    if (std::fabs(v) >= 1e6) return buf;
    std::string out = "$";  // $129,000 (appended, not "$" + string: GCC 12 warns -Wrestrict on that falsely)
    out += with_thousands(v);
    return out;
  }
  if (unit == "USD/h") {
    std::snprintf(buf, sizeof buf, "$%.2f/h", v);
    return buf;
  }
  if (unit == "x") {  // a multiple: "100x"
    std::snprintf(buf, sizeof buf, "%.3gx", v);
    return buf;
  }
  if (unit == "ratio") {
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }
  if (unit == "GB/s" || unit == "Gb/s" || unit == "W") {
    std::snprintf(buf, sizeof buf, "%.4g %s", v, unit.c_str());
    return buf;
  }
  std::string s = format_si(v);
  if (!s.empty() && s.back() == ' ') s.pop_back();
  return s + (s.back() >= '0' && s.back() <= '9' ? " " : "") + unit;
}

}  // namespace mc
