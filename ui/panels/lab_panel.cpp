// lab_panel.cpp - "Training lab": a small GPT trained live across virtual workers. Pick a layout
// (data, tensor, pipeline parallel, ZeRO stage, schedule), start / pause / step / reset, and watch the loss
// curves of every layout tried overlaid, text the model writes, each worker's memory, the messages
// between workers in the last step with the bytes the communication model predicted, and the
// predictable-scaling sweep. All numbers come from engine/train (the code behind `megacluster train`).
//
// Sections: the run (the trainer and the sweep, advanced a slice at a time); exports, and the run kept
// across page reloads; drawing (controls, the loss chart, the train and scaling tabs); the registration and
// the corpus a user drops on the window.
#include "core/format.h"
#include "device/registry.h"
#include "train/device_peak.h"
#include "train/report.h"
#include "train/run.h"
#include "train/scaling.h"
#include "train/storage/corpus.h"
#include "ui/access.h"
#include "ui/explorer.h"
#include "ui/lab_jobs.h"
#include "ui/panels/lab_charts.h"
#include "ui/panels/lab_png.h"
#include "ui/widgets.h"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace mc::ui {
namespace {

// ---- the run ----

std::string layout_label(const train::TrainConfig& c) {
  const train::ParallelConfig& p = c.parallel;
  char buf[128];
  std::snprintf(buf, sizeof buf, "dp %d x tp %d x pp %d, ZeRO-%d%s", p.dp, p.tp, p.pp, p.zero,
                p.pp > 1 ? (p.schedule == PipeSchedule::gpipe ? ", GPipe" : ", 1F1B") : "");
  return buf;
}

// The lab's corpus for a run's "corpus" (train/run.h RunOptions): "default" is the built-in language.
std::string lab_corpus(const std::string& run_corpus) {
  return run_corpus == "default" ? LabView().corpus_id : run_corpus;
}

// The lab's config as `megacluster train` reads it (every key of RunOptions), with the corpus it trains on
// (a dropped file cannot travel: the default's then): what is exported, kept for a reload, put in the address.
nlohmann::json lab_config_json(const train::TrainConfig& c, const std::string& corpus_id) {
  train::RunOptions o;
  o.train = c;
  if (!corpus_id.empty()) o.corpus = corpus_id;
  return train::to_json(o);
}

std::string format_fixed(double x, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

void keep_curve(LabView& v) {
  if (!v.trainer || v.shown.report.losses.empty()) return;
  v.curves.push_back({layout_label(v.shown.report.config), v.shown.report.losses});
  if (v.curves.size() > 8) v.curves.erase(v.curves.begin());
}

// Stops the run's job between two steps and lets it go: it keeps its own reference to the trainer it was
// stepping, so the panel may build another one at once.
void drop_train_job(LabView& v) {
  if (v.train_job) v.train_job->cancel();
  v.train_job.reset();
  v.stepping_once = false;
}

// The trainer is the panel's (no job): what it draws comes from it.
void refresh_shown(LabView& v) {
  if (v.trainer) v.shown.report = train::report(*v.trainer);
}

// Loads the built-in list and the chosen built-in corpus from assets/corpus/ (once each; a dropped
// file is already loaded by open_corpus). A missing or broken asset leaves its message in corpus_error.
void ensure_corpus(const ExplorerState& s, LabView& v) {
  if (!v.corpus_text.empty() || !v.corpus_error.empty()) return;
  try {
    if (v.corpora.empty()) v.corpora = train::list_corpora(s.assets_dir);
    const train::Corpus c = train::resolve_corpus(v.corpus_id, s.assets_dir);
    v.corpus_name = c.name;
    v.corpus_entropy = c.entropy_nats_per_byte;
    v.corpus_text = c.text;
  } catch (const std::exception& e) {
    v.corpus_error = e.what();
  }
  v.built_for.reset();
}

// Rebuilds the run when the config changed (a scenario or a widget edited it).
void ensure_trainer(LabView& v) {
  if (v.built_for && *v.built_for == v.config) return;  // built (or refused) for this config already
  keep_curve(v);
  drop_train_job(v);
  v.trainer.reset();
  v.error.clear();
  v.shown = LabProgress{};
  v.export_requested = false;
  v.resume_note.clear();
  v.built_for = v.config;
  try {
    if (v.corpus_text.empty()) throw std::runtime_error(v.corpus_error.empty() ? "no corpus loaded" : v.corpus_error);
    train::validate(v.config);
    v.trainer = std::make_shared<train::Trainer>(v.config, v.corpus_text);
    refresh_shown(v);
  } catch (const std::exception& e) {
    // `running` stays as the user left it: typing "tp 3" on the way to "tp 4" passes through a layout that
    // cannot run, and training resumes by itself once the layout is valid again.
    v.error = e.what();
  }
}

// Takes what the run's job published, and the trainer back once the job is done.
void collect(ExplorerState& s, LabView& v) {
  if (!v.train_job) return;
  const bool done = v.train_job->done();  // read first: a job publishes its last slice before done()
  v.train_job->latest(v.shown);
  if (!done) return;
  const std::string err = v.train_job->error();
  v.train_job.reset();
  v.stepping_once = false;
  if (!err.empty() && err != "cancelled") {
    v.running = false;
    s.status = "training stopped: " + err;
  }
  refresh_shown(v);
}

// Brings the run's job in line with what the user asked for: Start trains to the end, Pause stops between
// two steps, Step trains one step once the run is paused.
void drive_training(ExplorerState& s, LabView& v) {
  collect(s, v);
  if (!v.trainer) return;
  const int total = v.shown.report.config.steps, at = v.shown.report.step;
  // Step on a running run pauses it first: its job stops between two steps, then one step is trained. (It
  // used to wait for the job, which trained on to the run's end.)
  if (v.step_once && v.running) v.running = false;
  if (v.train_job && !v.running && !v.stepping_once) v.train_job->cancel();
  if (v.train_job) return;
  if (v.step_once) {
    v.step_once = false;
    v.running = false;
    if (at < total) {
      v.stepping_once = true;
      v.train_job = std::make_shared<LabTrainJob>(v.trainer, at + 1, v.sample_every, v.shown);
      s.jobs.start(v.train_job);
    }
  } else if (v.running && at < total) {
    v.train_job = std::make_shared<LabTrainJob>(v.trainer, total, v.sample_every, v.shown);
    s.jobs.start(v.train_job);
  } else if (at >= total) {
    v.running = false;
  }
}

// A new sweep from the scenario's config (sweep_config) or the quick checkbox, on the lab's corpus.
void start_sweep(LabView& v) {
  v.sweep_requested = false;
  v.sweep_error.clear();
  try {
    train::ScalingConfig cfg = v.sweep_config  ? *v.sweep_config
                               : v.sweep_quick ? train::ScalingConfig::quick()
                                               : train::ScalingConfig{};
    cfg.corpus_entropy_nats_per_byte = v.corpus_entropy;  // set by ensure_corpus, 0 for a dropped file
    if (v.sweep_job) v.sweep_job->cancel();               // the old sweep's job stops on its own copy
    v.sweep_job.reset();
    v.sweep = std::make_shared<train::ScalingSweep>(cfg, v.corpus_text);
    v.sweep_shown = sweep_progress(*v.sweep, 0);
    v.sweep_running = true;
  } catch (const std::exception& e) {
    if (v.sweep_job) v.sweep_job->cancel();
    v.sweep_job.reset();
    v.sweep.reset();
    v.sweep_shown = SweepProgress{};
    v.sweep_running = false;
    v.sweep_error = e.what();
  }
}

// As drive_training, for the sweep: runs its job while sweep_running, stops it between two steps on Pause.
void drive_sweep(ExplorerState& s, LabView& v) {
  if (v.sweep_job) {
    const bool done = v.sweep_job->done();
    v.sweep_job->latest(v.sweep_shown);
    if (done) {
      if (!v.sweep_job->error().empty() && v.sweep_job->error() != "cancelled") v.sweep_error = v.sweep_job->error();
      v.sweep_job.reset();
      if (v.sweep) v.sweep_shown = sweep_progress(*v.sweep, v.sweep_shown.serial);
      if (!v.sweep_error.empty() || v.sweep_shown.done) v.sweep_running = false;
    }
  }
  if (v.sweep_job && (!v.sweep_running || !v.sweep)) v.sweep_job->cancel();  // paused, or a scenario's new one
  if (!v.sweep) return;
  if (!v.sweep_job && v.sweep_running && !v.sweep_shown.done) {
    v.sweep_job = std::make_shared<LabSweepJob>(v.sweep, v.sweep_shown.serial);
    s.jobs.start(v.sweep_job);
  }
}

// A layout field offering only the values the lab can run with the rest of the config (lab_valid_values):
// "dp 3" with a global batch of 8 sequences is not offered, rather than offered and refused. The value a
// scenario set is shown even when the lab cannot run it (the error below the controls says why).
// The values come from the engine's range of the key (train::limits), at most kMostChoices of them.
constexpr int kMostChoices = 64;

void choice_field(ExplorerState& s, LabView& v, const char* label, const char* key, int& (*field)(train::TrainConfig&),
                  train::IntRange range, const char* zero_name = nullptr) {
  train::TrainConfig& c = v.config;
  if (!v.choices_for || !(*v.choices_for == c)) v.choices.clear(), v.choices_for = c;
  auto it = v.choices.find(key);
  if (it == v.choices.end())
    it = v.choices.emplace(key, lab_valid_values(c, field, range.lo, std::min(range.hi, range.lo + kMostChoices - 1)))
             .first;
  const int cur = field(c);
  auto name = [&](int x) { return x == 0 && zero_name ? std::string(zero_name) : std::to_string(x); };
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5);
  if (begin_combo(label, name(cur).c_str())) {
    const std::vector<int> values = it->second;  // c changes below; the list is this frame's
    for (int x : values)
      if (ImGui::Selectable(name(x).c_str(), x == cur) && x != cur) field(c) = x;
    ImGui::EndCombo();
  }
  track(s, std::string("lab.") + key);
}

bool int_field(const char* label, int& value, int lo, int hi) {
  int x = value;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  if (input_int_clamped(label, x, lo, hi)) {
    value = x;
    return true;
  }
  return false;
}

// The corpus combo: the built-in corpora of assets/corpus/index.json, plus the dropped file if any.
void draw_corpus_combo(ExplorerState& s, LabView& v) {
  ensure_corpus(s, v);
  const std::string shown = v.corpus_id.empty()     ? "file: " + v.corpus_name
                            : v.corpus_name.empty() ? v.corpus_id
                                                    : v.corpus_name;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
  // Shortened at its end, never cut; a screen reader has it whole.
  if (begin_combo("corpus", combo_preview(shown).c_str(), 0, nullptr, shown.c_str())) {
    for (const train::CorpusEntry& e : v.corpora) {
      if (ImGui::Selectable(e.title.c_str(), e.id == v.corpus_id) && e.id != v.corpus_id) {
        v.corpus_id = e.id;
        v.corpus_text.clear();
        v.corpus_error.clear();
        ensure_corpus(s, v);
        s.status = "training corpus: " + v.corpus_name;
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n(%s)", e.description.c_str(), e.license.c_str());
    }
    if (v.corpus_id.empty()) ImGui::Selectable(shown.c_str(), true);
    ImGui::EndCombo();
  }
  track(s, "lab.corpus");
  char about[160];
  std::snprintf(about, sizeof about, "%.1f KiB%s; or drop a UTF-8 .txt file to train on it",
                double(v.corpus_text.size()) / 1024, v.corpus_entropy > 0 ? ", entropy known" : "");
  same_line_if_fits(about);
  wrapped_text(true, "%s", about);
}

// ---- exports, and the run kept across page reloads -----------------------------------------------------

// The loss curves on screen as CSV: a step column, then one column per run (earlier runs, then this one).
std::string curves_csv(const LabView& v) {
  std::vector<LabCurve> all = v.curves;
  if (v.trainer) all.push_back({layout_label(v.shown.report.config) + " (now)", v.shown.report.losses});
  std::string out = "step";
  size_t rows = 0;
  for (const auto& c : all) {
    out += ",\"" + c.label + "\"";
    rows = std::max(rows, c.losses.size());
  }
  out += "\n";
  for (size_t i = 0; i < rows; ++i) {
    out += std::to_string(i + 1);
    for (const auto& c : all) {
      out += ',';
      if (i < c.losses.size()) out += format_fixed(c.losses[i], 6);
    }
    out += "\n";
  }
  return out;
}

// The lab's config as `megacluster train` reads it: the layout, the model, and the corpus it trains on.
nlohmann::json exported_config(const LabView& v) { return lab_config_json(v.config, v.corpus_id); }

// One download (a browser asked twice, for the checkpoint and the config, blocks or scatters the second):
// a tar of both, laid out as `megacluster train --resume` reads them.
void export_model(ExplorerState& s, LabView& v, const LabCheckpoint& file) {
  v.export_requested = false;
  if (!s.platform) return;
  std::string err;
  const std::string name = "lab-model-step" + std::to_string(file.step) + ".tar";
  const std::string where = s.platform->save_file(name, lab_model_archive(exported_config(v), file), err);
  if (where.empty()) {
    s.status = "export failed: " + err;
    return;
  }
  s.status = "exported " + where + "; to continue this run, unpack it (tar xf " + name +
             ") and run megacluster train lab-model/lab-config.json --checkpoint lab-model/checkpoint --resume";
}

// Whether the lab holds the run a scenario step set (not the student's own).
bool scenario_run(const LabView& v) { return v.scenario_config && *v.scenario_config == v.config; }

// Whether the run should be saved to the platform's storage now: every persist_every_s while it changes
// (web: a reload resumes it).
bool persist_due(const ExplorerState& s, const LabView& v, double now) {
  if (!s.platform || !s.platform->persistent() || !v.trainer || v.shown.report.step == 0) return false;
  if (scenario_run(v)) return false;  // a step's run is the scenario's: the student's kept run stays as it was
  const bool changed = v.shown.report.step != v.persisted_step || v.running != v.persisted_running;
  return changed && (now - v.persisted_at_s >= v.persist_every_s || v.running != v.persisted_running);
}

void persist(ExplorerState& s, LabView& v, const LabCheckpoint& file, double now) {
  try {
    s.platform->store("lab.checkpoint", file.bytes);
    s.platform->store("lab.config", train::kept_run_text(exported_config(v), v.running));
    v.persisted_at_s = now;
    v.persisted_step = file.step;
    v.persisted_running = v.running;
  } catch (const std::exception& e) {
    s.status = std::string("the run could not be kept for a reload: ") + e.what();
  }
}

// The checkpoints asked for (an export, the copy kept for a reload): taken from the trainer when the panel
// holds it, else asked of the job, which hands one over between two steps (a frame or two later).
void serve_checkpoints(ExplorerState& s, LabView& v) {
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  const bool keep = persist_due(s, v, now);
  if (!v.trainer || (!keep && !v.export_requested)) return;
  std::optional<LabCheckpoint> file;
  if (v.train_job) {
    v.train_job->request_checkpoint();
    file = v.train_job->take_checkpoint();
  } else {
    try {
      file = lab_checkpoint(*v.trainer);
    } catch (const std::exception& e) {
      v.export_requested = false;
      s.status = std::string("no checkpoint could be written: ") + e.what();
      return;
    }
  }
  if (!file) return;
  if (v.export_requested) export_model(s, v, *file);
  if (keep) persist(s, v, *file, now);
}

// Once, when the lab first draws: the run kept by persist() before a reload, if any.
void restore(ExplorerState& s, LabView& v) {
  if (v.restore_checked) return;
  v.restore_checked = true;
  if (!s.platform || !s.platform->persistent()) return;
  // A scenario step's run is the step's: the student's kept run waits for the student's own lab.
  if (scenario_run(v)) return;  // (a reload outside the scenario resumes it)
  const std::string kept = s.platform->stored("lab.config"), ck = s.platform->stored("lab.checkpoint");
  if (kept.empty() || ck.empty()) return;
  namespace fs = std::filesystem;
  try {
    const train::KeptRun k = train::parse_kept_run(kept, "the run kept by the browser");
    const train::RunOptions& o = k.options;
    const std::string corpus = lab_corpus(o.corpus);
    // A link that says what the lab trains is obeyed: the kept run only resumes when it is that run (a reload
    // of the same address), never in place of another one.
    if (v.config_from_link && (!(o.train == v.config) || corpus != v.corpus_id)) return;
    if (corpus != v.corpus_id) v.corpus_id = corpus, v.corpus_text.clear(), v.corpus_error.clear();
    ensure_corpus(s, v);
    v.config = o.train;
    ensure_trainer(v);
    if (!v.trainer) throw std::runtime_error(v.error);
    const fs::path dir = fs::temp_directory_path() / "megacluster-lab-restore";
    fs::create_directories(dir);
    const fs::path file = dir / "kept.mcck";
    std::ofstream(file, std::ios::binary) << ck;
    v.trainer->load_checkpoint(file.string());
    fs::remove_all(dir);
    refresh_shown(v);
    // What the kept model writes now (the text shown before the reload was not kept).
    v.shown.sample = v.trainer->sample(64, 0.8, uint64_t(v.trainer->step_index()));
    v.running = k.running && v.trainer->step_index() < v.trainer->config().steps;
    v.persisted_step = v.trainer->step_index();
    v.persisted_running = v.running;
    v.resume_note = "resumed at step " + std::to_string(v.trainer->step_index()) + ", kept by the browser";
  } catch (const std::exception& e) {
    s.status = std::string("the kept run could not be resumed (starting afresh): ") + e.what();
  }
}

// ---- drawing ----

void draw_controls(ExplorerState& s, LabView& v) {
  train::TrainConfig& c = v.config;
  // One row of fields that wraps onto the next line when the panel is narrow (a projector).
  const float field_w = ImGui::GetFontSize() * 6 + ImGui::GetStyle().ItemInnerSpacing.x;
  auto next = [&](const char* label) { same_line_if_fits(field_w + ImGui::CalcTextSize(label).x); };
  using TC = train::TrainConfig;
  choice_field(
      s, v, "dp", "dp", [](TC& t) -> int& { return t.parallel.dp; }, train::limits::degree);
  next("tp");
  choice_field(
      s, v, "tp", "tp", [](TC& t) -> int& { return t.parallel.tp; }, train::limits::degree);
  next("pp");
  choice_field(
      s, v, "pp", "pp", [](TC& t) -> int& { return t.parallel.pp; }, train::limits::degree);
  next("ZeRO");
  choice_field(
      s, v, "ZeRO", "zero", [](TC& t) -> int& { return t.parallel.zero; }, train::limits::zero);
  next("batch");
  choice_field(
      s, v, "batch", "batch", [](TC& t) -> int& { return t.batch; }, train::limits::batch);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Global batch in sequences, the same whatever the layout: each of the dp replicas takes an "
        "equal share, so dp must divide it.");
  next("schedule");
  int sched = c.parallel.schedule == PipeSchedule::gpipe ? 0 : 1;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  if (combo("schedule", &sched,
            "GPipe\0"
            "1F1B\0"))
    c.parallel.schedule = sched == 0 ? PipeSchedule::gpipe : PipeSchedule::one_f_one_b;
  next("precision");
  {
    int prec = c.precision == device::Precision::bf16 ? 2 : c.precision == device::Precision::tf32 ? 1 : 0;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    if (combo("precision", &prec,
              "fp32\0"
              "tf32\0"
              "bf16\0"))
      c.precision = prec == 2 ? device::Precision::bf16 : prec == 1 ? device::Precision::tf32 : device::Precision::fp32;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "The matrix products' inputs: fp32, TensorFloat-32 (10-bit mantissa, A100 and later) or bfloat16 (7-bit "
          "mantissa), summed in fp32; weights, optimizer and reductions stay fp32, as mixed-precision training "
          "keeps them. On the CPU the rounding is emulated, so the curves show what each precision does to the loss.");
  }
  next("micro-batches");
  choice_field(
      s, v, "micro-batches", "micro_batches", [](TC& t) -> int& { return t.parallel.micro_batches; },
      train::limits::micro_batches, "auto");
  next("steps");
  // At least one: a run of no steps has nothing to show.
  int_field("steps", c.steps, std::max(1, train::limits::steps.lo), train::limits::steps.hi);

