// accelerator.cpp - see accelerator.h.
#include "catalog/accelerator.h"

#include <cctype>

namespace mc {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

AcceleratorWords words_for(const std::string& unit) {
  AcceleratorWords w;
  w.one = unit;
  w.many = unit + "s";
  // "TPU v3 core" -> "TPU v3 core-hour": the hour is of one unit, hyphenated as "GPU-hour" is.
  w.hour = unit + "-hour";
  w.is_gpu = false;
  return w;
}

}  // namespace

AcceleratorWords accelerator_words(const Catalog* cat, const std::string& id) {
  const Table* t = cat ? cat->table("gpus") : nullptr;
  if (const Record* r = t ? t->find(id) : nullptr) {
    // A future gpus.json field "unit" (text) names it outright.
    const std::string unit = r->text_or("unit", "");
    if (!unit.empty()) return unit == "GPU" ? AcceleratorWords{} : words_for(unit);
    // No such field yet: gpus.json's TPU row says "architecture": "TPU v3" and counts one chip as one
    // accelerator (its note): so "TPU v3 chip".
    const std::string arch = r->text_or("architecture", "");
    if (lower(arch).rfind("tpu", 0) == 0) return words_for(arch + " chip");
    return {};
  }
  const std::string l = lower(id);
  if (l.rfind("tpu", 0) == 0) {
    // "tpu-v3-core" -> "TPU v3 core"; "tpu-v4" -> "TPU v4 chip".
    std::string gen = l.size() > 4 ? l.substr(4) : "";
    const bool core = gen.size() >= 5 && gen.compare(gen.size() - 5, 5, "-core") == 0;
    if (core) gen.resize(gen.size() - 5);
    return words_for("TPU" + (gen.empty() ? std::string() : " " + gen) + (core ? " core" : " chip"));
  }
  return {};
}

}  // namespace mc
