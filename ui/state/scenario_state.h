// scenario_state.h - view state of the Scenarios panel: the gallery (scenarios/index.json), the loaded
// scenario's player (plain engine state, engine/scenario/player.h), the student's answers, and what the
// player last pushed into the other panels (so "back to the script" can restore it after free exploring).
#pragma once

#include "scenario/player.h"
#include "ui/jobs.h"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace mc::ui {

struct ExplorerState;

// Advances a playing scenario by this frame's time and pushes a new step into the panels. Called once per
// frame by the app (whatever panel is showing) and by the Scenarios panel; harmless when nothing plays.
void scenario_frame(ExplorerState& s);
// Compact player controls (previous, play/pause, next, step i/n, open the Scenarios panel) for the narration
// dock, so a class can follow the script from any panel. Draws nothing when no scenario is loaded.
void draw_scenario_controls(ExplorerState& s);
// The current step's questions with an answer box and "Reveal the answer", for the narration pane (and the
// Scenarios panel). Draws nothing when no scenario is loaded or the step asks nothing.
void draw_scenario_questions(ExplorerState& s);
// The values that answer the step's open questions (each question's "hides", rendered from the player's
// results as the panels write them): what the main view must not show until the class presses Reveal.
std::vector<std::string> open_answers(const ExplorerState& s);
// Draws those values masked wherever the main view drew them this frame (after the windows' End(), before
// ImGui::Render(); App::frame calls it). Sets ScenarioView::hidden.
void mask_open_answers(ExplorerState& s);

// A move of the player that computes (open at a step, next, previous, a jump, restart), run by the job
// runner (ui/jobs.h) so the app keeps drawing, with a progress bar, while a step trains or simulates: the
// steps run on `work`, a copy of the player (or a new one), which replaces the player once done. One
// step at a time: a step's actions cannot be cut, so Cancel takes effect between steps.
class ScenarioJob final : public Job {
 public:
  // Runs `work` to step `target` (0-based), from where it is, or from the start when `replay`.
  ScenarioJob(std::shared_ptr<scenario::Player> work, int target, bool replay, bool opens);
  bool step(double budget_s) override;
  std::shared_ptr<scenario::Player> work;
  const int target;
  const bool opens;  // a newly opened scenario (its answers start empty)

 private:
  bool replay_;
  int from_ = -1;  // the step work starts from (for the progress bar): -1 before the first
};

struct ScenarioView {
  std::vector<scenario::IndexEntry> gallery;
  bool gallery_loaded = false;
  std::string gallery_error;  // the index itself could not be read
  std::string scenarios_dir;

  std::shared_ptr<scenario::Player> player;  // null until a scenario is opened
  std::string file;                          // what is loaded (path or dropped file name)
  std::vector<std::string> errors;           // validation errors of the last file opened (shown, never fatal)
  std::map<std::string, nlohmann::json> answers;
  std::set<std::string> revealed;   // questions whose answer the class asked to see
  std::vector<std::string> hidden;  // values masked in the main view this frame (open_answers)
  int applied_step = -2;            // the step whose effects were last pushed into the panels
  // The step's narration waits until the view has computed what it quotes (set when a step is applied, cleared
  // the first frame the panels are idle; it does not come back while the class explores).
  bool narration_held = false;
  bool follow_script = true;                // false while the user explores on their own
  bool selected_by_step = false;            // the inspector shows a catalog row a step outlined
  unsigned long long ticked_frame = ~0ull;  // the frame scenario_frame last advanced (once per frame)
  std::shared_ptr<ScenarioJob> job;         // a move of the player in flight (null when none)

  // Requested from outside (web URL ?scenario=ID&step=N, command line): opened on the next frame.
  std::string request_id;
  int request_step = -1;
};

}  // namespace mc::ui
