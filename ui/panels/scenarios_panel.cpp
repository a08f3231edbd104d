// scenarios_panel.cpp - the scenario gallery and player: pick a story, play/pause/next/previous/restart,
// answer its questions; each step drives the other panels (active panel, highlight, narration, their
// JSON configs). A broken file shows its located errors here instead of crashing.
//
// Index: ScenarioJob and start_move (every move of the player that computes runs as a job, ui/jobs.h) |
// gallery, apply_step, problems of a file or a link | open_parsed, finish_move, draw_move_progress |
// the panel (gallery, player, checks) | the narration dock's questions and controls | scenario_frame.
#include "core/paths.h"
#include "core/url_state.h"
#include "scenario/player.h"
#include "ui/access.h"
#include "ui/drawn_text.h"
#include "ui/explorer.h"
#include "ui/scenario_bindings.h"
#include "ui/widgets.h"

#include <imgui.h>
#include <imgui_internal.h>  // ImGui::FindWindowByName: the main view's window, whose text a mask covers

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

namespace mc::ui {

ScenarioJob::ScenarioJob(std::shared_ptr<scenario::Player> w, int t, bool replay, bool opens_)
    : work(std::move(w)),
      target(std::clamp(t, 0, std::max(0, work->step_count() - 1))),
      opens(opens_),
      replay_(replay) {
  from_ = replay ? -1 : work->current();
}

bool ScenarioJob::step(double budget_s) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  if (replay_) {  // going back replays from the start (player.h): every step's state depends on the file only
    work->restart();
    replay_ = false;
  }
  while (work->current() < target && work->current() + 1 < work->step_count()) {
    if (cancelled()) return true;
    work->next();  // one whole step: its actions cannot be cut
    set_progress(double(work->current() - from_) / double(std::max(1, target - from_)));
    if (std::chrono::duration<double>(clock::now() - t0).count() > budget_s) break;
  }
  return work->current() >= target || work->current() + 1 >= work->step_count();
}

