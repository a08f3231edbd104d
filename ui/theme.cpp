// theme.cpp - a calm dark theme with one accent colour; sizes scaled for HiDPI.
#include "ui/app.h"

#include <imgui.h>

namespace mc::ui {

void apply_theme(float scale) {
  ImGui::StyleColorsDark();
  ImGuiStyle& st = ImGui::GetStyle();
  st.WindowRounding = 0.0f;
  st.FrameRounding = 4.0f;
  st.GrabRounding = 4.0f;
  st.TabRounding = 4.0f;
  st.WindowBorderSize = 1.0f;
  st.FramePadding = ImVec2(8, 5);
  st.ItemSpacing = ImVec2(8, 6);
  st.CellPadding = ImVec2(8, 4);
  st.ScrollbarSize = 14;
  ImVec4* c = st.Colors;
  c[ImGuiCol_WindowBg] = ImVec4(0.09f, 0.10f, 0.12f, 1.0f);
  c[ImGuiCol_ChildBg] = ImVec4(0.09f, 0.10f, 0.12f, 1.0f);
  // The frame colour of sliders, inputs and the animations' backdrops, opaque: ImGui's default
  // (0.16, 0.29, 0.48, 0.54) as it shows over WindowBg (8-bit 33, 52, 80). An opaque rectangle is painted
  // by a fast clear, not shaded pixel by pixel (Shell::frame's fast fills): a third of the pixels of a
  // 1280x720 frame of the collective animation under software rendering.
  c[ImGuiCol_FrameBg] = ImVec4(33 / 255.0f, 52 / 255.0f, 80 / 255.0f, 1.0f);
  c[ImGuiCol_TitleBg] = ImVec4(0.12f, 0.14f, 0.17f, 1.0f);
  c[ImGuiCol_TitleBgActive] = ImVec4(0.14f, 0.18f, 0.24f, 1.0f);
  c[ImGuiCol_Header] = ImVec4(0.20f, 0.36f, 0.55f, 0.55f);
  c[ImGuiCol_HeaderHovered] = ImVec4(0.26f, 0.46f, 0.70f, 0.70f);
  c[ImGuiCol_HeaderActive] = ImVec4(0.30f, 0.52f, 0.80f, 0.90f);
  c[ImGuiCol_Button] = ImVec4(0.20f, 0.36f, 0.55f, 0.70f);
  c[ImGuiCol_ButtonHovered] = ImVec4(0.26f, 0.46f, 0.70f, 1.0f);
  c[ImGuiCol_Tab] = ImVec4(0.14f, 0.20f, 0.28f, 1.0f);
  c[ImGuiCol_TabActive] = ImVec4(0.24f, 0.42f, 0.64f, 1.0f);
  c[ImGuiCol_TabHovered] = ImVec4(0.30f, 0.52f, 0.80f, 1.0f);
  c[ImGuiCol_TableHeaderBg] = ImVec4(0.14f, 0.16f, 0.20f, 1.0f);
  c[ImGuiCol_TableRowBgAlt] = ImVec4(1.0f, 1.0f, 1.0f, 0.03f);
  c[ImGuiCol_PlotHistogram] = ImVec4(0.38f, 0.72f, 1.0f, 1.0f);
  st.ScaleAllSizes(scale);
}

}  // namespace mc::ui
