// imgui_hooks.h - where Dear ImGui's item hooks go. ImGui 1.86 built with IMGUI_ENABLE_TEST_ENGINE calls
// ImGuiTestEngineHook_ItemAdd (an item's id and rectangle, for every item with an id) and
// ImGuiTestEngineHook_ItemInfo (its label and status: checkable, checked, openable, open) from inside its
// widgets; imgui_hooks.cpp, compiled into the imgui library itself, hands both to the sink set here, so the
// accessibility mirror (ui/access.h) sees every interactive item ImGui draws, whichever panel drew it.
#pragma once

typedef unsigned int ImGuiID;
struct ImRect;

namespace mc::ui::hooks {

struct ItemSink {
  void (*add)(ImGuiID id, float x0, float y0, float x1, float y1) = nullptr;
  void (*info)(ImGuiID id, const char* label, int status_flags) = nullptr;
};
// The sink the hooks call; null members (the default) ignore the hook.
ItemSink& item_sink();

}  // namespace mc::ui::hooks
