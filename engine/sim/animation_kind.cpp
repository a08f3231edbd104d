// animation_kind.cpp - the registered animations (animation_kind.h): registration at static initialisation,
// listed by order.
#include "sim/animation_kind.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace mc::sim {
namespace {

// A function-local static: registrars in other files may run before any namespace-scope object here.
std::vector<AnimationKind>& kinds() {
  static std::vector<AnimationKind> k;
  return k;
}

}  // namespace

AnimationRegistrar::AnimationRegistrar(AnimationKind k) {
  std::vector<AnimationKind>& all = kinds();
  if (find_animation_kind(k.kind)) {
    std::fprintf(stderr, "megacluster: a second animation named \"%s\" registered; the first is kept\n", k.kind);
    return;
  }
  all.push_back(std::move(k));
  // By order, then by name: the list does not depend on the order the linker ran the registrars in.
  std::stable_sort(all.begin(), all.end(), [](const AnimationKind& a, const AnimationKind& b) {
    if (a.order != b.order) return a.order < b.order;
    return std::strcmp(a.kind, b.kind) < 0;
  });
}

const std::vector<AnimationKind>& animation_kinds() { return kinds(); }

const AnimationKind* find_animation_kind(std::string_view kind) {
  for (const AnimationKind& k : kinds())
    if (kind == k.kind) return &k;
  return nullptr;
}

}  // namespace mc::sim
