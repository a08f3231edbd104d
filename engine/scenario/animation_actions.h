// animation_actions.h - the scenario actions that open an animation, one per registered animation
// (sim/animation_kind.h: "collective", "pipeline", "zero"). Their figures are the description's, which the
// views quote too, so a narration's {{ring.busbw_Bps|si}}B/s is the number the view draws.
//
//   {"do": "collective", "settings": {"collective": "all-reduce", "algorithm": "ring", "gpus": 16,
//                                      "message_bytes": 80e6, "machine_of": "estimate"}, "at": 1, "as": "ring"}
//   {"do": "pipeline",   "settings": {"schedule": "interleaved", "stages": 4, "micro_batches": 8,
//                                      "virtual_stages": 2, "follow": 1}, "t_s": 0.5, "as": "pipe"}
//
//   {"do": "zero",       "settings": {"stage": 3, "gpus": 8, "micro_batches": 1, "model": "gpt3-2.7b",
//                                      "cluster": "azure-openai-2020", "software": "deepspeed-2022"}, "at": 0.5}
//
// "settings" are merged into the scenario's "collective" / "pipeline" config (a "set" can edit it too);
// "machine_of" names the config whose cluster (and, for the pipeline, model, layout and per-layer times)
// is animated: "simulate" (default) or "estimate". "at" is a moment as a fraction of the call or
// iteration, "t_s" one in seconds (default: the end). The engine call's filled-in config (every setting,
// the moment, the machine's config) is what the view is given, so it makes the very same animation.
#pragma once

#include "scenario/actions.h"

namespace mc::scenario {

// One action per animation_kinds() entry, named as its kind.
void register_animation_actions(ActionRegistry& reg);

}  // namespace mc::scenario
