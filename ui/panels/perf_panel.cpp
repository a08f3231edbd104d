// perf_panel.cpp - "Train a transformer on a cluster": pick a model, a cluster and a parallel layout;
// see memory per GPU against HBM, where the iteration time goes, the pipeline schedule of one
// iteration, throughput, days and dollars, and the ranked layouts of the search. Every number comes from
// engine/perf (the same code as `megacluster estimate` and `megacluster search`).
//
// Sections: recomputation (the estimate, the search job); controls (presets, sliders, the network);
// results (price, stacks, memory and time); search (the ranked layouts); draw and the registration.
#include "catalog/accelerator.h"
#include "core/format.h"
#include "perf/fit_layout.h"
#include "ui/access.h"
#include "ui/explorer.h"
#include "ui/panels/perf_charts.h"
#include "ui/screen_basis.h"
#include "ui/widgets.h"

#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>

namespace mc::ui {
namespace {

using nlohmann::json;

// ---- recomputation (within the frame a value changes) ------------------------------------------------

}  // namespace

// Runs the layout search's (tp, pp) slices and publishes the merged ranking after each slice of work.
class PerfSearchJob : public Job {
 public:
  PerfSearchJob(perf::Config cfg, std::vector<std::pair<int, int>> pending)
      : cfg_(std::move(cfg)), pending_(std::move(pending)), total_(pending_.size()) {
    opts_.max_results = 15;
    opts_.max_rejected = 20;
  }
  bool step(double budget_s) override {
    const auto t0 = std::chrono::steady_clock::now();
    while (!pending_.empty() && !cancelled()) {
      auto [tp, pp] = pending_.back();
      pending_.pop_back();
      opts_.only_tp = tp, opts_.only_pp = pp;
      perf::merge(work_, perf::search(cfg_, opts_), opts_);
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > budget_s) break;
    }
    published_.publish({work_, pending_.size()});
    set_progress(1.0 - double(pending_.size()) / double(std::max<size_t>(1, total_)));
    return pending_.empty() || cancelled();
  }
  struct Slice {  // the ranking so far, and the (tp, pp) slices left
    perf::SearchResult ranking;
    size_t left = 0;
  };
  const Published<Slice>& published() const { return published_; }
  size_t total() const { return total_; }

 private:
  perf::Config cfg_;
  std::vector<std::pair<int, int>> pending_;
  size_t total_;
  perf::SearchOptions opts_;
  perf::SearchResult work_;
  Published<Slice> published_;
};