  draw_corpus_combo(s, v);
  ensure_trainer(v);
  const bool can = v.trainer != nullptr;
  if (!can) ImGui::BeginDisabled();
  // A finished run has nothing to start: the button says so instead of doing nothing.
  const bool finished = can && !v.running && v.shown.report.step >= v.shown.report.config.steps;
  if (finished) ImGui::BeginDisabled();
  if (ImGui::Button(v.running ? "Pause###start" : "Start###start")) v.running = !v.running;
  if (finished) ImGui::EndDisabled();
  if (finished && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "The run has taken all its steps. Reset starts it over; a larger \"steps\" starts a new, longer run.");
  track(s, "lab.start");
  ImGui::SameLine();
  if (ImGui::Button("Step")) v.step_once = true;  // pauses a running run first
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Train one step (a running run pauses first)");
  track(s, "lab.step");
  ImGui::SameLine();
  if (ImGui::Button("Reset")) {
    keep_curve(v);
    drop_train_job(v);
    v.built_for.reset();
    v.trainer.reset();
    v.running = false;
    ensure_trainer(v);
  }
  track(s, "lab.reset");
  if (!can) ImGui::EndDisabled();
  same_line_if_fits(ImGui::CalcTextSize("Clear curves").x + 2 * ImGui::GetStyle().FramePadding.x);
  if (ImGui::Button("Clear curves")) v.curves.clear();
  same_line_if_fits(ImGui::CalcTextSize("log loss axis").x + ImGui::GetFrameHeight() * 1.5f);
  ImGui::Checkbox("log loss axis", &v.log_axis);
  if (!v.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.45f, 0.4f, 1));
    wrapped_text(false, "Cannot run this layout: %s%s", v.error.c_str(),
                 v.running ? " (training goes on as soon as the layout is valid)" : "");
    ImGui::PopStyleColor();
  }
}