namespace {

// Starts a move of the player as a job on `work` (a copy of the player, or a new one). A move asked for
// while another is in flight replaces it (the slider, a link); Next, Previous and Restart wait for it.
void start_move(ExplorerState& s, std::shared_ptr<scenario::Player> work, int target, bool replay, bool opens = false) {
  ScenarioView& v = s.scenarios;
  if (v.job) v.job->cancel();
  v.job = std::make_shared<ScenarioJob>(std::move(work), target, replay, opens);
  s.jobs.start(v.job);
}

std::shared_ptr<scenario::Player> copy_of(const scenario::Player& p) { return std::make_shared<scenario::Player>(p); }

// MEGACLUSTER_SCENARIO_STEP=N (1-based, as in the page's ?step=N and checked the same way, core/url_state.h):
// a value that is not a step number is named in the status line, not read as step 1 (atoi's "0").
void env_step(ExplorerState& s) {
  const char* st = std::getenv("MEGACLUSTER_SCENARIO_STEP");
  if (!st) return;
  if (const auto n = parse_url_step(st))
    s.scenarios.request_step = *n;
  else
    s.status = "MEGACLUSTER_SCENARIO_STEP=\"" + std::string(st).substr(0, 40) + "\" is not a step number; use 1 to " +
               std::to_string(kMaxUrlStep) + " (the scenario opens at its start)";
}

void load_gallery(ExplorerState& s) {
  ScenarioView& v = s.scenarios;
  v.gallery_loaded = true;
  v.scenarios_dir = find_scenarios_dir();
  // A class can start at a scenario and step: MEGACLUSTER_SCENARIO=ID [MEGACLUSTER_SCENARIO_STEP=N, 1-based]
  // (the web shell sets request_id/request_step from the URL instead).
  if (const char* id = std::getenv("MEGACLUSTER_SCENARIO"); id && v.request_id.empty()) {
    v.request_id = id;
    env_step(s);
  }
  try {
    v.gallery = scenario::load_index(v.scenarios_dir, scenario::default_actions(), s.catalog ? &*s.catalog : nullptr);
  } catch (const std::exception& e) {
    v.gallery_error = e.what();
  }
}

// The panel, tab and scroll a step shows: a function of the scenario and the step alone, however the step
// was reached (a link, next, previous, a jump, restart, MEGACLUSTER_SCENARIO_STEP). The panel is the one the
// step focuses (else the one its outline is on, else the player); the tab is the one named, else the one the
// latest outline on that panel in steps 1..k is on (a step that outlines nothing goes on about what the
// last one showed: openai-lp's steps 2-4 and the waterfall), else the panel's first; the view opens at its
// top, and an outline scrolls itself into view.
void show_step_view(ExplorerState& s, const scenario::Scenario& sc, int k, const scenario::PlayState& st) {
  std::string panel = st.focus_panel;  // "lab/scaling" names a tab too
  if (panel.empty() && !st.highlight_widget.empty())
    panel = st.highlight_widget.substr(0, st.highlight_widget.find('.'));
  if (panel.empty() || !find_panel(panel.substr(0, panel.find('/')))) panel = "scenarios";
  const std::string id = panel.substr(0, panel.find('/'));
  std::string latest;
  for (int i = std::min(k, int(sc.steps.size()) - 1); i >= 0 && latest.empty(); --i)
    for (const auto& a : sc.steps[size_t(i)].actions)  // the step's last outline is the one it leaves
      if (const std::string w = scenario::highlighted_widget(a); w.rfind(id + ".", 0) == 0) latest = w;
  s.active_panel = id;
  s.tab_request = settled_tab(s, panel, latest);
  s.scroll_to_top = true;
}

// Pushes the player's state into the panels: what the step focuses, highlights and configures.
void apply_step(ExplorerState& s) {
  ScenarioView& v = s.scenarios;
  if (!v.player) return;
  const scenario::PlayState& st = v.player->state();
  const scenario::StepOutcome* o = v.player->outcome();
  v.applied_step = v.player->current();
  v.narration_held = true;
  s.classroom.narration_title = v.player->scenario().title;
  s.classroom.narration_markdown = o ? o->title + "\n\n" + o->narration : v.player->scenario().summary;
  s.classroom.highlight_widget = st.highlight_widget;
  s.classroom.highlight_scrolled.clear();
  show_step_view(s, v.player->scenario(), v.player->current(), st);
  // A step that outlines a catalog row opens that record in the inspector: a row's columns run past the
  // edge of a laptop's screen (dgx1-2016 quotes the DGX-1's price, its last column), and the inspector lists
  // every value, with its source, where the class can read it. Given back when a step outlines no row.
  const std::string row = "catalog.row.";
  if (st.highlight_widget.rfind(row, 0) == 0 && find_panel("catalog") && find_panel("catalog")->tab_of_widget) {
    const std::string table = find_panel("catalog")->tab_of_widget(s, st.highlight_widget);
    if (!table.empty()) s.selection = Selection{table, st.highlight_widget.substr(row.size()), ""};
    v.selected_by_step = !table.empty();
  } else if (v.selected_by_step) {
    s.selection = Selection{};
    v.selected_by_step = false;
  }
  apply_configs(s, st.configs, st.engine_calls);  // every config kind into its panel (scenario_bindings.h)
  v.follow_script = true;
}

// A file that cannot be played: every problem, located, in the Scenarios panel and in the narration pane
// (which the class sees whatever panel is shown), and a count in the status bar.
void show_problems(ExplorerState& s, const std::string& file, const std::vector<std::string>& problems) {
  ScenarioView& v = s.scenarios;
  v.errors = problems;
  v.player.reset();
  s.classroom.highlight_widget.clear();
  const std::string n = std::to_string(problems.size()) + (problems.size() == 1 ? " problem" : " problems");
  s.classroom.narration_title = "cannot play " + file;
  s.classroom.narration_markdown = file + " has " + n + ", each with where it is and what to do:";
  for (const auto& p : problems) s.classroom.narration_markdown += "\n\n- " + p;
  s.status = file + ": " + n + " (listed in the narration pane and the Scenarios panel)";
}

// A requested id (link, environment) that names no shipped scenario: say which exist and the nearest.
std::string unknown_id_problem(ExplorerState& s, const std::string& id) {
  ScenarioView& v = s.scenarios;
  if (!v.gallery_loaded) load_gallery(s);
  std::vector<std::string> ids;
  std::string all;
  for (const auto& e : v.gallery) {
    ids.push_back(e.id.empty() ? e.file.substr(0, e.file.rfind(".json")) : e.id);
    all += (all.empty() ? "" : ", ") + ids.back();
  }
  const std::string shown = id.size() > 64 ? id.substr(0, 64) + "..." : id;
  // The index lists it, but the file does not validate (an author's edit): say that, not "did you mean" it.
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == id && !v.gallery[i].error.empty())
      return "scenario=" + shown + ": scenarios/index.json lists " + v.gallery[i].file +
             ", but it cannot be played: " + v.gallery[i].error;
  std::string msg = "scenario=" + shown + ": no shipped scenario has the id \"" + shown + "\"";
  if (const std::string nearest = closest_id(id, ids); !nearest.empty()) msg += "; did you mean \"" + nearest + "\"?";
  return msg + " Fix the link (?scenario=ID&step=N) with one of: " + all + ".";
}

