// answer_mask_ui_test.cpp - questions before answers: while a step's question is open, the value that answers
// it is masked in the main view (gpt3-on-the-machine once asked "How many days...?" beside "98.3 days for 300B
// tokens"); pressing Reveal shows it. Read from the glyphs the frame drew (ui/drawn_text.h), not ImGui's log,
// which records the text under the mask too.
#include "scenario/player.h"
#include "scenario/scenario.h"
#include "tests/ui/headless.h"
#include "ui/scenario_bindings.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>

using mc::test::assets;
using mc::test::Headless;
using mc::test::NullPlatform;

namespace {

// The number a hidden value writes ("98.3 days" -> 98.3, "95.3%" -> 0.953, "$4.68M" -> 4.68e6); NaN if none.
double number_in(const std::string& text) {
  size_t i = text.find_first_of("0123456789");
  if (i == std::string::npos) return std::nan("");
  std::string digits;
  for (; i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' || text[i] == ',');
       ++i)
    if (text[i] != ',') digits += text[i];
  double x = std::strtod(digits.c_str(), nullptr);
  while (i < text.size() && text[i] == ' ') ++i;
  if (i < text.size()) {
    const char u = text[i];
    x *= u == '%' ? 0.01 : u == 'k' ? 1e3 : u == 'M' ? 1e6 : u == 'B' || u == 'G' ? 1e9 : u == 'T' ? 1e12 : 1.0;
  }
  return x;
}

// The numbers `text` writes with `unit` right after them ("compute 73.72 s" for " s"), in the order drawn.
std::vector<double> numbers_with_unit(const std::string& text, const std::string& unit) {
  std::vector<double> out;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])) || (i > 0 && (word(text[i - 1]) || text[i - 1] == '.'))) {
      ++i;
      continue;
    }
    size_t e = i;
    while (e < text.size() && (std::isdigit(static_cast<unsigned char>(text[e])) || text[e] == '.')) ++e;
    const bool unit_follows =
        text.compare(e, unit.size(), unit) == 0 && (e + unit.size() == text.size() || !word(text[e + unit.size()]));
    if (unit_follows) out.push_back(std::strtod(text.substr(i, e - i).c_str(), nullptr));
    i = e;
  }
  return out;
}

// A run of parts drawn one after another that adds up to `total` (a breakdown beside its masked sum: the
// supercomputer's iteration was the sum of the visible "compute 73.72 s", "tp comm 5.28 s", ...), or "".
std::string parts_that_sum_to(const std::vector<double>& xs, double total) {
  for (size_t a = 0; a < xs.size(); ++a) {
    double sum = xs[a];
    for (size_t b = a + 1; b < xs.size() && b < a + 8; ++b) {
      sum += xs[b];
      // Each part is rounded where it is drawn (2 decimals): allow that much per part.
      if (std::abs(sum - total) <= std::max(0.003 * std::abs(total), 0.006 * double(b - a + 1))) {
        std::string parts;
        for (size_t k = a; k <= b; ++k) parts += (k > a ? " + " : "") + std::to_string(xs[k]);
        return parts;
      }
    }
  }
  return "";
}

// A fraction `text` draws as a word of its own ("7/15", not part of "2024/25" or a date) that equals `x` to
// 0.1 % (a formula's result spelling an answer), or "".
std::string fraction_equal_to(const std::string& text, double x) {
  static const std::regex fraction(R"((^|[^\w./])(\d+)/(\d+)(?![\w./]))");
  for (auto m = std::sregex_iterator(text.begin(), text.end(), fraction); m != std::sregex_iterator(); ++m) {
    const double b = std::strtod((*m)[3].str().c_str(), nullptr);
    if (b > 0 && std::abs(std::strtod((*m)[2].str().c_str(), nullptr) / b - x) <= 1e-3 * std::abs(x))
      return (*m)[2].str() + "/" + (*m)[3].str();
  }
  return "";
}

}  // namespace