namespace {

// The machine the nodes slider set holds while the config keeps the GPU count fitted to it; a count set
// elsewhere (a scenario, a row of the search, a typed config) is a machine of its own.
void sync_machine(PerfView& v) {
  const long long written = v.config.cluster.gpus.value_or(-2);
  if (written != v.fitted_gpus) v.machine_gpus = 0;
}

// A new search when the model, cluster or batch changed (the layout itself does not change the search).
void start_search(ExplorerState& s, PerfView& v) {
  perf::Request sc = v.config;
  // Only the batch: the layout is the search's to choose, and an unset batch is the preset's (or the engine's).
  sc.parallel.emplace().global_batch = v.config.parallel ? v.config.parallel->global_batch : std::nullopt;
  if (v.machine_gpus > 0) {  // the whole machine the nodes slider offers, as the headline's layout is fitted to
    sc.cluster.gpus = v.machine_gpus;
    sc.cluster.nodes.reset();
  }
  if (v.search_for && *v.search_for == sc) return;
  v.search_for = sc;
  v.search = {};
  if (v.search_job) v.search_job->cancel();  // it searches its own copy of the old config
  v.search_job.reset();
  v.search_left = 0;
  v.search_serial = 0;  // the new job publishes from 1 on
  v.search_done = false;
  v.search_error.clear();
  try {
    v.search_config = perf::parse_config(*s.catalog, sc, "panel search", false);
  } catch (const std::exception& e) {
    v.search_done = true;  // the estimate shows the error
    v.search_error = e.what();
    return;
  }
  std::set<int> pps;
  for (int p = 1; p <= v.search_config.model.layers; ++p)
    if (v.search_config.model.layers % p == 0) pps.insert(p);
  for (int p = 1; p <= 64; p *= 2) pps.insert(p);
  std::vector<std::pair<int, int>> pending;
  for (int tp = 1; tp <= 64; tp *= 2)
    for (int pp : pps)
      if ((long long)tp * pp <= v.search_config.cluster.gpus()) pending.push_back({tp, pp});
  v.search_left = pending.size();
  v.search_job = std::make_shared<PerfSearchJob>(v.search_config, std::move(pending));
  s.jobs.start(v.search_job);
}

// Takes the search job's latest ranking; the search is done when its job is.
void poll_search(PerfView& v) {
  if (!v.search_job) return;
  const bool done = v.search_job->done();  // read first: the job publishes its last slice before done()
  PerfSearchJob::Slice got;
  if (v.search_job->published().latest(got, v.search_serial)) {
    v.search = std::move(got.ranking);
    v.search_left = got.left;
  }
  if (!done) return;
  if (!v.search_job->error().empty() && v.search_job->error() != "cancelled") v.search_error = v.search_job->error();
  v.search_job.reset();
  v.search_done = true;
}

// The controls of this panel and the config keys they set (their labels as drawn, "##perf" ids left out).
const ControlLabels& perf_controls() {
  static const ControlLabels labels = {{"cluster.gpus", "nodes"},
                                       {"cluster/gpus", "nodes"},
                                       {"gpus", "nodes"},
                                       {"nodes", "nodes"},
                                       {"tp", "tensor (tp)"},
                                       {"cp", "context (cp)"},
                                       {"pp", "pipeline (pp)"},
                                       {"dp", "data (dp)"},
                                       {"micro_batch", "micro-batch"},
                                       {"global_batch", "global batch"},
                                       {"schedule", "schedule"},
                                       {"virtual_stages", "virtual stages"},
                                       {"zero", "ZeRO stage"},
                                       {"recompute", "recompute"},
                                       {"sequence_parallel", "sequence parallel"},
                                       {"offload_optimizer", "offload"},
                                       {"offload_activations", "offload"},
                                       {"precision", "precision"},
                                       {"tokens", "tokens (billions)"},
                                       {"software", "software"},
                                       {"fabric", "network fabric"},
                                       {"price_per_gpu_hour_usd", "price, USD per hour"}};
  return labels;
}

void recompute(ExplorerState& s) {
  PerfView& v = s.perf;
  if (!v.computed_for || !(*v.computed_for == v.config)) {
    v.computed_for = v.config;
    try {
      v.parsed = perf::parse_config(*s.catalog, v.config, "panel config");
      v.estimate = perf::estimate(v.parsed);
      // A pipeline of hundreds of micro-batches is a solid bar at any width: draw the same schedule with
      // fewer micro-batches (a multiple of pp, as the interleaved schedule needs) and say so.
      perf::Config shown = v.parsed;
      const int m = shown.layout.micro_batches(), p = std::max(1, shown.layout.pp);
      if (m > v.gantt_max_micro_batches) {
        const int m_shown = std::max(p, (v.gantt_max_micro_batches + p - 1) / p * p);
        if (m_shown < m) shown.layout.global_batch = m_shown * shown.layout.micro_batch * shown.layout.dp;
      }
      v.gantt_micro_batches = shown.layout.micro_batches();
      v.timeline = perf::pipeline_timeline(shown, v.estimate, 40000);
      v.by_stack.clear();
      if (const Table* sw = s.catalog->table("software"))
        for (const Record& r : sw->records) {
          perf::Config other = v.parsed;
          other.software = perf::software_from_catalog(*s.catalog, r.id, other.cluster.gpu);
          v.by_stack.push_back({r.id, perf::estimate(other)});
        }
      v.valid = true;
      v.error.clear();
    } catch (const LoadError& e) {
      // Named by the control that sets the key, as the class sees it ("'data (dp)': ..."), not the JSON
      // key; a key no control sets (a scenario's typed config) keeps its name.
      v.valid = false;
      const std::string label = control_label(e.key, perf_controls());
      v.error = (label.empty() ? "\"" + e.key + "\"" : "'" + label + "'") + ": " +
                in_control_words(e.message, perf_controls());
    } catch (const std::exception& e) {
      v.valid = false;
      v.error = e.what();
    }
  }
  sync_machine(v);
  if (v.search_auto) start_search(s, v);
  poll_search(v);
}

// ---- controls ----------------------------------------------------------------------------------------

// A name the combo above had to shorten ("Azure supercomput..."), whole on a line below it: nothing is cut.
void whole_name_below(const std::string& preview, const std::string& name) {
  if (preview != name) wrapped_text(true, "%s", name.c_str());
}

// A section's preset; picking one starts the section afresh from it (overrides of the old preset go).
template <class Section>
bool preset_combo(const Catalog& cat, const char* label, const char* table, Section& obj) {
  const Table* t = cat.table(table);
  if (!t) return false;
  const std::string cur = obj.preset.value_or("custom");
  const Record* r = t->find(cur);
  bool changed = false;
  const std::string shown = r ? r->name : cur;
  // Catalog names are long: the combo takes the row's width up to its own (short) label.
  ImGui::SetNextItemWidth(-(ImGui::CalcTextSize(label, nullptr, true).x + ImGui::GetStyle().ItemInnerSpacing.x));
  const std::string preview = combo_preview(shown);
  if (begin_combo(label, preview.c_str(), 0, nullptr, shown.c_str())) {
    for (const auto& rec : t->records) {
      if (ImGui::Selectable(rec.name.c_str(), rec.id == cur)) {
        obj = Section{};
        obj.preset = rec.id;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", shown.c_str());
  whole_name_below(preview, shown);
  return changed;
}

// Each control shows the key as the config sets it, else the value the engine resolved (a preset's layout of
// record, or the engine's default): one copy of each default, the engine's.
bool pow2_slider(const char* label, std::optional<long long>& key, int max_exp, long long resolved) {
  const long long value = key.value_or(resolved);
  int e = 0;
  while ((1 << e) < value && e < max_exp) ++e;
  char fmt[32];
  std::snprintf(fmt, sizeof fmt, "%d", 1 << e);
  if (slider_int(label, e, 0, max_exp, fmt)) {
    key = 1LL << e;
    return true;
  }
  return false;
}

bool string_combo(const char* label, std::optional<std::string>& key, std::initializer_list<const char*> items,
                  const std::string& resolved) {
  const std::string cur = key.value_or(resolved);
  bool changed = false;
  if (begin_combo(label, cur.c_str())) {
    for (const char* it : items)
      if (ImGui::Selectable(it, cur == it)) key = it, changed = true;
    ImGui::EndCombo();
  }
  return changed;
}

// The layout the engine resolved from the panel's request (what a control shows for a key the request leaves
// to a preset's record or to the defaults); the defaults while the request is refused.
const perf::Layout& resolved_layout(const PerfView& v) {
  static const perf::Layout defaults;
  return v.valid ? v.parsed.layout : defaults;
}

void fix_dp(PerfView& v) {  // keep tp*pp*dp = GPUs while the student moves the other degrees
  perf::ParallelRequest& par = v.config.parallel ? *v.config.parallel : v.config.parallel.emplace();
  // The config's "gpus", else the count the engine parsed (from "nodes", or one node of the preset).
  const long long gpus = v.config.cluster.gpus.value_or(v.valid ? (long long)v.parsed.cluster.gpus() : 0LL);
  const perf::Layout& L = resolved_layout(v);
  const long long tpp = par.tp.value_or(L.tp) * par.cp.value_or(L.cp) * par.pp.value_or(L.pp);
  if (gpus > 0 && tpp > 0) par.dp = std::max<long long>(1, gpus / tpp);
}

// Fits the layout to a machine of `machine` GPUs (perf::fit_layout): tp and pp as chosen where they fit, dp
// the largest that runs, and cluster.gpus the GPUs that layout uses. Every position of the nodes slider and
// of the degree, micro-batch and batch controls is then a layout the estimate accepts, never "tp*pp*dp must
// equal the cluster's GPUs". When the rest of the config is refused (or no layout runs), dp follows the
// machine as before and the results name what is wrong.
void fit_to_machine(ExplorerState& s, long long machine) {
  PerfView& v = s.perf;
  perf::Request& cfg = v.config;
  perf::Request trial = cfg;
  trial.cluster.gpus = machine;
  trial.cluster.nodes.reset();
  try {
    const perf::Config c = perf::parse_config(*s.catalog, trial, "panel layout", false);
    if (const auto f = perf::fit_layout(c, machine)) {
      perf::ParallelRequest& par = cfg.parallel ? *cfg.parallel : cfg.parallel.emplace();
      par.tp = f->layout.tp, par.pp = f->layout.pp, par.dp = f->layout.dp;
      if (f->layout.layers_per_stage.empty()) par.layers_per_stage.reset();
      cfg.cluster.gpus = f->gpus;
      cfg.cluster.nodes.reset();  // "gpus" now says how many; a stale "nodes" would only confuse a reader
      v.machine_gpus = machine, v.fitted_gpus = f->gpus;
      return;
    }
  } catch (const std::exception&) {
    // Refused for another reason (the results say which): the old rule below keeps the degrees moving.
  }
  cfg.cluster.gpus = machine;
  cfg.cluster.nodes.reset();
  v.machine_gpus = machine, v.fitted_gpus = machine;
  fix_dp(v);
}

// The network between nodes the engine uses: its rate (and whether the config overrides the preset's), the
// fabric whose efficiency and latency it takes, and a warning when the rate is below one link of that
// fabric (25 Gb/s cannot be InfiniBand EDR: the collectives would keep InfiniBand's efficiency).
void draw_network(ExplorerState& s) {
  const Catalog& cat = *s.catalog;
  const PerfView& v = s.perf;
  const perf::ClusterSpec& cs = v.parsed.cluster;
  if (cs.nodes <= 1) return;  // nothing crosses a network
  const perf::ClusterRequest& cl = v.config.cluster;
  const Record* preset = cl.preset ? cat.table("clusters")->find(*cl.preset) : nullptr;
  const std::string fabric_id = cl.fabric ? *cl.fabric : preset ? preset->text_or("fabric", "") : "";
  const Table* ft = cat.table("fabrics");
  const Record* fabric = ft ? ft->find(fabric_id) : nullptr;
  const bool overridden = cl.node_network_Gbps.has_value();
  const double preset_rate = preset ? preset->get_or("network_per_server_Gbps", 0) : 0;
  char rate[96];
  if (overridden && preset_rate > 0 && preset_rate != cs.node_network_Gbps)
    std::snprintf(rate, sizeof rate, "%g Gb/s per node (set here; the preset has %g)", cs.node_network_Gbps,
                  preset_rate);
  else
    std::snprintf(rate, sizeof rate, "%g Gb/s per node", cs.node_network_Gbps);
  wrapped_text(true, "Network: %s over %s, collectives at %.0f%% of it%s", rate,
               fabric ? fabric->name.c_str() : "a custom network", 100 * cs.inter_bus_efficiency,
               cs.inter_busbw_GBps > 0 ? " (measured bus bandwidth used)" : "");
  track(s, "perf.network");
  // The fabric is a control, not only a key: the warning below sends the class here, so it must be on screen.
  if (ft) {
    perf::ClusterRequest& cfg_cl = s.perf.config.cluster;
    ImGui::SetNextItemWidth(-(ImGui::CalcTextSize("network fabric").x + ImGui::GetStyle().ItemInnerSpacing.x));
    const std::string fabric_name = fabric ? fabric->name : "(the preset's)", preview = combo_preview(fabric_name);
    if (begin_combo("network fabric##perf", preview.c_str(), 0, nullptr, fabric_name.c_str())) {
      if (ImGui::Selectable("(the cluster preset's own)", !cl.fabric)) cfg_cl.fabric.reset();
      for (const Record& r : ft->records)
        if (r.text_or("kind", "") == "inter-node" && ImGui::Selectable(r.name.c_str(), r.id == fabric_id))
          cfg_cl.fabric = r.id;
      ImGui::EndCombo();
    }
    if (fabric && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", fabric->name.c_str());
    track(s, "perf.fabric");
    whole_name_below(preview, fabric_name);
  }
  const double link = fabric ? fabric->get_or("link_Gbps", 0) : 0;
  if (link > 0 && cs.node_network_Gbps < link) {
    const Record* slow = ft ? ft->find("ethernet-25g-tcp") : nullptr;
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.75f, 0.3f, 1));
    wrapped_text(false,
                 "%g Gb/s is less than one %s link (%g Gb/s): that is another network; pick it in 'network "
                 "fabric' above (e.g. %s) so its efficiency and latency apply",
                 cs.node_network_Gbps, fabric->name.c_str(), link, slow ? slow->name.c_str() : "Ethernet");
    ImGui::PopStyleColor();
  }
}

void draw_controls(ExplorerState& s) {
  const Catalog& cat = *s.catalog;
  PerfView& v = s.perf;
  perf::Request& cfg = v.config;
  ImGui::TextDisabled("Model");
  if (preset_combo(cat, "model##perf", "models", cfg.model)) {
    const Record* r = cat.table("models")->find(*cfg.model.preset);
    if (r && r->find("global_batch")) cfg.parallel.value().global_batch = (long long)r->get("global_batch");
    if (r && r->find("tokens")) cfg.training.value().tokens = r->get("tokens");
  }
  track(s, "perf.model");
  ImGui::TextDisabled("Cluster");
  // The machine the cluster combo keeps (as many GPUs as the new preset has, at most).
  const long long gpus_before = v.machine_gpus > 0 ? v.machine_gpus : cfg.cluster.gpus.value_or(1024LL);
  if (preset_combo(cat, "cluster##perf", "clusters", cfg.cluster)) {
    const Record* r = cat.table("clusters")->find(*cfg.cluster.preset);
    const long long max_gpus = r ? (long long)r->get_or("gpus", 8) : 8;
    const long long gpn = r ? (long long)r->get_or("gpus_per_node", 8) : 8;
    fit_to_machine(s, std::max(gpn, std::min(gpus_before, max_gpus) / gpn * gpn));
  }
  track(s, "perf.cluster");
  long long machine = v.machine_gpus > 0 ? v.machine_gpus : (long long)v.parsed.cluster.gpus();
  if (v.valid || v.parsed.cluster.gpus_per_node > 0) {
    // The machine's node size, also when the config uses part of one node (the 2019 single-GPU baseline).
    const perf::ClusterSpec& pc = v.parsed.cluster;
    const int gpn = std::max(1, pc.node_gpus > 0 ? pc.node_gpus : pc.gpus_per_node);
    const Record* cr = cfg.cluster.preset ? cat.table("clusters")->find(*cfg.cluster.preset) : nullptr;
    const int max_nodes = std::max(1, int((cr ? cr->get_or("gpus", 10000) : 10000) / gpn));
    // The cluster the engine estimates (perf::Config), not a guess from the config's keys: a config may give
    // "nodes", or "gpus", or neither (one node), and only parse_config knows which wins. When the config is
    // refused, the config's "gpus" (64-bit: at most 2^30, the codec's range), else the last valid cluster.
    const long long gpus_now =
        v.valid ? (long long)v.parsed.cluster.gpus() : cfg.cluster.gpus.value_or((long long)v.parsed.cluster.gpus());
    sync_machine(v);  // the config's own count, which the cluster combo above may have fitted this frame
    machine = v.machine_gpus > 0 ? v.machine_gpus : gpus_now;
    int nodes = int(std::clamp(machine / gpn, 1LL, (long long)max_nodes));
    if (slider_int_clamped("nodes##perf", nodes, 1, max_nodes, nodes == 1 ? "%d node" : "%d nodes",
                           ImGuiSliderFlags_Logarithmic)) {
      machine = (long long)std::clamp(nodes, 1, max_nodes) * gpn;
      fit_to_machine(s, machine);
    }
    track(s, "perf.nodes");
    const AcceleratorWords w = accelerator_words(&cat, v.parsed.cluster.gpu);
    // On one node, how many of its GPUs the job uses: the single-GPU baselines and one-server runs of the
    // literature (Shoeybi et al. 2019 measured 1 to 8 of a DGX-2H's 16) run on part of it.
    if (nodes == 1 && gpn > 1) {
      const long long in_use = std::clamp(machine, 1LL, (long long)gpn);
      const std::string label = w.many + " in use##perf", shown = std::to_string(in_use);
      ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
      if (begin_combo(label.c_str(), shown.c_str())) {
        for (int k = 1; k <= gpn; ++k) {
          if (gpn % k != 0) continue;
          if (ImGui::Selectable(std::to_string(k).c_str(), k == in_use) && k != in_use) {
            machine = k;
            fit_to_machine(s, machine);
          }
          track(s, ("perf.gpus." + std::to_string(k)).c_str());
        }
        ImGui::EndCombo();
      }
      track(s, "perf.gpus");
    }
    if (machine < gpn)
      ImGui::TextDisabled("%lld %s of one %d-%s node", machine, (machine == 1 ? w.one : w.many).c_str(), gpn,
                          w.one.c_str());
    else
      ImGui::TextDisabled("%lld %s, %d per node", (long long)nodes * gpn, (nodes * gpn == 1 ? w.one : w.many).c_str(),
                          gpn);
    if (v.valid) draw_network(s);
    // The hourly price the cost is computed at: the preset's catalog row unless typed here (a custom cluster
    // has none, and the results then ask for one here).
    double price = v.parsed.cluster.price_per_gpu_hour_usd;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    if (input_double("price, USD per hour##perf", price, 0.1, 1.0, "%.2f"))
      cfg.cluster.price_per_gpu_hour_usd = std::clamp(price, 0.0, 1e4);
    track(s, "perf.price");
  }
  ImGui::TextDisabled("Training stack");
  if (const Table* sw = cat.table("software")) {
    // The stack the config names, else the one the engine last ran (the preset's): a refused layout does
    // not turn the chosen stack into "(preset default)".
    const std::string cur = cfg.software.value_or(v.parsed.software.id);
    const Record* r = sw->find(cur);
    ImGui::SetNextItemWidth(-(ImGui::CalcTextSize("software").x + ImGui::GetStyle().ItemInnerSpacing.x));
    const std::string stack_name = r ? r->name : "(preset default)", preview = combo_preview(stack_name);
    if (begin_combo("software##perf", preview.c_str(), 0, nullptr, stack_name.c_str())) {
      if (ImGui::Selectable("(the preset's own stack)", !cfg.software)) cfg.software.reset();
      for (const Record& rec : sw->records)
        if (ImGui::Selectable(rec.name.c_str(), rec.id == cur)) cfg.software = rec.id;
      ImGui::EndCombo();
    }
    track(s, "perf.software");
    whole_name_below(preview, stack_name);
  }
  ImGui::Separator();
  ImGui::TextDisabled("Parallel layout");
  perf::ParallelRequest& par = cfg.parallel.value();  // draw() gives every section
  const bool can_fit = machine > 0;                   // no cluster parsed yet: nothing to fit to
  const perf::Layout& shown = resolved_layout(v);
  if (pow2_slider("tensor (tp)", par.tp, 5, shown.tp) && can_fit) fit_to_machine(s, machine);
  glossary_tooltip("tp");  // each degree's label defines it on hover (assets/glossary.json)
  track(s, "perf.tp");
  // Context parallelism splits each sequence over GPUs: only for long sequences, and only on a stack that has
  // it (the estimate refuses it otherwise and says which stacks do).
  if (pow2_slider("context (cp)", par.cp, 5, shown.cp) && can_fit) fit_to_machine(s, machine);
  glossary_tooltip("cp");
  track(s, "perf.cp");
  int pp = int(par.pp.value_or(shown.pp));
  if (slider_int("pipeline (pp)", pp, 1,
                 std::max(1, v.parsed.model.layers > 0 ? std::min(128, v.parsed.model.layers) : 64))) {
    par.pp = pp;
    if (can_fit) fit_to_machine(s, machine);
  }
  glossary_tooltip("pp");
  track(s, "perf.pp");
  ImGui::Text("data (dp) = %lld", par.dp.value_or(shown.dp));
  glossary_tooltip("dp");
  track(s, "perf.dp");
  // dp must divide the global batch with the micro-batch: the layout follows these too.
  if (pow2_slider("micro-batch", par.micro_batch, 6, shown.micro_batch) && can_fit) fit_to_machine(s, machine);
  glossary_tooltip("micro-batch");
  track(s, "perf.micro_batch");
  int gb = int(par.global_batch.value_or(shown.global_batch));
  if (input_int_clamped("global batch", gb, 1, 1 << 24, 64, 512)) {
    par.global_batch = gb;
    if (can_fit) fit_to_machine(s, machine);
  }
  string_combo("schedule", par.schedule, {"1f1b", "gpipe", "interleaved"}, schedule_name(shown.schedule));
  glossary_tooltip("1F1B bubble");
  track(s, "perf.schedule");
  int vs = int(par.virtual_stages.value_or(shown.virtual_stages));
  if (slider_int("virtual stages", vs, 1, 8)) par.virtual_stages = vs;
  int zero = int(par.zero.value_or(shown.zero));
  if (slider_int("ZeRO stage", zero, 0, 3)) par.zero = zero;
  glossary_tooltip("ZeRO");
  track(s, "perf.zero");
  string_combo("recompute", par.recompute, {"none", "selective", "full"}, perf::to_string(shown.recompute));
  track(s, "perf.recompute");
  bool sp = par.sequence_parallel.value_or(shown.sequence_parallel);
  if (ImGui::Checkbox("sequence parallel", &sp)) par.sequence_parallel = sp;
  // Offloading (ZeRO-Offload): the layout's own switches, so a model too big for HBM can be tried.
  const bool off_opt = par.offload_optimizer.value_or(shown.offload_optimizer),
             off_act = par.offload_activations.value_or(shown.offload_activations);
  const char* const kOffload[] = {"nothing", "optimizer", "optimizer + checkpoints", "checkpoints"};
  const int cur = off_opt ? (off_act ? 2 : 1) : (off_act ? 3 : 0);
  if (begin_combo("offload##perf", kOffload[cur])) {
    for (int i = 0; i < 4; ++i)
      if (ImGui::Selectable(kOffload[i], i == cur)) {
        par.offload_optimizer = i == 1 || i == 2;
        par.offload_activations = i == 2 || i == 3;
      }
    ImGui::EndCombo();
  }
  glossary_tooltip("offload");
  track(s, "perf.offload");
  perf::TrainingRequest& training = cfg.training.value();  // draw() gives every section
  const perf::Training resolved_training = v.valid ? v.parsed.training : perf::Training{};
  string_combo("precision", training.precision, {"fp16", "bf16", "fp32", "tf32"},
               perf::to_string(resolved_training.precision));
  double tokens_b = training.tokens.value_or(resolved_training.tokens) / 1e9;
  if (input_double("tokens (billions)", tokens_b, 10, 100, "%.0f")) training.tokens = std::max(1.0, tokens_b) * 1e9;
}

// ---- results -------------------------------------------------------------------------------------------

void draw_price_source(ExplorerState& s) {
  const perf::ClusterRequest& cl = s.perf.config.cluster;
  if (!cl.preset || cl.price_per_gpu_hour_usd) return;
  const Record* r = s.catalog->table("clusters")->find(*cl.preset);
  if (const Sourced* p = r ? r->find("usd_per_gpu_hour") : nullptr) {
    ImGui::TextDisabled("at");  // on its own line: beside the cost it ran off a projector's screen
    ImGui::SameLine();
    sourced_text(*s.catalog, *p, "USD/h");
    ImGui::SameLine();
    ImGui::TextDisabled("per %s", accelerator_words(&*s.catalog, s.perf.parsed.cluster.gpu).hour.c_str());
    // What the price is and what it pays for: Capital prices its plan at another row of the same table.
    const std::string basis = price_basis(*s.catalog, p->value, s.perf.parsed.cluster.gpu);
    if (!basis.empty())
      wrapped_text(true,
                   "That is renting: %s, one accelerator for an hour with its share of the server and "
                   "network; no power or staff on top.",
                   basis.c_str());
  }
}

// What the chosen stack is, with its sources, and the same layout under every other stack.
void draw_stacks(ExplorerState& s) {
  PerfView& v = s.perf;
  const Table* sw = s.catalog->table("software");
  const Record* cur = sw ? sw->find(v.parsed.software.id) : nullptr;
  if (!cur) return;
  ImGui::Spacing();
  wrapped_text(false, "Run by %s: %s.", cur->name.c_str(), cur->text_or("kernels", "").c_str());
  const perf::Software& k = v.parsed.software;
  // The large-GEMM fraction this stack reaches on this GPU (its own value, else the GPU's).
  const double gemm = k.gemm_fraction > 0 ? k.gemm_fraction : v.parsed.cluster.matmul_peak_fraction;
  // With the stack's confidence marks (" ~" inferred, " ?" assumed), as the catalog's cells carry them: OpenAI's
  // 2020 code published no kernels, so its efficiencies are assumptions and the line says so.
  std::string arch;
  if (const Table* g = s.catalog->table("gpus"))
    if (const Record* gr = g->find(v.parsed.cluster.gpu)) arch = gr->text_or("architecture", "");
  for (char& ch : arch) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  auto mark = [&](const std::string& key) {
    const Sourced* x = cur->find(key);
    const char* m = x ? confidence_mark(x->confidence) : "";
    return std::string(*m ? " " : "") + m;
  };
  const std::string gemm_mark = k.gemm_fraction > 0 ? mark("gemm_fraction_" + arch) : "";
  wrapped_text(true, "Large GEMMs at %.0f%%%s of peak%s; memory-bound kernels x%.1f%s the traffic of fused ones; %s.",
               100 * gemm, gemm_mark.c_str(),
               k.gemm_fraction > 0 ? " (this stack on this accelerator)" : " (the accelerator's own)",
               k.elementwise_factor, mark("elementwise_factor").c_str(),
               k.flash_attention ? "flash attention" : "attention scores through HBM");
  track(s, "perf.stack");
  // The title shortened with "..." where the pane is narrower than it (a phone: it ran 39 px past the edge); the
  // node keeps one id whatever it shows, and its whole title for a screen reader.
  if (v.by_stack.empty()) return;
  const char* title = "The same layout on every training stack";
  const float room = ImGui::GetContentRegionAvail().x - ImGui::GetTreeNodeToLabelSpacing();
  access::next_name(title);
  if (!ImGui::TreeNode((shorten_to_width(title, room) + "###perf_stacks").c_str())) return;
  if (ImGui::BeginTable("##stacks", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("stack");
    ImGui::TableSetupColumn("iteration");
    ImGui::TableSetupColumn("MFU");
    ImGui::TableSetupColumn("vs this one");
    ImGui::TableHeadersRow();
    for (const auto& [id, e] : v.by_stack) {
      const Record* r = sw->find(id);
      next_row();
      ImGui::TableNextColumn();
      if (ImGui::Selectable(r ? r->name.c_str() : id.c_str(), id == cur->id, ImGuiSelectableFlags_SpanAllColumns))
        v.config.software = id;
      // A stack that lacks a feature of this layout (estimate's "what-if" note) cannot run it: no time for it.
      const auto lacks = std::find_if(e.notes.begin(), e.notes.end(),
                                      [](const std::string& n) { return n.rfind("what-if: ", 0) == 0; });
      ImGui::TableNextColumn();
      if (lacks != e.notes.end()) {
        ImGui::TextDisabled("cannot run it");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", lacks->c_str() + 9);
        ImGui::TableNextColumn();
        ImGui::TableNextColumn();
        continue;
      }
      ImGui::Text("%.3g s", e.iteration_time_s);
      ImGui::TableNextColumn();
      ImGui::Text("%.0f%%", 100 * e.mfu);
      ImGui::TableNextColumn();
      ImGui::Text("%+.0f%%", 100 * (e.iteration_time_s / v.estimate.iteration_time_s - 1));
    }
    end_table("The same layout on every training stack");
  }
  track(s, "perf.stacks");
  ImGui::TreePop();
}

void draw_results(ExplorerState& s) {
  PerfView& v = s.perf;
  if (!v.valid) {
    ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "This layout is not valid:");
    wrapped_text(false, "%s", v.error.c_str());
    track(s, "perf.error");
    return;
  }
  const perf::Estimate& e = v.estimate;
  const AcceleratorWords w = accelerator_words(&*s.catalog, v.parsed.cluster.gpu);
  const long long n_acc = (long long)v.parsed.cluster.gpus();
  const char* acc_n = (n_acc == 1 ? w.one : w.many).c_str();  // "1 GPU", "8 GPUs"
  // Seconds and percentages as the narrations quote them (core/format.h): one number on one screen.
  begin_tracked(s);
  wrapped_text(false, "%s parameters, iteration %s, %s tokens/s", format_in_words(e.params).c_str(),
               format_seconds(e.iteration_time_s).c_str(), format_si(e.tokens_per_s).c_str());
  // Model FLOPs and hardware FLOPs named apart (Chowdhery et al. 2022, PaLM, App. B; Korthikanti et al.
  // 2022): MFU counts the FLOPs the model needs, HFU adds the recomputed activations the GPUs also run.
  if (v.parsed.layout.recompute == perf::Recompute::none)
    wrapped_text(false, "model FLOPs %.0f TFLOP/s per %s (MFU %s); nothing recomputed, so HFU = MFU",
                 e.model_tflops_per_gpu, w.one.c_str(), format_percent(e.mfu).c_str());
  else
    wrapped_text(false,
                 "model FLOPs %.0f TFLOP/s per %s (MFU %s); with %s recompute the %s do %.0f TFLOP/s "
                 "(HFU %s)",
                 e.model_tflops_per_gpu, w.one.c_str(), format_percent(e.mfu).c_str(),
                 perf::to_string(v.parsed.layout.recompute), w.many.c_str(), e.achieved_tflops_per_gpu,
                 format_percent(e.hfu).c_str());
  end_tracked(s, "perf.headline");
  draw_screen_basis(s, "perf");
  // What the engine assumed or could not honour (a layout the preset's default stack could not run is a
  // what-if): said beside the numbers it qualifies.
  for (const std::string& n : e.notes) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.75f, 0.3f, 1));
    wrapped_text(false, "%s", n.c_str());
    ImGui::PopStyleColor();
  }
  if (!e.notes.empty()) track(s, "perf.notes");
  begin_tracked(s);
  if (v.parsed.cluster.price_per_gpu_hour_usd > 0) {
    wrapped_text(false, "%.1f days for %.0f B tokens on %lld %s, %s %ss, $%s", e.training_days,
                 v.parsed.training.tokens / 1e9, n_acc, acc_n, format_si(e.gpu_hours).c_str(), w.hour.c_str(),
                 format_si(e.cost_usd).c_str());
    draw_price_source(s);
  } else {
    // A custom cluster has no price: say so rather than print "$0".
    wrapped_text(false, "%.1f days for %.0f B tokens on %lld %s, %s %ss", e.training_days,
                 v.parsed.training.tokens / 1e9, n_acc, acc_n, format_si(e.gpu_hours).c_str(), w.hour.c_str());
    wrapped_text(true, "(no price: type one in 'price, USD per hour' under Cluster to see the cost)");
  }
  // The nodes slider offers a machine; the layout uses the GPUs it can (fit_to_machine): say how many and why.
  if (v.machine_gpus > n_acc) {
    const perf::Layout& L = v.parsed.layout;
    wrapped_text(true,
                 "The layout uses %s of the %s %s the nodes slider offers: %s, the largest dp "
                 "on whole nodes that splits the global batch of %s sequences into micro-batches of %d (the "
                 "search below also estimates each layout on the %s it uses).",
                 with_thousands(double(n_acc)).c_str(), with_thousands(double(v.machine_gpus)).c_str(), w.many.c_str(),
                 L.degrees().c_str(), with_thousands(double(L.global_batch)).c_str(), L.micro_batch, w.many.c_str());
  }
  if (v.parsed.training.tokens_from == perf::Training::TokensFrom::assumed)
    wrapped_text(true,
                 "(%.0f B tokens is an assumption, GPT-3's count: the catalog has no token count for this model; "
                 "type its own in 'tokens (billions)')",
                 v.parsed.training.tokens / 1e9);
  end_tracked(s, "perf.cost");

