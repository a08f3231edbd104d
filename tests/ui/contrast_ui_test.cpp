// contrast_ui_test.cpp - issue 42 item 5: the theme's text and controls are readable in every state, by WCAG
// 2.1's own measure (success criteria 1.4.3 and 1.4.11: text at least 4.5:1 against what is behind it, a
// control's boundary and state at least 3:1). The ratio is WCAG's: (L1 + 0.05) / (L2 + 0.05) of the relative
// luminances, L = 0.2126 R + 0.7152 G + 0.0722 B of the linearized sRGB channels; a translucent colour is
// taken as it shows over the window's background, as ImGui blends it.
#include "tests/ui/headless.h"

#include "ui/widgets.h"

#include <gtest/gtest.h>
#include <imgui.h>

#include <cmath>
#include <string>

namespace {

double linear(double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); }
double luminance(const ImVec4& c) { return 0.2126 * linear(c.x) + 0.7152 * linear(c.y) + 0.0722 * linear(c.z); }
ImVec4 over(const ImVec4& top, const ImVec4& below) {
  const float a = top.w;
  return ImVec4(top.x * a + below.x * (1 - a), top.y * a + below.y * (1 - a), top.z * a + below.z * (1 - a), 1);
}
double contrast(const ImVec4& a, const ImVec4& b) {
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

TEST(ThemeContrast, TheFormulaIsWcags) {
  // WCAG's own end points and a known pair: black on white is 21:1, a colour against itself 1:1, and
  // #777777 on white 4.48:1 (the grey that famously just misses AA).
  EXPECT_NEAR(contrast(ImVec4(0, 0, 0, 1), ImVec4(1, 1, 1, 1)), 21.0, 1e-9);
  EXPECT_NEAR(contrast(ImVec4(0.3f, 0.5f, 0.7f, 1), ImVec4(0.3f, 0.5f, 0.7f, 1)), 1.0, 1e-9);
  const float g = 0x77 / 255.0f;
  EXPECT_NEAR(contrast(ImVec4(g, g, g, 1), ImVec4(1, 1, 1, 1)), 4.48, 0.01);
}

TEST(ThemeContrast, TextAndControlsAreReadableInEveryState) {
  mc::test::Headless h(640, 480, /*app_look=*/true);
  const ImGuiStyle& st = ImGui::GetStyle();
  const ImVec4* c = st.Colors;
  const ImVec4 window = c[ImGuiCol_WindowBg];
  const auto bg = [&](ImGuiCol col) { return over(c[col], window); };
  // Text on everything it is drawn on, in every state of a control.
  const std::pair<const char*, ImGuiCol> behind_text[] = {{"WindowBg", ImGuiCol_WindowBg},
                                                          {"ChildBg", ImGuiCol_ChildBg},
                                                          {"PopupBg", ImGuiCol_PopupBg},
                                                          {"FrameBg", ImGuiCol_FrameBg},
                                                          {"FrameBgHovered", ImGuiCol_FrameBgHovered},
                                                          {"FrameBgActive", ImGuiCol_FrameBgActive},
                                                          {"Button", ImGuiCol_Button},
                                                          {"ButtonHovered", ImGuiCol_ButtonHovered},
                                                          {"ButtonActive", ImGuiCol_ButtonActive},
                                                          {"Header", ImGuiCol_Header},
                                                          {"HeaderHovered", ImGuiCol_HeaderHovered},
                                                          {"HeaderActive", ImGuiCol_HeaderActive},
                                                          {"Tab", ImGuiCol_Tab},
                                                          {"TabHovered", ImGuiCol_TabHovered},
                                                          {"TabActive", ImGuiCol_TabActive},
                                                          {"TitleBg", ImGuiCol_TitleBg},
                                                          {"TitleBgActive", ImGuiCol_TitleBgActive},
                                                          {"TableHeaderBg", ImGuiCol_TableHeaderBg},
                                                          {"TableRowBgAlt", ImGuiCol_TableRowBgAlt}};
  for (const auto& [name, col] : behind_text) EXPECT_GE(contrast(c[ImGuiCol_Text], bg(col)), 4.5) << "text on " << name;
  // Secondary text (assumptions, sources, units, the status bar) where it is drawn: the window, a table's
  // header and alternate rows, an input field.
  for (const auto& [name, col] : {std::pair<const char*, ImGuiCol>{"WindowBg", ImGuiCol_WindowBg},
                                  {"TableHeaderBg", ImGuiCol_TableHeaderBg},
                                  {"TableRowBgAlt", ImGuiCol_TableRowBgAlt},
                                  {"FrameBg", ImGuiCol_FrameBg}})
    EXPECT_GE(contrast(c[ImGuiCol_TextDisabled], bg(col)), 4.5) << "secondary text on " << name;
  // The explorer's own text colours: the accent (titles, the narration's heading) and the error red.
  EXPECT_GE(contrast(mc::ui::accent_color(), window), 4.5) << "the accent colour";
  EXPECT_GE(contrast(ImVec4(1, 0.45f, 0.4f, 1), window), 4.5) << "the error colour";
  // Controls: a field's or button's outline against the window, a slider's grab and a check mark against
  // the field, keyboard focus against the window.
  EXPECT_GT(st.FrameBorderSize, 0.0f) << "fields and buttons are outlined";
  EXPECT_GE(contrast(bg(ImGuiCol_Border), window), 3.0) << "a control's outline";
  EXPECT_GE(contrast(c[ImGuiCol_SliderGrab], bg(ImGuiCol_FrameBg)), 3.0) << "a slider's grab";
  EXPECT_GE(contrast(c[ImGuiCol_SliderGrab], bg(ImGuiCol_FrameBgHovered)), 3.0) << "a hovered slider's grab";
  EXPECT_GE(contrast(c[ImGuiCol_CheckMark], bg(ImGuiCol_FrameBgHovered)), 3.0) << "a hovered check mark";
  EXPECT_GE(contrast(c[ImGuiCol_SliderGrabActive], bg(ImGuiCol_FrameBgActive)), 3.0) << "a dragged grab";
  EXPECT_GE(contrast(c[ImGuiCol_CheckMark], bg(ImGuiCol_FrameBg)), 3.0) << "a check mark";
  EXPECT_GE(contrast(c[ImGuiCol_NavHighlight], window), 3.0) << "the keyboard focus outline";
}

}  // namespace