// The loss chart with its exports. The PNG is drawn for print (lab_png.h), not read off the screen.
void draw_loss_chart(ExplorerState& s, LabView& v, const std::vector<LabCurve>& all, int total) {
  const double floor = v.corpus_entropy;  // drawn only when known (the synthetic language)
  lab_loss_chart("##loss", all, total, floor, v.log_axis, ImVec2(-1, 220));
  track(s, "lab.loss_chart");
  std::string err;
  if (ImGui::SmallButton("Export CSV") && s.platform) {
    const std::string where = s.platform->save_file("loss-curves.csv", curves_csv(v), err);
    s.status = where.empty() ? "export failed: " + err : "exported " + where;
  }
  track(s, "lab.export_csv");
  same_line_if_fits_button("Export PNG");
  if (ImGui::SmallButton("Export PNG") && s.platform) {
    try {
      const std::string where =
          s.platform->save_file("loss-curves.png", loss_chart_png(all, total, floor, v.log_axis), err);
      s.status = where.empty() ? "export failed: " + err : "exported " + where;
    } catch (const std::exception& e) {
      s.status = std::string("export failed: ") + e.what();
    }
  }
  track(s, "lab.export_png");
}

void draw_replay_controls(ExplorerState& s, LabView& v, const train::TrainerReport& t);