  ImGui::Spacing();
  // In GiB, as the legend below and the scenarios' narration ({{...|gib}}) write it: one unit on one screen.
  const double gib = double(1ull << 30);
  begin_tracked(s);  // the bar and its parts in GiB: what a narration about memory quotes
  wrapped_text(false, "Memory per %s: %s of %s %s", w.one.c_str(), format_gib(e.memory.total).c_str(),
               format_gib(e.hbm_bytes).c_str(), e.fits ? "(fits)" : "- does NOT fit");
  std::vector<BarPart> mem = {{"weights", e.memory.weights / gib, part_color(0)},
                              {"gradients", e.memory.gradients / gib, part_color(1)},
                              {"optimizer", e.memory.optimizer / gib, part_color(2)},
                              {"activations", e.memory.activations / gib, part_color(3)}};
  // ZeRO-3 and FSDP: the whole weights and gradients of the units being computed, on top of the shards.
  if (e.memory.gathered > 0) mem.push_back({"gathered", e.memory.gathered / gib, part_color(4)});
  const std::string mem_title = "Memory per " + w.one;
  stacked_bar("##mem", mem, std::max(e.memory.total, e.hbm_bytes) / gib * 1.05, e.hbm_bytes / gib, "HBM", "%.1f GiB",
              26, mem_title.c_str(), "GiB");
  for (size_t i = 0; i < mem.size(); ++i) {
    char label[64];
    std::snprintf(label, sizeof label, "%s %s", mem[i].label, format_gib(mem[i].value * gib).c_str());
    if (i) same_line_if_fits(label);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(mem[i].color), "%s", label);
  }
  // What offloading keeps in the hosts' memory instead, against the node's DRAM where the catalog has it.
  if (e.memory.host > 0) {
    const std::string cap = v.parsed.cluster.host_memory_bytes > 0
                                ? " of its " + format_gib(v.parsed.cluster.host_memory_bytes)
                                : " (the server's memory is not in the catalog)";
    wrapped_text(true, "On the host: %s per %s, %s per node%s", format_gib(e.memory.host).c_str(), w.one.c_str(),
                 format_gib(e.host_bytes_per_node).c_str(), cap.c_str());
  }
  end_tracked(s, "perf.memory");

  ImGui::Spacing();
  begin_tracked(s);  // the bar and its parts in seconds: "0.54 s of it is dp comm" is framed with it
  wrapped_text(false, "Where the %s of one iteration go (tp %s, dp %s):", format_seconds(e.iteration_time_s).c_str(),
               e.tp_algorithm.c_str(), e.dp_algorithm.c_str());
  const auto& T = e.time;
  std::vector<BarPart> tb = {{"compute", T.compute, part_color(0)},     {"tp comm", T.tp_comm, part_color(1)},
                             {"cp comm", T.cp_comm, part_color(3)},     {"pp comm", T.pp_comm, part_color(4)},
                             {"dp comm", T.dp_comm, part_color(2)},     {"bubble", T.bubble, part_color(5)},
                             {"optimizer", T.optimizer, part_color(6)}, {"host copies", T.offload, part_color(7)}};
  stacked_bar("##time", tb, T.total, 0, "", "%.3f s", 26, "Time of one iteration", "s");
  // The parts in seconds, coloured as their bars (as narrations quote them: "0.54 s of it is dp comm").
  for (size_t i = 0, shown = 0; i < tb.size(); ++i) {
    if (tb[i].value <= 0) continue;
    char label[64];
    std::snprintf(label, sizeof label, "%s %.2f s", tb[i].label, tb[i].value);
    if (shown++) same_line_if_fits(label);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(tb[i].color), "%s", label);
  }
  if (e.tied_grad_s > 0)
    wrapped_text(true,
                 "pp comm includes %s for the tied embedding: the first and the last stage sum its two gradients "
                 "once an iteration, after the last backward pass",
                 format_seconds(e.tied_grad_s).c_str());
  end_tracked(s, "perf.time");
  draw_stacks(s);

  ImGui::Spacing();
  const int m = v.parsed.layout.micro_batches();
  const double bubble =
      perf::bubble_over_ideal(v.parsed.layout.schedule, v.parsed.layout.pp, m, v.parsed.layout.virtual_stages);
  const char* tail = v.gantt_micro_batches < m ? "; drawn with fewer micro-batches to stay legible:" : ":";
  if (v.parsed.layout.pp == 1 && m == 1)
    wrapped_text(false,
                 "One stage, no pipeline (pp = 1): one micro-batch, with no bubble (forward light, backward dark)%s",
                 tail);
  else if (v.parsed.layout.pp == 1)  // no pipeline: one stage runs its micro-batches back to back, nothing waits
    wrapped_text(false,
                 "One stage, no pipeline (pp = 1): the %d micro-batches run one after another, with no bubble "
                 "(forward light, backward dark)%s",
                 m, tail);
  else
    wrapped_text(false,
                 "Pipeline schedule (%s, %d stages; forward light, backward dark, colour = model chunk). "
                 "Bubble: %.1f%% of the ideal time with m = %d micro-batches%s",
                 schedule_name(v.parsed.layout.schedule), v.parsed.layout.pp, 100 * bubble, m, tail);
  if (v.gantt_micro_batches < m) wrapped_text(true, "m = %d shown", v.gantt_micro_batches);
  if (v.timeline.empty() && v.parsed.layout.pp > 0)
    wrapped_text(true, "%s", "(too many operations to draw; lower the micro-batch count)");
  else
    pipeline_gantt(v.timeline, v.parsed.layout.pp, std::clamp(16.0f * v.parsed.layout.pp, 60.0f, 220.0f));
  track(s, "perf.gantt");
}