void open_parsed(ExplorerState& s, scenario::ParseResult r, const std::string& file, int step) {
  ScenarioView& v = s.scenarios;
  v.errors.clear();
  v.file = file;
  if (!r.ok()) {
    std::vector<std::string> problems;
    for (const auto& e : r.errors) problems.push_back(e.what());
    show_problems(s, file.substr(file.find_last_of('/') + 1), problems);
    return;
  }
  // The steps up to `step` run as a job (a scenario opened at step 9 of a training story computes for a
  // while); the player, its answers and the panels change when it is done.
  start_move(s, std::make_shared<scenario::Player>(*r.scenario, s.catalog ? &*s.catalog : nullptr),
             step >= 0 ? step : 0, false, true);
  if (!v.player) {  // nothing on screen yet: the narration pane says what is coming, with the job's bar
    s.classroom.narration_title = r.scenario->title;
    s.classroom.narration_markdown = r.scenario->summary.empty() ? r.scenario->title : r.scenario->summary;
  }
}

// The player's move in flight: when done, its player becomes the player and the step reaches the panels.
void finish_move(ExplorerState& s) {
  ScenarioView& v = s.scenarios;
  if (!v.job || !v.job->done()) return;
  const std::shared_ptr<ScenarioJob> job = std::move(v.job);
  v.job.reset();
  if (job->error() == "cancelled") return;
  if (!job->error().empty()) {
    v.errors.push_back(job->error());
    s.status = "scenario: " + job->error();
    return;
  }
  // Play/Pause pressed while the step computed counts (the copy was taken before).
  const bool playing = !job->opens && v.player && v.player->playing();
  v.player = job->work;
  if (playing)
    v.player->play();
  else
    v.player->pause();
  if (job->opens) {
    v.answers.clear();
    v.revealed.clear();
  }
  apply_step(s);
}

// While a move computes: how far it is, and a way to stop it (between steps).
void draw_move_progress(ExplorerState& s, const char* id) {
  ScenarioView& v = s.scenarios;
  if (!v.job) return;
  ImGui::PushID(id);
  ImGui::ProgressBar(float(v.job->progress()), ImVec2(ImGui::GetFontSize() * 8, 0));
  ImGui::SameLine();
  if (ImGui::SmallButton("Cancel")) v.job->cancel();
  track(s, std::string(id) + ".cancel");
  ImGui::SameLine();
  ImGui::TextColored(accent_color(), "step %d...", v.job->target + 1);
  ImGui::PopID();
}

void open_path(ExplorerState& s, const std::string& path, int step) {
  open_parsed(s, scenario::load_scenario(path, scenario::default_actions(), s.catalog ? &*s.catalog : nullptr), path,
              step);
}

void draw_gallery(ExplorerState& s) {
  ScenarioView& v = s.scenarios;
  if (!v.gallery_error.empty()) {
    ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "The scenario index could not be read:");
    wrapped_text(false, "%s", v.gallery_error.c_str());
    return;
  }
  const ImGuiTableFlags fl = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("gallery", 4, fl)) return;
  ImGui::TableSetupColumn("Scenario", 0, 3.0f);
  ImGui::TableSetupColumn("Minutes", 0, 0.6f);
  ImGui::TableSetupColumn("Topics", 0, 1.4f);
  ImGui::TableSetupColumn("", 0, 0.6f);
  ImGui::TableHeadersRow();
  for (const auto& e : v.gallery) {
    next_row();
    ImGui::TableSetColumnIndex(0);
    wrapped_text(false, "%s", e.title.c_str());
    if (ImGui::IsItemHovered() && !e.summary.empty()) ImGui::SetTooltip("%s", e.summary.c_str());
    if (!e.error.empty()) {  // every problem, located, wrapped in the column
      ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.4f, 0.4f, 1));
      wrapped_text(false, "%s", e.error.c_str());
      ImGui::PopStyleColor();
    }
    if (!e.audience.empty()) ImGui::TextDisabled("%s", e.audience.c_str());
    ImGui::TableSetColumnIndex(1);
    ImGui::Text("%.0f", e.minutes);
    ImGui::TableSetColumnIndex(2);
    std::string topics;
    for (const auto& t : e.topics) topics += (topics.empty() ? "" : ", ") + t;
    wrapped_text(false, "%s", topics.c_str());
    ImGui::TableSetColumnIndex(3);
    ImGui::PushID(e.file.c_str());
    access::next_name("Open " + e.title);  // one "Open" a row tells from the next by its title alone
    if (ImGui::Button("Open")) open_path(s, e.path, -1);
    track(s, "scenarios.open." + (e.id.empty() ? e.file : e.id));
    ImGui::PopID();
  }
  end_table("Scenarios");
}

