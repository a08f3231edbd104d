// animation_kind.h - each animation described once. An animation (collective_animation, pipeline_animation,
// zero_animation) writes one description `D` beside its engine code and registers it from its own file;
// everything else is made from that description: the scenario action of its name and the action's checks
// (scenario/animation_actions.cpp), its config kind (scenario/actions.cpp config_kinds), the view's scenario
// binding and address part (ui/animation_panel.h), and the view's playback (ui/state/animation_view.h). A
// fourth animation is its engine file and its panel file.
//
//   struct D {                                    // e.g. CollectiveAnimationKind (collective_animation.h)
//     using Settings = ...; using Animation = ...;   // sim/animation_settings.h; the engine's result
//     static constexpr const char* kKind;         // "collective": the action, the config kind, the panel
//     static constexpr const char* kTitle;        // "Collectives in motion"
//     static constexpr const char* kSummary;      // what its config drives (the config kind's summary)
//     static constexpr const char* kNoun;         // "collective": "the link's collective settings"
//     static constexpr int kOrder;                // where it is listed among the animations
//     static constexpr bool kOnMachine;           // made on a scenario's simulate/estimate config's machine
//     static Settings view_start();               // what a view (and a link without edits) opens on
//     static Settings config_base(Settings held); // what a scenario config's left-out keys mean
//     static Animation make(const Catalog&, const Settings&, const json* machine);  // throws on bad input
//     static double total_s(const Animation&);    // the animation's length, seconds of the machine
//     static json figures(const Animation&, double t_s);  // what a narration quotes and the view writes
//     static json opened(const Settings&, const Animation&);  // the view's settings after an action
//   };
//   const AnimationRegistrar reg{describe_animation<D>()};
//
// The files that register are named *_animation.cpp and linked whole (engine/CMakeLists.txt), as devices are.
#pragma once

#include "catalog/catalog.h"
#include "core/json_doc.h"
#include "sim/animation_settings.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mc::sim {

// What a scenario's animation action opens: the config the view is given (every setting, the moment "t_s",
// and "machine", the config it was made on) and the figures at that moment.
struct OpenedAnimation {
  json config, figures;
};

// The description with its types erased: what the scenario layer reads.
struct AnimationKind {
  const char* kind = "";
  const char* title = "";
  const char* summary = "";
  int order = 0;
  bool on_machine = false;
  // Checks an action's "settings" (errors located; the limits are the view's).
  std::function<void(const JsonCursor& settings)> check;
  // The animation of `config` (the scenario's, the action's settings merged in) on `machine` (the machine's
  // config; null when the animation has none) at the moment `moment(total_s)`.
  std::function<OpenedAnimation(const Catalog& cat, const json& config, const json* machine,
                                const std::function<double(double total_s)>& moment)>
      open;
};

// Registers an animation at static initialisation (one per *_animation.cpp). A second of the same kind is
// refused by a message on stderr, and ignored.
struct AnimationRegistrar {
  explicit AnimationRegistrar(AnimationKind k);
};

// Every registered animation, by order.
const std::vector<AnimationKind>& animation_kinds();
const AnimationKind* find_animation_kind(std::string_view kind);

// The configs an animation on a machine may take it from ("machine_of").
inline void check_machine_of(const JsonCursor& settings) {
  if (settings.has("machine_of")) (void)settings["machine_of"].one_of({"simulate", "estimate"});
}

template <class D>
AnimationKind describe_animation() {
  using Settings = typename D::Settings;
  AnimationKind k;
  k.kind = D::kKind;
  k.title = D::kTitle;
  k.summary = D::kSummary;
  k.order = D::kOrder;
  k.on_machine = D::kOnMachine;
  k.check = [](const JsonCursor& s) {
    if constexpr (D::kOnMachine) {
      (void)parse_settings(s, Settings{}, {"machine_of"});
      check_machine_of(s);
    } else {
      (void)parse_settings(s, Settings{}, {});
    }
  };
  k.open = [](const Catalog& cat, const json& c, const json* machine, const std::function<double(double)>& moment) {
    const std::string what = std::string("the ") + D::kKind + " config";
    const Settings set = D::kOnMachine ? parse_settings_json<Settings>(c, what, {}, {"machine_of"})
                                       : parse_settings_json<Settings>(c, what, {});
    const typename D::Animation anim = D::make(cat, set, machine);
    const double t = moment(D::total_s(anim));
    OpenedAnimation o{D::opened(set, anim), D::figures(anim, t)};
    o.config["t_s"] = t;
    if (machine) o.config["machine"] = *machine;
    return o;
  };
  return k;
}

}  // namespace mc::sim