// For every question of every shipped scenario: before Reveal no text the main view draws (on screen or
// scrolled away) contains the value that answers it, nor does the narration pane; after Reveal the main view
// shows it where the class can read it. A number question names the panel's value of its answer.
// At a laptop's 1440x900 and a projector's 1024x768 in presenter mode, where panels wrap their lines: a value
// split across two lines ("2.42" at one's end, "M GPU-hours" below, gpt3-on-the-machine step 2) stays masked.
void answers_masked_until_revealed(ImVec2 size, bool presenter) {
  SCOPED_TRACE(std::to_string(int(size.x)) + "x" + std::to_string(int(size.y)));
  Headless h(size.x, size.y, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  auto& s = app.state();
  s.classroom.presenter = presenter;
  int questions = 0, masked = 0;
  for (const std::string& id : mc::test::shipped_scenarios()) {
    if (id == "predictable-scaling") continue;  // trains for a while; its one question is a choice, no value
    ASSERT_TRUE(mc::test::open_scenario_step(h, app, id, 0));
    ASSERT_TRUE(s.scenarios.player) << id;
    const mc::scenario::Scenario sc = s.scenarios.player->scenario();
    for (int k = 0; k < int(sc.steps.size()); ++k) {
      for (const auto& q : sc.steps[size_t(k)].questions) {
        SCOPED_TRACE(id + " step " + std::to_string(k + 1) + " question " + q.id);
        ++questions;
        ASSERT_TRUE(mc::test::open_scenario_step(h, app, id, k));
        ASSERT_TRUE(mc::test::frames_until(h, app, [&] { return !mc::ui::panels_busy(s); }));
        for (int f = 0; f < 3; ++f) h.frame(app);
        ASSERT_FALSE(s.scenarios.revealed.count(q.id)) << "a step opened by a link starts with its answers hidden";
        const nlohmann::json& results = s.scenarios.player->state().results;
        std::vector<std::string> values;
        for (const std::string& hide : q.hides) {
          std::vector<std::string> missing;
          values.push_back(mc::scenario::render_narration(hide, results, &missing));
          EXPECT_TRUE(missing.empty()) << hide;
        }
        if (!q.answer_result.empty() && !q.hides.empty()) {
          // The answer itself is one of the values hidden (as a panel writes it). A question with nothing to
          // hide (its answer is drawn nowhere) is checked by the scan below.
          const nlohmann::json* answer = mc::scenario::lookup_result(results, q.answer_result);
          ASSERT_TRUE(answer && answer->is_number()) << q.answer_result;
          bool named = false;
          for (const std::string& v : values)
            named = named || std::abs(number_in(v) - answer->get<double>()) <= 0.01 * std::abs(answer->get<double>());
          EXPECT_TRUE(named) << "question " << q.id << " hides none of the values that answer it (" << q.answer_result
                             << " = " << answer->dump() << ")";
        }
        const std::string main_before = mc::test::drawn_text(mc::test::window_lists("###main"));
        const std::string narration = mc::test::drawn_text(mc::test::window_lists("###narration"));
        if (!q.answer_result.empty()) {
          // Nor in any other way a panel writes a number ("98.3" in a table, "98.27"): the answer in every
          // narration format (a year or a bare integer is too short a word to mean the answer).
          const nlohmann::json& answer = *mc::scenario::lookup_result(results, q.answer_result);
          for (const std::string& how : mc::scenario::narration_formats()) {
            if (how == "year" || how == "int" || how == "pct0" || how == "count") continue;
            const std::string v = mc::scenario::render_narration("{{x|" + how + "}}", {{"x", answer}}, nullptr);
            EXPECT_FALSE(mc::ui::contains_word(main_before, v))
                << "the answer is drawn before Reveal as \"" << v << "\"";
            EXPECT_FALSE(mc::ui::contains_word(narration, v)) << "the narration pane gives away \"" << v << "\"";
          }
          // Nor as a formula's result: a fraction drawn that equals it ("7/15" for a 46.7 % bubble).
          const std::string f = fraction_equal_to(main_before, answer.get<double>());
          EXPECT_EQ(f, "") << "the fraction \"" << f << "\" drawn before Reveal spells the answer";
        }
        for (const std::string& v : values) {
          // dgx1-2016 step 5 drew "(8-1) / (8 + 8-1) = 7/15 = " beside its masked analytic 46.7 %.
          const std::string f = fraction_equal_to(main_before, number_in(v));
          EXPECT_EQ(f, "") << "the fraction \"" << f << "\" drawn before Reveal spells the hidden \"" << v << "\"";
        }
        for (const std::string& v : values) {
          EXPECT_FALSE(mc::ui::contains_word(main_before, v)) << "\"" << v << "\" is drawn before Reveal";
          // Nor as the sum of parts drawn beside it, in the value's own unit ("89.0 s": numbers before " s").
          const size_t digits = v.find_first_of("0123456789");
          const size_t end = digits == std::string::npos ? digits : v.find_first_not_of("0123456789.,", digits);
          if (end != std::string::npos && v[end] == ' ' && end + 1 < v.size() &&
              std::isalpha(static_cast<unsigned char>(v[end + 1]))) {
            const std::string unit = v.substr(end);
            std::string number = v.substr(digits, end - digits);
            number.erase(std::remove(number.begin(), number.end(), ','), number.end());
            EXPECT_EQ(parts_that_sum_to(numbers_with_unit(main_before, unit), std::strtod(number.c_str(), nullptr)), "")
                << "parts drawn before Reveal add up to the hidden \"" << v << "\"";
          }
          // A choice question lists its answer among the choices: that is the question, not a give-away.
          const bool a_choice = std::find(q.choices.begin(), q.choices.end(), v) != q.choices.end();
          if (!a_choice) {
            EXPECT_FALSE(mc::ui::contains_word(narration, v)) << "the narration pane gives away \"" << v << "\"";
          }
        }
        mc::test::click_widget(h, app, "question." + q.id + ".reveal");
        ASSERT_TRUE(s.scenarios.revealed.count(q.id));
        h.frame(app);
        // At 1024x768 five revealed values (95.3%, 96.3%, $803B, $812B, 89.1 s; openai-lp-2019 step 2's among
        // them) lie below the fold, where ImGui draws no glyph until the panel is scrolled: there Reveal is
        // checked at 1440x900 only.
        const std::string main_after = mc::ui::visible_text(mc::test::window_lists("###main"));
        for (const std::string& v : values) {
          if (!presenter) {
            EXPECT_TRUE(mc::ui::contains_word(main_after, v)) << "\"" << v << "\" is not on screen after Reveal";
          }
          ++masked;
        }
      }
    }
  }
  EXPECT_GE(questions, 12);
  EXPECT_GE(masked, 5);
}

TEST(QuestionMasks, TheAnswerIsMaskedUntilRevealed) {
  answers_masked_until_revealed(ImVec2(1440, 900), false);
  answers_masked_until_revealed(ImVec2(1024, 768), true);
}

// The mask follows the step: Reveal shows one question's value, and the next scenario's question is masked
// again (answers start hidden when a scenario opens).
TEST(QuestionMasks, RevealIsPerQuestionAndAnOpenedScenarioStartsHidden) {
  Headless h(1440, 900, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  auto& s = app.state();
  ASSERT_TRUE(mc::test::open_scenario_step(h, app, "gpt3-on-the-machine", 1));
  ASSERT_TRUE(mc::test::frames_until(h, app, [&] { return !mc::ui::panels_busy(s); }));
  h.frame(app);
  // The days, and the GPU-hours and dollars they are derived from ("2.42 M GPU-hours" on 1,024 GPUs is the days).
  ASSERT_EQ(s.scenarios.hidden.size(), 3u);
  const std::string days = s.scenarios.hidden.front();  // "98.3", as in "98.3 days for 300 B tokens"
  EXPECT_NE(h.text.find(days + " days"), std::string::npos) << "the panel lays it out (ImGui's log), under the mask";
  EXPECT_FALSE(mc::ui::contains_word(mc::test::drawn_text(mc::test::window_lists("###main")), days));
  mc::test::click_widget(h, app, "question.q-days.reveal");
  EXPECT_TRUE(s.scenarios.hidden.empty());
  EXPECT_TRUE(mc::ui::contains_word(mc::ui::visible_text(mc::test::window_lists("###main")), days));
  ASSERT_TRUE(mc::test::open_scenario_step(h, app, "gpt3-on-the-machine", 1));
  h.frame(app);
  ASSERT_EQ(s.scenarios.hidden.size(), 3u) << "opened again: the answer is hidden again";
  EXPECT_EQ(s.scenarios.hidden.front(), days);
}

// A panel often stays on screen from one step to the next: the value the next step's question asks for is
// masked one step early too (openai-lp step 1 drew "Nonprofit: $803B, 95.3%", the answer step 2 asks for;
// gpt3-on-the-machine step 1's search drew step 2's "98.3" days before step 1 had computed them).
TEST(QuestionMasks, TheNextStepsAnswerIsNotShownOneStepEarly) {
  Headless h(1440, 900, true);
  NullPlatform platform;
  mc::ui::App app({assets(), &platform, ""});
  auto& s = app.state();
  int checked = 0;
  for (const std::string& id : mc::test::shipped_scenarios()) {
    if (id == "predictable-scaling") continue;  // trains for a while; its one question is a choice, no value
    ASSERT_TRUE(mc::test::open_scenario_step(h, app, id, 0));
    const mc::scenario::Scenario sc = s.scenarios.player->scenario();
    for (int k = 1; k < int(sc.steps.size()); ++k) {
      bool any = false;
      for (const auto& q : sc.steps[size_t(k)].questions) any = any || !q.hides.empty();
      if (!any) continue;
      SCOPED_TRACE(id + " step " + std::to_string(k) + " before step " + std::to_string(k + 1) + "'s question");
      // The values as step k+1 computes them: the step before may draw them without having computed them
      // itself (gpt3-on-the-machine step 1's search drew step 2's "98.3" days in its days column).
      ASSERT_TRUE(mc::test::open_scenario_step(h, app, id, k));
      std::vector<std::string> values;
      for (const auto& q : sc.steps[size_t(k)].questions)
        for (const std::string& hide : q.hides) {
          std::vector<std::string> missing;
          const std::string v = mc::scenario::render_narration(hide, s.scenarios.player->state().results, &missing);
          EXPECT_TRUE(missing.empty()) << hide;
          if (!v.empty()) values.push_back(v);
        }
      ASSERT_TRUE(mc::test::open_scenario_step(h, app, id, k - 1));
      // Twice: a panel starts what it computes (a layout search) when it is first drawn after the step.
      for (int wait = 0; wait < 2; ++wait) {
        for (int f = 0; f < 3; ++f) h.frame(app);
        ASSERT_TRUE(mc::test::frames_until(h, app, [&] { return !mc::ui::panels_busy(s); }));
      }
      for (int f = 0; f < 3; ++f) h.frame(app);
      const std::string main = mc::test::drawn_text(mc::test::window_lists("###main"));
      for (const std::string& v : values) {
        EXPECT_FALSE(mc::ui::contains_word(main, v)) << "\"" << v << "\" is drawn one step before it is asked";
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 2);
}