// The step's expectations are for whoever wrote the scenario, not for the class: one plain line (a
// failure names the command that shows the details), never the raw "a.b < c.d" syntax.
void draw_step_checks(ExplorerState& s, const scenario::StepOutcome& o) {
  int failed = 0;
  for (const auto& e : o.expectations) failed += e.passed ? 0 : 1;
  const std::string id = s.scenarios.player->scenario().id;
  if (!o.errors.empty() || failed > 0) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.5f, 0.4f, 1));
    wrapped_text(false,
                 "This step did not run as its author expected (%d of %zu checks failed, %zu errors). "
                 "The command megacluster play %s shows each check with the value found.",
                 failed, o.expectations.size(), o.errors.size(), id.c_str());
    ImGui::PopStyleColor();
  } else if (!o.expectations.empty()) {
    wrapped_text(true, "%s", "The engine's numbers in this step are within the ranges its author expected.");
  }
  track(s, "scenarios.checks");
}

void draw_player(ExplorerState& s) {
  ScenarioView& v = s.scenarios;
  scenario::Player& p = *v.player;
  const scenario::Scenario& sc = p.scenario();
  ImGui::PushStyleColor(ImGuiCol_Text, accent_color());
  wrapped_text(false, "%s", sc.title.c_str());
  ImGui::PopStyleColor();
  wrapped_text(true, "%s  |  %.0f min  |  %d steps", sc.audience.c_str(), sc.minutes, p.step_count());
  if (ImGui::Button("Restart") && !v.job) start_move(s, copy_of(p), 0, true);
  track(s, "scenarios.restart");
  ImGui::SameLine();
  if (ImGui::Button("Previous") && p.current() > 0 && !v.job) start_move(s, copy_of(p), p.current() - 1, true);
  track(s, "scenarios.previous");
  ImGui::SameLine();
  if (ImGui::Button(p.playing() ? "Pause###play" : "Play###play")) p.playing() ? p.pause() : p.play();
  track(s, "scenarios.play");
  ImGui::SameLine();
  if (ImGui::Button("Next") && !p.finished() && !v.job) start_move(s, copy_of(p), p.current() + 1, false);
  track(s, "scenarios.next");
  ImGui::SameLine();
  if (ImGui::Button("Close")) {
    v.player.reset();
    s.classroom.narration_markdown.clear();
    s.classroom.highlight_widget.clear();
    return;
  }
  int step = p.current() + 1;
  ImGui::SetNextItemWidth(-1);
  if (slider_int("##step", step, 1, p.step_count(), "step %d") && step - 1 != p.current())
    start_move(s, copy_of(p), step - 1, true);
  track(s, "scenarios.step");
  draw_move_progress(s, "scenarios.progress");
  if (!v.follow_script) {
    ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "You are exploring on your own.");
    ImGui::SameLine();
    if (ImGui::Button("Back to the script")) apply_step(s);
  }
  const scenario::StepOutcome* o = p.outcome();
  if (!o) return;
  ImGui::Separator();
  ImGui::PushStyleColor(ImGuiCol_Text, accent_color());
  wrapped_text(false, "%d. %s", o->index + 1, o->title.c_str());
  ImGui::PopStyleColor();
  wrapped_text(false, "%s", o->narration.c_str());
  const scenario::Step& st = sc.steps[size_t(o->index)];
  if (!st.sources.empty() || !sc.sources.empty()) {
    std::string src;
    for (const auto& id : st.sources.empty() ? sc.sources : st.sources) {
      const Source* so = s.catalog ? s.catalog->source(id) : nullptr;
      src += (src.empty() ? "" : "; ") + (so ? so->title + " (" + so->date + ")" : id);
    }
    wrapped_text(true, "Sources: %s", src.c_str());
  }
  draw_step_checks(s, *o);
  if (!st.questions.empty())
    wrapped_text(true, "%s", "Questions: in the narration pane, beside whatever panel is shown.");
}

