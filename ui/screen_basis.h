// screen_basis.h - what each screen assumes about a run (its machine, layout, utilisation and price), one line
// each, read from the state: GPT-3 "on the machine" takes 17 days on one screen and 98 on another because the
// screens assume different machines and utilisations, and each headline says so instead of leaving the class
// to guess. Nothing here is typed: every figure is the one the screen's own engine call used.
#pragma once

#include "catalog/catalog.h"
#include "ui/explorer.h"

#include <string>
#include <vector>

namespace mc::ui {

struct ScreenBasis {
  std::string panel;  // panel id ("perf")
  std::string title;  // its title ("Train a transformer")
  std::string gpu;    // the accelerator it assumes (catalog gpus id): screens compare only like with like
  std::string line;   // "1,024 GPUs in the layout tp 8 x pp 16 x dp 8, MFU 17.5% estimated from it"
};

// The screens that time or price a run and what each assumes now, from each panel's config (not from results
// a visit left behind, so a screen reads the same however it was reached); a refused config is left out.
std::vector<ScreenBasis> screen_bases(const ExplorerState& s);

// Under a headline of panel `id`: "This screen assumes <its basis>." (from its own config only), tracked as
// "<id>.basis".
void draw_screen_basis(ExplorerState& s, const std::string& id);
// At the end of panel `id`: what the other screens of the same accelerator assume ("Capital: 10,000 GPUs at
// an assumed MFU of 0.30, ..."), tracked as "<id>.other_screens". Last on the panel: the other screens'
// state is whatever the class left there, and a line whose length follows it must not move what the panel
// and a scenario's highlight show above it.
void draw_other_screens(ExplorerState& s, const std::string& id);

// What a price per GPU-hour is: the prices row of the catalog with that usd_per_gpu_hour ("V100 in the cloud,
// 3-year reserved (2020)") and its source's publisher, or "" when no row has it (a price set by hand). Of
// rows with the same price, the one of accelerator `gpu` (a gpus.json id or "tpu-v3-core") when given.
std::string price_basis(const Catalog& cat, double usd_per_gpu_hour, const std::string& gpu = "");

}  // namespace mc::ui