// ---- search ----

void apply_layout(PerfView& v, const perf::Layout& L) {
  perf::ParallelRequest& par = v.config.parallel ? *v.config.parallel : v.config.parallel.emplace();
  par.tp = L.tp, par.pp = L.pp, par.dp = L.dp, par.micro_batch = L.micro_batch;
  par.schedule = schedule_name(L.schedule), par.virtual_stages = L.virtual_stages;
  par.zero = L.zero, par.recompute = perf::to_string(L.recompute);
  par.sequence_parallel = L.sequence_parallel;
  if (L.cp > 1 || par.cp) par.cp = L.cp;
  v.config.cluster.gpus = L.ranks();
  v.search_auto = false;  // keep the ranked list while the student explores its layouts
}

// The search's reasons name the engine's keys ("micro_batch*dp does not divide the global batch"): a student
// reads the controls' words instead.
std::string rejection_in_words(const std::string& reason) {
  static const std::vector<std::pair<std::string, std::string>> words = {
      {"micro_batch*dp", "micro-batch x data parallel"},
      {"tp*pp*dp", "tensor x pipeline x data parallel"},
      {"tp ", "tensor parallel "},
  };
  std::string out = reason;
  for (const auto& [key, say] : words)
    if (out.rfind(key, 0) == 0) out = say + out.substr(key.size());
  return out;
}