void draw_train_tab(ExplorerState& s, LabView& v) {
  draw_controls(s, v);
  drive_training(s, v);
  if (!v.trainer) {
    // A layout the lab cannot run (a scenario's, or the steps of a typed value): the runs so far stay on
    // the chart, beside the message above that says what to change.
    ImGui::BeginChild("lab_left", ImVec2(std::max(300.0f, ImGui::GetContentRegionAvail().x * 0.55f), 260), false);
    draw_loss_chart(s, v, v.curves, v.config.steps);
    ImGui::EndChild();
    return;
  }
  const train::TrainerReport& t = v.shown.report;  // the job's last copy while it trains
  const int step = t.step, total = t.config.steps;
  const std::string loss = t.losses.empty() ? std::string("-") : format_fixed(t.losses.back(), 4);
  wrapped_text(false, "step %d / %d   loss %s nats/byte   %lld parameters on %d workers   device: %s, %s products",
               step, total, loss.c_str(), (long long)t.parameters, t.config.parallel.workers(), t.kernels.c_str(),
               device::to_string(t.config.precision));
  track(s, "lab.status");
  // The rate the class sees: steps against the clock while the run trains.
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  // Stopped, the last rate stays (said as the rate while it trained): the line keeps its height, so the
  // buttons below do not move under the pointer when a run ends (e2e/classroom.mjs clicks Export PNG then).
  const bool training = v.train_job && v.running;
  if (training)
    v.wall.add(now, step);
  else if (!v.wall.samples.empty() && step < v.wall.samples.back().second)
    v.wall.samples.clear();  // reset: that rate was another run's
  const double tokens = double(t.config.batch) * t.config.model.context;
  v.wall_tokens_per_s = v.wall.steps_per_s() * tokens;
  if (!v.shown.step_seconds.empty()) {
    // The median of the latest steps: a frame that waited for the browser does not move it.
    std::vector<double> sorted = v.shown.step_seconds;
    std::sort(sorted.begin(), sorted.end());
    const double med = sorted[sorted.size() / 2];
    const double compute_tokens_per_s = tokens / std::max(med, 1e-9);
    if (v.wall_tokens_per_s > 0 && v.wall_tokens_per_s < 0.9 * compute_tokens_per_s)
      wrapped_text(false,
                   "%s tokens/s by the clock (%s). A step computes in %.1f ms, %s tokens/s; the rest of the "
                   "time the page draws itself and waits for the browser.",
                   format_quantity(v.wall_tokens_per_s, "").c_str(),
                   training ? (format_fixed(v.wall.steps_per_s(), 1) + " steps a second").c_str() : "while it trained",
                   med * 1e3, format_quantity(compute_tokens_per_s, "").c_str());
    else
      wrapped_text(false, "%s tokens/s, %.1f ms per step (median of the last %zu steps)",
                   format_quantity(v.wall_tokens_per_s > 0 ? v.wall_tokens_per_s : compute_tokens_per_s, "").c_str(),
                   med * 1e3, sorted.size());
    track(s, "lab.speed");
    const device::DeviceKind* kind = device::find_device_kind(t.kernels);
    const device::DeviceProbe* probe = kind ? &device::probe_of(*kind) : nullptr;
    if (probe && !probe->hardware.empty() && s.catalog) {
      // MFU against the card's sourced peak for this precision (train/device_peak.h), as `train` prints it;
      // only a device whose probe names catalog hardware has one (the CPU names none).
      const Table* gpus = s.catalog->table("gpus");
      const Record* gpu = gpus ? train::gpu_record_for(*gpus, probe->hardware) : nullptr;
      std::string field;
      const double peak = gpu ? train::peak_flops_for(*gpu, t.config.precision, &field) : 0;
      const int used = std::max(1, std::min(t.config.parallel.workers(), probe->units));
      if (peak > 0)
        wrapped_text(false, "MFU %s of %d x %s's %s peak (%s FLOP/s each; gpus.json)",
                     format_percent(tokens / std::max(med, 1e-9) * t.flops_per_token / (peak * used)).c_str(), used,
                     gpu->name.c_str(), device::to_string(t.config.precision), format_quantity(peak, "").c_str());
      else
        wrapped_text(true, "MFU not shown: %s's %s peak is not in assets/catalog/gpus.json", probe->hardware.c_str(),
                     device::to_string(t.config.precision));
    }
    if (t.config.parallel.workers() > 1) {
      // Without this, a class sees 8 workers train slower than 2 and concludes parallelism slows training.
      const bool web = s.platform && std::string(s.platform->name()) == "web";  // one thread in the browser
      const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
      const std::string where =
          web ? "the browser's one thread"
              : "this machine's " + std::to_string(cores) + (cores == 1 ? " CPU core" : " CPU cores");
      wrapped_text(true,
                   "The %d workers are virtual: they take turns on %s, so more workers add no compute here, and "
                   "each adds messages, so tokens/s falls. What scales as on a real cluster is what each worker "
                   "holds and sends: the memory bars and the bytes below.",
                   t.config.parallel.workers(), where.c_str());
      track(s, "lab.workers_note");
    }
  }
  if (!v.resume_note.empty()) wrapped_text(true, "%s", v.resume_note.c_str());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", t.kernels_note.c_str());
  if (v.corpus_entropy > 0)
    wrapped_text(true,
                 "This language has an entropy of %.4f nats/byte, known from its rules: no model can go below it.",
                 v.corpus_entropy);
  else
    wrapped_text(true, "The entropy of this text is unknown, so no floor is drawn.");

  const float w = ImGui::GetContentRegionAvail().x;
  const Panes panes = two_panes(std::max(300.0f, w * 0.55f), ImGui::GetFontSize() * 12, 0, 0.6f);
  child_opens_at_top(s);
  ImGui::BeginChild("lab_left", panes.first, false);
  {
    std::vector<LabCurve> all = v.curves;
    all.push_back({layout_label(t.config) + " (now)", t.losses});
    draw_loss_chart(s, v, all, total);
    same_line_if_fits_button("Export trained model");
    if (ImGui::SmallButton("Export trained model")) v.export_requested = true;  // serve_checkpoints
    track(s, "lab.export_model");
    ImGui::TextUnformatted("Sample (temperature 0.8):");
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.75f, 0.9f, 0.75f, 1));
    std::string shown;
    for (unsigned char ch : v.shown.sample) shown.push_back(ch >= 32 && ch < 127 ? char(ch) : '.');
    if (shown.empty())  // "press Start" only where Start is what is missing
      wrapped_text(false, "(%sa sample appears every %d steps)", v.running || t.step > 0 ? "" : "press Start; ",
                   v.sample_every);
    else
      wrapped_text(false, "%s", shown.c_str());
    ImGui::PopStyleColor();
    ImGui::Separator();
    wrapped_text(false, "Memory per worker (hover: what each colour holds)");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Weights, gradients and Adam's m and v are kept between steps (ZeRO shards them).\n"
          "Whole layers and activations are the most a worker held at once during the last step:\n"
          "ZeRO-3 gathers each layer's weights just before it runs and frees them after, and\n"
          "ZeRO-2/3 reduce-scatter a layer's gradients as soon as its backward is done. The\n"
          "embedding counts as a layer; it stays whole through each pass, since the output head\n"
          "reuses it (tied weights), and is often the largest part.");
    lab_memory_bars(t.memory, ImVec2(-1, 26.0f * float(std::min(8, t.config.parallel.workers())) + 24));
    if (!t.memory.empty()) {  // worker 0's parts in figures, as narrations quote them ("170 kB")
      const train::WorkerMemory& m0 = t.memory.front();
      auto b = [](double x) { return format_si(x) + "B"; };
      wrapped_text(true, "w0: weights %s, grads %s, Adam m, v %s, whole layers %s, activations %s",
                   b(m0.params_bytes).c_str(), b(m0.grads_bytes).c_str(), b(m0.optimizer_bytes).c_str(),
                   b(m0.transient_peak_bytes).c_str(), b(m0.activations_peak_bytes).c_str());
    }
    track(s, "lab.memory");
    if (t.config.parallel.pp > 1) {
      wrapped_text(false, "%s", "Pipeline schedule of the last step (replica 0): F forward, B backward");
      lab_schedule(t.schedule, t.config.parallel.pp, ImVec2(-1, 22.0f * float(t.config.parallel.pp) + 8));
    }
  }
  ImGui::EndChild();
  between_panes(panes);
  child_opens_at_top(s);
  ImGui::BeginChild("lab_right", panes.second, false);
  {
    wrapped_text(false, "Messages between workers in the last step");
    draw_replay_controls(s, v, t);
    lab_message_graph(t, ImVec2(-1, 260), v.replay);
    track(s, "lab.messages");
    // A run resumed from a checkpoint (or the browser's saved state) has taken no step in this trainer
    // yet: its counters are empty, which is not a disagreement with the prediction.
    const auto& layout = t.config.parallel;
    bool any_sent = layout.workers() == 1;
    for (double m : t.messages_sent) any_sent = any_sent || m > 0;
    const bool measured = step > 0 && any_sent;
    wrapped_text(false, "%s",
                 measured || step == 0 ? "Bytes sent per worker in the last step"
                                       : "Bytes per step: predicted only (no step since the resume)");
    const std::vector<double>& pred = t.predicted_bytes;
    if (ImGui::BeginTable("##bytes", 5,
                          ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit)) {
      ImGui::TableSetupColumn("worker");
      ImGui::TableSetupColumn("(d,p,t)");
      ImGui::TableSetupColumn("counted");
      ImGui::TableSetupColumn("predicted");
      ImGui::TableSetupColumn("messages");
      ImGui::TableHeadersRow();
      const auto& pc = t.config.parallel;
      for (int i = 0; i < pc.workers(); ++i) {
        const double sent = t.bytes_sent[size_t(i)], messages = t.messages_sent[size_t(i)];
        next_row();
        ImGui::TableNextColumn();
        ImGui::Text("%d", i);
        ImGui::TableNextColumn();
        ImGui::Text("(%d,%d,%d)", i / (pc.tp * pc.pp), (i / pc.tp) % pc.pp, i % pc.tp);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_quantity(sent, "bytes").c_str());
        ImGui::TableNextColumn();
        const bool same = measured && std::fabs(sent - pred[size_t(i)]) < 0.5;
        ImGui::TextColored(!measured ? ImVec4(0.7f, 0.7f, 0.7f, 1)
                           : same    ? ImVec4(0.5f, 0.9f, 0.5f, 1)
                                     : ImVec4(1, 0.5f, 0.4f, 1),
                           "%s%s", format_quantity(pred[size_t(i)], "bytes").c_str(),
                           !measured ? ""
                           : same    ? " ="
                                     : " !=");
        ImGui::TableNextColumn();
        ImGui::Text("%.0f", messages);
      }
      end_table("Bytes sent per worker");
    }
    track(s, "lab.bytes");
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled(
        "Predicted by the engine's communication model (the same one the Parallelism chapter uses): ring all-reduce "
        "2(p-1)/p N; with m micro-batches "
        "ZeRO-2 (m+1)(p-1)/p N (each layer's gradients reduce-scattered in every micro-batch, the "
        "weights gathered once) and ZeRO-3 3m(p-1)/p N (a gather before each forward and backward "
        "too), N padded layer by layer; Megatron 4 all-reduces of b*s*h per layer; pipeline b*s*h "
        "per micro-batch.");
    ImGui::PopTextWrapPos();
  }
  ImGui::EndChild();
}

