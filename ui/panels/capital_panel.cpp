// capital_panel.cpp - "Capital": money -> GPU-hours -> FLOPs -> model and loss (Kaplan or Chinchilla), rent
// vs build with every price's source, GPT-3 priced both ways beside the published estimates, the OpenAI LP
// capped-profit waterfall with sliders, and the 2019 Microsoft $1B as installments of cash and credit.
// All numbers come from engine/capital; the configs live in ExplorerState::capital as scenario JSON.
#include "capital/compute_cost.h"
#include "capital/scaling_laws.h"
#include "capital/waterfall.h"
#include "catalog/accelerator.h"
#include "core/format.h"
#include "ui/access.h"
#include "ui/explorer.h"
#include "ui/screen_basis.h"
#include "ui/widgets.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace mc::ui {
namespace {

// Money as the narrations beside this panel write it (core/format.h).
std::string usd(double x) { return format_usd(x); }

// A catalog price with its confidence mark and source tooltip, labelled with its row's name (the
// catalog's, so the label cannot drift from the data), or nothing if absent.
// `name_field`: the row shows several of its values (the datacenter's PUE and electricity): say which.
void price_line(const Catalog& cat, const char* record, const char* key, bool name_field = false) {
  const Table* t = cat.table("prices");
  const Record* r = t ? t->find(record) : nullptr;
  const Sourced* v = r ? r->find(key) : nullptr;
  if (!v) return;
  const std::string label = name_field ? r->name + ": " + t->field(key)->label : r->name;
  ImGui::TextUnformatted(label.c_str());
  // The value's column, or just past a name too long for it (a projector's 1280x720).
  ImGui::SameLine(std::max(ImGui::GetFontSize() * 22, ImGui::CalcTextSize(label.c_str()).x + ImGui::GetFontSize()));
  sourced_text(cat, *v, t->field(key)->unit);
}

// GPT-3's training compute as the catalog holds it (runs/gpt3-2020), the FLOPs budget's starting value.
double gpt3_flops(const Catalog& cat) {
  const Table* t = cat.table("runs");
  const Record* r = t ? t->find("gpt3-2020") : nullptr;
  return r ? r->get_or("train_flops", 1e23) : 1e23;
}

// A log-scale slider with its value written beside it by `write` (dollars as the panel writes them); a screen
// reader hears `spoken` and the value as written (its position is the value's power of ten).
template <class Write>
bool slider_log(const char* label, const char* spoken, double& v, double lo, double hi, Write write) {
  float l = float(std::log10(std::max(v, lo)));
  access::next_name(spoken);
  bool changed = slider_float(label, l, float(std::log10(lo)), float(std::log10(hi)), "");
  if (changed) v = std::pow(10.0, double(l));
  access::note_value(ImGui::GetID(label), access::Role::slider, l, std::log10(lo), std::log10(hi), write(v), label);
  ImGui::SameLine();
  ImGui::TextUnformatted(write(v).c_str());
  return changed;
}

void draw_plan(ExplorerState& s, const Catalog& cat, capital::PlanConfig& c) {
  double budget = c.budget_usd > 0 ? c.budget_usd : 0;
  bool by_flops = c.budget_flops > 0;
  if (radio("Budget in dollars", !by_flops))
    by_flops = false, c.budget_flops = 0, c.budget_usd = c.budget_usd > 0 ? c.budget_usd : kCapitalBudgetUsd;
  same_line_if_fits_checkbox("Budget in FLOPs");  // a radio is as wide as a checkbox; a phone's width wraps it
  if (radio("Budget in FLOPs", by_flops))
    by_flops = true, c.budget_usd = 0, c.budget_flops = c.budget_flops > 0 ? c.budget_flops : gpt3_flops(cat);
  // At most 18 em, and leaving room for what is written beside it where the panel is narrow (a page 320
  // pixels wide: WCAG 1.4.10); at least half the width.
  const auto plan_slider_w = [](const char* beside) {
    const float avail = ImGui::GetContentRegionAvail().x;
    const float room = avail - ImGui::CalcTextSize(beside).x - ImGui::GetStyle().ItemInnerSpacing.x;
    return std::min(ImGui::GetFontSize() * 18, std::max(avail * 0.5f, room));
  };
  ImGui::SetNextItemWidth(plan_slider_w(by_flops ? "1e+27 FLOPs" : "$100B"));
  auto flops_text = [](double x) {
    char b[48];
    std::snprintf(b, sizeof b, "%.3g FLOPs", x);
    return std::string(b);
  };
  if (by_flops)
    slider_log("##flops", "budget in FLOPs", c.budget_flops, 1e18, 1e27, flops_text);
  else if (slider_log("##usd", "budget in dollars", budget, 1e3, 1e11, [](double x) { return usd(x); }))
    c.budget_usd = budget;
  track(s, "capital.budget");
  int rule = c.rule == capital::ScalingRule::kaplan ? 0 : 1;
  radio("Kaplan 2020", &rule, 0);
  same_line_if_fits_checkbox("Chinchilla 2022");
  radio("Chinchilla 2022", &rule, 1);
  c.rule = rule == 0 ? capital::ScalingRule::kaplan : capital::ScalingRule::chinchilla;
  float util = float(c.utilisation);
  ImGui::SetNextItemWidth(plan_slider_w("utilisation (MFU, assumed)"));
  if (slider_float("utilisation (MFU, assumed)", util, 0.05f, 0.7f, "%.2f")) c.utilisation = util;
  track(s, "capital.utilisation");
  int pricing = c.pricing == capital::Pricing::rent ? 0 : 1;
  radio("Rent", &pricing, 0);
  same_line_if_fits_checkbox("Build");
  radio("Build", &pricing, 1);
  c.pricing = pricing == 0 ? capital::Pricing::rent : capital::Pricing::build;

  capital::PlanResult r;
  try {
    r = capital::plan(c);
  } catch (const std::exception& e) {
    error_text("%s", e.what());
    return;
  }
  ImGui::Separator();
  ImGui::BeginGroup();
  // A TPU core-hour is not a GPU-hour (gpt2-tpu-2019 prices TPU v3 cores): the words follow the accelerator.
  const AcceleratorWords acc = accelerator_words(&cat, c.gpu);
  wrapped_text(false, "Money     %s at %s per %s", usd(r.cost_usd).c_str(), usd(r.usd_per_gpu_hour).c_str(),
               acc.hour.c_str());
  {  // What the price per hour is and what it pays for (Train a transformer costs runs at another row).
    const std::string basis = price_basis(cat, r.usd_per_gpu_hour, c.gpu);
    if (c.pricing == capital::Pricing::build)
      wrapped_text(true, "          building: the %s, its share of the server and network written off, plus power",
                   acc.one.c_str());
    else
      wrapped_text(true, "          renting: %s, one %s for an hour with its share of the server and network",
                   basis.empty() ? "the rate set below" : basis.c_str(), acc.one.c_str());
  }
  // GPU-hours in words and days with separators, as the narrations beside this panel quote them.
  wrapped_text(false, "Compute   %s %ss at %sFLOP/s each -> %.3g FLOPs (%s)", format_in_words(r.gpu_hours).c_str(),
               acc.hour.c_str(), format_si(r.effective_flops_per_s).c_str(), r.flops,
               format_quantity(r.pf_days, "PF-days").c_str());
  wrapped_text(false, "Model     %s parameters on %s tokens (%.1f tokens/parameter)", format_si(r.model.params).c_str(),
               format_si(r.model.tokens).c_str(), r.model.tokens_per_param);
  wrapped_text(false, "Loss      %.3f nats/token predicted by the %s fit", r.model.predicted_loss, to_string(c.rule));
  char days[32];
  if (r.days_on_cluster >= 100)
    std::snprintf(days, sizeof days, "%s", with_thousands(r.days_on_cluster).c_str());
  else
    std::snprintf(days, sizeof days, "%.1f", r.days_on_cluster);
  wrapped_text(false, "Time      %s days on %s %s", days, with_thousands(c.cluster_gpus).c_str(),
               c.cluster_gpus == 1 ? acc.one.c_str() : acc.many.c_str());
  ImGui::EndGroup();
  track(s, "capital.plan");
  draw_screen_basis(s, "capital");
  wrapped_text(true, "Losses are on each paper's own data and are not comparable between the two rules.");

  // Chinchilla's three estimates for the same budget (engine: capital::allocate_chinchilla).
  ImGui::Spacing();
  ImGui::TextWrapped("Chinchilla (Hoffmann et al. 2022) read the optimum off the same training runs three ways:");
  if (ImGui::BeginTable("##chinchilla", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
    for (const char* h : {"approach", "N ~ C^a", "parameters", "tokens", "tokens/param"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    const char* names[] = {"1. envelope of training curves", "2. IsoFLOP profiles", "3. parametric loss L(N, D)"};
    for (int i = 0; i < 3; ++i) {
      const capital::Allocation& a = r.chinchilla[i];
      next_row();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(names[i]);
      ImGui::TableNextColumn();
      ImGui::Text("%.3f", capital::chinchilla_fit(capital::ChinchillaApproach(i + 1)).a);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_si(a.params).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_si(a.tokens).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", a.tokens_per_param);
    }
    end_table("Chinchilla's three estimates");
  }
  track(s, "capital.chinchilla");
  const capital::Allocation g1 =
      capital::allocate_chinchilla(capital::kGopherFlops, capital::ChinchillaApproach::envelope);
  const capital::Allocation g3 =
      capital::allocate_chinchilla(capital::kGopherFlops, capital::ChinchillaApproach::parametric);
  ImGui::TextWrapped(
      "1 and 2 follow the best runs directly and agree: Gopher's budget (%.3g FLOPs) buys %s parameters "
      "on %s tokens, the size of the Chinchilla model. 3 fits a loss surface and minimises it; with the "
      "paper's rounded constants its exponent is %.3f and its optimum there is %s parameters: the "
      "closed form is very sensitive to them. The \"Chinchilla 2022\" rule above is approach 1, whose "
      "projections the paper printed (Table 3).",
      capital::kGopherFlops, format_si(g1.params).c_str(), format_si(g1.tokens).c_str(), capital::chinchilla_a(),
      format_si(g3.params).c_str());
  draw_other_screens(s, "capital");
}

void draw_rent_vs_build(ExplorerState& s, const Catalog& cat, capital::PlanConfig& c) {
  capital::BuildConfig& b = c.build;
  wrapped_text(false,
               "Renting: one price per GPU-hour. Building: the GPU, its share of the server and the network, "
               "written off over the years, plus power at the wall (PUE). Most build prices are not public: "
               "they are marked assumed; move them.");
  // The on-demand row is the one copy of the price the Train panel costs a run at (clusters refer to it).
  price_line(cat, "v100-cloud-reserved", "usd_per_gpu_hour");
  price_line(cat, "v100-cloud-on-demand", "usd_per_gpu_hour");
  price_line(cat, "v100-sxm2-purchase", "price_usd");
  price_line(cat, "server-8gpu-host", "price_usd");
  price_line(cat, "network-400g-per-server", "price_usd");
  price_line(cat, "datacenter-2020", "pue", true);
  price_line(cat, "datacenter-2020", "usd_per_kWh", true);
  ImGui::Separator();
  const float w = ImGui::GetFontSize() * 14;
  float f;
  ImGui::SetNextItemWidth(w);
  f = float(c.rent_usd_per_gpu_hour);
  if (slider_float("rent, $ per GPU-hour", f, 0.2f, 6.0f, "%.2f")) c.rent_usd_per_gpu_hour = f;
  ImGui::SetNextItemWidth(w);
  f = float(b.gpu_price_usd);
  if (slider_float("GPU price, $", f, 2000, 30000, "%.0f")) b.gpu_price_usd = f;
  ImGui::SetNextItemWidth(w);
  f = float(b.pue);
  if (slider_float("PUE", f, 1.0f, 2.0f, "%.2f")) b.pue = f;
  ImGui::SetNextItemWidth(w);
  f = float(b.amortisation_years);
  if (slider_float("years of use", f, 1, 8, "%.1f")) b.amortisation_years = f;
  const capital::BuildCostBreakdown bc = capital::build_cost(b);
  begin_tracked(s);  // the build price and what the plan's dollars buy each way
  // In cents the parts may not add up to the total as drawn ($0.53 + $0.04 = $0.58 at the default prices):
  // then the parts and the sum are given to a tenth of a cent, and the total as the narration quotes it.
  const auto cents = [](double usd_v) { return std::llround(usd_v * 100); };
  if (cents(bc.capex_usd_per_gpu_hour) + cents(bc.power_usd_per_gpu_hour) == cents(bc.usd_per_gpu_hour))
    wrapped_text(false, "Build: %s capex + %s power = %s per GPU-hour (rent: %s)",
                 usd(bc.capex_usd_per_gpu_hour).c_str(), usd(bc.power_usd_per_gpu_hour).c_str(),
                 usd(bc.usd_per_gpu_hour).c_str(), usd(c.rent_usd_per_gpu_hour).c_str());
  else
    wrapped_text(false, "Build: $%.3f capex + $%.3f power = $%.3f, about %s per GPU-hour (rent: %s)",
                 bc.capex_usd_per_gpu_hour, bc.power_usd_per_gpu_hour, bc.usd_per_gpu_hour,
                 usd(bc.usd_per_gpu_hour).c_str(), usd(c.rent_usd_per_gpu_hour).c_str());
  // What the plan's dollars buy either way (engine: capital::plan at each pricing), as the narration quotes it.
  if (c.budget_usd > 0) {
    try {
      const capital::RentOrBuild rb = capital::rent_or_build(c);
      wrapped_text(false, "The plan's %s buys %s GPU-hours rented, %s built (%.1fx)", usd(c.budget_usd).c_str(),
                   format_in_words(rb.rented_gpu_hours).c_str(), format_in_words(rb.built_gpu_hours).c_str(),
                   rb.built_over_rented);
    } catch (const std::exception& e) {
      error_text("%s", e.what());
    }
  }
  end_tracked(s, "capital.rent_vs_build");
  ImGui::Separator();
  try {
    const capital::Gpt3Priced g = capital::gpt3_priced(cat, c);
    const Record* run = cat.table("runs") ? cat.table("runs")->find("gpt3-2020") : nullptr;
    begin_tracked(s);  // GPT-3 priced both ways and the published estimates
    ImGui::TextColored(accent_color(), "%s: %.3g FLOPs (%s)", run ? run->name.c_str() : "GPT-3", g.flops,
                       format_quantity(capital::flops_to_pf_days(g.flops), "PF-days").c_str());
    // The rate and the machine's size are the catalog's (prices/gpt3-lambda-estimate, the plan's cluster).
    wrapped_text(false, "At Lambda's %.3g TFLOP/s per V100: rent %s, build %s, %.1f days on the %s-GPU machine",
                 g.published_flops_per_s / 1e12, usd(g.at_published_rate.rent_usd).c_str(),
                 usd(g.at_published_rate.build_usd).c_str(), g.at_published_rate.days_on_cluster,
                 with_thousands(g.cluster_gpus).c_str());
    wrapped_text(false, "At your utilisation (%.2f): rent %s, build %s", c.utilisation,
                 usd(g.at_config_rate.rent_usd).c_str(), usd(g.at_config_rate.build_usd).c_str());
    price_line(cat, "gpt3-lambda-estimate", "cost_usd");
    price_line(cat, "gpt3-low-estimate", "cost_usd");
    end_tracked(s, "capital.gpt3");
  } catch (const std::exception& e) {
    error_text("%s", e.what());
  }
}

void draw_waterfall(ExplorerState& s, const Catalog& cat, capital::WaterfallConfig& c) {
  // The date and the cap are the catalog's (events, prices), each with its source on hover.
  facts_text(cat,
             "OpenAI LP ({events/openai-lp/date}): first-round returns capped at {prices/openai-lp-2019/cap_multiple}, "
             "later rounds lower, the rest to the nonprofit. Shares, bases and the Microsoft cap are assumptions: "
             "play with them.");
  std::vector<std::string> who;  // "First-round investors (basis $100M)"
  float names_w = 0;
  for (const capital::Holder& h : c.holders) {
    who.push_back(h.name + " (basis " + usd(h.basis_usd) + ")");
    names_w = std::max(names_w, ImGui::CalcTextSize(who.back().c_str()).x + ImGui::GetFontSize());
  }
  const float slider_w = ImGui::GetFontSize() * 8;
  for (size_t i = 0; i < c.holders.size(); ++i) {
    capital::Holder& h = c.holders[i];
    ImGui::PushID(int(i));
    float cap = float(h.cap_multiple), share = float(h.share);
    // The holder first, its sliders after it in one column (on the next line when the window is too narrow
    // for both): a name after its sliders read as the next row's.
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(who[i].c_str());
    const float sliders_w = 2 * (slider_w + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::GetStyle().ItemSpacing.x) +
                            ImGui::CalcTextSize("cap (x)share").x;
    if (names_w + sliders_w <= ImGui::GetContentRegionAvail().x) ImGui::SameLine(names_w);
    ImGui::SetNextItemWidth(slider_w);
    if (slider_float("cap (x)", cap, 1, 200, "%.0f")) h.cap_multiple = cap;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(slider_w);
    if (slider_float("share", share, 0, 0.5f, "%.2f")) h.share = share;
    ImGui::PopID();
  }
  float g = float(c.profit_growth), p0 = float(c.first_year_profit_usd / 1e6);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (slider_float("profit growth per year", g, 0.5f, 3.0f, "%.2fx")) c.profit_growth = g;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (slider_float("first-year profit, $M", p0, 1, 10000, "%.0f", ImGuiSliderFlags_Logarithmic))
    c.first_year_profit_usd = double(p0) * 1e6;
  capital::WaterfallResult r;
  try {
    r = capital::run_waterfall(c);
  } catch (const std::exception& e) {
    error_text("%s", e.what());
    return;
  }
  // Stacked bars per year, as fractions of that year's profit.
  const ImVec2 size(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 12);
  begin_tracked(s);  // the bars, their caption and who receives what: the narrations quote all three
  ImGui::InvisibleButton("##waterfall", size);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  const ImU32 cols[] = {IM_COL32(90, 160, 230, 255), IM_COL32(230, 170, 60, 255), IM_COL32(120, 200, 120, 255),
                        IM_COL32(200, 120, 200, 255)};
  const ImU32 np_col = IM_COL32(200, 90, 90, 255);
  const size_t n = r.years.size();
  // Each bar is one year's profit as 100%: a y scale in percent of that year's profit on the left (the bars
  // had none), the years above them.
  const ImU32 axis = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float scale_w = ImGui::CalcTextSize("100%").x + 6, line_h = ImGui::GetTextLineHeight();
  const float left = a.x + scale_w, bar_h = size.y - line_h - 2;
  for (int k = 0; k <= 4; ++k) {
    char pct[8];
    std::snprintf(pct, sizeof pct, "%d%%", 25 * k);
    const float y = b.y - bar_h * float(k) / 4.0f;
    dl->AddLine(ImVec2(left - 3, y), ImVec2(b.x, y), IM_COL32(120, 120, 120, 60));
    dl->AddText(ImVec2(left - 5 - ImGui::CalcTextSize(pct).x, std::clamp(y - line_h / 2, a.y + line_h, b.y - line_h)),
                axis, pct);
  }
  const float plot_w = b.x - left;
  for (size_t y = 0; y < n; ++y) {
    const double p = std::max(r.years[y].profit_usd, 1e-9);
    const float x0 = left + float(y) * plot_w / float(n) + 2, x1 = left + float(y + 1) * plot_w / float(n) - 2;
    float top = b.y;
    for (size_t i = 0; i < r.years[y].to_holder_usd.size(); ++i) {
      float hgt = float(r.years[y].to_holder_usd[i] / p) * bar_h;
      dl->AddRectFilled(ImVec2(x0, top - hgt), ImVec2(x1, top), cols[i % 4]);
      top -= hgt;
    }
    float hgt = float(r.years[y].to_nonprofit_usd / p) * bar_h;
    dl->AddRectFilled(ImVec2(x0, top - hgt), ImVec2(x1, top), np_col);
    if (y % 3 == 0) dl->AddText(ImVec2(x0, a.y), axis, std::to_string(r.years[y].year).c_str());
  }
  {  // its data: each year's profit split by who receives it, in percent of that year's profit
    ChartData d{.title = "Who receives each year's profit", .x_name = "year"};
    for (const capital::Holder& h : c.holders) d.series.push_back({h.name, "%", {}});
    d.series.push_back({"Nonprofit", "%", {}});
    for (size_t y = 0; y < n; ++y) {
      const double p = std::max(r.years[y].profit_usd, 1e-9);
      char year[16];
      std::snprintf(year, sizeof year, "%d", r.years[y].year);
      d.x_labels.push_back(year);
      for (size_t i = 0; i < c.holders.size(); ++i)
        d.series[i].y.push_back(i < r.years[y].to_holder_usd.size() ? 100 * r.years[y].to_holder_usd[i] / p : 0.0);
      d.series.back().y.push_back(100 * r.years[y].to_nonprofit_usd / p);
    }
    describe_chart(d, a, b);
  }
  if (n > 0)  // the chart's years and profits in words, as the narration beside it quotes them
    wrapped_text(true,
                 "Each bar one year's profit (100%%) split by who receives it: %s in %d, growing %.2fx a year to %s "
                 "in %d; %s in all.",
                 usd(r.years.front().profit_usd).c_str(), r.years.front().year, c.profit_growth,
                 usd(r.years.back().profit_usd).c_str(), r.years.back().year, usd(r.profit_total_usd).c_str());
  for (size_t i = 0; i < c.holders.size(); ++i) {
    ImGui::TextColored(
        ImGui::ColorConvertU32ToFloat4(cols[i % 4]), "%s: %s (%.1fx)%s", c.holders[i].name.c_str(),
        usd(r.holder_total_usd[i]).c_str(),
        c.holders[i].basis_usd > 0 ? r.holder_total_usd[i] / c.holders[i].basis_usd : 0.0,
        r.holder_capped_year[i] ? (", capped in " + std::to_string(r.holder_capped_year[i])).c_str() : "");
  }
  ImGui::TextColored(
      ImGui::ColorConvertU32ToFloat4(np_col), "Nonprofit: %s, %.1f%% of %s", usd(r.nonprofit_total_usd).c_str(),
      r.profit_total_usd > 0 ? 100 * r.nonprofit_total_usd / r.profit_total_usd : 0.0, usd(r.profit_total_usd).c_str());
  end_tracked(s, "capital.waterfall");
}

void draw_partnership(ExplorerState& s, const Catalog& cat, capital::PartnershipConfig& c) {
  facts_text(cat,
             "Microsoft and OpenAI, {events/microsoft-1b/date}: {prices/microsoft-2019/investment_usd}, possibly in "
             "installments over years; Azure the exclusive cloud. The cash/credit split was not published: it is a "
             "parameter here.");
  float f = float(c.cloud_credit_fraction);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
  if (slider_float("cloud credit share (assumed)", f, 0, 1, "%.2f")) c.cloud_credit_fraction = f;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
  slider_int("installment years (assumed)", c.installment_years, 1, 10);
  try {
    auto years = capital::run_partnership(c);
    const capital::PartnershipTotals t = capital::partnership_totals(years);
    begin_tracked(s);  // the installments and what the credit buys
    for (const auto& y : years)
      ImGui::Text("%d   cash %-9s credit %-9s -> %s GPU-hours", y.year, usd(y.cash_usd).c_str(),
                  usd(y.credit_usd).c_str(), format_in_words(y.gpu_hours).c_str());
    // Counts as the narration beside this tab writes them: words for hours, separators for years.
    wrapped_text(false, "The credit, %s, buys %s GPU-hours (%s GPU-years) at %s per hour", usd(t.credit_usd).c_str(),
                 format_in_words(t.gpu_hours).c_str(), with_thousands(t.gpu_years).c_str(),
                 usd(c.usd_per_gpu_hour).c_str());
    end_tracked(s, "capital.partnership");
  } catch (const std::exception& e) {
    error_text("%s", e.what());
  }
}

// The capital configs a fresh page's panel computes with, as the view holds them: what a link's parts are
// differences from. Null without the catalog, whose prices and holders are the defaults. The partnership's
// follow the fresh plan: the panel fixes them from the plan it draws first, and later plans leave them.
nlohmann::json fresh_capital(const ExplorerState& s, std::string_view which) {
  if (!s.catalog) return nullptr;
  const CapitalView fresh;
  const capital::PlanConfig plan = capital_plan(*s.catalog, fresh);
  if (which == "plan") return capital::to_json(plan);
  if (which == "waterfall") return capital::to_json(capital_waterfall(*s.catalog, fresh));
  return capital::to_json(capital_partnership(*s.catalog, fresh, plan));
}

// One of the three configs as the view holds it (none: never drawn, a fresh page's).
nlohmann::json held_capital(const CapitalView& v, std::string_view which) {
  if (which == "plan") return v.plan ? capital::to_json(*v.plan) : nlohmann::json();
  if (which == "waterfall") return v.waterfall ? capital::to_json(*v.waterfall) : nlohmann::json();
  return v.partnership ? capital::to_json(*v.partnership) : nlohmann::json();
}

// `c` read by the codec of `which` over what `v` computes with now; throws LoadError naming the key it refuses.
void set_capital(const Catalog& cat, CapitalView& v, std::string_view which, const nlohmann::json& c) {
  if (which == "plan")
    v.plan = capital::plan_config_from_json(c, capital_plan(cat, v));
  else if (which == "waterfall")
    v.waterfall = capital::waterfall_config_from_json(c, capital_waterfall(cat, v));
  else
    v.partnership = capital::partnership_config_from_json(c, capital_partnership(cat, v, capital_plan(cat, v)));
}

// A link's capital config: refused whole (LoadError naming the key) unless the panel's codec reads it.
AddressPart capital_part(const char* which) {
  return {which, [which](const ExplorerState& s) { return fresh_capital(s, which); },
          [which](const ExplorerState& s) { return held_capital(s.capital, which); },
          [which](ExplorerState& s, const nlohmann::json& c) {
            const Catalog& cat = *s.catalog;
            CapitalView next = s.capital;
            // All three held as a fresh page's panel holds them once drawn, so a part the link leaves out is the
            // fresh one even where its defaults would follow another part (the partnership's, the plan's).
            if (!next.plan) next.plan = capital_plan(cat, next);
            if (!next.waterfall) next.waterfall = capital_waterfall(cat, next);
            if (!next.partnership) next.partnership = capital_partnership(cat, next, *next.plan);
            set_capital(cat, next, which, c);
            s.capital = std::move(next);
          }};
}

// A scenario's config of `which`: read now; a config the codec refuses is said in the panel, the view unchanged.
void apply_capital(ExplorerState& s, std::string_view which, const nlohmann::json& c) {
  if (!s.catalog) return;  // the panel says the catalog is missing
  try {
    set_capital(*s.catalog, s.capital, which, c);
    s.capital.error.clear();
  } catch (const std::exception& e) {
    s.capital.error = e.what();
  }
}

void draw(ExplorerState& s) {
  const Catalog& cat = *s.catalog;
  CapitalView& v = s.capital;
  capital::PlanConfig plan = capital_plan(cat, v);
  capital::WaterfallConfig wf = capital_waterfall(cat, v);
  capital::PartnershipConfig part = capital_partnership(cat, v, plan);
  if (!v.error.empty()) error_text("config refused: %s", v.error.c_str());
  confidence_legend();
  if (ImGui::BeginTabBar("capital_tabs")) {
    // The tab a link, a scenario step or a highlight asks for (explorer.h: open_panel, settled_tab).
    auto tab = [&](const char* label, const char* id) {
      const bool open =
          ImGui::BeginTabItem(label, nullptr, take_tab_request(s, id) ? ImGuiTabItemFlags_SetSelected : 0);
      if (open) s.shown_tab = id;
      return open;
    };
    if (tab("Money -> compute -> model", "plan")) {
      draw_plan(s, cat, plan);
      ImGui::EndTabItem();
    }
    if (tab("Rent vs build", "rent_vs_build")) {
      draw_rent_vs_build(s, cat, plan);
      ImGui::EndTabItem();
    }
    if (tab("Capped-profit waterfall", "waterfall")) {
      draw_waterfall(s, cat, wf);
      ImGui::EndTabItem();
    }
    if (tab("Microsoft 2019", "partnership")) {
      draw_partnership(s, cat, part);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  // Write back what the sliders changed, so a scenario and the panel share one state.
  v.plan = plan;
  v.waterfall = wf;
  v.partnership = part;
}

// The capital panel computes on every frame from its configs; what it shows is these engine calls on them
// (capital_state.h: the same configs the panel computes with).
nlohmann::json shown_plan(const ExplorerState& s) {
  if (!s.catalog || !s.capital.error.empty()) return nullptr;
  return capital::to_json(capital::plan(capital_plan(*s.catalog, s.capital)));
}

nlohmann::json shown_waterfall(const ExplorerState& s) {
  if (!s.catalog || !s.capital.error.empty()) return nullptr;
  const capital::WaterfallConfig c = capital_waterfall(*s.catalog, s.capital);
  return capital::to_json(c, capital::run_waterfall(c));
}

nlohmann::json shown_partnership(const ExplorerState& s) {
  if (!s.catalog || !s.capital.error.empty()) return nullptr;
  const capital::PlanConfig plan = capital_plan(*s.catalog, s.capital);
  return capital::to_json(capital::run_partnership(capital_partnership(*s.catalog, s.capital, plan)));
}

PanelRegistrar reg{Panel{
    .id = "capital",
    .title = "Capital",
    .chapter = Chapter::capital,
    .order = 10,
    .draw = draw,
    .summary = "Money to GPU-hours to a model; rent vs build; the capped-profit waterfall",
    .tabs = {"plan", "rent_vs_build", "waterfall", "partnership"},
    .tab_of_widget = [](const ExplorerState&, const std::string& w) -> std::string {
      if (w == "capital.rent_vs_build" || w == "capital.gpt3") return "rent_vs_build";
      if (w == "capital.waterfall") return "waterfall";
      if (w == "capital.partnership") return "partnership";
      return "plan";  // its budget, utilisation, plan and Chinchilla's table
    },
    .needs_catalog = true,
    .address = {capital_part("plan"), capital_part("waterfall"), capital_part("partnership")},
    .configs = {{"plan",
                 [](ExplorerState& s, const nlohmann::json& c, const scenario::EngineCall*) {
                   apply_capital(s, "plan", c);
                 },
                 [](const ExplorerState& s) { return held_capital(s.capital, "plan"); }, shown_plan},
                {"waterfall",
                 [](ExplorerState& s, const nlohmann::json& c, const scenario::EngineCall*) {
                   apply_capital(s, "waterfall", c);
                 },
                 [](const ExplorerState& s) { return held_capital(s.capital, "waterfall"); }, shown_waterfall},
                {"partnership",
                 [](ExplorerState& s, const nlohmann::json& c, const scenario::EngineCall*) {
                   apply_capital(s, "partnership", c);
                 },
                 [](const ExplorerState& s) { return held_capital(s.capital, "partnership"); }, shown_partnership}},
    .errors =
        [](const ExplorerState& s) {
          std::vector<std::string> out;
          add_error(out, "capital", s.capital.error);
          return out;
        }}};

}  // namespace

capital::PlanConfig capital_plan(const Catalog& cat, const CapitalView& v) {
  capital::PlanConfig c = v.plan ? *v.plan : capital::default_plan_config(cat);
  if (c.budget_usd <= 0 && c.budget_flops <= 0) c.budget_usd = kCapitalBudgetUsd;
  return c;
}

capital::WaterfallConfig capital_waterfall(const Catalog& cat, const CapitalView& v) {
  return v.waterfall ? *v.waterfall : capital::default_waterfall_config(cat);
}

capital::PartnershipConfig capital_partnership(const Catalog& cat, const CapitalView& v,
                                               const capital::PlanConfig& plan) {
  return v.partnership ? *v.partnership
                       : capital::default_partnership_config(cat, plan.rent_usd_per_gpu_hour,
                                                             plan.gpu_peak_flops_per_s * plan.utilisation);
}

}  // namespace mc::ui