void draw(ExplorerState& s) {
  ScenarioView& v = s.scenarios;
  if (!v.gallery_loaded) load_gallery(s);
  scenario_frame(s);
  wrapped_text(false,
               "Guided stories that drive the real engine. Each step sets up the explorer, runs it and "
               "explains the result; the same files replay headless with the command megacluster play. Drop a scenario "
               ".json on the window to open your own.");
  if (!v.errors.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.4f, 0.4f, 1));
    wrapped_text(false, "%s: %zu %s", v.file.c_str(), v.errors.size(), v.errors.size() == 1 ? "problem" : "problems");
    for (const auto& e : v.errors) wrapped_text(false, "- %s", e.c_str());
    ImGui::PopStyleColor();
  }
  if (v.player) {
    draw_player(s);
    ImGui::Separator();
    if (!ImGui::CollapsingHeader("Gallery")) return;
  }
  draw_gallery(s);
}

bool open_dropped(ExplorerState& s, const std::string& name, const std::string& content) {
  if (!scenario::looks_like_scenario(name, content)) return false;  // also a scenario whose "format" is missing
  open_parsed(
      s, scenario::parse_scenario_text(content, name, scenario::default_actions(), s.catalog ? &*s.catalog : nullptr),
      name, -1);
  if (!s.scenarios.player) s.active_panel = "scenarios";
  return true;
}

PanelRegistrar reg{Panel{.id = "scenarios",
                         .title = "Scenarios",
                         .chapter = Chapter::scenarios,
                         .order = 10,
                         .draw = draw,
                         .summary = "Guided stories that drive the engine, with questions for classes",
                         .tabs = {},
                         .tab_of_widget = nullptr,
                         .errors = [](const ExplorerState& s) {
                           std::vector<std::string> out;
                           for (const auto& e : s.scenarios.errors) out.push_back("scenario: " + e);
                           if (s.scenarios.player && s.scenarios.player->outcome())
                             for (const auto& e : s.scenarios.player->outcome()->errors)
                               out.push_back("scenario step: " + e);
                           return out;
                         }}};
FileHandlerRegistrar drop_reg{FileHandler{.id = "scenarios.file", .open = open_dropped}};

}  // namespace

void draw_scenario_questions(ExplorerState& s) {
  ScenarioView& v = s.scenarios;
  if (!v.player || !v.player->outcome()) return;
  const scenario::Step& step = v.player->scenario().steps[size_t(v.player->outcome()->index)];
  for (const auto& q : step.questions) {
    ImGui::PushID(q.id.c_str());
    ImGui::Separator();
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(accent_color(), "Question");
    wrapped_text(false, "%s", q.prompt.c_str());
    json& a = v.answers[q.id];
    if (!q.choices.empty()) {
      int pick = a.is_number_integer() ? a.get<int>() : -1;
      for (int i = 0; i < int(q.choices.size()); ++i) {
        // The button, then its choice wrapped beside it: a long choice must not run off the pane.
        ImGui::PushID(i);
        if (radio("##choice", pick == i, q.choices[size_t(i)].c_str())) a = i;
        ImGui::PopID();
        track(s, "question." + q.id + "." + std::to_string(i));
        ImGui::SameLine();
        wrapped_text(false, "%s", q.choices[size_t(i)].c_str());
      }
    } else {
      double x = a.is_number() ? a.get<double>() : 0.0;
      // Its label stays whole in a narrow pane (presenter mode's 14 em column at 1024 px cut "your answer").
      const float label_w = ImGui::CalcTextSize("your answer").x + ImGui::GetStyle().ItemInnerSpacing.x;
      ImGui::SetNextItemWidth(
          std::clamp(ImGui::GetContentRegionAvail().x - label_w, ImGui::GetFontSize() * 5, ImGui::GetFontSize() * 10));
      if (input_double("your answer", x, 0, 0, "%.4g")) a = x;
      track(s, "question." + q.id + ".input");
    }
    const bool revealed = v.revealed.count(q.id) > 0;
    if (!revealed) {
      if (ImGui::SmallButton("Reveal the answer")) v.revealed.insert(q.id);
      track(s, "question." + q.id + ".reveal");
    }
    if (!a.is_null() || revealed) {
      scenario::Report r =
          v.player->report(a.is_null() ? std::map<std::string, json>{} : std::map<std::string, json>{{q.id, a}});
      for (const auto& ans : r.answers) {
        if (ans.question != q.id) continue;
        // The right answer in the class's words: the choice itself, or the number and its tolerance.
        const std::string expected = q.choices.empty() ? ans.expected : q.choices[size_t(q.answer_index)];
        if (ans.answered && ans.correct)
          ImGui::TextColored(ImVec4(0.4f, 0.9f, 0.4f, 1), "Right.");
        else if (ans.answered && !revealed)
          ImGui::TextColored(ImVec4(1, 0.6f, 0.3f, 1), "Not yet: try again, or reveal the answer.");
        if (revealed) wrapped_text(false, "Answer: %s", expected.c_str());
        if ((revealed || ans.correct) && !q.explanation.empty()) wrapped_text(false, "%s", q.explanation.c_str());
      }
    }
    ImGui::PopTextWrapPos();
    ImGui::PopID();
  }
}

