// json_fields.h - a section of a typed config as a table of its keys: each key's name, the member it fills, its
// type and range. One table gives the section's codec both ways (read_section: every key checked and located,
// unknown keys refused; write_section: the keys that were set, and only those) and its list of keys.
//
//   struct Knobs { std::optional<long long> spines; std::optional<std::string> algorithm; };
//   static const std::vector<Field<Knobs>> kKnobs = {{"spines", &Knobs::spines, 1, 4096},
//                                                    {"algorithm", &Knobs::algorithm, 0, 0, {"ring", "tree"}}};
//   Knobs k = read_section(cursor, kKnobs);          // LoadError: file, line, column, key, rule
//   nlohmann::json j = write_section(k, kKnobs);     // {"spines": 8}
#pragma once

#include "core/json_doc.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace mc {

// One key of a section: the member it fills and what it accepts. Integers and numbers are checked against
// [lo, hi]; a string against `choices` when it has any (a catalog id is checked against the catalog by the
// code that resolves the config); a list of integers element by element, `not_list` saying what it is when it is not
// one.
template <class S>
struct Field {
  using Member = std::variant<std::optional<long long> S::*, std::optional<double> S::*, std::optional<bool> S::*,
                              std::optional<std::string> S::*, std::optional<std::vector<long long>> S::*>;
  Field(const char* name, Member member, double lo = 0, double hi = 0, std::vector<std::string> choices = {},
        const char* not_list = "")
      : name(name), member(member), lo(lo), hi(hi), choices(std::move(choices)), not_list(not_list) {}
  const char* name;
  Member member;
  double lo, hi;
  std::vector<std::string> choices;
  const char* not_list;
};

template <class S>
std::vector<std::string> field_names(const std::vector<Field<S>>& keys) {
  std::vector<std::string> names;
  for (const Field<S>& k : keys) names.push_back(k.name);
  return names;
}

namespace detail {
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;
}  // namespace detail

template <class S>
S read_section(const JsonCursor& at, const std::vector<Field<S>>& keys) {
  at.only_keys(field_names(keys));
  S out;
  for (const Field<S>& k : keys) {
    const std::optional<JsonCursor> v = at.get(k.name);
    if (!v) continue;
    std::visit(
        detail::Overloaded{
            [&](std::optional<long long> S::*m) { out.*m = v->integer_in((long long)k.lo, (long long)k.hi); },
            [&](std::optional<double> S::*m) { out.*m = v->number_in(k.lo, k.hi); },
            [&](std::optional<bool> S::*m) { out.*m = v->boolean(); },
            [&](std::optional<std::string> S::*m) { out.*m = k.choices.empty() ? v->string() : v->one_of(k.choices); },
            [&](std::optional<std::vector<long long>> S::*m) {
              if (!v->is_array()) v->fail(k.not_list);
              std::vector<long long> list;
              for (const JsonCursor& n : v->elements()) list.push_back(n.integer_in((long long)k.lo, (long long)k.hi));
              out.*m = std::move(list);
            },
        },
        k.member);
  }
  return out;
}

template <class S>
nlohmann::json write_section(const S& s, const std::vector<Field<S>>& keys) {
  nlohmann::json j = nlohmann::json::object();
  for (const Field<S>& k : keys)
    std::visit(
        [&](auto S::*m) {
          if (s.*m) j[k.name] = *(s.*m);
        },
        k.member);
  return j;
}

}  // namespace mc