void draw_search(ExplorerState& s) {
  PerfView& v = s.perf;
  if (!v.search_error.empty()) {
    wrapped_text(false, "Layout search: no search while the configuration above is refused.");
    return;
  }
  const AcceleratorWords sw = accelerator_words(&*s.catalog, v.search_config.cluster.gpu);
  ImGui::Text("Layout search (up to %lld %s):", (long long)v.search_config.cluster.gpus(),
              (v.search_config.cluster.gpus() == 1 ? sw.one : sw.many).c_str());
  char progress[96];
  if (!v.search_done)
    std::snprintf(progress, sizeof progress, "searching... %zu slices left", v.search_left);
  else
    std::snprintf(progress, sizeof progress, "%s layouts, %s estimated, %.0f ms",
                  with_thousands(double(v.search.considered)).c_str(),
                  with_thousands(double(v.search.evaluated)).c_str(), v.search.elapsed_s * 1e3);
  // The progress ("... 95 ms", "... 1,234 ms") is last on the line: its width follows the machine's load, and
  // wrapping before the checkbox moved the table (and a scenario's highlight on it) by a line.
  same_line_if_fits(ImGui::CalcTextSize("follow model/cluster").x + ImGui::GetFrameHeight() * 1.5f);
  if (ImGui::Checkbox("follow model/cluster", &v.search_auto) && v.search_auto) v.search_for.reset();
  // On its own line: one line whatever its digits, wrapped only where the pane is narrower than it (a phone: the
  // sanitizer build's slower search, "... 12,345 ms", ran 17 px past a 320 px window).
  wrapped_text(true, "%s", progress);
  // An empty table reads as "nothing happened": say that every layout was refused, and where the reasons are.
  if (v.search_done && v.search.ranked.empty() && v.search.considered > 0)
    wrapped_text(false,
                 "No layout runs on these %s with this stack: every one was refused, for the reasons "
                 "under the table.",
                 sw.many.c_str());
  // ScrollX: on a narrow screen the columns keep their width and the table scrolls, instead of shrinking
  // to unreadable columns.
  const ImGuiTableFlags fl = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                             ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit;
  // A cp column where the ranking holds context-parallel layouts (only stacks that have it propose them).
  const bool show_cp = std::any_of(v.search.ranked.begin(), v.search.ranked.end(),
                                   [](const perf::SearchCandidate& c) { return c.layout.cp > 1; });
  const int k = show_cp ? 1 : 0;  // columns after tp move right by one
  if (ImGui::BeginTable("##perf_search", 11 + k, fl, ImVec2(0, 200))) {
    // What a layout achieves first (days, MFU, memory), then what it is: on a projector the table scrolls
    // sideways, and its right edge cut the MFU column ("MF") of a ranking by days and MFU.
    for (const char* h : {"#", "days", "MFU", "memory", "tp", "cp", "pp", "dp", "mb", "ZeRO", "recompute", "schedule"})
      if (show_cp || std::string(h) != "cp") ImGui::TableSetupColumn(h);
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableHeadersRow();
    int rank = 1;
    for (const auto& c : v.search.ranked) {
      const auto& L = c.layout;
      next_row();
      ImGui::TableSetColumnIndex(0);
      char id[32];
      std::snprintf(id, sizeof id, "%d##rank%d", rank, rank);
      // Its cell shows the rank; a screen reader hears what pressing it does ("1" alone told nothing).
      access::next_name("Load layout " + std::to_string(rank) + ": tp " + std::to_string(L.tp) +
                        (L.cp > 1 ? " x cp " + std::to_string(L.cp) : std::string()) + " x pp " + std::to_string(L.pp) +
                        " x dp " + std::to_string(L.dp));
      if (ImGui::Selectable(id, false, ImGuiSelectableFlags_SpanAllColumns)) apply_layout(v, L);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("click to load this layout");
      if (rank == 1) track(s, "perf.search.best");
      ++rank;
      ImGui::TableSetColumnIndex(1), ImGui::Text("%.1f", c.estimate.training_days);
      ImGui::TableSetColumnIndex(2), ImGui::Text("%.0f%%", 100 * c.estimate.mfu);
      ImGui::TableSetColumnIndex(3), ImGui::Text("%s", format_quantity(c.estimate.memory.total, "bytes").c_str());
      ImGui::TableSetColumnIndex(4), ImGui::Text("%d", L.tp);
      if (show_cp) ImGui::TableSetColumnIndex(5), ImGui::Text("%d", L.cp);
      ImGui::TableSetColumnIndex(5 + k), ImGui::Text("%d", L.pp);
      ImGui::TableSetColumnIndex(6 + k), ImGui::Text("%d", L.dp);
      ImGui::TableSetColumnIndex(7 + k), ImGui::Text("%d", L.micro_batch);
      ImGui::TableSetColumnIndex(8 + k), ImGui::Text("%d", L.zero);
      ImGui::TableSetColumnIndex(9 + k), ImGui::Text("%s", perf::to_string(L.recompute));
      ImGui::TableSetColumnIndex(10 + k);
      if (L.schedule == PipeSchedule::interleaved)
        ImGui::Text("interl. x%d", L.virtual_stages);
      else
        ImGui::Text("%s", schedule_name(L.schedule));
    }
    end_table("Layouts ranked");
  }
  track(s, "perf.search");
  if (!v.search.rejected_by_reason.empty()) {
    std::string why = "Rejected: ";
    for (const auto& [reason, count] : v.search.rejected_by_reason)
      why += rejection_in_words(reason) + " (" + with_thousands(double(count)) + "); ";
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    wrapped_text(false, "%s", why.c_str());
    ImGui::PopStyleColor();
  }
}