std::vector<std::string> open_answers(const ExplorerState& s) {
  const ScenarioView& v = s.scenarios;
  std::vector<std::string> out;
  if (!v.player || !v.player->outcome()) return out;
  // This step's open questions, and the next step's: a value the next step asks for is not shown one step
  // early (the same panel often stays on screen from one step to the next).
  const auto& steps = v.player->scenario().steps;
  const size_t at = size_t(v.player->outcome()->index);
  for (size_t i = at; i < std::min(steps.size(), at + 2); ++i)
    for (const auto& q : steps[i].questions) {
      if (v.revealed.count(q.id)) continue;
      for (const std::string& h : q.hides) {
        std::vector<std::string> missing;
        std::string value = scenario::render_narration(h, v.player->state().results, &missing);
        if (missing.empty() && !value.empty()) out.push_back(std::move(value));
      }
    }
  return out;
}

// The fractions `lines` draw that spell one of the hidden values: "7/15" beside a masked "46.7%" (the pipeline
// view's rule line, "(8-1) / (8 + 8-1) = 7/15 = 46.7%", while a step asks for the bubble) gives the answer away
// as surely as the percentage. Equal to the value as it is written, to its last shown digit.
std::vector<std::string> fractions_spelling(const std::vector<DrawnLine>& lines,
                                            const std::vector<std::string>& hidden) {
  struct Value {
    double x, tolerance;
  };
  std::vector<Value> values;
  for (const std::string& h : hidden) {
    const size_t at = h.find_first_of("0123456789");
    if (at == std::string::npos) continue;
    size_t end = at, decimals = 0;
    bool point = false;
    for (; end < h.size() && (std::isdigit(static_cast<unsigned char>(h[end])) || h[end] == '.'); ++end)
      if (h[end] == '.')
        point = true;
      else if (point)
        ++decimals;
    const double scale = end < h.size() && h[end] == '%' ? 0.01 : 1.0;
    values.push_back({std::strtod(h.substr(at, end - at).c_str(), nullptr) * scale,
                      0.5 * std::pow(10.0, -double(decimals)) * scale});
  }
  std::vector<std::string> out;
  if (values.empty()) return out;
  static const std::regex fraction(R"((\d+)/(\d+))");
  for (const DrawnLine& l : lines)
    for (auto m = std::sregex_iterator(l.text.begin(), l.text.end(), fraction); m != std::sregex_iterator(); ++m) {
      const size_t at = size_t(m->position()), end = at + size_t(m->length());
      auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '/'; };
      if ((at > 0 && word(l.text[at - 1])) || (end < l.text.size() && word(l.text[end]))) continue;
      const double b = std::strtod((*m)[2].str().c_str(), nullptr);
      if (b <= 0) continue;
      const double x = std::strtod((*m)[1].str().c_str(), nullptr) / b;
      for (const Value& v : values)
        if (std::abs(x - v.x) <= v.tolerance + 1e-12) out.push_back(m->str());
    }
  return out;
}