// Replay of the last step's messages, one by one in the order the workers sent them (TrainerReport::
// messages): training pauses so the step stays on screen; at the end each worker has sent what the table
// below counts.
void draw_replay_controls(ExplorerState& s, LabView& v, const train::TrainerReport& t) {
  const size_t n = t.messages.size();
  if (n == 0) {
    v.replay = -1;
    return;
  }
  const bool keys = !ImGui::GetIO().WantTextInput && ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows);
  const char* label = v.replay < 0 ? "Replay the step" : v.replay_playing ? "Pause replay" : "Resume replay";
  if (ImGui::Button(label)) {
    if (v.replay < 0 || v.replay >= double(n)) v.replay = 0;
    v.replay_playing = !v.replay_playing || v.replay == 0;
    v.running = false;  // keep this step on screen
  }
  track(s, "lab.replay");
  if (v.replay >= 0) {
    ImGui::SameLine();
    if (ImGui::Button("Totals")) v.replay = -1, v.replay_playing = false;
    ImGui::SameLine();
    access::next_name("Next message");  // a screen reader would say "greater than"
    if (ImGui::Button(">") || (keys && ImGui::IsKeyPressed(ImGuiKey_RightArrow)))
      v.replay = std::min(double(n), std::floor(v.replay) + 1), v.replay_playing = false;
    track(s, "lab.replay_step");
  }
  if (v.replay < 0) return;
  if (v.replay_playing) {
    v.replay += double(ImGui::GetIO().DeltaTime) * double(n) / LabView::kReplaySeconds;
    if (v.replay >= double(n)) v.replay = double(n), v.replay_playing = false;
  }
  ImGui::SetNextItemWidth(-1);
  int k = int(v.replay);
  if (slider_int("##replay_pos", k, 0, int(n), "message %d")) v.replay = k, v.replay_playing = false;
  const size_t done = std::min(n, size_t(v.replay));
  begin_tracked(s);
  if (done < n) {
    const train::MessageRecord& m = t.messages[done];
    const std::vector<double> so_far = train::bytes_sent_in_first(t, done + 1);
    wrapped_text(false, "Message %zu of %zu: worker %d -> %d, %s, %s; worker %d has sent %s of its %s", done + 1, n,
                 m.src, m.dst, train::to_string(m.traffic), format_quantity(m.bytes, "bytes").c_str(), m.src,
                 format_quantity(so_far[size_t(m.src)], "bytes").c_str(),
                 format_quantity(t.bytes_sent[size_t(m.src)], "bytes").c_str());
  } else {
    wrapped_text(false, "All %zu messages of the step replayed: each worker has sent what the table counts.", n);
  }
  if (t.messages_in_step > n) wrapped_text(true, "The first %zu of the step's %zu messages.", n, t.messages_in_step);
  end_tracked(s, "lab.replay_text");
}