// ---- draw and the registration ----

void draw(ExplorerState& s) {
  // A scenario may hand over a config with sections left out (a search config has no "parallel"): the
  // widgets read each section, so give every one (the engine fills in the defaults).
  if (!s.perf.config.parallel) s.perf.config.parallel.emplace();
  if (!s.perf.config.training) s.perf.config.training.emplace();
  recompute(s);
  child_opens_at_top(s);
  const Panes panes = two_panes(ImGui::GetFontSize() * 17, ImGui::GetFontSize() * 16);
  ImGui::BeginChild("##perf_controls", panes.first, true);
  // Widgets end where the longest label still fits inside the column.
  ImGui::PushItemWidth(-ImGui::CalcTextSize("tokens (billions)").x - ImGui::GetStyle().ItemInnerSpacing.x);
  draw_controls(s);
  ImGui::PopItemWidth();
  ImGui::EndChild();
  between_panes(panes);
  // The results scroll on their own: a step's view opens them at their top too, not where the last step's
  // outline scrolled them (turing-nlg-zero's time bar left supercomputer-2020's question scrolled away).
  child_opens_at_top(s);
  ImGui::BeginChild("##perf_results", panes.second, false);
  draw_results(s);
  ImGui::Separator();
  draw_search(s);
  draw_other_screens(s, "perf");
  ImGui::EndChild();
}