void mask_open_answers(ExplorerState& s) {
  s.scenarios.hidden = open_answers(s);
  if (s.scenarios.hidden.empty()) return;
  // The main view and its child windows (tables, charts): the narration pane beside it asks the question.
  const std::vector<ImDrawList*> lists = window_draw_lists(ImGui::FindWindowByName("###main"));
  std::vector<std::string> words = s.scenarios.hidden;
  for (std::string& f : fractions_spelling(drawn_lines(lists), s.scenarios.hidden)) words.push_back(std::move(f));
  mask_words(lists, words);
}

void draw_scenario_controls(ExplorerState& s) {
  ScenarioView& v = s.scenarios;
  if (!v.player) {  // a scenario being opened: only its progress
    draw_move_progress(s, "narration.progress");
    return;
  }
  scenario::Player& p = *v.player;
  ImGui::PushID("scenario_controls");
  access::next_name("Previous step");  // a screen reader would say "less than"
  if (ImGui::SmallButton("<") && p.current() > 0 && !v.job) start_move(s, copy_of(p), p.current() - 1, true);
  track(s, "narration.previous");
  ImGui::SameLine();
  if (ImGui::SmallButton(p.playing() ? "Pause###play" : "Play###play")) p.playing() ? p.pause() : p.play();
  track(s, "narration.play");
  ImGui::SameLine();
  access::next_name("Next step");
  if (ImGui::SmallButton(">") && !p.finished() && !v.job) start_move(s, copy_of(p), p.current() + 1, false);
  track(s, "narration.next");
  char counter[32];
  std::snprintf(counter, sizeof counter, "step %d/%d", p.current() + 1, p.step_count());
  same_line_if_fits(counter);
  ImGui::TextDisabled("%s", counter);
  const char* back = v.follow_script ? "Scenario" : "Back to the script";
  same_line_if_fits(ImGui::CalcTextSize(back).x + 2 * ImGui::GetStyle().FramePadding.x);
  if (ImGui::SmallButton(back)) {
    if (!v.follow_script)
      apply_step(s);
    else
      s.active_panel = "scenarios";
  }
  draw_move_progress(s, "narration.progress");
  ImGui::PopID();
}

void scenario_frame(ExplorerState& s) {
  ScenarioView& v = s.scenarios;
  static bool env_read = false;  // MEGACLUSTER_SCENARIO[_STEP] work from the first frame, on any panel
  if (!env_read) {
    env_read = true;
    if (const char* id = std::getenv("MEGACLUSTER_SCENARIO"); id && *id && v.request_id.empty()) {
      v.request_id = id;
      env_step(s);
    }
  }
  // A scenario step must never take the app down: anything it throws becomes a shown error.
  try {
    finish_move(s);
    if (!v.request_id.empty()) {  // from the URL, the environment or a test: open it wherever we are
      if (v.scenarios_dir.empty()) v.scenarios_dir = find_scenarios_dir();
      const std::string id = v.request_id;
      v.request_id.clear();
      bool shipped = id.find('/') == std::string::npos && id.find("..") == std::string::npos;
      if (shipped) {
        if (!v.gallery_loaded) load_gallery(s);
        shipped = false;
        for (const auto& e : v.gallery) shipped = shipped || e.id == id || e.file == id + ".json";
      }
      if (shipped)
        open_path(s, v.scenarios_dir + "/" + id + ".json", v.request_step);
      else
        show_problems(s, "the link", {unknown_id_problem(s, id)});
    }
  } catch (const std::exception& e) {
    v.errors.push_back(e.what());
    s.status = std::string("scenario: ") + e.what();
  }
  if (!v.player || v.ticked_frame == s.frame) return;
  v.ticked_frame = s.frame;
  // The user moved away from what the step set up: say so (the panel offers the way back).
  const std::string& focus = v.player->state().focus_panel;  // "lab/scaling": the panel is "lab"
  if (v.follow_script && s.active_panel != "scenarios" && !focus.empty() &&
      s.active_panel != focus.substr(0, focus.find('/')))
    v.follow_script = false;
  try {
    // A playing scenario's next step runs as a job too (one at a time).
    if (!v.job && v.player->advance_time(ImGui::GetIO().DeltaTime))
      start_move(s, copy_of(*v.player), v.player->current() + 1, false);
  } catch (const std::exception& e) {
    v.errors.push_back(e.what());
    s.status = std::string("scenario: ") + e.what();
  }
}

}  // namespace mc::ui