void draw_scaling_tab(ExplorerState& s, LabView& v) {
  wrapped_text(false,
               "Train several sizes on the same bytes, fit L(C) = a C^b + c to their losses, predict a larger "
               "model's loss before it trains, then train it. The method that let OpenAI predict GPT-4's final "
               "loss from much smaller runs, at the size of this machine.");
  if (!v.sweep_config) {
    ImGui::Checkbox("quick sweep", &v.sweep_quick);
  } else {
    ImGui::TextDisabled("the scenario's sweep");
    if (ImGui::IsItemHovered()) {
      const train::ScalingConfig& sc = *v.sweep_config;
      std::string widths;
      for (int w : sc.widths) widths += (widths.empty() ? "" : ", ") + std::to_string(w);
      ImGui::SetTooltip("widths %s, then %d; %d layers, %d steps each, seed %llu", widths.c_str(), sc.predict_width,
                        sc.layers, sc.steps, (unsigned long long)sc.seed);
    }
  }
  ImGui::SameLine();
  ensure_corpus(s, v);
  if (v.corpus_text.empty()) {
    ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "No corpus: %s", v.corpus_error.c_str());
    return;
  }
  if (v.sweep_requested) start_sweep(v);
  if (ImGui::Button(v.sweep_running ? "Pause sweep"
                                    : (v.sweep && !v.sweep_shown.done ? "Resume sweep" : "Run sweep"))) {
    if (!v.sweep || v.sweep_shown.done)
      start_sweep(v);
    else
      v.sweep_running = !v.sweep_running;
  }
  track(s, "lab.sweep");
  if (!v.sweep_error.empty()) error_text("%s", v.sweep_error.c_str());
  drive_sweep(s, v);
  if (!v.sweep) {
    // The chart's place, empty until a sweep runs (a scenario may point at it before).
    ImGui::Dummy(ImVec2(ImGui::GetContentRegionAvail().x, 300));
    track(s, "lab.scaling_chart");
    return;
  }
  same_line_if_fits(ImGui::GetFontSize() * 12);
  ImGui::ProgressBar(float(v.sweep_shown.progress), ImVec2(ImGui::GetFontSize() * 12, 0), v.sweep_shown.label.c_str());
  const train::ScalingResult& r = v.sweep_shown.result;
  // The chart with its figures below (the runs, the fit, the prediction and the trained loss): what a step
  // pointing at the chart quotes is scrolled into view with it.
  begin_tracked(s);
  lab_scaling_chart(r, ImVec2(-1, 300));
  for (const auto& p : r.points)
    ImGui::Text("width %3d  %7lld params  %10s  loss %.4f", p.width, (long long)p.params,
                format_quantity(p.compute_flops, "FLOP").c_str(), p.loss);
  if (r.fitted) {
    // Wrapped: at 1280x720 these lines ran past the panel's edge.
    wrapped_text(false, "fit: L(C) = %.3g C^%.3f + %.3f   (rms %.3f)%s", r.fit_compute.a, r.fit_compute.b,
                 r.fit_compute.c, r.fit_compute.rms_error, r.c_known ? "   c = the language's entropy, known" : "");
    if (r.c_known)
      wrapped_text(true, "with c fitted as well: L(C) = %.3g C^%.3f + %.3f (rms %.3f)", r.fit_compute_free_c.a,
                   r.fit_compute_free_c.b, r.fit_compute_free_c.c, r.fit_compute_free_c.rms_error);
    wrapped_text(false, "prediction for width %d (%s, %.1fx the compute of the largest fitted run), before it trains:",
                 r.target.width, format_quantity(r.target.compute_flops, "FLOP").c_str(), train::extrapolation(r));
    ImGui::Text("    L(C) %.4f   L(N) %.4f", r.predicted_loss, r.predicted_loss_params);
    if (r.c_known) wrapped_text(true, "(with c fitted as well, L(C) would say %.4f)", r.predicted_loss_free_c);
  }
  if (r.done && !r.target_trained) {
    wrapped_text(true, "The larger model has not trained: predict its loss first, then train it and compare.");
    if (ImGui::Button("Train it")) {
      // The same sweep with the larger run: the same seed gives the same small runs and the same prediction.
      if (!v.sweep_config) v.sweep_config = v.sweep_quick ? train::ScalingConfig::quick() : train::ScalingConfig{};
      v.sweep_config->train_target = true;
      start_sweep(v);
    }
    track(s, "lab.scaling_train_target");
  }
  if (r.target_trained) {
    auto off = [&](double p) { return 100.0 * (p - r.target.loss) / r.target.loss; };
    wrapped_text(false, "trained: %.4f   (L(C) off by %+.1f%%, L(N) by %+.1f%%)", r.target.loss, off(r.predicted_loss),
                 off(r.predicted_loss_params));
    if (r.c_known)
      wrapped_text(true, "the fit with c free would have been off by %+.1f%%", off(r.predicted_loss_free_c));
  }
  end_tracked(s, "lab.scaling_chart");
  if (r.entropy_floor > 0) wrapped_text(true, "irreducible loss of the built-in language: %.4f", r.entropy_floor);
}

