// Quantities printed with the unit their value has: byte counts that are whole MiB (HBM, host memory sized
// in powers of two) in IEC binary units, datasheet sizes in powers of ten in SI units; neither is
// mislabelled (a 2^35-byte V100 is 32 GiB, i.e. 34.4 GB; a "1.5 TB" DGX-2 is 1.5e12 bytes, 1.36 TiB).
#include "core/format.h"

#include <gtest/gtest.h>

#include <limits>

TEST(FormatQuantity, BytesUseBinaryUnitsOnlyForPowerOfTwoSizes) {
  // Llama 3's GPU failures (Dubey et al. 2024 Table 5: GPU, HBM, SRAM, system processor, thermal and silent
  // data corruption, 268 of 419 interruptions in 54 days on 16,384 GPUs) per million GPU-hours, short enough
  // for a catalog column.
  EXPECT_EQ(mc::format_quantity(1.26215e-05, "1/(GPU h)"), "12.6 per 1M GPU-h");
  EXPECT_EQ(mc::format_quantity(0.00056004, "1/(node h)"), "560 per 1M node-h");
  EXPECT_EQ(mc::format_quantity(34359738368.0, "bytes"), "32 GiB");    // V100 32 GB HBM2 = 2^35 bytes
  EXPECT_EQ(mc::format_quantity(85899345920.0, "bytes"), "80 GiB");    // A100 80 GB
  EXPECT_EQ(mc::format_quantity(721554505728.0, "bytes"), "672 GiB");  // Azure NDv2 host memory
  EXPECT_EQ(mc::format_quantity(1.5e12, "bytes"), "1.5 TB");           // DGX-2 host memory, decimal
  EXPECT_EQ(mc::format_quantity(30e12, "bytes"), "30 TB");             // DGX-2 NVMe, decimal
  EXPECT_EQ(mc::format_quantity(2.0 * 1024 * 1024, "bytes"), "2 MiB");
  EXPECT_EQ(mc::format_quantity(2.5e6, "bytes"), "2.5 MB");
  EXPECT_EQ(mc::format_quantity(512, "bytes"), "512 bytes");
}

TEST(FormatQuantity, VersionCodesFlagsAndParameterCounts) {
  EXPECT_EQ(mc::format_quantity(20708, "version code"), "2.7.8");  // NCCL_VERSION_CODE of NCCL 2.7.8
  EXPECT_EQ(mc::format_quantity(21805, "version code"), "2.18.5");
  EXPECT_EQ(mc::format_quantity(1, "flag"), "yes");
  EXPECT_EQ(mc::format_quantity(0, "flag"), "no");
  EXPECT_EQ(mc::format_quantity(5e7, "parameters"), "50 M parameters");
}

// Counts, money and compute as people write them, one way on every screen (review A6: "3.63e+03 PF-days"
// on the chart beside "3,640 PF-days" on the timeline).
TEST(FormatQuantity, CountsMoneyAndPfDaysWrittenOut) {
  EXPECT_EQ(mc::format_quantity(10000, "count"), "10,000");
  EXPECT_EQ(mc::format_quantity(285000, "count"), "285,000");
  EXPECT_EQ(mc::format_quantity(8, "count"), "8");
  EXPECT_EQ(mc::format_quantity(129000, "USD"), "$129,000");
  EXPECT_EQ(mc::format_quantity(4.6e6, "USD"), "$4.6M");
  EXPECT_EQ(mc::format_quantity(1e9, "USD"), "$1B");
  EXPECT_EQ(mc::format_quantity(100, "x"), "100x");
  EXPECT_EQ(mc::format_quantity(3640, "PF-days"), "3,640 PF-days");
  EXPECT_EQ(mc::format_quantity(3.14e23 / 8.64e19, "PF-days"), "3,630 PF-days");  // 3,634 to 3 digits
  EXPECT_EQ(mc::format_quantity(770, "PF-days"), "770 PF-days");
  EXPECT_EQ(mc::format_quantity(1.0402e6, "PF-days"), "1,040,000 PF-days");
  EXPECT_EQ(mc::format_count(0.957), "0.957");
  EXPECT_EQ(mc::format_count(-2500), "-2,500");
  EXPECT_EQ(mc::with_thousands(-0.2), "0");
  // Memory as panels and narrations both write it (one number on one screen).
  EXPECT_EQ(mc::format_gib(12.34 * 1073741824.0), "12.3 GiB");
  EXPECT_EQ(mc::format_gib(34359738368.0), "32 GiB");
  EXPECT_EQ(mc::format_gib(1234.5 * 1073741824.0), "1,230 GiB");
}

// Durations and utilisation as the panels and narrations both write them.
TEST(FormatPanelsAndNarrations, DurationsInUnitsAStudentReads) {
  EXPECT_EQ(mc::format_duration(18300), "5.1 h");  // the run panel's MTBF once read "18.3 ks"
  EXPECT_EQ(mc::format_duration(89.0309), "89.03 s");
  EXPECT_EQ(mc::format_duration(600), "10 min");
  EXPECT_EQ(mc::format_duration(3 * 86400), "3.0 days");
  EXPECT_EQ(mc::format_duration(std::numeric_limits<double>::infinity()), "-");
}

TEST(FormatPanelsAndNarrations, SecondsAndPercent) {
  EXPECT_EQ(mc::format_seconds(89.0309), "89.03 s");
  EXPECT_EQ(mc::format_seconds(0.28712), "0.2871 s");
  EXPECT_EQ(mc::format_seconds(217.64), "217.6 s");
  EXPECT_EQ(mc::format_short_time(3.83e-6), "3.83 us");
  EXPECT_EQ(mc::format_short_time(0.0125), "12.5 ms");
  EXPECT_EQ(mc::format_short_time(0.9994), "999 ms");
  EXPECT_EQ(mc::format_short_time(2.5), "2.5 s");
  EXPECT_EQ(mc::format_seconds(12345.4), "12,345 s");
  EXPECT_EQ(mc::format_percent(0.29712), "29.7%");
  EXPECT_EQ(mc::format_percent(1.0), "100.0%");
}
