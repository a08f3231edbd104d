// imgui_hooks.cpp - the four functions ImGui 1.86 calls when built with IMGUI_ENABLE_TEST_ENGINE (its
// imgui_internal.h declares them), forwarding items to mc::ui::hooks::item_sink(). Compiled into the imgui
// library, so every program that links ImGui has them.
#include "ui/hooks/imgui_hooks.h"

#include <imgui.h>
#include <imgui_internal.h>

namespace mc::ui::hooks {
ItemSink& item_sink() {
  static ItemSink sink;
  return sink;
}
}  // namespace mc::ui::hooks

void ImGuiTestEngineHook_ItemAdd(ImGuiContext*, const ImRect& bb, ImGuiID id) {
  auto& s = mc::ui::hooks::item_sink();
  if (s.add) s.add(id, bb.Min.x, bb.Min.y, bb.Max.x, bb.Max.y);
}

void ImGuiTestEngineHook_ItemInfo(ImGuiContext*, ImGuiID id, const char* label, ImGuiItemStatusFlags flags) {
  auto& s = mc::ui::hooks::item_sink();
  if (s.info) s.info(id, label, flags);
}

void ImGuiTestEngineHook_Log(ImGuiContext*, const char*, ...) {}

// ImGui's debug tools (Metrics, the item picker) ask the test engine for an item's label; there is none.
const char* ImGuiTestEngine_FindItemDebugLabel(ImGuiContext*, ImGuiID) { return nullptr; }