void draw(ExplorerState& s) {
  LabView& v = s.lab;
  restore(s, v);
  if (ImGui::BeginTabBar("lab_tabs")) {
    const ImGuiTabItemFlags train_flag = take_tab_request(s, "train") ? ImGuiTabItemFlags_SetSelected : 0;
    const ImGuiTabItemFlags scaling_flag = take_tab_request(s, "scaling") ? ImGuiTabItemFlags_SetSelected : 0;
    if (ImGui::BeginTabItem("Train", nullptr, train_flag)) {
      s.shown_tab = "train";
      draw_train_tab(s, v);
      ImGui::EndTabItem();
    } else {
      drive_training(s, v);  // a run keeps going while the other tab is shown
    }
    if (ImGui::BeginTabItem("Predictable scaling", nullptr, scaling_flag)) {
      s.shown_tab = "scaling";
      draw_scaling_tab(s, v);
      ImGui::EndTabItem();
    } else {
      if (v.sweep_requested && !v.corpus_text.empty()) start_sweep(v);
      drive_sweep(s, v);
    }
    ImGui::EndTabBar();
  }
  serve_checkpoints(s, v);
}

// ---- the registration, and a corpus dropped on the window ----

bool open_corpus(ExplorerState& s, const std::string& name, const std::string& content) {
  if (name.size() < 4 || name.substr(name.size() - 4) != ".txt") return false;
  try {
    train::check_corpus_text(content, name);  // UTF-8 (else the byte offset) and at least 1 KiB
  } catch (const std::exception& e) {
    s.status = e.what();
    return true;
  }
  s.lab.corpus_id.clear();
  s.lab.corpus_text = content;
  s.lab.corpus_name = name;
  s.lab.corpus_entropy = 0;
  s.lab.corpus_error.clear();
  s.lab.built_for.reset();
  s.status = "training corpus: " + name + " (" + format_quantity(double(content.size()), "bytes") + ")";
  return true;
}

// The lab's config in the page's address, with its built-in corpus when it is not the default (a dropped file
// cannot travel in a link).
// Asked every frame (the address): the last form is kept while the config and corpus are the same.
nlohmann::json held_lab_config(const ExplorerState& s) {
  static train::TrainConfig config;
  static std::string corpus;
  static nlohmann::json form;
  if (form.is_null() || !(config == s.lab.config) || corpus != s.lab.corpus_id) {
    config = s.lab.config, corpus = s.lab.corpus_id;
    form = lab_config_json(config, corpus);
  }
  return form;
}

// A fresh page's: the shipped default on the built-in language.
nlohmann::json fresh_lab_config(const ExplorerState& s) {
  return lab_config_json(train::parse_run_options(default_config(s, "train"), "configs/train.json").train,
                         LabView().corpus_id);
}

// The scenario's "train" config in the lab's form: two configs that train the same run are equal.
nlohmann::json lab_form(const nlohmann::json& c) {
  const train::RunOptions o = train::parse_run_options(c, "a train config");
  return lab_config_json(o.train, lab_corpus(o.corpus));
}