// The perf panel's cached estimate, when it belongs to the config shown.
nlohmann::json shown_estimate(const ExplorerState& s) {
  const PerfView& v = s.perf;
  if (!v.valid || !v.computed_for || !(*v.computed_for == v.config)) return nullptr;
  return perf::to_json(v.estimate, v.parsed);
}

PanelRegistrar reg{{.id = "perf",
                    .title = "Train a transformer",
                    .chapter = Chapter::parallelism,
                    .order = 10,
                    .draw = draw,
                    .summary = "Memory, time, days and dollars of a model on a cluster; every layout ranked",
                    .tabs = {},
                    .tab_of_widget = nullptr,
                    .needs_catalog = true,
                    .busy = [](const ExplorerState& s) { return bool(s.perf.search_job); },
                    // The config the student edited, as its differences from the shipped default.
                    .address = {{"estimate", [](const ExplorerState& s) { return default_config(s, "estimate"); },
                                 [](const ExplorerState& s) { return perf::to_json(s.perf.config); },
                                 [](ExplorerState& s, const nlohmann::json& c) {
                                   s.perf.config = perf::parse_request(c, "edits.estimate");
                                 }}},
                    .configs = {{"estimate",
                                 [](ExplorerState& s, const nlohmann::json& c, const scenario::EngineCall*) {
                                   s.perf.config = perf::parse_request(c, "the scenario's estimate config");
                                 },
                                 [](const ExplorerState& s) { return perf::to_json(s.perf.config); }, shown_estimate,
                                 [](ExplorerState& s) {
                                   s.perf.config =
                                       perf::parse_request(default_config(s, "estimate"), "configs/estimate.json");
                                 }}},
                    .default_config = "estimate",
                    .errors =
                        [](const ExplorerState& s) {
                          std::vector<std::string> out;
                          add_error(out, "perf", s.perf.error);
                          return out;
                        }}};

}  // namespace
}  // namespace mc::ui