void open_lab_config(ExplorerState& s, const nlohmann::json& link) {
  // A key, type or range the trainer refuses is said now, named as the link writes it.
  const train::RunOptions o = train::parse_run_options(link, "the link's lab config");
  LabView& v = s.lab;
  const std::string corpus = lab_corpus(o.corpus);
  if (corpus != v.corpus_id) v.corpus_id = corpus, v.corpus_text.clear(), v.corpus_error.clear();
  v.config = o.train;
  v.config_from_link = true;
}

nlohmann::json shown_training(const ExplorerState& s) {
  const LabView& v = s.lab;
  if (!v.trainer || !v.built_for || !(*v.built_for == v.config)) return nullptr;
  return train::to_json(v.shown.report);  // what the panel draws
}

nlohmann::json shown_sweep(const ExplorerState& s) {
  const LabView& v = s.lab;
  if (!v.sweep || !v.sweep_shown.done) return nullptr;
  return train::sweep_summary_json(v.sweep_shown.result);
}

void set_lab_corpus(LabView& v, const std::string& corpus) {
  if (corpus == v.corpus_id) return;  // the run uses the scenario's text, which the lab then shows
  v.corpus_id = corpus;
  v.corpus_text.clear();
  v.corpus_error.clear();
  v.built_for.reset();
}

PanelRegistrar reg{Panel{
    .id = "lab",
    .title = "Training lab",
    .chapter = Chapter::lab,
    .order = 10,
    .draw = draw,
    .summary = "a small GPT trained live with data, tensor and pipeline parallelism and ZeRO",
    .tabs = {"train", "scaling"},
    .tab_of_widget = [](const ExplorerState&, const std::string& w) -> std::string {
      return w == "lab.sweep" || w.rfind("lab.scaling", 0) == 0 ? "scaling" : "train";
    },
    .busy =
        [](const ExplorerState& s) {
          // A config the lab has not built a run for yet (it builds it when drawn) is still to be
          // trained.
          const LabView& l = s.lab;
          return l.train_job || (l.running && !(l.built_for && *l.built_for == l.config)) ||
                 (l.running && l.trainer && l.shown.report.step < l.shown.report.config.steps) || l.sweep_job ||
                 (l.sweep_running && !l.sweep_shown.done) || l.sweep_requested;
        },
    .progress =
        [](const ExplorerState& s) {
          const LabView& l = s.lab;
          if (l.sweep_running && !l.sweep_shown.done)
            return "Scaling sweep: " + std::to_string(int(std::lround(100 * l.sweep_shown.progress))) + " % (" +
                   l.sweep_shown.label + ")";
          const train::TrainerReport& t = l.shown.report;
          if (!l.trainer || t.step == 0) return std::string();
          const std::string loss = t.losses.empty() ? std::string("-") : format_fixed(t.losses.back(), 4);
          const bool finished = t.step >= t.config.steps;
          if (!finished && !l.running) return std::string();  // paused: nothing is moving
          return std::string(finished ? "Training finished: " : "Training: ") + "step " + std::to_string(t.step) +
                 " of " + std::to_string(t.config.steps) + ", loss " + loss + " nats/byte";
        },
    // While it trains, most of each frame (the browser build) is the run's: a class watching the lab came to
    // see it train. About 20 ms of a frame's slices, and the page still redraws about 30 times a second.
    .slice_s = [](const ExplorerState& s) { return s.lab.train_job ? 0.020 : JobRunner::kSliceS; },
    .address = {{"train", fresh_lab_config, held_lab_config, open_lab_config}},
    .configs = {{"train",
                 [](ExplorerState& s, const nlohmann::json& c, const scenario::EngineCall*) {
                   const train::RunOptions o = train::parse_run_options(c, "the scenario's train config");
                   set_lab_corpus(s.lab, lab_corpus(o.corpus));
                   s.lab.scenario_config = o.train;  // the step's run: neither kept nor replaced by a kept one
                   if (!(s.lab.config == o.train)) {
                     s.lab.config = o.train;
                     s.lab.running = true;  // the lab trains what the step trained, live, up to its step count
                     // Without the curves of runs before it (of an earlier step, or the class's own): a step reached by
                     // ">" draws what its link draws (turing-nlg's ZeRO-3 run, its memory figures at the same place).
                     s.lab.curves.clear();
                     s.lab.shown.report.losses.clear();  // the run this replaces is not kept as a curve either
                   }
                 },
                 held_lab_config, shown_training,
                 [](ExplorerState& s) {
                   s.lab.scenario_config.reset();  // the lab is the student's again
                   set_lab_corpus(s.lab, LabView().corpus_id);
                   const train::TrainConfig fresh =
                       train::parse_run_options(default_config(s, "train"), "configs/train.json").train;
                   if (!(s.lab.config == fresh)) {
                     s.lab.config = fresh;
                     s.lab.running = true;  // as the lab starts when opened
                   }
                 },
                 lab_form},
                {"scaling",
                 [](ExplorerState& s, const nlohmann::json& c, const scenario::EngineCall*) {
                   LabView& v = s.lab;
                   set_lab_corpus(v, train::scaling_corpus(c));
                   const train::ScalingConfig sc = train::scaling_config_from_json(c, "the scenario's scaling config");
                   if (v.sweep_config != sc || !v.sweep) {
                     v.sweep_config = sc;
                     v.sweep.reset();
                     v.sweep_requested = true;  // the same sweep as the scenario's, run live in the lab
                   }
                 },
                 [](const ExplorerState& s) {
                   return s.lab.sweep_config ? train::to_json(*s.lab.sweep_config) : nlohmann::json::object();
                 },
                 shown_sweep,
                 [](ExplorerState& s) {
                   LabView& v = s.lab;
                   if (!v.sweep_config) return;
                   v.sweep_config.reset();
                   v.sweep.reset();
                   v.sweep_requested = v.sweep_running = false;
                 },
                 [](const nlohmann::json& c) {
                   return train::to_json(train::scaling_config_from_json(c, "a scaling config"));
                 }}},
    .default_config = "train",
    .errors =
        [](const ExplorerState& s) {
          std::vector<std::string> out;
          add_error(out, "lab", s.lab.error);
          add_error(out, "lab sweep", s.lab.sweep_error);
          add_error(out, "lab corpus", s.lab.corpus_error);
          return out;
        }}};
FileHandlerRegistrar corpus_reg{FileHandler{.id = "lab.corpus", .open = open_corpus}};

}  // namespace
}  // namespace mc::ui
